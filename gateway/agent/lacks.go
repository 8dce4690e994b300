package agent

import (
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// lack is what an agent cannot do on a phone that lacks a capability, and
// what it can do instead.
type lack struct {
	what    string // what the capability does, after "cannot": "list its apps"
	instead string // what the agent can do without it, a clause that starts with a verb
}

// lacks names, for each capability an agent's call asks for, what the
// agent cannot do without it and what it does instead.
var lacks = map[sdk.Capability]lack{
	sdk.CapDisplays:      {"make background displays", "connect without background"},
	sdk.CapPinch:         {"pinch", "zoom with the app's own controls, such as a zoom button or a double tap"},
	sdk.CapFiles:         {"keep files in a Pinky folder", "go on without files"},
	sdk.CapApps:          {"list its apps", "find the app on the home screen with phone_observe"},
	sdk.CapNotifications: {"list its notifications", "open the notification shade with a swipe down from the top and observe it"},
}

// unsupported is the answer to an agent whose call needs capability c,
// which device lacks. When the device says why (sdk.Device.Caps, through
// the driver host's Missing), the answer names what the phone cannot do,
// why, how the person can enable it and what the agent does next (lacking);
// when it does not, the answer is plain, a sentence written for that call.
func (m *Manager) unsupported(p *phone, device string, c sdk.Capability, plain string) *Error {
	if e, ok := m.lacking(p, device, c); ok {
		return e
	}
	return &Error{Code: CodeUnsupported, Message: plain}
}

// lacking is the answer to a call that needs capability c when the device
// lists c as missing with a reason or a fix, and false when it does not.
func (m *Manager) lacking(p *phone, device string, c sdk.Capability) (*Error, bool) {
	if p == nil || c == "" {
		return nil, false
	}
	mc, ok := m.cfg.Drivers.Missing(p.id, c)
	reason, fix := clause(mc.Reason), clause(mc.Fix)
	if !ok || (reason == "" && fix == "") {
		return nil, false
	}
	l, known := lacks[c]
	if !known {
		l = lack{what: "do that (" + string(c) + ")", instead: "go on without it"}
	}
	var b strings.Builder
	b.WriteString(device + " cannot " + l.what)
	if reason != "" {
		b.WriteString(": " + reason)
	}
	b.WriteString(". ")
	if fix != "" {
		b.WriteString("The person can enable it: " + fix + ". ")
		b.WriteString(upper(l.instead) + ", or, if the task needs it, tell the person how to enable it with phone_ask_person")
	} else {
		b.WriteString(upper(l.instead))
	}
	return &Error{Code: CodeUnsupported, Message: b.String()}, true
}

// clause is a driver's sentence made ready to sit inside another: one
// line, without its closing full stop, and made safe to show as any
// driver message is (safeDriverText), since the driver, or a phone host,
// is another program.
func clause(s string) string {
	return safeDriverText(strings.TrimRight(strings.Join(strings.Fields(s), " "), ". "))
}

// upper returns s with its first letter upper case (the clauses here
// start in ASCII).
func upper(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
