package gateway

import (
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/commit"
	"github.com/pinky-gateway/pinky/gateway/policy"
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
	if a.Kind == "type" && c.Target != nil && (secrets.IsPasswordField(c.Target.Element) || secrets.IsCodeField(c.Target.Element)) {
		return agent.Verdict{Decision: agent.Deny, Code: agent.CodeCredentials,
			Reason: "typing into a password or one-time-code field is refused: ask the person to do it with phone_ask_person"}
	}
	app := c.App
	if a.Kind == "launch" || a.Kind == "stop" {
		app = a.App
	}
	r := commit.Detect(c.View, commit.Action{Kind: a.Kind, Target: c.Target, Text: a.Text, Submit: a.Submit, Key: a.Key, URL: a.URL, App: a.App})
	v := g.policy.Current().Decide(policy.Request{App: app, Device: c.Device, Agent: c.Agent, Action: a.Kind, Commit: string(r.Kind)})
	return agent.Verdict{
		Decision: agent.Decision(v.Decision), Code: agent.Code(v.Code), Reason: v.Reason, Rule: v.Rule,
		Commit: string(r.Kind), Evidence: r.Evidence,
	}
}

// Blocked implements agent.Guard.
func (g guard) Blocked(appID string) bool {
	b, _ := g.policy.Current().Blocked(appID)
	return b
}

// Category implements agent.Guard's optional app categories.
func (g guard) Category(appID string) string { return g.policy.Current().Category(appID) }
