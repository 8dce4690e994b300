package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/gateway/policy"
)

func newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Check the policy that decides what agents may do",
		Long: `The policy ($PINKY_HOME/policy.yaml) decides, for every action an agent asks
for, whether it runs, waits for your approval, or is refused. The daemon
writes a commented default on first start and reads your edits within a few
seconds; a broken edit is logged and the last good policy stays in force.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newPolicyCheckCmd())
	return cmd
}

func newPolicyCheckCmd() *cobra.Command {
	var r policy.Request
	var appsPath string
	cmd := &cobra.Command{
		Use:   "check [FILE]",
		Short: "Validate a policy file and explain which rule decides an example",
		Long: `Validate a policy file (default: $PINKY_HOME/policy.yaml) with the app table
($PINKY_HOME/apps.yaml over the bundled one). Every problem is printed with
its line, and the exit status is 1.

Given an example (any of --app, --device, --agent, --action, --commit), it
also prints the decision, the rule that makes it and why, and every rule
with whether it matches. No daemon is needed.

  pinky policy check
  pinky policy check --app com.whatsapp --action tap --commit send_message
  pinky policy check ./new-policy.yaml --agent claude-code --action type`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkNames(r); err != nil {
				return err
			}
			out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
			var path string
			if len(args) == 1 {
				path = args[0]
			}
			if path == "" || appsPath == "" {
				dirs, err := home.Resolve()
				if err != nil {
					return err
				}
				if path == "" {
					path = filepath.Join(dirs.Home, policy.PolicyFile)
				}
				if appsPath == "" {
					appsPath = filepath.Join(dirs.Home, policy.AppsFile)
				} else if _, err := os.Stat(appsPath); err != nil {
					return err // named on the command line: it must be there
				}
			}
			p, err := policy.LoadFiles(path, appsPath)
			if errors.Is(err, fs.ErrNotExist) && len(args) == 0 {
				// Before the first start: check what the daemon will write.
				fmt.Fprintf(out, "There is no %s yet: the daemon writes the default policy there on first start. Checking the default.\n", path)
				path = "The default policy"
				p, err = parseDefault(appsPath)
			}
			if err != nil {
				var pe *policy.Error
				if !errors.As(err, &pe) {
					return err
				}
				fmt.Fprintln(errOut, err)
				fmt.Fprintln(errOut, "The policy is invalid: a running daemon keeps its last good policy, and a starting one refuses to start.")
				return exitError{1}
			}
			fmt.Fprintf(out, "%s: valid.\n", path)
			if r == (policy.Request{}) {
				return nil
			}
			explain(out, p, r)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&r.App, "app", "", "the example's app id, e.g. com.whatsapp")
	f.StringVar(&r.Device, "device", "", "the example's device id")
	f.StringVar(&r.Agent, "agent", "", "the example's agent name, e.g. claude-code")
	f.StringVar(&r.Action, "action", "", "the example's action: "+strings.Join(policy.Actions, ", "))
	f.StringVar(&r.Commit, "commit", "", "what the example commits: "+strings.Join(policy.Commits, ", "))
	f.StringVar(&appsPath, "apps", "", "the app table to merge over the bundled one (default $PINKY_HOME/apps.yaml)")
	return cmd
}

// checkNames refuses an example with an unknown action or commit kind,
// which would otherwise just match no rule.
func checkNames(r policy.Request) error {
	if r.Action != "" && !slices.Contains(policy.Actions, r.Action) {
		return fmt.Errorf("--action %q: want one of %s", r.Action, strings.Join(policy.Actions, ", "))
	}
	if r.Commit != "" && !slices.Contains(policy.Commits, r.Commit) {
		return fmt.Errorf("--commit %q: want one of %s", r.Commit, strings.Join(policy.Commits, ", "))
	}
	return nil
}

// parseDefault parses the default policy with the app table at appsPath,
// if there is one.
func parseDefault(appsPath string) (*policy.Policy, error) {
	apps, err := os.ReadFile(appsPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return policy.Parse(policy.DefaultPolicy, apps)
}

// explain prints the decision on an example and every rule's part in it.
func explain(w io.Writer, p *policy.Policy, r policy.Request) {
	app := dash(r.App)
	if c := p.Category(r.App); c != "" {
		app += " (" + c + ")"
	}
	fmt.Fprintf(w, "\nExample: app %s, device %s, agent %s, action %s, commit %s\n",
		app, dash(r.Device), dash(r.Agent), dash(r.Action), dash(r.Commit))
	v := p.Decide(r)
	ms := p.Explain(r)
	switch {
	case v.Code != "":
		fmt.Fprintf(w, "Decision: %s (%s), by %s, before any rule\n", v.Decision, v.Code, v.Rule)
	case v.Rule == "":
		fmt.Fprintf(w, "Decision: %s: no rule matches\n", v.Decision)
	default:
		fmt.Fprintf(w, "Decision: %s, by rule %s\n", v.Decision, ruleLabel(ms, v.Rule))
	}
	fmt.Fprintf(w, "  %s\n\nRules (the strictest match decides: deny, then ask, then allow; between equals the first):\n", v.Reason)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range ms {
		mark := "-"
		switch {
		case m.Winner:
			mark = "*"
		case m.Matched:
			mark = "+"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, m.Decision, ruleLabel(ms, m.Rule), m.Why)
	}
	tw.Flush()
	fmt.Fprintln(w, "  (* decides, + matches too, - does not match)")
}

// ruleLabel is a rule's name with its line, once.
func ruleLabel(ms []policy.Match, rule string) string {
	for _, m := range ms {
		if m.Rule == rule && !strings.HasSuffix(rule, fmt.Sprintf("(line %d)", m.Line)) {
			return fmt.Sprintf("%q (line %d)", rule, m.Line)
		}
	}
	return rule
}
