package adbd

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

// shell is a tiny command interpreter: words with '…', "…" and \ quoting,
// VAR=value prefixes (ignored), pipes, redirections to files, /dev/null and
// between stdout and stderr, and lists joined by ;, && and ||. There are no
// variables, globs or control structures.
type shell struct {
	d      *Device
	ctx    context.Context
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	tty    io.Writer // the controlling terminal; nil on pipes (shell,v2,raw:)
	prompt io.Writer // where an interactive shell echoes and prompts; nil: stdout
	cwd    string
	status int
	exited bool
	cut    bool // a Config.Commands command returned CutStream
}

// token is a word or an operator (;, &&, ||, |, and redirections).
type token struct {
	text string
	op   bool
}

func tokenize(line string) ([]token, error) {
	var toks []token
	var cur strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			toks = append(toks, token{text: cur.String()})
			_ = quoted
		}
		cur.Reset()
		inWord, quoted = false, false
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch {
		case c == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("syntax error: unterminated quoted string")
			}
			cur.WriteString(string(rs[i+1 : j]))
			inWord, quoted, i = true, true, j
		case c == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
					j++
				}
				cur.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("syntax error: unterminated quoted string")
			}
			inWord, quoted, i = true, true, j
		case c == '\\':
			if i+1 < len(rs) {
				i++
				if rs[i] != '\n' {
					cur.WriteRune(rs[i])
					inWord = true
				}
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			flush()
		case c == '#' && !inWord:
			i = len(rs)
		case c == ';' || c == '|' || c == '&' || c == '<' || c == '>':
			fd := ""
			if c == '>' || c == '<' {
				if s := cur.String(); inWord && !quoted && (s == "1" || s == "2" || s == "0") {
					fd = s
					cur.Reset()
					inWord = false
				}
			}
			flush()
			op := string(c)
			if i+1 < len(rs) && (rs[i+1] == c && c != ';' && c != '<') {
				op += string(c)
				i++
			}
			if (c == '>' || c == '<') && i+1 < len(rs) && rs[i+1] == '&' {
				op += "&"
				i++
			}
			toks = append(toks, token{text: fd + op, op: true})
		default:
			cur.WriteRune(c)
			inWord = true
		}
	}
	flush()
	return toks, nil
}

// command is one simple command with its redirections.
type command struct {
	args  []string
	redir []redirect
}

type redirect struct {
	op     string // <, >, >>, 2>, 2>>, >&, 2>&, …
	target string
}

// runLine runs a command line and sets the status; it returns false once
// exit ran.
func (sh *shell) runLine(line string) bool {
	toks, err := tokenize(line)
	if err != nil {
		fmt.Fprintf(sh.stderr, "/system/bin/sh: %v\n", err)
		sh.status = 2
		return true
	}
	var pipeline []command
	var cur command
	next := "" // the operator that joined this pipeline to the previous one
	runPipeline := func(join string) {
		if len(cur.args) > 0 || len(cur.redir) > 0 {
			pipeline = append(pipeline, cur)
		}
		cur = command{}
		if len(pipeline) > 0 && !sh.exited {
			if next == "" || (next == "&&" && sh.status == 0) || (next == "||" && sh.status != 0) || next == ";" {
				sh.status = sh.pipeline(pipeline)
			}
		}
		pipeline = nil
		next = join
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if !t.op {
			cur.args = append(cur.args, t.text)
			continue
		}
		switch t.text {
		case ";", "&&", "||", "&":
			j := t.text
			if j == "&" {
				j = ";" // no background jobs: run in order
			}
			runPipeline(j)
		case "|":
			pipeline = append(pipeline, cur)
			cur = command{}
		default:
			if i+1 >= len(toks) || toks[i+1].op {
				fmt.Fprintf(sh.stderr, "/system/bin/sh: syntax error: '%s' unexpected\n", t.text)
				sh.status = 2
				return true
			}
			cur.redir = append(cur.redir, redirect{op: t.text, target: toks[i+1].text})
			i++
		}
	}
	runPipeline("")
	return !sh.exited
}

// pipeline runs commands in order, each reading what the one before wrote;
// it returns the last one's status.
func (sh *shell) pipeline(cmds []command) int {
	var in io.Reader = sh.stdin
	status := 0
	for i, c := range cmds {
		var out io.Writer = sh.stdout
		var buf *bytes.Buffer
		if i < len(cmds)-1 {
			buf = &bytes.Buffer{}
			out = buf
		}
		status = sh.simple(c, in, out)
		if buf != nil {
			in = buf
		}
	}
	return status
}

// io is one command's standard streams.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	env      map[string]string // the command's VAR=value prefixes
}

