// Package cli is the pinky command tree (cobra). main in cli/cmd/pinky only
// calls Execute; each command talks to the daemon through the local API or,
// for the daemon itself, wires the gateway.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/safetext"
	"github.com/pinky-gateway/pinky/internal/version"
)

// exitError carries an exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Execute runs the command line and returns the process's exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// A daemon's error may quote a phone or an agent.
	fmt.Fprintln(stderr, "pinky:", safetext.Text(err.Error()))
	return 1
}

// NewRoot builds the command tree.
func NewRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "pinky",
		Short: "Let AI agents use your phones, with you in charge",
		Long: `Pinky is a gateway between AI agents and your real phones. Agents reach it
through MCP; you stay in charge through approvals, a live mirror, take-over
and a full history. The daemon runs in the background; these commands talk
to it through a private local socket.

Data lives in $PINKY_HOME (default ~/.local/share/pinky; on macOS
~/Library/Application Support/Pinky; on Windows %LOCALAPPDATA%\Pinky).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version.Get().String(),
	}
	root.SetVersionTemplate("pinky {{.Version}}\n")
	root.AddCommand(newDaemonCmd(), newStopDaemonCmd(), newStatusCmd(), newDevicesCmd(), newDriversCmd(), newDriverCmd(), newMCPCmd(), newHistoryCmd(), newTakeOverCmd(), newHandBackCmd(), newUnlockCmd(), newStopCmd(), newApprovalsCmd(), newApproveCmd(), newDenyCmd(), newWatchCmd(), newTokenCmd(), newPolicyCmd(), newPinCmd(), newOpenCmd(), newExportCmd(), newSettingsCmd(), newIOSCmd(), newVersionCmd(), newDoctorCmd(), newServiceCmd(), newManCmd())
	root.AddCommand(newHostsCmd(), newHostCmd())
	root.AddCommand(newSkillCmd())
	attachCompletions(root)
	return root
}

// dial connects to the running daemon.
func dial(ctx context.Context) (*api.Client, home.Dirs, error) {
	dirs, err := home.Resolve()
	if err != nil {
		return nil, dirs, err
	}
	c, err := api.Dial(ctx, dirs.Socket())
	if errors.Is(err, api.ErrNoDaemon) {
		return nil, dirs, fmt.Errorf("%w: start it with `pinky daemon` (PINKY_HOME %s)", err, dirs.Home)
	}
	return c, dirs, err
}

// call makes one API call to the running daemon.
func call(ctx context.Context, method string, params, result any) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Call(ctx, method, params, result)
}
