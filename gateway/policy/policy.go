// Package policy decides what an agent may do on the person's phones: allow,
// ask the person, or deny.
//
// The rules live in $PINKY_HOME/policy.yaml (EnsureDefault writes a commented
// default on first start) and match on the app (by id or by category from the
// app table), the device, the agent, the action kind and the commit kind that
// gateway/commit detects. The strictest matching rule wins: deny over ask over
// allow, and between equals the first in the file. Before the rules come the
// blocked apps (banking, wallets, password managers and authenticators by
// default), answered with the code blocked_app, and read-only mode, which
// refuses every non-reading action with scope_denied.
//
// A broken file never means allow: Parse and Load reject invalid YAML,
// unknown keys and names, and contradicting rules with the file and line, and
// a Store keeps the last good policy when an edit is broken.
package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Decision is what the policy says about a request.
type Decision string

// Request is one thing an agent wants to do.
type Request struct {
	App    string // the app id in front or to launch; "" when unknown
	Device string // the device id
	Agent  string // the agent's client name (MCP clientInfo)
	Action string // the action kind: tap, type, read… (see Actions)
	Commit string // the detected commit kind (see Commits); "" for none
	// Read marks a reading tool; the reading action kinds (read, wait…)
	// count as reads without it.
	Read bool
	// WatchOnly marks an agent limited to watching: like read-only mode.
	WatchOnly bool
}

// Verdict is the policy's answer to a Request.
type Verdict struct {
	Decision Decision
	// Rule names what decided: a rule's name or "rule 3 (line 42)"; the
	// setting (blocked_categories, blocked_apps, read_only.all,
	// read_only.devices, read_only.agents), or watch_only for a watch-only
	// agent; "" when no rule matched.
	Rule string
	// Code is "" for a rule's decision, CodeBlockedApp or CodeScopeDenied.
	Code string
	// Reason is a sentence for a model and the person: what was decided,
	// why, and what to do about it.
	Reason string
}

// Policy is a parsed, valid policy with its app table. It is immutable and
// safe for concurrent use.
type Policy struct {
	rules []rule
	apps  map[string]string // app id → category
	names map[string]string // app id → name, from the app tables

	blockedCats map[string]bool
	blockedApps patterns
	unblocked   patterns

	readOnlyAll     bool
	readOnlyDevices patterns
	readOnlyAgents  patterns
}

// rule is one compiled rule. Empty fields match everything.
type rule struct {
	id       string // the name, or "rule 3 (line 42)"
	line     int
	decision Decision

	apps       patterns
	categories []string // with apps: either one matching is enough
	devices    patterns
	agents     patterns
	actions    []string
	commits    []string
	anyCommit  bool
}

// Category returns the category of an app id in the app table, or "".
func (p *Policy) Category(appID string) string { return p.apps[appID] }

// Name returns the name the app table gives an app id ("Chase"), or "".
func (p *Policy) Name(appID string) string { return p.names[appID] }

// Blocked reports whether agents may not see or use an app, and the app's
// category.
func (p *Policy) Blocked(appID string) (blocked bool, category string) {
	blocked, category, _ = p.blocked(appID)
	return blocked, category
}

// blocked also says which setting blocks the app.
func (p *Policy) blocked(appID string) (blocked bool, category, setting string) {
	category = p.apps[appID]
	if appID == "" || p.unblocked.match(appID) {
		return false, category, ""
	}
	if p.blockedCats[category] {
		return true, category, "blocked_categories"
	}
	if p.blockedApps.match(appID) {
		return true, category, "blocked_apps"
	}
	return false, category, ""
}

// Decide answers a request: a blocked app is denied with CodeBlockedApp
// (reads included), a non-reading action in read-only mode or by a
// watch-only agent with CodeScopeDenied, and otherwise the strictest
// matching rule decides. When no rule matches, the request is denied.
func (p *Policy) Decide(r Request) Verdict {
	v, _ := p.decide(r)
	return v
}

