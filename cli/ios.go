package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/home"
)

// A driver's setup (its phone list, its pairing) is the driver's own: it
// serves setup commands as subcommands of its binary, and `pinky driver
// run NAME …` runs them, found the way the daemon finds the driver, with
// the data folder in PINKY_HOME. pinky knows no driver's setup: `pinky ios
// …` is `pinky driver run ios …`.

func newDriverRunCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME [ARGS...]",
		Short: "Run a driver's own setup command (pinky-driver-NAME ARGS...)",
		Long: `Run a setup command of a driver: the executable pinky-driver-NAME, found
where the daemon finds drivers (next to pinky, in $PINKY_HOME/drivers, on
PATH), with ARGS and PINKY_HOME set. What it can do is the driver's; "help"
usually lists it. pinky ios … is pinky driver run ios ….`,
		Args:               cobra.MinimumNArgs(1),
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "-h" || args[0] == "--help" {
				return cmd.Help()
			}
			return runDriver(cmd, args[0], args[1:])
		},
	}
}

func newIOSCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "ios add|remove|list [ARGS...]",
		Short: "Add, remove and list the iPhones Pinky drives (the iOS driver's setup)",
		Long: `Add, remove and list the iPhones in $PINKY_HOME/ios.yaml: the setup of the
iOS driver, which it serves itself (pinky driver run ios …). pinky ios help
says how:

  pinky ios add "Ana's iPhone" --wda http://192.168.1.20:8100 --video-listen :7420
  pinky ios list
  pinky ios remove "Ana's iPhone"`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				args = []string{"help"}
			}
			return runDriver(cmd, "ios", args)
		},
	}
}

// runDriver runs the driver's executable with args and the person's
// terminal, and passes its exit status on.
func runDriver(cmd *cobra.Command, name string, args []string) error {
	dirs, err := home.Resolve()
	if err != nil {
		return err
	}
	if err := dirs.Ensure(); err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	found, _ := driverhost.Discover(driverhost.DefaultConfig(dirs.Home))
	path := ""
	for _, c := range found {
		if c.Name == name {
			path = c.Path
		}
	}
	if path == "" {
		return fmt.Errorf("no driver %q: pinky-driver-%s is not next to pinky, in %s or on PATH", name, name, dirs.Drivers())
	}
	c := exec.CommandContext(cmd.Context(), path, args...)
	c.Env = append(os.Environ(), "PINKY_HOME="+dirs.Home)
	c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
	err = c.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return exitError{ee.ExitCode()}
	}
	return err
}
