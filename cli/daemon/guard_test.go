package daemon

import (
	"path/filepath"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/policy"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

func defaultGuard(t *testing.T) guard {
	t.Helper()
	home := t.TempDir()
	if _, err := policy.EnsureDefault(filepath.Join(home, policy.PolicyFile)); err != nil {
		t.Fatal(err)
	}
	st, err := policy.LoadStore(home)
	if err != nil {
		t.Fatal(err)
	}
	return guard{policy: st}
}

func TestGuard(t *testing.T) {
	g := defaultGuard(t)
	row := &screen.Node{Ref: 1, Role: screen.RoleItem, Label: "Ben Okafor", Clickable: true, Bounds: sdk.Rect{Right: 1080, Bottom: 200}}
	call := &screen.Node{Ref: 2, Role: screen.RoleButton, Label: "Call", Clickable: true, Parent: 1, Depth: 1, Bounds: sdk.Rect{Left: 440, Top: 50, Right: 640, Bottom: 150}}
	pw := &screen.Node{Ref: 3, Role: screen.RolePassword, Password: true, Focused: true, Element: sdk.Element{Password: true}}
	user := &screen.Node{Ref: 4, Role: screen.RoleField, Editable: true, Focused: true, Hint: "Username"}
	v := &screen.View{App: sdk.App{ID: "com.example"}, ScreenOn: true, Nodes: []screen.Node{*row, *call}}
	tests := []struct {
		name string
		c    agent.Check
		want agent.Decision
		code agent.Code
	}{
		{"a row aimed at", agent.Check{Action: agent.Action{Kind: "tap"}, View: v, Target: row}, agent.Allow, ""},
		// The row's middle is its Call button: the finger works the button.
		{"the button under the finger", agent.Check{Action: agent.Action{Kind: "tap"}, View: v, Target: row, Under: call}, agent.Ask, ""},
		{"a long press on it", agent.Check{Action: agent.Action{Kind: "long_press"}, View: v, Target: call}, agent.Ask, ""},
		// A pinch centred on the row with a finger on the Call button.
		{"a pinch with a finger on it", agent.Check{Action: agent.Action{Kind: "pinch"}, View: v, Target: row, Also: []*screen.Node{row, call}}, agent.Ask, ""},
		{"a pinch on the row alone", agent.Check{Action: agent.Action{Kind: "pinch"}, View: v, Target: row, Also: []*screen.Node{row}}, agent.Allow, ""},
		{"a pinch with a finger on the keyboard into a password", agent.Check{Action: agent.Action{Kind: "pinch"}, View: v, Target: row, EndOnKeyboard: true, Focused: pw}, agent.Deny, agent.CodeCredentials},
		{"a key on the keyboard into a password", agent.Check{Action: agent.Action{Kind: "tap"}, View: v, OnKeyboard: true, Key: "h", Focused: pw}, agent.Deny, agent.CodeCredentials},
		{"a swipe ending on the keyboard into a password", agent.Check{Action: agent.Action{Kind: "swipe"}, View: v, EndOnKeyboard: true, Focused: pw}, agent.Deny, agent.CodeCredentials},
		{"a long press on a password field", agent.Check{Action: agent.Action{Kind: "long_press"}, View: v, Target: pw}, agent.Deny, agent.CodeCredentials},
		{"typing into the focused password field", agent.Check{Action: agent.Action{Kind: "type", Text: "x"}, View: v, Focused: pw}, agent.Deny, agent.CodeCredentials},
		{"a key on the keyboard into a username", agent.Check{Action: agent.Action{Kind: "tap"}, View: v, OnKeyboard: true, Key: "h", Focused: user}, agent.Allow, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := g.Check(tt.c)
			if got.Decision != tt.want || got.Code != tt.code {
				t.Errorf("got %s %s (%s, %s); want %s %s", got.Decision, got.Code, got.Commit, got.Reason, tt.want, tt.code)
			}
		})
	}
}
