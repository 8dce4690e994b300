package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/home"
)

func newApprovalsCmd() *cobra.Command {
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "approvals",
		Short: "List what agents wait for you to approve, with the cards",
		Long: `List the approvals agents wait for: who asks, for which task, on which phone,
what the action is and why it needs you (the commit detected and the policy
rule), the element it aims at, and the screen the agent saw. Decide with
` + "`pinky approve ID`" + ` or ` + "`pinky deny ID`" + `. An approval expires (as a deny)
a minute after it opened.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var cards []api.Card
			if err := call(cmd.Context(), api.MethodApprovals, api.ApprovalFilter{All: all}, &cards); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), cards)
			}
			printCards(cmd.OutOrStdout(), cards)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().BoolVar(&all, "all", false, "include decided and expired approvals")
	return cmd
}

func newApproveCmd() *cobra.Command {
	var forTask bool
	cmd := &cobra.Command{
		Use:   "approve ID",
		Short: "Allow the action an agent waits for",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd, api.DecideParams{ID: args[0], Allow: true, ForTask: forTask})
		},
	}
	cmd.Flags().BoolVar(&forTask, "for-task", false, "also allow later actions of this kind on this element for the rest of the task")
	return cmd
}

func newDenyCmd() *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "deny ID",
		Short: "Refuse the action an agent waits for",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return decide(cmd, api.DecideParams{ID: args[0], Reason: reason})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "a sentence the agent reads")
	return cmd
}

func decide(cmd *cobra.Command, p api.DecideParams) error {
	var c api.Card
	if err := call(cmd.Context(), api.MethodDecide, p, &c); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s %s on %s\n", c.Status, show(c.ID), show(c.Tool), show(c.Target), show(c.Device))
	return nil
}

// printCards writes the cards as the person reads them. Everything on a
// card came from an agent or a phone: each value goes through show, each
// line of the screen too, so nothing in it can move the cursor, clear the
// terminal, start a line of its own or reorder what is read.
func printCards(w io.Writer, cards []api.Card) {
	if len(cards) == 0 {
		fmt.Fprintln(w, "no approvals waiting")
		return
	}
	for i, c := range cards {
		if i > 0 {
			fmt.Fprintln(w)
		}
		left := ""
		if c.Status == api.ApprovalPending {
			left = fmt.Sprintf(" · %s left", time.Until(c.ExpiresAt).Round(time.Second))
		}
		id := show(c.ID)
		fmt.Fprintf(w, "%s  %s%s\n", id, show(strings.ToUpper(c.Status)), left)
		if c.Summary != "" {
			fmt.Fprintf(w, "  approve %s\n", show(c.Summary)) // what the screen says is committed
		}
		fmt.Fprintf(w, "  agent   %s, task \"%s\"\n", show(c.Agent), show(c.TaskText))
		fmt.Fprintf(w, "  phone   %s\n", show(c.Device))
		fmt.Fprintf(w, "  action  %s %s on %s\n", show(c.Tool), show(c.Args), show(dash(c.Target)))
		fmt.Fprintf(w, "  why     %s (rule: %s)", show(dash(c.Commit)), show(dash(c.Rule)))
		if c.Evidence != "" {
			fmt.Fprintf(w, " — %s", show(c.Evidence))
		}
		fmt.Fprintln(w)
		if c.Screenshot != "" {
			where := filepath.FromSlash(c.ScreenshotPath)
			if dirs, err := home.Resolve(); err == nil {
				where = filepath.Join(dirs.Media(), where)
			}
			fmt.Fprintf(w, "  picture %s (the target framed in red)\n", show(where))
		}
		if c.Status == api.ApprovalPending {
			fmt.Fprintf(w, "  decide  pinky approve %s   |   pinky deny %s --reason \"…\"\n", id, id)
			if c.ForTaskCovers != "" {
				fmt.Fprintf(w, "          pinky approve %s --for-task also allows %s\n", id, show(c.ForTaskCovers))
			}
		}
		if c.Screen != "" {
			fmt.Fprintln(w, "  screen:")
			for _, l := range strings.Split(strings.TrimRight(c.Screen, "\n"), "\n") {
				fmt.Fprintf(w, "    │ %s\n", show(l))
			}
		}
	}
}
