package cli

import (
	"errors"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/version"
)

// versionInfo is what `pinky version --json` prints.
type versionInfo struct {
	version.Info
	// Drivers are the drivers' own versions: the running daemon's
	// drivers, or, with none running, those pinky finds and starts once.
	Drivers []driverVersion `json:"drivers"`
}

type driverVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Path    string `json:"path"`
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print pinky's version, commit, build date and Go version, and its drivers' versions",
		Long: `Print which build of pinky this is (its version, the git commit and commit
time it was built from, the Go version) and the version of each phone
driver: the running daemon's drivers, or, when no daemon runs, the drivers
pinky finds, each started once to ask it. pinky --version prints the first
line only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := versionInfo{Info: version.Get(), Drivers: []driverVersion{}}
			var ds []api.Driver
			err := call(cmd.Context(), api.MethodDrivers, nil, &ds)
			if errors.Is(err, api.ErrNoDaemon) {
				ds, err = probeDrivers(cmd.Context())
			}
			if err != nil {
				return fmt.Errorf("the drivers' versions: %w", err)
			}
			for _, d := range ds {
				out.Drivers = append(out.Drivers, driverVersion{Name: d.Name, Version: d.Version, Path: d.Path})
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintln(w, "pinky", out.Info)
			if len(out.Drivers) == 0 {
				fmt.Fprintln(w, "no drivers found (looked next to pinky, in $PINKY_HOME/drivers and on PATH)")
				return nil
			}
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "DRIVER\tVERSION\tPATH")
			for _, d := range out.Drivers {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", show(d.Name), show(dash(d.Version)), show(dash(d.Path)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}