// decide also returns the index of the deciding rule, or -1.
func (p *Policy) decide(r Request) (Verdict, int) {
	blocked, category, setting := p.blocked(r.App)
	if blocked {
		what := "blocked"
		if category != "" {
			what = "a " + strings.ReplaceAll(category, "_", " ") + " app"
		}
		return Verdict{Decision: Deny, Rule: setting, Code: CodeBlockedApp,
			Reason: "App " + r.App + " is " + what + ", which agents may not see or use (" + setting +
				" in policy.yaml). Leave it or use another app; if you need it, ask the person."}, -1
	}
	if !r.Read && !IsRead(r.Action) {
		if setting := p.readOnly(r); setting != "" {
			return Verdict{Decision: Deny, Rule: setting, Code: CodeScopeDenied,
				Reason: readOnlyReason(r, setting)}, -1
		}
	}
	best := -1
	for i := range p.rules {
		if p.rules[i].matches(r, category) && (best < 0 || p.rules[i].decision.strictness() > p.rules[best].decision.strictness()) {
			best = i
		}
	}
	if best < 0 {
		return Verdict{Decision: Deny,
			Reason: sentence("No rule in the policy matches ", r, ", so it is denied. Ask the person to add a rule to policy.yaml if you need it.")}, -1
	}
	ru := &p.rules[best]
	v := Verdict{Decision: ru.decision, Rule: ru.id}
	switch ru.decision {
	case Allow:
		v.Reason = "Allowed by rule " + strconv.Quote(ru.id) + "."
	case Ask:
		v.Reason = sentence("The person must approve ", r, ` (rule "`, ru.id, `").`)
	default:
		v.Reason = sentence("The policy denies ", r, ` (rule "`, ru.id, `"). Do not retry; if you need it, ask the person to change policy.yaml.`)
	}
	return v, best
}

// readOnly returns the setting that makes the request read-only, or "".
func (p *Policy) readOnly(r Request) string {
	switch {
	case r.WatchOnly:
		return "watch_only"
	case p.readOnlyAll:
		return "read_only.all"
	case p.readOnlyDevices.match(r.Device):
		return "read_only.devices"
	case p.readOnlyAgents.match(r.Agent):
		return "read_only.agents"
	}
	return ""
}

func readOnlyReason(r Request, setting string) string {
	var who string
	switch setting {
	case "watch_only":
		who = "You are limited to watching"
	case "read_only.devices":
		who = "Phone " + r.Device + " is read-only for agents"
	case "read_only.agents":
		who = "Agent " + r.Agent + " is read-only"
	default:
		who = "The phones are read-only for agents"
	}
	return who + ": reading the screen, notifications, apps and files works, " + orAction(r.Action) +
		" does not. Ask the person if you need to act."
}

func orAction(a string) string {
	if a == "" {
		return "acting"
	}
	return a
}

