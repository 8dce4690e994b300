package daemon

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// TestGuardReadsTheAppCategory checks that the commit detector is told the
// category the policy's app table gives the app in front: "Send" in an app
// filed under payments (whose id says nothing of money) moves money.
func TestGuardReadsTheAppCategory(t *testing.T) {
	g := defaultGuard(t)
	send := &screen.Node{Ref: 1, Role: screen.RoleButton, Label: "Send", Clickable: true, Bounds: sdk.Rect{Right: 200, Bottom: 100}}
	tests := []struct {
		app  string
		want string
	}{
		{"com.remitly.androidapp", "transfer"}, // payments in apps.yaml
		{"com.example.notes", "send_message"},  // in no category
	}
	for _, tt := range tests {
		t.Run(tt.app, func(t *testing.T) {
			v := &screen.View{App: sdk.App{ID: tt.app}, ScreenOn: true, Nodes: []screen.Node{*send}}
			got := g.Check(agent.Check{App: tt.app, Action: agent.Action{Kind: "tap"}, View: v, Target: &v.Nodes[0]})
			if got.Commit != tt.want || got.Decision != agent.Ask {
				t.Errorf("got %s %q (%s); want ask %q", got.Decision, got.Commit, got.Evidence, tt.want)
			}
		})
	}
}
