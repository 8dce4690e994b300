package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/doctor"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

func newDriversCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "drivers",
		Short: "List the phone drivers: name, version, path, pid, state, restarts, devices",
		Long: `List every phone driver, built in or third party, the same way.

With a daemon running, this is the daemon's view. Without one, pinky finds
the drivers, starts each once to ask it, lists them and stops them again;
it says so on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ds []api.Driver
			err := call(cmd.Context(), api.MethodDrivers, nil, &ds)
			if errors.Is(err, api.ErrNoDaemon) {
				fmt.Fprintln(cmd.ErrOrStderr(), "no daemon is running: starting the drivers once to list them")
				ds, err = probeDrivers(cmd.Context())
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ds)
			}
			printDrivers(cmd.OutOrStdout(), ds)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// probeDrivers starts every driver found, waits for each to start or fail,
// and returns their status.
func probeDrivers(ctx context.Context) ([]api.Driver, error) {
	dirs, err := home.Resolve()
	if err != nil {
		return nil, err
	}
	ds, _, err := probe(ctx, driverhost.DefaultConfig(dirs.Home))
	return ds, err
}

func newDriverCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "driver",
		Short: "Restart, attach, inspect or check one driver",
	}
	cmd.AddCommand(newDriverRestartCmd(), newDriverAttachCmd(), newDriverCheckCmd(), newDriverScreenCmd(), newDriverRunCmd())
	return cmd
}

func newDriverRestartCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "restart NAME",
		Short: "Restart a driver of the running daemon",
		Long: `Restart one driver on purpose, the way the daemon restarts a driver that
crashed: its devices go offline, calls in flight end with "driver gone", and
the devices come back when the new process has listed them. Leases survive.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var d api.Driver
			if err := call(cmd.Context(), api.MethodDriverRestart, api.DriverName{Name: args[0]}, &d); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "restarted %s: pid %d, %s, %d devices\n", show(d.Name), d.Pid, show(d.State), d.Devices)
			return nil
		},
	}
}

func newDriverAttachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "attach NAME REATTACH",
		Short: "Attach a driver that you started by hand (for a debugger)",
		Long: `Attach a driver process that you started yourself, for example under a
debugger. Start it with PINKY_DRIVER_DEBUG=1: it prints one JSON line,
{"network":"unix","addr":"/tmp/plugin…","pid":…}. Pass that line as
REATTACH (or "-" to read it from stdin):

  PINKY_DRIVER_DEBUG=1 dlv exec ./pinky-driver-acme   # prints the line
  pinky driver attach acme '{"network":"unix","addr":"/tmp/plugin123","pid":4242}'

The daemon supervises an attached driver like any other, except that it
never restarts it: when it exits, its devices go offline.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			line := args[1]
			if line == "-" {
				b, err := io.ReadAll(io.LimitReader(cmd.InOrStdin(), 64<<10))
				if err != nil {
					return err
				}
				line = string(b)
			}
			var r sdk.Reattach
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&r); err != nil {
				return fmt.Errorf("REATTACH must be the JSON line the driver printed: %w", err)
			}
			if r.Addr == "" || r.Pid <= 0 || (r.Network != "unix" && r.Network != "tcp") {
				return fmt.Errorf(`REATTACH needs "network" (unix or tcp), "addr" and "pid"; got %s`, strings.TrimSpace(line))
			}
			var d api.Driver
			p := api.AttachParams{Name: args[0], Network: r.Network, Addr: r.Addr, Pid: r.Pid}
			if err := call(cmd.Context(), api.MethodDriverAttach, p, &d); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "attached %s %s (pid %d): %d devices\n", show(d.Name), show(d.Version), d.Pid, d.Devices)
			return nil
		},
	}
}

func newDriverCheckCmd() *cobra.Command {
	var opts drivertest.BinaryOptions
	var list, verbose bool
	cmd := &cobra.Command{
		Use:   "check BINARY",
		Short: "Run the conformance suite against a driver executable",
		Long: `Start the driver executable the way the daemon does (go-plugin over gRPC)
and run the conformance suite against it: every case checks one rule of
proto/pinky/driver/v1/SPEC.md. Cases of capabilities the driver does not
declare are skipped, and a declared capability that answers "unimplemented"
fails. The exit status is 0 when no case failed.