// sentence is a Reason: pre, what the request does, then the parts after,
// built in one allocation because Decide runs on every action.
func sentence(pre string, r Request, post ...string) string {
	n := len(pre) + len(r.Commit) + len(r.Action) + len(r.App) + len(r.Device) + 32
	for _, s := range post {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(pre)
	switch {
	case r.Commit != "":
		for i := range len(r.Commit) { // send_message → send message
			if c := r.Commit[i]; c == '_' {
				b.WriteByte(' ')
			} else {
				b.WriteByte(c)
			}
		}
		if r.Action != "" {
			b.WriteString(" (")
			b.WriteString(r.Action)
			b.WriteString(")")
		}
	case r.Action != "":
		b.WriteString(r.Action)
	default:
		b.WriteString("this action")
	}
	if r.App != "" {
		b.WriteString(" in ")
		b.WriteString(r.App)
	}
	if r.Device != "" {
		b.WriteString(" on ")
		b.WriteString(r.Device)
	}
	for _, s := range post {
		b.WriteString(s)
	}
	return b.String()
}

// matches reports whether the rule matches the request; category is the
// request's app's category. It does not allocate: Decide runs it for every
// rule on every action.
func (ru *rule) matches(r Request, category string) bool {
	return ru.appOK(r.App, category) && ru.deviceOK(r.Device) && ru.agentOK(r.Agent) &&
		ru.actionOK(r.Action) && ru.commitOK(r.Commit)
}

func (ru *rule) appOK(app, category string) bool {
	return len(ru.apps) == 0 && len(ru.categories) == 0 ||
		ru.apps.match(app) || category != "" && slices.Contains(ru.categories, category)
}

func (ru *rule) deviceOK(d string) bool { return len(ru.devices) == 0 || ru.devices.match(d) }
func (ru *rule) agentOK(a string) bool  { return len(ru.agents) == 0 || ru.agents.match(a) }
func (ru *rule) actionOK(a string) bool {
	return len(ru.actions) == 0 || slices.Contains(ru.actions, a)
}

func (ru *rule) commitOK(c string) bool {
	if ru.anyCommit {
		return c != ""
	}
	return len(ru.commits) == 0 || slices.Contains(ru.commits, c)
}

// why returns "" when the rule matches the request, else the first field
// that does not match, as a phrase.
func (ru *rule) why(r Request, category string) string {
	switch {
	case !ru.appOK(r.App, category):
		var want []string
		if len(ru.apps) > 0 {
			want = append(want, "app "+list(ru.apps))
		}
		if len(ru.categories) > 0 {
			want = append(want, "category "+strings.Join(ru.categories, ", "))
		}
		return fmt.Sprintf("app %s (category %s) is not one of %s",
			orNone(r.App), orNone(category), strings.Join(want, "; "))
	case !ru.deviceOK(r.Device):
		return fmt.Sprintf("device %s is not one of %s", orNone(r.Device), list(ru.devices))
	case !ru.agentOK(r.Agent):
		return fmt.Sprintf("agent %s is not one of %s", orNone(r.Agent), list(ru.agents))
	case !ru.actionOK(r.Action):
		return fmt.Sprintf("action %s is not one of %s", orNone(r.Action), strings.Join(ru.actions, ", "))
	case !ru.commitOK(r.Commit) && ru.anyCommit:
		return "the action commits nothing"
	case !ru.commitOK(r.Commit):
		return fmt.Sprintf("commit %s is not one of %s", orNone(r.Commit), strings.Join(ru.commits, ", "))
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func list(ps patterns) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.s
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

// Match is one rule's part in a decision, for `pinky policy check`.
type Match struct {
	Rule     string // the name, or "rule 3 (line 42)"
	Line     int
	Decision Decision
	Matched  bool
	// Why says what matched, or which field did not.
	Why string
	// Winner marks the rule that decides.
	Winner bool
}

// Explain lists every rule in file order with whether it matches the request
// and why. The winner is the rule Decide names; none wins when a blocked app
// or read-only mode decides first, or when no rule matches.
func (p *Policy) Explain(r Request) []Match {
	_, winner := p.decide(r)
	category := p.apps[r.App]
	out := make([]Match, len(p.rules))
	for i := range p.rules {
		ru := &p.rules[i]
		m := Match{Rule: ru.id, Line: ru.line, Decision: ru.decision}
		if why := ru.why(r, category); why != "" {
			m.Why = why
		} else {
			m.Matched, m.Why = true, ru.matched(r, category)
			m.Winner = i == winner
		}
		out[i] = m
	}
	return out
}

// matched says which of the rule's fields matched the request.
func (ru *rule) matched(r Request, category string) string {
	var parts []string
	if len(ru.apps) > 0 || len(ru.categories) > 0 {
		if ru.apps.match(r.App) {
			parts = append(parts, "app "+r.App)
		} else {
			parts = append(parts, "category "+category)
		}
	}
	if len(ru.devices) > 0 {
		parts = append(parts, "device "+r.Device)
	}
	if len(ru.agents) > 0 {
		parts = append(parts, "agent "+r.Agent)
	}
	if len(ru.actions) > 0 {
		parts = append(parts, "action "+r.Action)
	}
	if ru.anyCommit || len(ru.commits) > 0 {
		parts = append(parts, "commit "+r.Commit)
	}
	if len(parts) == 0 {
		return "matches every request"
	}
	return strings.Join(parts, ", ")
}
