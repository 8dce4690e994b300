package cli

import (
	"bufio"
	"encoding/json"
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

	"github.com/pinky-gateway/pinky/gateway/commit"
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
	cmd.AddCommand(newPolicyCheckCmd(), newPolicyClassifyCmd())
	return cmd
}

func newPolicyCheckCmd() *cobra.Command {
	var r policy.Request
	var appsPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "check [FILE]",
		Short: "Validate a policy file and explain which rule decides an example",
		Long: `Validate a policy file (default: $PINKY_HOME/policy.yaml) with the app table
($PINKY_HOME/apps.yaml over the bundled one). Every problem is printed with
its line, and the exit status is 1.

Given an example (any of --app, --device, --agent, --action, --commit), it
also prints the decision, the rule that makes it and why, and every rule
with whether it matches. No daemon is needed.

With --json it prints one JSON object instead: the file, whether it is
valid (with each problem and its line when not), and for an example the
decision, rule, code, reason, commit kind and every rule's match.

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
			res := checkResult{File: path}
			p, err := policy.LoadFiles(path, appsPath)
			if errors.Is(err, fs.ErrNotExist) && len(args) == 0 {
				// Before the first start: check what the daemon will write.
				if !asJSON {
					fmt.Fprintf(out, "There is no %s yet: the daemon writes the default policy there on first start. Checking the default.\n", path)
				}
				path, res.Default = "The default policy", true
				p, err = parseDefault(appsPath)
			}
			if err != nil {
				var pe *policy.Error
				if !errors.As(err, &pe) {
					return err
				}
				fmt.Fprintln(errOut, err)
				fmt.Fprintln(errOut, "The policy is invalid: a running daemon keeps its last good policy, and a starting one refuses to start.")
				if asJSON {
					res.Problems = problems(err)
					writeJSON(out, res)
				}
				return exitError{1}
			}
			res.Valid = true
			if asJSON {
				if r != (policy.Request{}) {
					res.checkExample = example(p, r)
				}
				return writeJSON(out, res)
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
	f.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	return cmd
}

// checkResult is what `pinky policy check --json` prints.
type checkResult struct {
	File string `json:"file"`
	// Default is true when the file does not exist yet and the default
	// policy the daemon will write was checked instead.
	Default  bool           `json:"default,omitempty"`
	Valid    bool           `json:"valid"`
	Problems []checkProblem `json:"problems,omitempty"`
	// The example's fields are present only when an example was given.
	*checkExample
}

// checkProblem is one problem of an invalid policy or app file.
type checkProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// checkExample is the decision on an example, with the example itself.
type checkExample struct {
	App      string      `json:"app"`
	Category string      `json:"category"`
	Device   string      `json:"device"`
	Agent    string      `json:"agent"`
	Action   string      `json:"action"`
	Commit   string      `json:"commit"`
	Decision string      `json:"decision"`
	Rule     string      `json:"rule"`
	Code     string      `json:"code"`
	Reason   string      `json:"reason"`
	Rules    []checkRule `json:"rules"`
}

// checkRule is one rule's part in an example's decision.
type checkRule struct {
	Rule     string `json:"rule"`
	Line     int    `json:"line"`
	Decision string `json:"decision"`
	Matched  bool   `json:"matched"`
	Winner   bool   `json:"winner"`
	Why      string `json:"why"`
}

// example decides on r and says how, for --json.
func example(p *policy.Policy, r policy.Request) *checkExample {
	v := p.Decide(r)
	x := &checkExample{
		App: r.App, Category: p.Category(r.App), Device: r.Device, Agent: r.Agent,
		Action: r.Action, Commit: r.Commit,
		Decision: string(v.Decision), Rule: v.Rule, Code: v.Code, Reason: v.Reason,
		Rules: []checkRule{},
	}
	for _, m := range p.Explain(r) {
		x.Rules = append(x.Rules, checkRule{Rule: m.Rule, Line: m.Line, Decision: string(m.Decision), Matched: m.Matched, Winner: m.Winner, Why: m.Why})
	}
	return x
}

// problems lists the *policy.Error values joined in err.
func problems(err error) []checkProblem {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var ps []checkProblem
	for _, e := range errs {
		var pe *policy.Error
		if errors.As(e, &pe) {
			ps = append(ps, checkProblem{File: pe.File, Line: pe.Line, Message: pe.Msg})
		} else {
			ps = append(ps, checkProblem{Message: e.Error()})
		}
	}
	return ps
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

func newPolicyClassifyCmd() *cobra.Command {
	var policyPath, appsPath string
	cmd := &cobra.Command{
		Use:   "classify",
		Short: "Say what tapping each string would commit, and whether the policy asks",
		Long: `Read JSON lines on stdin, one string to test each, and write one JSON line per
input: what a tap on it would commit (the same detector the daemon runs), and
what the policy decides about that tap. No daemon or phone is needed.

Each input line is an object; only "text" is required:

  {"text": "Vaciar papelera", "role": "menu_item", "app": "com.example.mail",
   "screen": "Papelera"}

  text    what the control says
  role    button (the default), menu_item, toggle, link, field_hint or text
          (a title or a message, which cannot be tapped)
  app     an app id (its category comes from the app table), or a category:
          a policy category (messaging, email, social, stores, payments…) or
          one of the corpus's (mail, store, money, settings, phone…)
  screen  a text, or a list of texts, shown on the screen with the control
  dialog  true puts the control and the screen's texts in a dialog, so that
          "OK" takes the dialog's kind

Each output line is

  {"kind": "delete", "ask": true, "decision": "ask", "rule": "ask before committing",
   "evidence": "menu_item \"Vaciar papelera\": the model says delete (97%)"}

where kind is null when the tap commits nothing. A line that cannot be read
gives {"line": N, "error": "…"} and the run goes on; the exit status is then 1.

The policy is the default one (the file the daemon writes on first start),
or --policy FILE; the app table is $PINKY_HOME/apps.yaml over the bundled
one, or --apps FILE. With a category instead of an app id, rules that name
apps or categories do not apply.

  echo '{"text":"Send"}' | pinky policy classify
  pinky policy classify --policy ~/my-policy.yaml < strings.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if appsPath == "" {
				dirs, err := home.Resolve()
				if err != nil {
					return err
				}
				appsPath = filepath.Join(dirs.Home, policy.AppsFile)
			} else if _, err := os.Stat(appsPath); err != nil {
				return err // named on the command line: it must be there
			}
			var p *policy.Policy
			var err error
			if policyPath != "" {
				p, err = policy.LoadFiles(policyPath, appsPath)
			} else {
				p, err = parseDefault(appsPath)
			}
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), err)
				return exitError{2}
			}
			if bad := classifyLines(cmd.InOrStdin(), cmd.OutOrStdout(), p); bad > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "lines that could not be read: %d\n", bad)
				return exitError{1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&policyPath, "policy", "", "the policy file to decide with (default: the default policy)")
	f.StringVar(&appsPath, "apps", "", "the app table to merge over the bundled one (default $PINKY_HOME/apps.yaml)")
	return cmd
}

