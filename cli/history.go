package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/api"
)

func newHistoryCmd() *cobra.Command {
	var asJSON bool
	var f api.TaskFilter
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List the agents' tasks: agent, device, task, start, end, steps, outcome",
		Long: `List what agents did, newest first: one line per task (a task is what an
agent said it would do on one phone, from connect to release). Use
` + "`pinky history show TASK`" + ` for its steps.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var ts []api.Task
			if err := call(cmd.Context(), api.MethodTasks, f, &ts); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), ts)
			}
			printTasks(cmd.OutOrStdout(), ts)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	cmd.Flags().StringVar(&f.Device, "device", "", "only the tasks on this device")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most this many tasks")
	cmd.AddCommand(newHistoryShowCmd())
	return cmd
}

func newHistoryShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show TASK",
		Short: "Print a task's steps: each tool call, its outcome and what the agent saw",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var t api.TaskDetail
			if err := call(cmd.Context(), api.MethodTask, api.TaskID{ID: args[0]}, &t); err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), t)
			}
			printTask(cmd.OutOrStdout(), t)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON for scripts")
	return cmd
}

func newTakeOverCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "takeover DEVICE",
		Aliases: []string{"take-over"},
		Short:   "Take a phone from the agent: its actions wait until you hand it back",
		Long: `Take over a phone while an agent works on it: the agent's actions answer
person_in_control (its reads still work) until ` + "`pinky handback DEVICE`" + `.
The lease and the task go on.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := call(cmd.Context(), api.MethodTakeOver, api.DeviceParams{Device: args[0]}, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "you have %s; pinky handback %s gives it back\n", args[0], args[0])
			return nil
		},
	}
}

func newHandBackCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "handback DEVICE",
		Aliases: []string{"hand-back"},
		Short:   "Give a phone back to the agent (after a take-over, or when it asked for your help)",
		Long: `Give the phone back to the agent: after ` + "`pinky takeover`" + `, or when an agent
handed it to you with phone_ask_person ("please sign in") and you did what
it asked.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := call(cmd.Context(), api.MethodHandBack, api.DeviceParams{Device: args[0]}, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "handed %s back to the agent\n", args[0])
			return nil
		},
	}
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func printTasks(w io.Writer, ts []api.Task) {
	if len(ts) == 0 {
		fmt.Fprintln(w, "no tasks yet")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tAGENT\tDEVICE\tSTARTED\tENDED\tSTEPS\tOUTCOME\tWHAT")
	for _, t := range ts {
		outcome := t.Outcome
		if outcome == "" {
			outcome = "running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", show(t.ID), show(t.Agent), show(t.Device), when(t.StartedAt), when(t.EndedAt), t.Steps,
			show(outcome), show(clip(t.Text, 60)))
	}
	tw.Flush()
}

func printTask(w io.Writer, t api.TaskDetail) {
	outcome := t.Outcome
	if outcome == "" {
		outcome = "running"
	}
	fmt.Fprintf(w, "task %s: \"%s\"\nagent %s %s on %s · %s → %s · %s · %d steps\n", show(t.ID), show(t.Text), show(t.Agent), show(t.AgentVersion),
		show(t.Device), when(t.StartedAt), when(t.EndedAt), show(outcome), t.Steps)
	if len(t.Apps) > 0 {
		fmt.Fprintf(w, "apps: %s\n", show(strings.Join(t.Apps, ", ")))
	}
	// Each approval is printed before the first step that started after it
	// opened: the step that asked began first, so the approval follows it.
	aps := t.Approvals
	for _, s := range t.StepList {
		for len(aps) > 0 && aps[0].CreatedAt.Before(s.StartedAt) {
			printApproval(w, aps[0])
			aps = aps[1:]
		}
		fmt.Fprintf(w, "\n#%d %s %s  %s  %dms\n", s.Seq, s.StartedAt.Local().Format("15:04:05"), show(s.Tool), show(string(s.Args)), s.DurationMS)
		if s.Outcome != "ok" {
			fmt.Fprintf(w, "   %s: %s\n", show(s.Outcome), show(s.Message))
		}
		for _, l := range strings.Split(strings.TrimRight(s.Diff, "\n"), "\n") {
			if l != "" {
				fmt.Fprintf(w, "   │ %s\n", show(l))
			}
		}
	}
	for _, a := range aps {
		printApproval(w, a)
	}
}

// printApproval prints one approval of a task, as
// "approval ap_… send_message (rule …) → approved by person at 15:04:05".
func printApproval(w io.Writer, a api.Approval) {
	what := a.Commit
	if what == "" {
		what = a.Tool
	}
	fmt.Fprintf(w, "\napproval %s %s", show(a.ID), show(what))
	if a.Rule != "" {
		fmt.Fprintf(w, " (rule %s)", show(a.Rule))
	}
	if a.Status == "pending" || a.DecidedAt.IsZero() {
		fmt.Fprintf(w, " → %s since %s\n", show(a.Status), a.CreatedAt.Local().Format("15:04:05"))
	} else {
		by := a.DecidedBy
		if by == "" {
			by = "?"
		}
		fmt.Fprintf(w, " → %s by %s at %s\n", show(a.Status), show(by), a.DecidedAt.Local().Format("15:04:05"))
	}
	if a.Summary != "" {
		fmt.Fprintf(w, "   asked: %s\n", show(a.Summary))
	}
	if a.Target != "" {
		fmt.Fprintf(w, "   on %s\n", show(a.Target))
	}
	if a.ForTask {
		fmt.Fprintln(w, "   allowed for the rest of the task")
	}
	if a.Reason != "" {
		fmt.Fprintf(w, "   reason: %s\n", show(a.Reason))
	}
}

func printLeases(w io.Writer, ls []api.Lease) {
	if len(ls) == 0 {
		fmt.Fprintln(w, "no leases")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE\tAGENT\tSINCE\tSTEPS\tTASK")
	for _, l := range ls {
		task := show(clip(l.Task, 60))
		if l.WithPerson {
			task += "  (with you; waiting for you: pinky handback " + show(l.Device) + ")"
		}
		if l.Display != 0 {
			task += fmt.Sprintf("  (on background display %d)", l.Display)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", show(l.Device), show(l.Agent), when(l.Since), l.Steps, task)
	}
	tw.Flush()
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newUnlockCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unlock DEVICE",
		Short: "Unlock a phone with its PIN (read from stdin; never stored or logged)",
		Long: `Unlock a phone's lock screen with its PIN, for example when an agent asked
you to (phone_ask_person). The PIN is read from the first line of stdin so
that it stays out of your shell history; it goes to the phone's driver and
nowhere else.

  pinky unlock sim-android-1        # then type the PIN and press Enter`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pin, err := readPIN(cmd)
			if err != nil {
				return err
			}
			if err := call(cmd.Context(), api.MethodUnlock, api.UnlockParams{Device: args[0], PIN: pin}, nil); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "unlocked %s\n", args[0])
			return nil
		},
	}
}

func newStopCmd() *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "stop [DEVICE]",
		Short: "Stop the agent on a phone (or on all phones with --all)",
		Long: `End an agent's lease on a phone at once: its next call on the phone is
refused and its task ends as "stopped". With --all, every agent on every
phone stops.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := api.StopParams{All: all}
			if len(args) == 1 {
				p.Device = args[0]
			}
			if (p.Device == "") == !all {
				return fmt.Errorf("name one device, or pass --all")
			}
			var r api.StopResult
			if err := call(cmd.Context(), api.MethodStopLease, p, &r); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped %d agent lease(s)\n", r.Stopped)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "stop every agent on every phone")
	return cmd
}
