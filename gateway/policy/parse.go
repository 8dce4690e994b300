package policy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Error is one problem in a policy or app file, with where it is.
type Error struct {
	File string // "policy.yaml", or the path Load read
	Line int    // 0 when the problem is the whole file
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

// Parse reads a policy file and the person's app table overlay (apps, nil
// for none) over the bundled app table. Every problem is reported, each as
// an *Error with its line, joined in one error; a policy is returned only
// when there is none.
func Parse(policy, apps []byte) (*Policy, error) {
	return parse("policy.yaml", policy, "apps.yaml", apps)
}

func parse(policyFile string, policy []byte, appsFile string, apps []byte) (*Policy, error) {
	table, errs := parseApps("bundled apps.yaml", bundledApps, nil)
	if len(errs) > 0 {
		return nil, joinErrors(errs) // a bug in the bundled table, caught by its test
	}
	if apps != nil {
		table, errs = parseApps(appsFile, apps, table)
	}
	p, perrs := parsePolicy(policyFile, policy, table)
	if errs = append(errs, perrs...); len(errs) > 0 {
		return nil, joinErrors(errs)
	}
	p.names = bundledNames()
	if apps != nil {
		p.names = appNames(apps, p.names)
	}
	return p, nil
}

func joinErrors(errs []*Error) error {
	all := make([]error, len(errs))
	for i, e := range errs {
		all[i] = e
	}
	return errors.Join(all...)
}

// The files' shapes. Lists take one value or several; rules check their
// keys themselves (see rawRule.UnmarshalYAML), the rest through the
// decoder's KnownFields.
type rawPolicy struct {
	BlockedCategories names       `yaml:"blocked_categories"`
	BlockedApps       names       `yaml:"blocked_apps"`
	UnblockedApps     names       `yaml:"unblocked_apps"`
	ReadOnly          rawReadOnly `yaml:"read_only"`
	Rules             rawRules    `yaml:"rules"`
}

type rawReadOnly struct {
	All     bool  `yaml:"all"`
	Devices names `yaml:"devices"`
	Agents  names `yaml:"agents"`
}

type rawRule struct {
	Name     scalar `yaml:"name"`
	App      names  `yaml:"app"`
	Category names  `yaml:"category"`
	Device   names  `yaml:"device"`
	Agent    names  `yaml:"agent"`
	Action   names  `yaml:"action"`
	Commit   names  `yaml:"commit"`
	Decision scalar `yaml:"decision"`
	line     int
	problems []string // "line N: problem", see UnmarshalYAML
	decides  bool     // the rule has a decision key, maybe a broken one
}

// The keys each shape knows, for the messages about unknown ones.
var (
	policyKeys   = []string{"blocked_categories", "blocked_apps", "unblocked_apps", "read_only", "rules"}
	readOnlyKeys = []string{"all", "devices", "agents"}
	ruleKeys     = []string{"name", "app", "category", "device", "agent", "action", "commit", "decision"}
)

// typeError is how an UnmarshalYAML reports a problem and lets decoding go
// on to find the others; parsePolicy turns each line back into an *Error.
func typeError(line int, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)}}
}

// UnmarshalYAML checks a rule's keys and decodes it. It keeps its problems
// rather than failing, because the decoder drops a list item that fails and
// the rules after it would be misnumbered.
func (r *rawRule) UnmarshalYAML(n *yaml.Node) error {
	r.line = n.Line
	if n.Kind != yaml.MappingNode {
		r.problems = append(r.problems, fmt.Sprintf("line %d: a rule is a map of match fields and a decision, e.g. {commit: payment, decision: ask}", n.Line))
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		r.decides = r.decides || k.Value == "decision"
		switch {
		case !slices.Contains(ruleKeys, k.Value):
			r.problems = append(r.problems, fmt.Sprintf("line %d: unknown key %q in a rule; want %s", k.Line, k.Value, oneOf(ruleKeys)))
		case v.Tag == "!!null" && k.Value != "name" && k.Value != "decision":
			// The decoder skips a null, which would match everything.
			r.problems = append(r.problems, fmt.Sprintf("line %d: %s: no value; remove the key to match every one", k.Line, k.Value))
		}
	}
	// Node.Decode ignores the unknown keys, so the rest is checked too.
	type plain rawRule
	err := n.Decode((*plain)(r))
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		r.problems = append(r.problems, te.Errors...)
		return nil
	}
	return err
}

// rawRules is the rules list, which must be there.
type rawRules struct {
	list []rawRule
	line int
	set  bool
}

func (rs *rawRules) UnmarshalYAML(n *yaml.Node) error {
	rs.set, rs.line = true, n.Line
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		return typeError(n.Line, "rules is a list, each item starting with -")
	}
	return n.Decode(&rs.list)
}

// names is a field of one name or a list of names.
type names struct {
	vals  []string
	lines []int
	line  int
	set   bool
}