// classifyInput is one line of `pinky policy classify`'s input.
type classifyInput struct {
	Text   *string         `json:"text"`
	Role   string          `json:"role"`
	App    string          `json:"app"`
	Screen json.RawMessage `json:"screen"`
	Dialog bool            `json:"dialog"`
}

// classifyOutput is one line of its output.
type classifyOutput struct {
	Kind     *string `json:"kind"`
	Ask      bool    `json:"ask"`
	Decision string  `json:"decision"`
	Rule     string  `json:"rule"`
	Evidence string  `json:"evidence"`
}

// classifyError is the line written for an input that cannot be read.
type classifyError struct {
	Line  int    `json:"line"`
	Error string `json:"error"`
}

// classifyLines answers every line of in on out and returns how many
// could not be read.
func classifyLines(in io.Reader, out io.Writer, p *policy.Policy) int {
	w := bufio.NewWriter(out)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	bad := 0
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		res, err := classifyLine(line, p)
		if err != nil {
			bad++
			enc.Encode(classifyError{Line: n, Error: err.Error()})
			continue
		}
		enc.Encode(res)
	}
	if err := sc.Err(); err != nil {
		bad++
		enc.Encode(classifyError{Line: n + 1, Error: err.Error()})
	}
	return bad
}

// classifyLine answers one input line.
func classifyLine(line string, p *policy.Policy) (classifyOutput, error) {
	var in classifyInput
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return classifyOutput{}, fmt.Errorf("not a JSON object of text, role, app, screen and dialog: %v", err)
	}
	if dec.More() {
		return classifyOutput{}, errors.New("more than one JSON value on the line")
	}
	if in.Text == nil || strings.TrimSpace(*in.Text) == "" {
		return classifyOutput{}, errors.New(`"text" is required`)
	}
	c := commit.Control{Text: *in.Text, Role: in.Role, Dialog: in.Dialog}
	if commit.IsCategory(in.App) {
		c.Category = in.App
	} else {
		c.App, c.Category = in.App, p.Category(in.App)
	}
	if len(in.Screen) > 0 && string(in.Screen) != "null" {
		var one string
		if err := json.Unmarshal(in.Screen, &one); err == nil {
			c.Screen = []string{one}
		} else if err := json.Unmarshal(in.Screen, &c.Screen); err != nil {
			return classifyOutput{}, errors.New(`"screen" must be a string or a list of strings`)
		}
	}
	v, a, err := c.View()
	if err != nil {
		return classifyOutput{}, err
	}
	r := commit.Detect(v, a)
	d := p.Decide(policy.Request{App: c.App, Action: a.Kind, Commit: string(r.Kind)})
	out := classifyOutput{Ask: d.Decision == policy.Ask, Decision: string(d.Decision), Rule: d.Rule, Evidence: r.Evidence}
	if r.Kind != "" {
		k := string(r.Kind)
		out.Kind = &k
	}
	return out, nil
}
