package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/pinky-gateway/pinky/internal/pki"

	"github.com/spf13/cobra"
	"github.com/zalando/go-keyring"

	"github.com/pinky-gateway/pinky/cli/daemon"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/doctor"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/gateway/pin"
	"github.com/pinky-gateway/pinky/gateway/policy"
)

func newDoctorCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check this installation and say what to do about each problem",
		Long: `Check what Pinky needs, one line per check, and say for each problem what
to do: the data folder (private, free space), the token file, the policy
and drivers.yaml, the keychain, the drivers found, what each driver needs
(adb and its server, the scrcpy server, WebDriverAgent…, as the drivers
report it), each phone (authorized, online) and, with a daemon running, its
console and MCP over HTTP.

With a daemon running, the drivers and phones are the daemon's. Without
one, pinky starts the drivers once to ask them, as ` + "`pinky drivers`" + ` does.
The exit status is 0 only when no check found a problem.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dirs, err := home.Resolve()
			if err != nil {
				return err
			}
			r := runDoctor(cmd.Context(), dirs)
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), r); err != nil {
					return err
				}
			} else {
				r.Write(cmd.OutOrStdout(), show)
			}
			if !r.OK() {
				return exitError{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts: [{check, ok, detail, fix}]")
	return cmd
}

// runDoctor measures what the checks of package doctor judge.
func runDoctor(ctx context.Context, dirs home.Dirs) doctor.Report {
	var r doctor.Report
	st, daemonErr := daemonStatus(ctx, dirs)
	r = append(r, doctor.Daemon(st, daemonErr))

	fi, err := os.Stat(dirs.Home)
	r = append(r, doctor.DataFolder(dirs.Home, fi, err, runtime.GOOS != "windows"))
	free, err := doctor.FreeBytes(existing(dirs.Home))
	r = append(r, doctor.FreeSpace(dirs.Home, free, err))

	tokenPath := dirs.Token()
	fi, statErr := os.Stat(tokenPath)
	var readErr error
	if statErr == nil {
		_, _, readErr = home.ReadToken(tokenPath)
	}
	r = append(r, doctor.Token(tokenPath, fi, statErr, readErr, runtime.GOOS != "windows"))

	policyPath := filepath.Join(dirs.Home, policy.PolicyFile)
	_, err = policy.Load(dirs.Home)
	r = append(r, doctor.Policy(policyPath, err))
	_, settingsErr := driverhost.LoadSettings(dirs.Home)
	r = append(r, doctor.DriverSettings(filepath.Join(dirs.Home, driverhost.SettingsFile), settingsErr))
	r = append(r, doctor.Keychain(runtime.GOOS, keychainErr(ctx)))
	// One identity per gateway this machine serves its phones to.
	if ids, err := pki.LoadHosts(HostDir(dirs.Home)); err != nil {
		r = append(r, doctor.HostIdentity(HostDir(dirs.Home), nil, err, time.Now()))
	} else {
		for _, id := range ids {
			r = append(r, doctor.HostIdentity(id.Dir, id.Host, id.Err, time.Now()))
		}
	}

	if daemonErr == nil {
		r = append(r, doctor.Found(candidates(st.Drivers), nil, nil, []string{"the daemon's search"})...)
		r = append(r, doctor.Listeners(st, dialTCP)...)
		if st.Hosts != nil {
			r = append(r, doctor.Hosts(*st.Hosts, time.Now())...)
		}
		return append(r, doctor.Drivers(st.Drivers, st.Devices)...)
	}
	// No daemon: the drivers the daemon would start, asked once. A
	// drivers.yaml that does not load is reported above; the defaults are
	// asked then.
	cfg, err := driverConfig(dirs.Home, false, "", nil, nil, nil)
	if err != nil {
		cfg = driverhost.DefaultConfig(dirs.Home)
		cfg.SetEnabled("sim", false)
	}
	found, err := driverhost.Discover(cfg)
	searched := []string{dirs.Drivers(), "PATH"}
	if cfg.ExeDir != "" {
		searched = append([]string{cfg.ExeDir}, searched...)
	}
	// The drivers there but turned off, so that "none found" is not said of them.
	var off []string
	all := cfg
	all.Disabled = nil
	if every, _ := driverhost.Discover(all); len(every) > len(found) {
		on := map[string]bool{}
		for _, c := range found {
			on[c.Name] = true
		}
		for _, c := range every {
			if !on[c.Name] {
				off = append(off, c.Name)
			}
		}
	}
	r = append(r, doctor.Found(found, off, err, searched)...)
	ds, devs, err := probe(ctx, cfg)
	if err != nil {
		return append(r, doctor.Result{Check: "drivers", Detail: "could not be started: " + err.Error(),
			Fix: "run `pinky daemon` and read its log"})
	}
	return append(r, doctor.Drivers(ds, devs)...)
}

// daemonStatus asks the daemon for its status; api.ErrNoDaemon when none runs.
func daemonStatus(ctx context.Context, dirs home.Dirs) (api.Status, error) {
	var st api.Status
	c, err := api.Dial(ctx, dirs.Socket())
	if err != nil {
		return st, err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return st, c.Call(ctx, api.MethodStatus, nil, &st)
}

// existing returns path, or its nearest folder that exists: the file
// system the data folder will be made on.
func existing(path string) string {
	for {
		if _, err := os.Stat(path); err == nil {
			return path
		}
		parent := filepath.Dir(path)
		if parent == path {
			return path
		}
		path = parent
	}
}

// keychainErr reads an entry that does not exist from the OS keychain:
// "not found" means it is reachable. A keychain that does not answer in
// a few seconds is not reachable.
func keychainErr(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := pin.OSKeychain{}.Get(pin.Service, "pinky-doctor")
		if errors.Is(err, keyring.ErrNotFound) {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(3 * time.Second):
		return errors.New("it did not answer within 3 s")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dialTCP checks that a listener answers.
func dialTCP(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// candidates are the drivers a daemon found, as the search lists them.
func candidates(ds []api.Driver) []driverhost.Candidate {
	out := make([]driverhost.Candidate, 0, len(ds))
	for _, d := range ds {
		out = append(out, driverhost.Candidate{Name: d.Name, Path: d.Path, Source: d.Source})
	}
	return out
}

// stderrGrace is how long the probe waits, after the drivers listed their
// phones, for the lines they wrote meanwhile: stderr reaches the host
// apart from the calls.
const stderrGrace = 300 * time.Millisecond

// waitStderr waits stderrGrace, or until ctx ends.
func waitStderr(ctx context.Context) {
	select {
	case <-time.After(stderrGrace):
	case <-ctx.Done():
	}
}

// probe starts the drivers of cfg once (pinky drivers and pinky doctor
// without a daemon) and returns their status and phones.
func probe(ctx context.Context, cfg driverhost.Config) ([]api.Driver, []api.Device, error) {
	cfg.Logger = slog.New(slog.DiscardHandler)
	h := driverhost.New(cfg)
	if err := h.Start(ctx); err != nil {
		return nil, nil, err
	}
	defer h.Stop()
	waitStderr(ctx)
	var ds []api.Driver
	for _, s := range h.Drivers() {
		ds = append(ds, daemon.APIDriver(s))
	}
	return ds, daemon.APIDevices(h.Devices()), nil
}