func (ns *names) UnmarshalYAML(n *yaml.Node) error {
	ns.set, ns.line = true, n.Line
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag == "!!null":
	case n.Kind == yaml.ScalarNode:
		ns.vals, ns.lines = append(ns.vals, n.Value), append(ns.lines, n.Line)
	case n.Kind == yaml.SequenceNode:
		for _, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return typeError(c.Line, "want a name here, not a list or a map")
			}
			ns.vals, ns.lines = append(ns.vals, c.Value), append(ns.lines, c.Line)
		}
	default:
		return typeError(n.Line, "want a name or a list of names, e.g. [a, b]")
	}
	return nil
}

// scalar is a field of one value.
type scalar struct {
	v    string
	line int
	set  bool
}

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return typeError(n.Line, "want one value here, not a list or a map")
	}
	s.v, s.line, s.set = n.Value, n.Line, n.Tag != "!!null"
	return nil
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type policy\.(\w+)$`)
)

// yamlErrors turns the decoder's error on data into *Errors with lines.
func yamlErrors(file string, data []byte, err error) []*Error {
	if te, ok := errors.AsType[*yaml.TypeError](err); ok {
		return lineErrors(file, te.Errors)
	}
	errs := lineErrors(file, []string{err.Error()})
	if line := syntaxLine(data, err.Error()); line > 0 {
		errs[0].Line = line
	}
	return errs
}

// syntaxLine finds the line of a syntax error. The YAML parser reports the
// line where the enclosing block starts, often far above the mistake; the
// first line whose prefix of the file fails with the same message is where
// the mistake is. 0 when there is none (the error needs the whole file).
func syntaxLine(data []byte, msg string) int {
	_, want, _ := strings.Cut(msg, ": line ")
	_, want, _ = strings.Cut(want, ": ")
	if want == "" {
		return 0
	}
	var v yaml.Node
	for end, line := 0, 1; end < len(data); line++ {
		if i := bytes.IndexByte(data[end:], '\n'); i >= 0 {
			end += i + 1
		} else {
			end = len(data)
		}
		if err := yaml.Unmarshal(data[:end], &v); err != nil && strings.HasSuffix(err.Error(), ": "+want) {
			return line
		}
	}
	return 0
}

// lineErrors turns the decoder's messages ("line 3: …") into *Errors.
func lineErrors(file string, msgs []string) []*Error {
	var out []*Error
	for _, m := range msgs {
		e := &Error{File: file, Msg: strings.TrimPrefix(m, "yaml: ")}
		if sm := yamlLine.FindStringSubmatch(m); sm != nil {
			e.Line, _ = strconv.Atoi(sm[1])
			e.Msg = sm[2]
		}
		if sm := unknownField.FindStringSubmatch(e.Msg); sm != nil {
			switch sm[2] {
			case "rawReadOnly":
				e.Msg = fmt.Sprintf("unknown key %q in read_only; want %s", sm[1], oneOf(readOnlyKeys))
			default:
				e.Msg = fmt.Sprintf("unknown key %q; want %s", sm[1], oneOf(policyKeys))
			}
		}
		out = append(out, e)
	}
	return out
}

// decodeStrict decodes one YAML document, rejecting unknown keys and a
// second document. An empty file decodes to the zero value. fatal means
// nothing was decoded: a syntax error rather than problems of shape.
func decodeStrict(file string, data []byte, v any) (errs []*Error, fatal bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	err := dec.Decode(v)
	if _, shape := errors.AsType[*yaml.TypeError](err); err != nil && err != io.EOF {
		if !shape {
			return yamlErrors(file, data, err), true
		}
		errs = yamlErrors(file, data, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err != io.EOF {
		return append(errs, &Error{File: file, Line: more.Line, Msg: "a second YAML document (after ---); put everything in one"}), true
	}
	return errs, false
}

// parsePolicy parses and checks policy.yaml against an app table.
func parsePolicy(file string, data []byte, apps map[string]string) (*Policy, []*Error) {
	var raw rawPolicy
	// Problems of shape (unknown keys, a list for a name) leave the rest
	// decoded, so the checks below run too and every problem is reported;
	// a syntax error leaves nothing to check.
	errs, fatal := decodeStrict(file, data, &raw)
	if fatal {
		return nil, errs
	}
	bad := func(line int, format string, args ...any) {
		errs = append(errs, &Error{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	p := &Policy{apps: apps, blockedCats: map[string]bool{}, readOnlyAll: raw.ReadOnly.All}

	// values checks a list's values, and that a list which is there is not
	// empty when empty would match nothing.
	values := func(field string, ns names, emptyOK bool, check func(v string) string) {
		if ns.set && len(ns.vals) == 0 && !emptyOK {
			bad(ns.line, "%s: an empty list matches nothing; remove the key to match every one", field)
		}
		for i, v := range ns.vals {
			if v == "" {
				bad(ns.lines[i], "%s: an empty name", field)
			} else if check != nil {
				if msg := check(v); msg != "" {
					bad(ns.lines[i], "%s: %s", field, msg)
				}
			}
		}
	}
	category := func(v string) string {
		if !known(Categories, v) {
			return fmt.Sprintf("unknown category %q; want one of %s", v, oneOf(Categories))
		}
		return ""
	}
	values("blocked_categories", raw.BlockedCategories, true, category)
	for _, c := range raw.BlockedCategories.vals {
		p.blockedCats[c] = true
	}
	values("blocked_apps", raw.BlockedApps, true, nil)
	values("unblocked_apps", raw.UnblockedApps, true, nil)
	values("read_only.devices", raw.ReadOnly.Devices, true, nil)
	values("read_only.agents", raw.ReadOnly.Agents, true, nil)
	p.blockedApps = compile(raw.BlockedApps, false)
	p.unblocked = compile(raw.UnblockedApps, false)
	p.readOnlyDevices = compile(raw.ReadOnly.Devices, false)
	p.readOnlyAgents = compile(raw.ReadOnly.Agents, true)

	if len(raw.Rules.list) == 0 {
		bad(raw.Rules.line, "no rules: add at least one, e.g. `rules: [{decision: allow}, {commit: any, decision: ask}]`; with none, everything would be denied")
	}
	named := map[string]int{}   // rule name → line
	matches := map[string]int{} // a rule's match set → its index
	var labels []string         // the rules in messages, with their lines
	for i, rr := range raw.Rules.list {
		errs = append(errs, lineErrors(file, rr.problems)...)
		ru := rule{line: rr.line, id: fmt.Sprintf("rule %d (line %d)", i+1, rr.line)}
		label := ru.id // the rule in messages
		if rr.Name.set {
			if rr.Name.v == "" {
				bad(rr.Name.line, "an empty rule name")
			} else if first, dup := named[rr.Name.v]; dup {
				bad(rr.Name.line, "a second rule named %q (the first is at line %d); names must differ", rr.Name.v, first)
			} else {
				named[rr.Name.v] = rr.Name.line
				ru.id = rr.Name.v
				label = fmt.Sprintf("rule %q (line %d)", ru.id, ru.line)
			}
		}
		switch d := Decision(rr.Decision.v); {
		case !rr.decides:
			bad(rr.line, "%s has no decision; add `decision: allow`, `ask` or `deny`", label)
		case !rr.Decision.set && rr.problems == nil:
			bad(rr.line, "%s: decision has no value; want allow, ask or deny", label)
		case !rr.Decision.set:
			// a problem with the decision is already reported
		case d != Allow && d != Ask && d != Deny:
			bad(rr.Decision.line, "unknown decision %q; want allow, ask or deny", rr.Decision.v)
		default:
			ru.decision = d
		}
		values("app", rr.App, false, nil)
		values("category", rr.Category, false, category)
		values("device", rr.Device, false, nil)
		values("agent", rr.Agent, false, nil)
		values("action", rr.Action, false, func(v string) string {
			if !known(Actions, v) {
				return fmt.Sprintf("unknown action %q; want one of %s", v, oneOf(Actions))
			}
			return ""
		})
		values("commit", rr.Commit, false, func(v string) string {
			if v == anyCommit && len(rr.Commit.vals) > 1 {
				return "`any` already covers every commit kind; list kinds or say any, not both"
			}
			if v != anyCommit && !known(Commits, v) {
				return fmt.Sprintf("unknown commit kind %q; want one of %s, or any", v, oneOf(Commits))
			}
			return ""
		})
		ru.apps = compile(rr.App, false)
		ru.categories = rr.Category.vals
		ru.devices = compile(rr.Device, false)
		ru.agents = compile(rr.Agent, true)
		ru.actions = rr.Action.vals
		if slices.Contains(rr.Commit.vals, anyCommit) {
			ru.anyCommit = true
		} else {
			ru.commits = rr.Commit.vals
		}
		// Two rules that match exactly the same requests but decide
		// differently contradict each other: the stricter one always wins
		// and the other is dead, which is never what the person meant.
		k := ru.key()
		if j, seen := matches[k]; seen {
			if first := &p.rules[j]; first.decision != ru.decision && ru.decision != "" && first.decision != "" {
				bad(rr.line, "%s matches exactly what %s matches but says %s, not %s; remove one or narrow it",
					label, labels[j], ru.decision, first.decision)
			}
		} else {
			matches[k] = len(p.rules)
		}
		p.rules = append(p.rules, ru)
		labels = append(labels, label)
	}
	if errs != nil {
		slices.SortStableFunc(errs, func(a, b *Error) int { return a.Line - b.Line })
		return nil, errs
	}
	return p, nil
}

func compile(ns names, fold bool) patterns {
	if len(ns.vals) == 0 {
		return nil
	}
	ps := make(patterns, len(ns.vals))
	for i, v := range ns.vals {
		ps[i] = newPattern(v, fold)
	}
	return ps
}

// key is the rule's match set in a canonical form: two rules with the same
// key match the same requests.
func (ru *rule) key() string {
	field := func(vals []string) string {
		s := slices.Clone(vals)
		slices.Sort(s)
		return strings.Join(slices.Compact(s), "\x00")
	}
	pats := func(ps patterns) string {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = p.s
		}
		return field(s)
	}
	commits := ru.commits
	if ru.anyCommit {
		commits = []string{anyCommit}
	}
	return strings.Join([]string{pats(ru.apps), field(ru.categories), pats(ru.devices), pats(ru.agents),
		field(ru.actions), field(commits)}, "\x01")
}
