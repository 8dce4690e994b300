package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
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
	var world, level, homeDir string
	var gateways, pairs, enable, disable, driverEnv []string
	var minBackoff, maxBackoff time.Duration
	cmd := &cobra.Command{
		Use:   "host --gateway HOST:PORT [--gateway HOST:PORT...] [--pair CODE...]",
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
			if len(gateways) == 0 {
				return errors.New("--gateway HOST:PORT is required: the address the gateway's daemon listens on for hosts (its --hosts-listen)")
			}
			for _, g := range gateways {
				if err := daemon.CheckHostsAddr(g); err != nil {
					return fmt.Errorf("--gateway %s: %w", g, err)
				}
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

			for _, code := range pairs {
				ident, gw, err := pairWith(ctx, gateways, code, HostDir(dirs.Home))
				if err != nil {
					return err
				}
				log.Info("paired with the gateway", "host", ident.Name, "gateway", gw, "fingerprint", ident.Pin.String())
			}
			hosts, err := loadIdentities(HostDir(dirs.Home), gateways, log)
			if err != nil {
				return err
			}
			// The highest lease fence seen per phone, kept across restarts so
			// that a gateway which lost its lease stays refused.
			fences, err := remote.OpenFences(filepath.Join(HostDir(dirs.Home), "fences.json"), log)
			if err != nil {
				return err
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
			names := make([]string, len(hosts))
			for i, id := range hosts {
				names[i] = id.Name
			}
			log.Info("phone host ready", "host", strings.Join(names, ","), "pid", os.Getpid(), "drivers", len(h.Drivers()), "devices", len(h.Devices()))
			mux := hostmux.New(h, daemon.Version, log)
			// One dialling loop per gateway, all serving the same drivers;
			// the process's fences are shared by every link.
			var wg sync.WaitGroup
			errs := make([]error, len(gateways))
			for i, g := range gateways {
				wg.Go(func() {
					errs[i] = remote.Serve(ctx, g, pki.ClientTLSFor(hosts), mux, remote.ServeOptions{MinBackoff: minBackoff, MaxBackoff: maxBackoff, Log: log, Fences: fences})
				})
			}
			wg.Wait()
			return errors.Join(errs...)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&gateways, "gateway", nil, "the gateway's address for hosts, `HOST:PORT` (its pinky daemon --hosts-listen); repeat it for several gateways on one database")
	f.StringArrayVar(&pairs, "pair", nil, "pair with a gateway first, with the `CODE` that pinky hosts add printed there (repeatable: one per gateway)")
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

// pairWith pairs this host with the gateway among gateways whose
// fingerprint code names, and stores the identity in dir's folder for that
// gateway. A gateway of another fingerprint refuses the TLS handshake
// before the code's token is sent, so the token goes to its own gateway
// only.
func pairWith(ctx context.Context, gateways []string, code, dir string) (*pki.Host, string, error) {
	_, pin, err := pki.ParseCode(code)
	if err != nil {
		return nil, "", fmt.Errorf("--pair: %w", err)
	}
	into, err := pki.IdentityDir(dir, pin)
	if err != nil {
		return nil, "", err
	}
	var mismatched []string
	for _, g := range gateways {
		ident, err := remote.Pair(ctx, g, code, into)
		if errors.Is(err, pki.ErrPinMismatch) && len(gateways) > 1 {
			mismatched = append(mismatched, g)
			continue
		}
		if err != nil {
			return nil, "", err
		}
		return ident, g, nil
	}
	return nil, "", fmt.Errorf("--pair: the code is for the gateway with fingerprint %s, and none of %s has it: check the code against `pinky hosts add` on the gateway you meant", pin, strings.Join(mismatched, ", "))
}

// loadIdentities reads this host's identities, one per gateway it paired
// with. One that cannot be read is logged and left out, unless none can.
func loadIdentities(dir string, gateways []string, log *slog.Logger) ([]*pki.Host, error) {
	ids, err := pki.LoadHosts(dir)
	if errors.Is(err, pki.ErrNotPaired) {
		return nil, fmt.Errorf("this machine is not paired with a gateway yet: run `pinky hosts add NAME` on the gateway, then `pinky host --gateway %s --pair CODE` here", gateways[0])
	}
	if err != nil {
		return nil, fmt.Errorf("this host's identities: %w", err)
	}
	var hosts []*pki.Host
	var bad []error
	for _, id := range ids {
		if id.Err != nil {
			log.Error("an identity of this host cannot be read: pair again with its gateway", "dir", id.Dir, "err", id.Err)
			bad = append(bad, id.Err)
			continue
		}
		hosts = append(hosts, id.Host)
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("this host's identity: %w", errors.Join(bad...))
	}
	return hosts, nil
}
