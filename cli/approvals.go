package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
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
			var cards []approval.Card
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
	var c approval.Card
	if err := call(cmd.Context(), api.MethodDecide, p, &c); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %s: %s %s on %s\n", c.Status, c.ID, c.Tool, c.Target, c.Device)
	return nil
}

func printCards(w io.Writer, cards []approval.Card) {
	if len(cards) == 0 {
		fmt.Fprintln(w, "no approvals waiting")
		return
	}
	for i, c := range cards {
		if i > 0 {
			fmt.Fprintln(w)
		}
		left := ""
		if c.Status == approval.Pending {
			left = fmt.Sprintf(" · %s left", time.Until(c.ExpiresAt).Round(time.Second))
		}
		fmt.Fprintf(w, "%s  %s%s\n", c.ID, strings.ToUpper(string(c.Status)), left)
		fmt.Fprintf(w, "  agent   %s, task %q\n", c.Agent, c.TaskText)
		fmt.Fprintf(w, "  phone   %s\n", c.Device)
		fmt.Fprintf(w, "  action  %s %s on %s\n", c.Tool, c.Args, dash(c.Target))
		fmt.Fprintf(w, "  why     %s (rule: %s)", dash(c.Commit), dash(c.Rule))
		if c.Evidence != "" {
			fmt.Fprintf(w, " — %s", c.Evidence)
		}
		fmt.Fprintln(w)
		if c.Screenshot != "" {
			fmt.Fprintf(w, "  picture %s (in the media folder, the target framed in red)\n", c.Screenshot)
		}
		if c.Status == approval.Pending {
			fmt.Fprintf(w, "  decide  pinky approve %s   |   pinky deny %s --reason \"…\"\n", c.ID, c.ID)
		}
		if c.Screen != "" {
			fmt.Fprintln(w, "  screen:")
			for _, l := range strings.Split(strings.TrimRight(c.Screen, "\n"), "\n") {
				fmt.Fprintf(w, "    │ %s\n", l)
			}
		}
	}
}
