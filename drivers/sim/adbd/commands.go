package adbd

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"
)

var timeZero time.Time

// commands are the programs the shell knows, by name.
var commands map[string]func(sh *shell, args []string, io3 stdio) int

func init() {
	commands = map[string]func(sh *shell, args []string, io3 stdio) int{
		"true":        func(*shell, []string, stdio) int { return 0 },
		"false":       func(*shell, []string, stdio) int { return 1 },
		"exit":        cmdExit,
		"echo":        cmdEcho,
		"export":      func(*shell, []string, stdio) int { return 0 },
		"pwd":         func(sh *shell, _ []string, io3 stdio) int { fmt.Fprintln(io3.out, sh.cwd); return 0 },
		"cd":          cmdCd,
		"id":          cmdID,
		"tty":         cmdTty,
		"whoami":      func(_ *shell, _ []string, io3 stdio) int { fmt.Fprintln(io3.out, "shell"); return 0 },
		"sleep":       cmdSleep,
		"sh":          cmdSh,
		"ls":          cmdLs,
		"cat":         cmdCat,
		"rm":          cmdRm,
		"mkdir":       cmdMkdir,
		"touch":       cmdTouch,
		"grep":        cmdGrep,
		"getprop":     cmdGetprop,
		"wm":          cmdWm,
		"uiautomator": cmdUiautomator,
		"dumpsys":     cmdDumpsys,
		"input":       cmdInput,
		"am":          cmdAm,
		"monkey":      cmdMonkey,
		"pm":          cmdPm,
		"cmd":         cmdCmd,
		"settings":    cmdSettings,
		"content":     cmdContent,
		"run-as":      cmdRunAs,
		"screencap":   cmdScreencap,
		"app_process": cmdAppProcess,
	}
}

func cmdExit(sh *shell, args []string, io3 stdio) int {
	sh.exited = true
	if len(args) == 0 {
		return sh.status
	}
	n, ok := atoi(io3, "exit", args[0])
	if !ok {
		return 2
	}
	return n & 0xff
}

func cmdEcho(_ *shell, args []string, io3 stdio) int {
	nl := "\n"
	if len(args) > 0 && args[0] == "-n" {
		nl, args = "", args[1:]
	}
	fmt.Fprint(io3.out, strings.Join(args, " ")+nl)
	return 0
}

func cmdCd(sh *shell, args []string, io3 stdio) int {
	dir := "/"
	if len(args) > 0 {
		dir = sh.abs(args[0])
	}
	fi, err := sh.d.fs.stat(sh.ctx, dir)
	if err != nil || !fi.dir {
		fmt.Fprintf(io3.err, "/system/bin/sh: cd: %s: No such file or directory\n", dir)
		return 2
	}
	sh.cwd = dir
	return 0
}

func cmdID(_ *shell, _ []string, io3 stdio) int {
	fmt.Fprintln(io3.out, "uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),1028(sdcard_r),3001(net_bt_admin),3002(net_bt),3003(inet),3006(net_bw_stats) context=u:r:shell:s0")
	return 0
}

func cmdSleep(sh *shell, args []string, io3 stdio) int {
	if len(args) != 1 {
		fmt.Fprintln(io3.err, "sleep: Need 1 argument")
		return 1
	}
	var secs float64
	if _, err := fmt.Sscanf(args[0], "%g", &secs); err != nil {
		fmt.Fprintf(io3.err, "sleep: bad duration '%s'\n", args[0])
		return 1
	}
	select {
	case <-time.After(time.Duration(secs * float64(time.Second))):
		return 0
	case <-sh.ctx.Done():
		return 130
	}
}

func cmdSh(sh *shell, args []string, io3 stdio) int {
	if len(args) < 2 || args[0] != "-c" {
		sub := &shell{d: sh.d, ctx: sh.ctx, stdin: io3.in, stdout: io3.out, stderr: io3.err, cwd: sh.cwd}
		sub.interactive(false)
		return sub.status
	}
	sub := &shell{d: sh.d, ctx: sh.ctx, stdin: io3.in, stdout: io3.out, stderr: io3.err, cwd: sh.cwd}
	sub.runLine(args[1])
	return sub.status
}

