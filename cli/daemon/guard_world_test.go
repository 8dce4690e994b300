package daemon

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// worldCommits are the controls of the virtual phones' apps that commit:
// every other control there commits nothing, and the guard must not ask
// for it. A person who is asked for every note they open stops reading
// the cards.
var worldCommits = map[string]string{
	"Wi-Fi": "change_setting", "Bluetooth": "change_setting", "Airplane mode": "change_setting",
	"Sign in": "sign_in", "Place order": "purchase", "Send": "send_message",
	"Allow": "grant_permission", // the permission controller's dialog over Notes
}

// TestGuardOnTheVirtualWorld walks the virtual phones' apps two screens
// deep (each app's first screen, and the screen each of its controls
// opens) and checks what the guard finds in every control there.
func TestGuardOnTheVirtualWorld(t *testing.T) {
	g := defaultGuard(t)
	d := simtest.New(t, simtest.Unlocked(simtest.Android, simtest.IOS))
	seen := map[string]bool{}
	check := func(v *screen.View) {
		for i := range v.Nodes {
			n := &v.Nodes[i]
			if !n.Clickable && !n.Checkable {
				continue
			}
			key := v.App.ID + "\x00" + n.Label
			if seen[key] {
				continue
			}
			seen[key] = true
			got := g.Check(agent.Check{Action: agent.Action{Kind: "tap"}, View: v, Target: n, App: v.App.ID})
			if want := worldCommits[n.Label]; got.Commit != want {
				t.Errorf("%s: a tap on %s %q commits %q (%s); want %q", v.App.ID, n.Role, n.Label, got.Commit, got.Evidence, want)
			}
		}
	}
	for _, dev := range []string{simtest.Android, simtest.IOS} {
		p := &simtest.Phone{T: t, Driver: d, ID: dev}
		apps, err := d.ListApps(t.Context(), dev)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range apps {
			p.Launch(a.ID)
			first := screen.NewModel().Read(p.Screen())
			check(first)
			for _, n := range first.Nodes {
				if !n.Clickable {
					continue
				}
				p.Launch(a.ID)
				p.Act(sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: (n.Bounds.Left + n.Bounds.Right) / 2, Y: (n.Bounds.Top + n.Bounds.Bottom) / 2}})
				check(screen.NewModel().Read(p.Screen()))
				p.Key(sdk.KeyHome)
			}
		}
	}
	for label := range worldCommits {
		found := false
		for k := range seen {
			if len(k) > len(label) && k[len(k)-len(label):] == label {
				found = true
			}
		}
		if !found {
			t.Errorf("no control %q on the virtual phones' screens: the walk missed it, or the world changed", label)
		}
	}
}

// TestGuardOnWhatPeopleWrite: the rows of a list that show what people
// wrote or keep (a note's title, a message's preview, a contact, an
// account with its code) are theirs, not an app's words: opening one
// commits nothing, and a row whose words begin with a costly verb still
// asks.
func TestGuardOnWhatPeopleWrite(t *testing.T) {
	g := defaultGuard(t)
	for _, tt := range []struct{ app, label, want string }{
		{"com.google.android.keep", "Groceries: eggs, milk, basil", ""},
		{"com.google.android.keep", "Gift ideas for Mum", ""},
		{"com.google.android.apps.messaging", "Ben Okafor · Here are the photos! Which one should we print?", ""},
		{"com.google.android.apps.messaging", "Mum · Call me when you land", ""},
		{"com.google.android.apps.authenticator2", "GitHub ana-silva · GitHub (ana-silva) · 771 042", ""},
		{"com.google.android.contacts", "Dr. Payne", ""},
		{"com.google.android.gm", "Your order has shipped · Track your package", ""},
		{"com.google.android.gm", "Landlord: Rent receipt for May", ""},
		{"com.google.android.keep", "Delete all notes", "delete"},
		{"com.google.android.gm", "Empty trash", "delete"},
	} {
		list := screen.Node{Ref: 1, Role: screen.RoleList, Scrollable: true, Bounds: sdk.Rect{Top: 200, Right: 1080, Bottom: 2200}}
		row := screen.Node{Ref: 2, Role: screen.RoleItem, Label: tt.label, Clickable: true, Parent: 1, Depth: 1, Bounds: sdk.Rect{Top: 300, Right: 1080, Bottom: 450}}
		v := &screen.View{App: sdk.App{ID: tt.app}, ScreenOn: true, Width: 1080, Height: 2400, Nodes: []screen.Node{list, row}}
		if got := g.Check(agent.Check{Action: agent.Action{Kind: "tap"}, View: v, Target: &v.Nodes[1], App: tt.app}); got.Commit != tt.want {
			t.Errorf("%s: a tap on the row %q: %s, commits %q (%s); want %q", tt.app, tt.label, got.Decision, got.Commit, got.Evidence, tt.want)
		}
	}
}
