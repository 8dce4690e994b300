package cli

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// A service keeps `pinky daemon` running for the person: a systemd user
// unit on Linux, a launchd agent on macOS, a scheduled task at log-on on
// Windows. The unit's text is made here, from the same flags the daemon
// takes; deploy/ holds the same files for a package to install.

// serviceName is the unit's name, the launchd label and the task's name.
const (
	systemdUnit   = "pinky.service"
	launchdLabel  = "dev.pinky.daemon"
	windowsTask   = "Pinky"
	serviceStopIn = 10 * time.Second
)

// serviceSpec is what the service runs.
type serviceSpec struct {
	Exe  string   // the pinky binary, an absolute path
	Args []string // after "daemon"
	Home string   // PINKY_HOME, "" for the default data folder
}

// systemdUnitText is the systemd user unit that runs the daemon.
func systemdUnitText(s serviceSpec) string {
	var b strings.Builder
	b.WriteString("# Written by `pinky service install`; `pinky service uninstall` removes it.\n")
	b.WriteString("[Unit]\nDescription=Pinky: AI agents on your phones, with you in charge\n")
	b.WriteString("Documentation=https://github.com/pinky-gateway/pinky\n")
	b.WriteString("After=network.target\n\n[Service]\nType=simple\n")
	if s.Home != "" {
		fmt.Fprintf(&b, "Environment=%s\n", systemdQuote("PINKY_HOME="+s.Home))
	}
	b.WriteString("ExecStart=" + systemdQuote(s.Exe) + " daemon")
	for _, a := range s.Args {
		b.WriteString(" " + systemdQuote(a))
	}
	b.WriteString("\nRestart=on-failure\nRestartSec=5\n# Logs go to the journal: journalctl --user -u pinky\n\n")
	b.WriteString("[Install]\nWantedBy=default.target\n")
	return b.String()
}

// systemdQuote quotes a word of a unit file's command line or assignment
// when it needs it; % and $ are doubled so systemd takes them as they are.
func systemdQuote(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "%", "%%"), "$", "$$")
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return `"` + r.Replace(s) + `"`
}

// launchdPlist is the launchd agent that runs the daemon at log-in.
func launchdPlist(s serviceSpec, logs string) string {
	esc := func(v string) string {
		var b bytes.Buffer
		xml.EscapeText(&b, []byte(v)) //nolint:errcheck // a bytes.Buffer does not fail
		return b.String()
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by pinky service install; pinky service uninstall removes it. -->
<plist version="1.0">
<dict>
	<key>Label</key><string>` + launchdLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>` + esc(s.Exe) + `</string>
		<string>daemon</string>
`)
	for _, a := range s.Args {
		b.WriteString("\t\t<string>" + esc(a) + "</string>\n")
	}
	b.WriteString("\t</array>\n")
	if s.Home != "" {
		b.WriteString("\t<key>EnvironmentVariables</key>\n\t<dict><key>PINKY_HOME</key><string>" + esc(s.Home) + "</string></dict>\n")
	}
	b.WriteString("\t<key>RunAtLoad</key><true/>\n\t<key>KeepAlive</key><dict><key>SuccessfulExit</key><false/></dict>\n")
	b.WriteString("\t<key>StandardErrorPath</key><string>" + esc(filepath.Join(logs, "daemon.log")) + "</string>\n")
	b.WriteString("</dict>\n</plist>\n")
	return b.String()
}

// windowsTaskArgs are schtasks' arguments that create the log-on task.
func windowsTaskArgs(s serviceSpec) []string {
	line := windowsQuote(s.Exe) + " daemon"
	if s.Home != "" {
		line += " --home " + windowsQuote(s.Home)
	}
	for _, a := range s.Args {
		line += " " + windowsQuote(a)
	}
	return []string{"/Create", "/F", "/TN", windowsTask, "/SC", "ONLOGON", "/RL", "LIMITED", "/TR", line}
}

func windowsQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}

// serviceFile is where this OS keeps the service's file; "" on Windows,
// where the task lives in the scheduler.
func serviceFile() (string, error) {
	u, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(u, "Library", "LaunchAgents", launchdLabel+".plist"), nil
	case "windows":
		return "", nil
	}
	cfg := os.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		cfg = filepath.Join(u, ".config")
	}
	return filepath.Join(cfg, "systemd", "user", systemdUnit), nil
}

// runTool runs a service manager's command and says what it answered.
func runTool(ctx context.Context, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func newServiceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service",
		Short: "Keep the daemon running: install, uninstall or check it as a service of your session",
		Long: `Run pinky daemon as a service of your login session, so that it starts with
it and comes back if it stops: a systemd user unit on Linux
(~/.config/systemd/user/pinky.service), a launchd agent on macOS
(~/Library/LaunchAgents/dev.pinky.daemon.plist), a scheduled task at log-on
on Windows. pinky mcp then finds the service's daemon instead of starting
one of its own. The same files are in deploy/ for packages.`,
	}
	cmd.AddCommand(newServiceInstallCmd(), newServiceUninstallCmd(), newServiceStatusCmd())
	return cmd
}

