package daemon

import (
	"fmt"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/commit"
	"github.com/pinky-gateway/pinky/gateway/policy"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/secrets"
	"github.com/pinky-gateway/pinky/gateway/settings"
)

// guard is the agent pipeline's Guard: credentials first, then the commit
// the action would make, then the policy's verdict on it.
type guard struct {
	policy   *policy.Store
	settings *settings.Store // read-only mode; nil is off
}

var _ agent.Guard = guard{}

// Check implements agent.Guard.
func (g guard) Check(c agent.Check) agent.Verdict {
	a := c.Action
	if g.settings != nil && g.settings.Get().ReadOnly {
		return agent.Verdict{Decision: agent.Deny, Code: agent.CodeScopeDenied, Rule: "read-only mode",
			Reason: "the person set Pinky to read-only: you may observe the phone but not act on it. Tell the person what you would do, or ask them with phone_ask_person"}
	}
	if why := credentials(c); why != "" {
		return agent.Verdict{Decision: agent.Deny, Code: agent.CodeCredentials,
			Reason: why + " is refused: ask the person to do it with phone_ask_person"}
	}
	app := c.App
	if a.Kind == "launch" || a.Kind == "stop" {
		app = a.App
	}
	p := g.policy.Current()
	ca := commit.Action{Kind: a.Kind, Target: c.Target, End: c.End, OnKeyboard: c.OnKeyboard, KeyboardKey: c.Key,
		EndOnKeyboard: c.EndOnKeyboard, EndKeyboardKey: c.EndKey, Text: a.Text, Submit: a.Submit, Key: a.Key, URL: a.URL, App: a.App,
		AppCategory: p.Category(c.App)}
	r := commit.Detect(c.View, ca)
	// The finger may work the element under the point instead of the one
	// aimed at, and other fingers the elements they go down on: the
	// strongest counts.
	for _, n := range append([]*screen.Node{c.Under}, c.Also...) {
		if n == nil {
			continue
		}
		alt := ca
		alt.Target = n
		if u := commit.Detect(c.View, alt); commit.Stronger(u, r) {
			r, ca = u, alt
		}
	}
	v := p.Decide(policy.Request{App: app, Device: c.Device, Agent: c.Agent, Action: a.Kind, Commit: string(r.Kind)})
	out := agent.Verdict{
		Decision: agent.Decision(v.Decision), Code: agent.Code(v.Code), Reason: v.Reason, Rule: v.Rule,
		Commit: string(r.Kind), Evidence: r.Evidence,
	}
	if out.Decision == agent.Ask {
		out.Summary = commit.Summarize(c.View, ca, r)
		if a.Kind == "files_push" {
			out.Summary.Sentence = fmt.Sprintf("Copy %q from this computer into the phone's Pinky folder", a.Path)
		}
	}
	return out
}

// credentials says why an action would enter a password or a one-time
// code, "" when it would not: typing into such a field, touching the
// on-screen keyboard while one has focus (its keys type as typing does),
// and a long press on one (which pastes the clipboard).
func credentials(c agent.Check) string {
	secret := func(n *screen.Node) bool {
		return n != nil && (n.Password || secrets.IsPasswordField(n.Element) || secrets.IsCodeField(n.Element))
	}
	a := c.Action
	switch {
	case a.Kind == "type" && (secret(c.Target) || (c.Target == nil && secret(c.Focused))):
		return "typing into a password or one-time-code field"
	case (c.OnKeyboard || c.EndOnKeyboard) && secret(c.Focused):
		return "typing on the on-screen keyboard while a password or one-time-code field has focus"
	case a.Kind == "long_press" && secret(c.Target):
		return "a long press on a password or one-time-code field (it pastes)"
	}
	return ""
}

// Blocked implements agent.Guard.
func (g guard) Blocked(appID string) bool {
	b, _ := g.policy.Current().Blocked(appID)
	return b
}

// Category implements agent.Guard's optional app categories.
func (g guard) Category(appID string) string { return g.policy.Current().Category(appID) }

// AppName implements agent.Guard's optional app names, from the app table:
// they recognise a blocked app's notification by its label (agent/hide.go).
func (g guard) AppName(appID string) string { return g.policy.Current().Name(appID) }