The driver can be written in any language.`,
		Args: cobra.RangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if list {
				drivertest.WriteList(w)
				return nil
			}
			if len(args) != 1 {
				return errors.New("check needs the driver executable: pinky driver check ./pinky-driver-NAME")
			}
			if verbose {
				opts.Stderr = cmd.ErrOrStderr()
			}
			// The driver gets the data folder, as from the daemon (the iOS
			// driver reads its phone list there); --env entries come after
			// and win.
			if dirs, err := home.Resolve(); err == nil {
				opts.Env = append([]string{"PINKY_HOME=" + dirs.Home}, opts.Env...)
			}
			sum, err := drivertest.CheckBinary(cmd.Context(), args[0], opts, w)
			if err != nil {
				return err
			}
			if !sum.OK() {
				return exitError{1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.DeviceID, "device", "", "device to act on (default: the first online device)")
	f.StringVar(&opts.PIN, "pin", "", "PIN that unlocks the device, for drivers that serve Unlock")
	f.BoolVar(&opts.NoDevices, "no-devices", false, "the driver has no devices here: skip the cases that need one")
	f.StringVar(&opts.Run, "run", "", "run only the cases whose name matches this regular expression")
	f.StringVar(&opts.Skip, "skip", "", "skip the cases whose name matches this regular expression")
	f.DurationVar(&opts.CaseTimeout, "case-timeout", 30*time.Second, "time limit of each case")
	f.Float64Var(&opts.Slack, "slack", 0, "multiply the waits for SPEC.md's time promises by this (0: by the machine's load average over its cores, when above 1)")
	f.StringSliceVar(&opts.Env, "env", nil, "KEY=VALUE for the driver's environment (repeatable)")
	f.BoolVar(&list, "list", false, "list the cases and exit")
	f.BoolVarP(&verbose, "verbose", "v", false, "show the driver's stderr")
	return cmd
}

func newDriverScreenCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "screen DEVICE",
		Short: "Print a device's screen exactly as its driver reports it",
		Long: `Print the element tree that the device's driver reports, one element a
line, indented by depth, with its bounds and flags. This is the raw reply of
the driver, for driver authors; agents read a compact form of it.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var s sdk.Screen
			if err := call(cmd.Context(), api.MethodScreen, api.DeviceParams{Device: args[0]}, &s); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), s)
			}
			printScreen(cmd.OutOrStdout(), &s)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newDevicesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List the phones of every driver",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ds []api.Device
			if err := call(cmd.Context(), api.MethodDevices, nil, &ds); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ds)
			}
			printDevices(cmd.OutOrStdout(), ds)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