// flags splits leading single-letter options ("-rf" → r, f) from operands.
func flags(args []string) (map[rune]bool, []string) {
	f := map[rune]bool{}
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && args[0] != "--" {
		for _, r := range args[0][1:] {
			f[r] = true
		}
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	return f, args
}

func cmdLs(sh *shell, args []string, io3 stdio) int {
	f, paths := flags(args)
	if len(paths) == 0 {
		paths = []string{"."}
	}
	status := 0
	line := func(fi fileInfo, name string) {
		if !f['l'] {
			fmt.Fprintln(io3.out, name)
			return
		}
		perm, size := "-rw-rw----", fi.size
		if fi.dir {
			perm, size = "drwxrwx--x", 3452
		}
		fmt.Fprintf(io3.out, "%s 1 shell shell %8d %s %s\n", perm, size, fi.mod.Format("2006-01-02 15:04"), name)
	}
	for i, p := range paths {
		fi, err := sh.d.fs.stat(sh.ctx, sh.abs(p))
		if err != nil {
			fmt.Fprintf(io3.err, "ls: %s: %s\n", p, errText(err))
			status = 1
			continue
		}
		if !fi.dir || f['d'] {
			line(fi, p)
			continue
		}
		if len(paths) > 1 {
			if i > 0 {
				fmt.Fprintln(io3.out)
			}
			fmt.Fprintf(io3.out, "%s:\n", p)
		}
		entries, err := sh.d.fs.list(sh.ctx, sh.abs(p))
		if err != nil {
			fmt.Fprintf(io3.err, "ls: %s: %s\n", p, errText(err))
			status = 1
			continue
		}
		for _, e := range entries {
			if strings.HasPrefix(e.name, ".") && !f['a'] {
				continue
			}
			line(e, e.name)
		}
	}
	return status
}

func cmdCat(sh *shell, args []string, io3 stdio) int {
	if len(args) == 0 {
		io.Copy(io3.out, io3.in)
		return 0
	}
	status := 0
	for _, p := range args {
		if p == "-" {
			io.Copy(io3.out, io3.in)
			continue
		}
		r, err := sh.d.fs.open(sh.ctx, sh.abs(p))
		if err != nil {
			fmt.Fprintf(io3.err, "cat: %s: %s\n", p, errText(err))
			status = 1
			continue
		}
		io.Copy(io3.out, r)
		r.Close()
	}
	return status
}

func cmdRm(sh *shell, args []string, io3 stdio) int {
	f, paths := flags(args)
	status := 0
	for _, p := range paths {
		err := sh.d.fs.remove(sh.ctx, sh.abs(p), f['r'] || f['R'])
		if err != nil && !(f['f'] && errors.Is(err, fs.ErrNotExist)) {
			fmt.Fprintf(io3.err, "rm: %s: %s\n", p, errText(err))
			status = 1
		}
	}
	return status
}

func cmdMkdir(sh *shell, args []string, io3 stdio) int {
	f, paths := flags(args)
	status := 0
	for _, p := range paths {
		abs := sh.abs(p)
		if !f['p'] {
			if _, err := sh.d.fs.stat(sh.ctx, abs); err == nil {
				fmt.Fprintf(io3.err, "mkdir: '%s': File exists\n", p)
				status = 1
				continue
			}
			if fi, err := sh.d.fs.stat(sh.ctx, parent(abs)); err != nil || !fi.dir {
				fmt.Fprintf(io3.err, "mkdir: '%s': No such file or directory\n", p)
				status = 1
				continue
			}
		}
		if err := sh.d.fs.mkdirAll(abs); err != nil {
			fmt.Fprintf(io3.err, "mkdir: '%s': %s\n", p, errText(err))
			status = 1
		}
	}
	return status
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

func cmdTouch(sh *shell, args []string, io3 stdio) int {
	_, paths := flags(args)
	for _, p := range paths {
		if _, err := sh.d.fs.stat(sh.ctx, sh.abs(p)); err == nil {
			continue
		}
		w, err := sh.d.fs.create(sh.ctx, sh.abs(p), timeZero)
		if err == nil {
			err = w.Close()
		}
		if err != nil {
			fmt.Fprintf(io3.err, "touch: '%s': %s\n", p, errText(err))
			return 1
		}
	}
	return 0
}

func cmdGrep(sh *shell, args []string, io3 stdio) int {
	var pattern string
	opts := map[rune]bool{}
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			pattern, i = args[i+1], i+1
		case len(a) > 1 && a[0] == '-':
			for _, r := range a[1:] {
				opts[r] = true
			}
		case pattern == "" && !slices.Contains(args[:i], "-e"):
			pattern = a
		default:
			files = append(files, a)
		}
	}
	if !opts['E'] {
		// Basic regular expressions: \| and \( are the operators.
		pattern = strings.NewReplacer(`\|`, "|", `\(`, "(", `\)`, ")", "|", `\|`, "(", `\(`, ")", `\)`, "+", `\+`, "?", `\?`).Replace(pattern)
	}
	if opts['F'] {
		pattern = regexp.QuoteMeta(pattern)
	}
	if opts['i'] {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		fmt.Fprintf(io3.err, "grep: bad regex '%s': %v\n", pattern, err)
		return 2
	}
	var in []byte
	if len(files) == 0 {
		in, _ = io.ReadAll(io3.in)
	}
	for _, p := range files {
		r, err := sh.d.fs.open(sh.ctx, sh.abs(p))
		if err != nil {
			fmt.Fprintf(io3.err, "grep: %s: %s\n", p, errText(err))
			continue
		}
		b, _ := io.ReadAll(r)
		r.Close()
		in = append(in, b...)
	}
	matched := 0
	for _, line := range strings.SplitAfter(string(in), "\n") {
		if line == "" {
			continue
		}
		if re.MatchString(strings.TrimSuffix(line, "\n")) != opts['v'] {
			matched++
			if !opts['q'] && !opts['c'] {
				fmt.Fprint(io3.out, strings.TrimSuffix(line, "\n")+"\n")
			}
		}
	}
	if opts['c'] {
		fmt.Fprintln(io3.out, matched)
	}
	if matched == 0 {
		return 1
	}
	return 0
}

