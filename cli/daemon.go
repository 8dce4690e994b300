package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/cli/daemon"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/notify"
)

// driverConfig is the drivers' configuration as the person chose it, every
// driver alike: the defaults (the virtual phones are left off, so that they
// never mix with a person's phones unless asked for), then
// $PINKY_HOME/drivers.yaml, then the flags.
func driverConfig(home string, sim bool, world string, enable, disable, env []string) (driverhost.Config, error) {
	dc := driverhost.DefaultConfig(home)
	dc.SetEnabled("sim", false)
	settings, err := driverhost.LoadSettings(home)
	if err != nil {
		return dc, err
	}
	dc.Apply(settings)
	// The environment names drivers to start as the flags do: an agent
	// host that spawns `pinky mcp` can set it, and the daemon that the
	// bridge starts inherits it. PINKY_SIM=1 is PINKY_ENABLE_DRIVERS=sim.
	for _, name := range strings.Split(os.Getenv("PINKY_ENABLE_DRIVERS"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			enable = append(enable, name)
		}
	}
	if os.Getenv("PINKY_SIM") == "1" {
		sim = true
	}
	if sim || world != "" {
		enable = append(enable, "sim")
	}
	if world != "" {
		env = append(env, "sim:PINKY_SIM_WORLD="+world)
	}
	for _, name := range enable {
		dc.SetEnabled(name, true)
	}
	for _, name := range disable {
		dc.SetEnabled(name, false)
	}
	for _, e := range env {
		name, kv, ok := strings.Cut(e, ":")
		if !ok || name == "" || !strings.Contains(kv, "=") || strings.HasPrefix(kv, "=") {
			return dc, fmt.Errorf("--driver-env %q: want NAME:KEY=VALUE, e.g. android:SCRCPY_SERVER_PATH=/opt/scrcpy-server", e)
		}
		dc.AddEnv(name, kv)
	}
	return dc, nil
}

func newDaemonCmd() *cobra.Command {
	var sim, allowRemote, autoUnlock bool
	var world, level, httpAddr, consoleAddr, notifyMode, homeDir, historyURL, hostsListen string
	var enable, disable, driverEnv []string
	var approvalWait, approvalTTL, leaseIdle time.Duration
	cmd := &cobra.Command{
		Use:   "daemon",
		Short: "Run the gateway in the foreground",
		Long: `Run the gateway: it starts every driver it finds (pinky-driver-* next to the
pinky binary, in $PINKY_HOME/drivers and on PATH), supervises them, and
serves the local socket that the other commands use. One daemon runs per
data folder; a second one refuses to start and names the first.

With --http HOST:PORT it also serves MCP over Streamable HTTP at
http://HOST:PORT/mcp, for agents on other hosts. Every request must carry
"Authorization: Bearer TOKEN" with the token that ` + "`pinky token`" + ` prints. The
address must be a loopback one (127.0.0.1, ::1, localhost) unless
--allow-remote: the token is then the only protection, in clear text over
plain HTTP, so put a TLS-terminating proxy in front. A request from a web page
(with an Origin header) is refused unless it names the daemon's own address.

The web console listens on 127.0.0.1:4777 (--console changes it; "off"
serves none); ` + "`pinky open`" + ` logs you in.

The history is a SQLite file in the data folder unless --history names a
PostgreSQL database (postgres://USER:PASSWORD@HOST:PORT/DATABASE); the
daemon creates and upgrades its tables there, and screenshots and
recordings stay files in the data folder. The URL's password is never
logged; PGPASSWORD or ~/.pgpass keep it off the command line.

With --hosts-listen HOST:PORT it listens for phone hosts: other machines
with phones, running ` + "`pinky host`" + `, that link to it over mutual TLS with a
certificate this gateway issued when they paired (` + "`pinky hosts add NAME`" + `).
Their phones are listed with this machine's. docs/farm.md tells the set-up.

Logs go to stderr. Stop it with Ctrl-C, SIGTERM or ` + "`pinky stop-daemon`" + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
			}
			if leaseIdle < time.Second {
				return fmt.Errorf("--lease-idle %s: want at least 1s (the default is %s)", leaseIdle, lease.DefaultIdleTimeout)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lv}))
			if homeDir != "" { // for its drivers too, which read PINKY_HOME
				if err := os.Setenv("PINKY_HOME", homeDir); err != nil {
					return err
				}
			}
			dirs, err := home.Resolve()
			if err != nil {
				return err
			}
			dc, err := driverConfig(dirs.Home, sim, world, enable, disable, driverEnv)
			if err != nil {
				return err
			}
			var notifier notify.Notifier
			switch notifyMode {
			case "on":
				notifier = notify.Desktop(log)
			case "off":
			default:
				return fmt.Errorf("--notify %q: want on or off", notifyMode)
			}
			g, err := daemon.New(daemon.Config{
				Dirs: dirs, Logger: log, ApprovalWait: approvalWait, ApprovalTTL: approvalTTL, LeaseIdle: leaseIdle,
				Drivers:  dc,
				HTTPAddr: httpAddr, HTTPAllowRemote: allowRemote,
				AutoUnlock: autoUnlock, ConsoleAddr: consoleAddr,
				Notifier: notifier, History: historyURL, HostsListen: hostsListen,
			})
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return g.Run(ctx)
		},
	}
	cmd.Flags().BoolVar(&sim, "sim", false, "add the virtual phones (the pinky-driver-sim driver; the same as --enable-driver sim)")
	cmd.Flags().StringVar(&world, "sim-world", "", "world file for the virtual phones (default: the bundled world; --driver-env sim:PINKY_SIM_WORLD=FILE)")
	cmd.Flags().StringArrayVar(&enable, "enable-driver", nil, "start this driver (repeatable): one the settings or the defaults leave off, such as sim")
	cmd.Flags().StringArrayVar(&disable, "disable-driver", nil, "do not start this driver (repeatable)")
	cmd.Flags().StringArrayVar(&driverEnv, "driver-env", nil, "NAME:KEY=VALUE, more environment for a driver (repeatable), e.g. android:SCRCPY_SERVER_PATH=/opt/scrcpy-server")
	cmd.Flags().StringVar(&level, "log-level", "info", "debug, info, warn or error")
	cmd.Flags().DurationVar(&approvalWait, "approval-wait", agent.MaxApprovalWait, fmt.Sprintf("how long an agent's call waits for your approval before it answers approval_pending (at most %s, which a longer value is cut to: some agent hosts end a tool call at 60 s)", agent.MaxApprovalWait))
	cmd.Flags().DurationVar(&approvalTTL, "approval-ttl", approval.DefaultTTL, "how long an approval stays open before it expires (a deny)")
	cmd.Flags().DurationVar(&leaseIdle, "lease-idle", lease.DefaultIdleTimeout, "how long an agent's lease of a phone holds with no call before it ends (give gateways on one database the same)")
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve MCP over HTTP at `HOST:PORT`, path /mcp, with the bearer token of `pinky token` (port 0: any free port)")
	cmd.Flags().StringVar(&consoleAddr, "console", "", "serve the web console at this loopback `HOST:PORT` (default 127.0.0.1:4777, or a free port when it is taken; port 0: any free port; off: no console)")
	cmd.Flags().BoolVar(&autoUnlock, "auto-unlock", false, "unlock a locked phone an agent acts on with the PIN saved by 'pinky pin set' (from the OS keychain; once per lock, a refused PIN is never retried)")
	cmd.Flags().StringVar(&notifyMode, "notify", "on", "on: a desktop notification when an approval waits for you (D-Bus on Linux, the notification centre on macOS, a toast on Windows); off: none")
	cmd.Flags().StringVar(&homeDir, "home", "", "the data folder, in place of $PINKY_HOME (for a Windows scheduled task, which has no environment of its own)")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow --http on an address other computers reach (the token is then the only protection)")
	cmd.Flags().StringVar(&hostsListen, "hosts-listen", "", "listen for phone hosts (pinky host) at `HOST:PORT`, over mutual TLS, and let them pair there (pinky hosts add); off when empty")
	cmd.Flags().StringVar(&historyURL, "history", "", "keep the history in the PostgreSQL database at this postgres:// or postgresql:// `URL` (default: SQLite in the data folder)")
	return cmd
}

func newStopDaemonCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stop-daemon",
		Short: "Stop the running daemon and its drivers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			c, dirs, err := dial(ctx)
			if err != nil {
				return err
			}
			defer c.Close()
			var st api.Status
			if err := c.Call(ctx, api.MethodStatus, nil, &st); err != nil {
				return err
			}
			if err := c.Call(ctx, api.MethodStop, nil, nil); err != nil {
				return err
			}
			// The daemon has stopped once its lock is free again.
			deadline := time.Now().Add(15 * time.Second)
			for time.Now().Before(deadline) {
				l, err := dirs.AcquireLock()
				if err == nil {
					l.Release()
					fmt.Fprintf(cmd.OutOrStdout(), "stopped the daemon (pid %d)\n", st.Pid)
					return nil
				}
				if !errors.Is(err, home.ErrLocked) {
					return err
				}
				time.Sleep(50 * time.Millisecond)
			}
			return fmt.Errorf("the daemon (pid %d) was asked to stop but still runs after 15 s", st.Pid)
		},
	}
}

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the daemon, its drivers and devices",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st api.Status
			if err := call(cmd.Context(), api.MethodStatus, nil, &st); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), st)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "daemon: pid %d, version %s, up %s\nhome:   %s\nsocket: %s\n", st.Pid, st.Version,
				time.Since(st.Started).Round(time.Second), st.Home, st.Socket)
			if st.HTTP != "" {
				fmt.Fprintf(w, "http:   http://%s/mcp (bearer token: pinky token)\n", st.HTTP)
			}
			if st.Console != "" {
				fmt.Fprintf(w, "console: http://%s (log in with pinky open)\n", st.Console)
			}
			printHistory(w, st.History)
			if st.Hosts != nil {
				fmt.Fprintln(w)
				printHosts(w, *st.Hosts)
			}
			fmt.Fprintln(w)
			printDrivers(w, st.Drivers)
			fmt.Fprintln(w)
			printDevices(w, st.Devices)
			fmt.Fprintln(w)
			printLeases(w, st.Leases)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// printHistory says whether the history can be written: while it cannot,
// agents' actions are refused, and the person must know what to fix.
func printHistory(w io.Writer, h api.History) {
	switch {
	case !h.Writable:
		fmt.Fprintf(w, "history: %s\n  CANNOT BE WRITTEN since %s (%d failed writes): %s.\n"+
			"  Agents' actions are refused until it can (nothing reaches the phones); reads go on.\n  To fix: %s.\n",
			h.Path, h.Since.Local().Format(time.DateTime), h.Failures, h.Cause, h.Fix)
	case !h.Recovered.IsZero():
		fmt.Fprintf(w, "history: %s (writable again since %s, after %d failed writes from %s: %s)\n",
			h.Path, h.Recovered.Local().Format(time.DateTime), h.Failures, h.Since.Local().Format(time.DateTime), h.Cause)
	default:
		fmt.Fprintf(w, "history: %s\n", h.Path)
	}
}