// writeJSON writes v as indented JSON: exact data, with what JSON would
// leave raw and a terminal would act on (bidirectional controls, C1
// controls) written as \u escapes, which decode to the same text.
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(safetext.JSON(b.Bytes()))
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func printDrivers(w io.Writer, ds []api.Driver) {
	if len(ds) == 0 {
		fmt.Fprintln(w, "no drivers found (looked next to pinky, in $PINKY_HOME/drivers and on PATH)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tPATH\tPID\tSTATE\tRESTARTS\tDEVICES")
	for _, d := range ds {
		pid := "-"
		if d.Pid > 0 {
			pid = fmt.Sprint(d.Pid)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\n", show(d.Name), show(dash(d.Version)), show(dash(d.Path)), pid, show(d.State), d.Restarts, d.Devices)
	}
	tw.Flush()
	for _, d := range ds {
		if d.LastError != "" && (d.State == "failed" || d.State == "restarting" || d.State == "exited") {
			fmt.Fprintf(w, "\n%s: %s\n", show(d.Name), show(d.LastError))
			for _, l := range d.Stderr {
				fmt.Fprintf(w, "  | %s\n", show(l))
			}
			continue
		}
		// A driver that runs may still lack what it needs (adb, say): it
		// says so as a check, shown here rather than a silent 0 devices.
		for _, p := range doctor.Problems(d) {
			fmt.Fprintf(w, "\n%s: %s\n", show(d.Name), show(p))
		}
	}
}

func printDevices(w io.Writer, ds []api.Device) {
	if len(ds) == 0 {
		fmt.Fprintln(w, "no phones yet: "+doctor.NoPhones+". `pinky doctor` says what is missing.")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	// The HOST column shows only when a phone host serves some phone.
	hosts := slices.ContainsFunc(ds, func(d api.Device) bool { return d.Host != "" })
	head := "ID\tDRIVER\tSTATE\tPLATFORM\tMODEL\tOS\tCONNECTION\tLOCK"
	if hosts {
		head += "\tHOST"
	}
	fmt.Fprintln(tw, head)
	for _, d := range ds {
		state := d.State
		if !d.Online && state == "online" {
			state = "offline" // the driver is down, or the phone host's link
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", show(d.ID), show(d.Driver), show(state), show(d.Platform), show(dash(d.Model)),
			show(dash(d.OSVersion)), show(d.Connection), show(dash(d.LockState)))
		if hosts {
			fmt.Fprintf(tw, "\t%s", show(dash(d.Host)))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, d := range ds {
		if d.Detail != "" && d.State != "online" {
			fmt.Fprintf(w, "%s: %s\n", show(d.ID), show(d.Detail))
		}
	}
	for _, d := range ds {
		for _, m := range d.Missing {
			fmt.Fprintf(w, "%s lacks %s\n", show(d.ID), missingLine(m))
		}
	}
	// What a phone lacks because its driver does not offer it at all is
	// not the person's to enable: one line per phone, after the rest.
	for _, d := range ds {
		if len(d.NotOffered) > 0 {
			fmt.Fprintf(w, "%s: its driver (%s) does not offer %s\n", show(d.ID), show(d.Driver), show(strings.Join(d.NotOffered, ", ")))
		}
	}
}

// missingLine says what a phone lacks, why and how the person enables it,
// in one line of safe text: "video: no scrcpy server found; to enable it:
// install scrcpy 3.x".
func missingLine(m api.MissingCap) string {
	line := show(m.Capability)
	if m.Reason != "" {
		line += ": " + show(m.Reason)
	}
	if m.Fix != "" {
		line += "; to enable it: " + show(m.Fix)
	}
	return line
}

func printScreen(w io.Writer, s *sdk.Screen) {
	fmt.Fprintf(w, "app %s (%s)  %dx%d @%ddpi %s  lock=%s screen_on=%v keyboard=%v  %d elements\n",
		show(dash(s.App.ID)), show(dash(s.App.Label)), s.Width, s.Height, s.DensityDPI, show(dash(string(s.Orientation))),
		show(dash(string(s.LockState))), s.ScreenOn, s.KeyboardShown, len(s.Elements))
	depth := map[int]int{}
	for _, e := range s.Elements {
		d := 0
		if e.ParentID != 0 {
			d = depth[e.ParentID] + 1
		}
		depth[e.ID] = d
		var parts []string
		if e.Text != "" {
			parts = append(parts, fmt.Sprintf("%q", e.Text))
		}
		if e.ContentDescription != "" {
			parts = append(parts, fmt.Sprintf("desc=%q", e.ContentDescription))
		}
		if e.ResourceID != "" {
			parts = append(parts, "id="+e.ResourceID)
		}
		if e.Hint != "" {
			parts = append(parts, fmt.Sprintf("hint=%q", e.Hint))
		}
		if e.Value != "" {
			parts = append(parts, fmt.Sprintf("value=%q", e.Value))
		}
		for _, f := range []struct {
			on   bool
			name string
		}{
			{e.Clickable, "clickable"}, {e.LongClickable, "long-clickable"}, {e.Editable, "editable"},
			{e.Password, "password"}, {e.Scrollable, "scrollable"}, {e.Checkable, "checkable"}, {e.Checked, "checked"},
			{e.Focused, "focused"}, {e.Selected, "selected"}, {!e.Enabled, "disabled"}, {!e.Visible, "hidden"},
		} {
			if f.on {
				parts = append(parts, f.name)
			}
		}
		b := e.Bounds
		fmt.Fprintf(w, "%s[%d] %s [%d,%d][%d,%d] %s\n", strings.Repeat("  ", d), e.ID, show(e.Class), b.Left, b.Top, b.Right, b.Bottom, show(strings.Join(parts, " ")))
	}
}
