package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/cli/daemon"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/gateway/hostmux"
	"github.com/pinky-gateway/pinky/gateway/remote"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// HostDir is the folder of a phone host's identity in data folder home:
// its certificate, its key and the gateway's pinned fingerprint.
func HostDir(home string) string { return filepath.Join(home, "host") }

func newHostCmd() *cobra.Command {
	var sim bool
	var gateway, pair, world, level, homeDir string
	var enable, disable, driverEnv []string
	var minBackoff, maxBackoff time.Duration
	cmd := &cobra.Command{
		Use:   "host --gateway HOST:PORT [--pair CODE]",
		Short: "Serve this machine's phones to a gateway on another machine",
		Long: `Run a phone host: start this machine's phone drivers, as the daemon does,
and link to the gateway at --gateway over one connection with mutual TLS
that this machine dials out. No port opens here; the driver contract,
video included, rides that connection. The gateway lists this machine's
phones with its own, and the person approves, watches and takes over
there.

The first time, pair: on the gateway run ` + "`pinky hosts add NAME`" + ` and pass
the code it prints with --pair. The host pins the gateway's fingerprint,
stores the certificate the gateway issued in $PINKY_HOME/host (readable by
you alone), and later starts need no --pair. When the link drops the host
dials again with backoff, and its phones come back under the same ids.

--sim serves the virtual phones, for demos and tests. One host or daemon
runs per data folder. Logs go to stderr; stop it with Ctrl-C or SIGTERM.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var lv slog.Level
			if err := lv.UnmarshalText([]byte(level)); err != nil {
				return fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
			}
			if gateway == "" {
				return errors.New("--gateway HOST:PORT is required: the address the gateway's daemon listens on for hosts (its --hosts-listen)")
			}
			if err := daemon.CheckHostsAddr(gateway); err != nil {
				return fmt.Errorf("--gateway: %w", err)
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: lv}))
			if homeDir != "" {
				if err := os.Setenv("PINKY_HOME", homeDir); err != nil {
					return err
				}
			}
			dirs, err := home.Resolve()
			if err != nil {
				return err
			}
			if err := dirs.Ensure(); err != nil {
				return fmt.Errorf("data folder: %w", err)
			}
			// One host or daemon per data folder: two would start two drivers
			// for the same phones.
			lock, err := dirs.AcquireLock()
			if err != nil {
				return err
			}
			defer lock.Release()
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()

			var ident *pki.Host
			if pair != "" {
				ident, err = remote.Pair(ctx, gateway, pair, HostDir(dirs.Home))
				if err != nil {
					return err
				}
				log.Info("paired with the gateway", "host", ident.Name, "gateway", gateway, "fingerprint", ident.Pin.String())
			} else {
				ident, err = pki.LoadHost(HostDir(dirs.Home))
				if errors.Is(err, pki.ErrNotPaired) {
					return fmt.Errorf("this machine is not paired with a gateway yet: run `pinky hosts add NAME` on the gateway, then `pinky host --gateway %s --pair CODE` here", gateway)
				}
				if err != nil {
					return fmt.Errorf("this host's identity: %w", err)
				}
			}
			dc, err := driverConfig(dirs.Home, sim, world, enable, disable, driverEnv)
			if err != nil {
				return err
			}
			dc.Logger = log
			h := driverhost.New(dc)
			if err := h.Start(ctx); err != nil {
				return err
			}
			defer h.Stop()
			log.Info("phone host ready", "host", ident.Name, "pid", os.Getpid(), "drivers", len(h.Drivers()), "devices", len(h.Devices()))
			mux := hostmux.New(h, daemon.Version, log)
			return remote.Serve(ctx, gateway, ident.ClientTLS(), mux, remote.ServeOptions{MinBackoff: minBackoff, MaxBackoff: maxBackoff, Log: log})
		},
	}
	f := cmd.Flags()
	f.StringVar(&gateway, "gateway", "", "the gateway's address for hosts, `HOST:PORT` (its pinky daemon --hosts-listen)")
	f.StringVar(&pair, "pair", "", "pair with the gateway first, with the `CODE` that pinky hosts add printed there")
	f.BoolVar(&sim, "sim", false, "serve the virtual phones (the pinky-driver-sim driver)")
	f.StringVar(&world, "sim-world", "", "world file for the virtual phones (default: the bundled world)")
	f.StringArrayVar(&enable, "enable-driver", nil, "start this driver (repeatable)")
	f.StringArrayVar(&disable, "disable-driver", nil, "do not start this driver (repeatable)")
	f.StringArrayVar(&driverEnv, "driver-env", nil, "NAME:KEY=VALUE, more environment for a driver (repeatable)")
	f.StringVar(&level, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&homeDir, "home", "", "the data folder, in place of $PINKY_HOME")
	f.DurationVar(&minBackoff, "min-backoff", time.Second, "the wait before dialling the gateway again after the link drops; it doubles with each failure")
	f.DurationVar(&maxBackoff, "max-backoff", 30*time.Second, "the longest wait between dials")
	return cmd
}