func cmdAppProcess(sh *shell, args []string, io3 stdio) int {
	if sh.d.cfg.AppProcess == nil {
		fmt.Fprintln(io3.err, "/system/bin/sh: app_process: inaccessible or not found")
		return 127
	}
	// app_process [vm options] PARENT_DIR CLASS ARGS…: the class is the
	// first word after the parent folder that is not an option.
	classPath := io3.env["CLASSPATH"]
	rest := args
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		if v, ok := strings.CutPrefix(rest[0], "-Djava.class.path="); ok {
			classPath = v
		}
		rest = rest[1:]
	}
	if len(rest) < 2 {
		fmt.Fprintln(io3.err, "Usage: app_process [java-options] cmd-dir start-class-name [options]")
		return 1
	}
	for len(rest) > 1 && strings.HasPrefix(rest[1], "--") {
		rest = append(rest[:1:1], rest[2:]...)
	}
	// A real app_process that cannot load its class (no jar at the first
	// CLASSPATH entry, or another class) logs "could not find class" to
	// logcat and aborts: the shell prints "Aborted" and exits 128+SIGABRT.
	jar, _, _ := strings.Cut(classPath, ":")
	class := sh.d.cfg.AppProcessClass
	if class == "" {
		class = ScrcpyServerClass
	}
	if fi, err := sh.d.fs.stat(sh.ctx, clean(jar)); jar == "" || err != nil || fi.dir || rest[1] != class {
		fmt.Fprintln(io3.err, "Aborted")
		return 134
	}
	if err := sh.d.cfg.AppProcess(sh.ctx, append([]string(nil), rest[2:]...), io3.out, io3.err, sh.d); err != nil {
		if sh.ctx.Err() == nil {
			fmt.Fprintf(io3.err, "app_process: %v\n", err)
		}
		return 1
	}
	return 0
}