func newServiceInstallCmd() *cobra.Command {
	var httpAddr, console, historyURL string
	var autoUnlock, allowRemote, print, noStart bool
	var enable []string
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Write and start the service (the daemon with these flags)",
		Long: `Write the service's file for this OS, running pinky daemon with the flags
given here, and start it. A daemon already running for this data folder
(one that pinky mcp started) is stopped first, so that the service's takes
its place: its leases end, the history stays. --print shows the file
instead; --no-start writes it without starting it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			if exe, err = filepath.EvalSymlinks(exe); err != nil {
				return err
			}
			spec := serviceSpec{Exe: exe, Home: os.Getenv("PINKY_HOME")}
			if spec.Home != "" {
				if spec.Home, err = filepath.Abs(spec.Home); err != nil {
					return err
				}
			}
			if httpAddr != "" {
				spec.Args = append(spec.Args, "--http", httpAddr)
			}
			if allowRemote {
				spec.Args = append(spec.Args, "--allow-remote")
			}
			if console != "" {
				spec.Args = append(spec.Args, "--console", console)
			}
			if autoUnlock {
				spec.Args = append(spec.Args, "--auto-unlock")
			}
			for _, d := range enable {
				spec.Args = append(spec.Args, "--enable-driver", d)
			}
			if historyURL != "" {
				if err := serviceHistory(historyURL); err != nil {
					return err
				}
				spec.Args = append(spec.Args, "--history", historyURL)
			}
			return serviceInstall(cmd.Context(), cmd.OutOrStdout(), spec, print, noStart)
		},
	}
	f := cmd.Flags()
	f.StringVar(&httpAddr, "http", "", "the daemon serves MCP over HTTP at `HOST:PORT` (pinky daemon --http)")
	f.BoolVar(&allowRemote, "allow-remote", false, "with --http: an address other computers reach (pinky daemon --allow-remote)")
	f.StringVar(&console, "console", "", "the web console's `HOST:PORT`, or off (pinky daemon --console)")
	f.BoolVar(&autoUnlock, "auto-unlock", false, "unlock phones with the saved PIN (pinky daemon --auto-unlock)")
	f.StringArrayVar(&enable, "enable-driver", nil, "start this driver too (repeatable; pinky daemon --enable-driver)")
	f.StringVar(&historyURL, "history", "", "the PostgreSQL history's `URL`, without its password (pinky daemon --history)")
	f.BoolVar(&print, "print", false, "print the service's file (or, on Windows, the schtasks command) instead of installing it")
	f.BoolVar(&noStart, "no-start", false, "write the service's file, enabled, without starting it now")
	return cmd
}

func serviceInstall(ctx context.Context, w io.Writer, spec serviceSpec, print, noStart bool) error {
	dirs, err := home.Resolve()
	if err != nil {
		return err
	}
	path, err := serviceFile()
	if err != nil {
		return err
	}
	var text string
	switch runtime.GOOS {
	case "darwin":
		text = launchdPlist(spec, dirs.Logs())
	case "windows":
		text = "schtasks " + strings.Join(windowsTaskArgs(spec), " ") + "\n"
	default:
		text = systemdUnitText(spec)
	}
	if print {
		_, err := io.WriteString(w, text)
		return err
	}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(path, []byte(text)); err != nil {
			return err
		}
		fmt.Fprintln(w, "wrote", path)
	}
	if !noStart {
		if err := stopOtherDaemon(ctx, w); err != nil {
			return err
		}
	}
	switch runtime.GOOS {
	case "darwin":
		if noStart {
			fmt.Fprintln(w, "it starts at your next log-in (launchctl bootstrap gui/$(id -u) "+path+" starts it now)")
			return nil
		}
		runTool(ctx, "launchctl", "bootout", fmt.Sprintf("gui/%d/%s", os.Getuid(), launchdLabel)) //nolint:errcheck // none loaded yet
		err = runTool(ctx, "launchctl", "bootstrap", fmt.Sprintf("gui/%d", os.Getuid()), path)
	case "windows":
		if err = runTool(ctx, "schtasks", windowsTaskArgs(spec)...); err == nil && !noStart {
			err = runTool(ctx, "schtasks", "/Run", "/TN", windowsTask)
		}
	default:
		if err = runTool(ctx, "systemctl", "--user", "daemon-reload"); err == nil {
			if noStart {
				err = runTool(ctx, "systemctl", "--user", "enable", systemdUnit)
			} else {
				err = runTool(ctx, "systemctl", "--user", "enable", "--now", systemdUnit)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("the service's file is written, but the service manager refused it: %w", err)
	}
	if noStart {
		fmt.Fprintln(w, "enabled; it starts with your next session")
		return nil
	}
	fmt.Fprintln(w, "started; pinky service status says how it runs")
	return nil
}

// stopOtherDaemon stops a daemon that runs for this data folder, so the
// service's can take the folder's lock: its leases end (their tasks say
// so in the history), which stays.
func stopOtherDaemon(ctx context.Context, w io.Writer) error {
	c, dirs, err := dial(ctx)
	if err != nil {
		if errors.Is(err, api.ErrNoDaemon) {
			return nil
		}
		return err
	}
	defer c.Close()
	if err := c.Call(ctx, api.MethodStop, nil, nil); err != nil {
		return fmt.Errorf("stopping the daemon that runs now: %w", err)
	}
	deadline := time.Now().Add(serviceStopIn)
	for time.Now().Before(deadline) {
		if c2, err := api.Dial(ctx, dirs.Socket()); errors.Is(err, api.ErrNoDaemon) {
			fmt.Fprintln(w, "stopped the daemon that ran for", dirs.Home, "(its leases ended; the history stays)")
			return nil
		} else if err == nil {
			c2.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the daemon that runs for %s did not stop within %s: pinky stop-daemon, then install again", dirs.Home, serviceStopIn)
}

func newServiceUninstallCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "uninstall",
		Short: "Stop the service and remove its file",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			path, err := serviceFile()
			if err != nil {
				return err
			}
			switch runtime.GOOS {
			case "darwin":
				runTool(ctx, "launchctl", "bootout", fmt.Sprintf("gui/%d/%s", os.Getuid(), launchdLabel)) //nolint:errcheck // not loaded is fine
			case "windows":
				if err := runTool(ctx, "schtasks", "/Delete", "/F", "/TN", windowsTask); err != nil {
					return err
				}
			default:
				if _, err := os.Stat(path); err == nil {
					if err := runTool(ctx, "systemctl", "--user", "disable", "--now", systemdUnit); err != nil {
						fmt.Fprintln(cmd.ErrOrStderr(), "pinky:", err)
					}
				}
			}
			if path != "" {
				if err := os.Remove(path); errors.Is(err, os.ErrNotExist) {
					fmt.Fprintln(w, "no service installed (", path, "is not there )")
					return nil
				} else if err != nil {
					return err
				}
				fmt.Fprintln(w, "removed", path)
			}
			if runtime.GOOS == "linux" {
				runTool(ctx, "systemctl", "--user", "daemon-reload") //nolint:errcheck // the unit is gone either way
			}
			return nil
		},
	}
}

func newServiceStatusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Say whether the service is installed and running, and whether the daemon answers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, w := cmd.Context(), cmd.OutOrStdout()
			path, err := serviceFile()
			if err != nil {
				return err
			}
			installed := true
			if path != "" {
				if _, err := os.Stat(path); err != nil {
					installed = false
				}
			}
			if !installed {
				fmt.Fprintln(w, "service: not installed (pinky service install)")
			} else {
				state := "unknown"
				switch runtime.GOOS {
				case "linux":
					out, _ := exec.CommandContext(ctx, "systemctl", "--user", "is-active", systemdUnit).Output()
					state = strings.TrimSpace(string(out))
				case "darwin":
					if runTool(ctx, "launchctl", "print", fmt.Sprintf("gui/%d/%s", os.Getuid(), launchdLabel)) == nil {
						state = "loaded"
					}
				}
				fmt.Fprintf(w, "service: installed (%s), %s\n", path, state)
			}
			c, _, err := dial(ctx)
			if err != nil {
				fmt.Fprintln(w, "daemon:  not running")
				if installed {
					return exitError{code: 1}
				}
				return nil
			}
			defer c.Close()
			var st api.Status
			if err := c.Call(ctx, api.MethodStatus, nil, &st); err != nil {
				return err
			}
			fmt.Fprintf(w, "daemon:  pid %d, version %s, up %s\n", st.Pid, st.Version, time.Since(st.Started).Round(time.Second))
			return nil
		},
	}
}

// serviceHistory checks a --history URL for the service's file: it must
// be a PostgreSQL URL, and carry no password, which the file would keep
// where other programs read it.
func serviceHistory(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return fmt.Errorf("--history: want a postgres:// or postgresql:// URL")
	}
	if _, has := u.User.Password(); has || u.Query().Has("password") {
		return fmt.Errorf("--history: the URL holds a password, which the service's file would keep in the clear: " +
			"give the URL without it and put the password in ~/.pgpass (host:port:database:user:password, mode 0600)")
	}
	return nil
}