// simple applies a command's redirections and runs it.
func (sh *shell) simple(c command, in io.Reader, out io.Writer) int {
	io3 := stdio{in: in, out: out, err: sh.stderr}
	var files []func() error
	for _, r := range c.redir {
		fd, op := "1", r.op
		if op[0] >= '0' && op[0] <= '9' {
			fd, op = op[:1], op[1:]
		}
		if op[0] == '<' && fd == "1" {
			fd = "0"
		}
		switch {
		case op == ">&" || op == "<&":
			target := map[string]io.Writer{"1": io3.out, "2": io3.err}[r.target]
			if target == nil {
				fmt.Fprintf(sh.stderr, "/system/bin/sh: %s: bad file descriptor\n", r.target)
				return 1
			}
			if fd == "2" {
				io3.err = target
			} else {
				io3.out = target
			}
		case fd == "0":
			if r.target == "/dev/null" {
				io3.in = strings.NewReader("")
				continue
			}
			f, err := sh.d.fs.open(sh.ctx, sh.abs(r.target))
			if err != nil {
				fmt.Fprintf(sh.stderr, "/system/bin/sh: can't open '%s': %s\n", r.target, errText(err))
				return 1
			}
			defer f.Close()
			io3.in = f
		default:
			var w io.Writer
			switch r.target {
			case "/dev/null":
				w = io.Discard
			case "/dev/tty":
				if sh.tty == nil {
					fmt.Fprintf(sh.stderr, "/system/bin/sh: can't create /dev/tty: No such device or address\n")
					return 1
				}
				w = sh.tty
			case "/dev/stdout":
				w = sh.stdout
			case "/dev/stderr":
				w = sh.stderr
			default:
				var prev []byte
				if op == ">>" {
					if f, err := sh.d.fs.open(sh.ctx, sh.abs(r.target)); err == nil {
						prev, _ = io.ReadAll(f)
						f.Close()
					}
				}
				f, err := sh.d.fs.create(sh.ctx, sh.abs(r.target), timeZero)
				if err != nil {
					fmt.Fprintf(sh.stderr, "/system/bin/sh: can't create %s: %s\n", r.target, errText(err))
					return 1
				}
				f.Write(prev)
				files = append(files, f.Close)
				w = f
			}
			if fd == "2" {
				io3.err = w
			} else {
				io3.out = w
			}
		}
	}
	status := sh.exec(c.args, io3)
	for _, closeFile := range files {
		closeFile()
	}
	return status
}

// exec runs one command's words.
func (sh *shell) exec(args []string, io3 stdio) int {
	// VAR=value prefixes set the command's environment; only app_process
	// reads it (its CLASSPATH).
	for len(args) > 0 && isAssignment(args[0]) {
		k, v, _ := strings.Cut(args[0], "=")
		if io3.env == nil {
			io3.env = map[string]string{}
		}
		io3.env[k] = v
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "exec" {
		args = args[1:]
	}
	if len(args) == 0 {
		return 0
	}
	name := args[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 && (strings.HasPrefix(name, "/system/bin/") || strings.HasPrefix(name, "/system/xbin/")) {
		name = name[i+1:]
	}
	if f := sh.d.cfg.Commands[name]; f != nil {
		status := f(sh.ctx, args[1:], io3.in, io3.out, io3.err)
		if status == CutStream {
			sh.cut, sh.exited = true, true
		}
		return status
	}
	if f := commands[name]; f != nil {
		if cost(sh.d.cfg.Timing, name).Wait(sh.ctx) != nil {
			return 130 // the stream closed while the phone worked
		}
		return f(sh, args[1:], io3)
	}
	fmt.Fprintf(io3.err, "/system/bin/sh: %s: inaccessible or not found\n", args[0])
	return 127
}

func isAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j, r := range w[:i] {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || j > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// abs resolves p against the working folder.
func (sh *shell) abs(p string) string {
	if strings.HasPrefix(p, "/") {
		return clean(p)
	}
	return clean(sh.cwd + "/" + p)
}

// interactive reads command lines from stdin until exit or its end. With a
// pty it echoes what is typed and prints a prompt, as a terminal would.
func (sh *shell) interactive(pty bool) {
	term := sh.prompt
	if term == nil {
		term = sh.stdout
	}
	prompt := func() {
		if pty {
			fmt.Fprintf(term, "%s:%s $ ", sh.d.prop("ro.product.device"), sh.cwd)
		}
	}
	prompt()
	r := bufio.NewReader(sh.stdin)
	var line []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return
		}
		switch {
		case c == '\r' || c == '\n':
			if pty {
				io.WriteString(term, "\r\n")
			}
			if !sh.runLine(string(line)) {
				return
			}
			line = line[:0]
			prompt()
		case pty && (c == 0x7f || c == 0x08):
			if len(line) > 0 {
				line = line[:len(line)-1]
				io.WriteString(term, "\b \b")
			}
		case pty && c == 0x04 && len(line) == 0: // ^D
			return
		case pty && c == 0x03: // ^C
			line = line[:0]
			io.WriteString(term, "^C\r\n")
			prompt()
		default:
			line = append(line, c)
			if pty {
				term.Write([]byte{c})
			}
		}
	}
}

// atoi parses a decimal argument, or reports it as the command's error.
func atoi(io3 stdio, cmd, s string) (int, bool) {
	n, err := strconv.Atoi(s)
	if err != nil {
		fmt.Fprintf(io3.err, "%s: bad number '%s'\n", cmd, s)
		return 0, false
	}
	return n, true
}

// cost is how long a command takes under the timing profile
// (Config.Timing): uiautomator, input and screencap take a real phone's
// time; the rest answer at once.
func cost(p timing.Profile, name string) timing.Range {
	switch name {
	case "uiautomator":
		return p.Dump
	case "input":
		return p.Input
	case "screencap":
		return p.Screencap
	}
	return timing.Range{}
}
