package simtest

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
)

func TestNew(t *testing.T) {
	base := len(NewPhone(t, Android, Unlocked(Android)).notifications(t))
	for _, tt := range []struct {
		name    string
		opts    []Option
		android sdk.LockState
		ios     sdk.LockState
		notes   int // notifications on the Android phone beyond the world's
	}{
		{"default", nil, sdk.LockLocked, sdk.LockLocked, 0},
		{"android unlocked", []Option{Unlocked(Android)}, sdk.LockUnlocked, sdk.LockLocked, 0},
		{"both unlocked", []Option{Unlocked(Android, IOS)}, sdk.LockUnlocked, sdk.LockUnlocked, 0},
		{"edited", []Option{Edit(func(w *sim.World) {
			w.Phones[0].Notifications = append(w.Phones[0].Notifications, sim.NotifySpec{App: "Bank", Title: "Salary"})
		}), Unlocked(Android)}, sdk.LockUnlocked, sdk.LockLocked, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(t, tt.opts...)
			for id, want := range map[string]sdk.LockState{Android: tt.android, IOS: tt.ios} {
				p := &Phone{T: t, Driver: d, ID: id}
				if got := p.Screen().LockState; got != want {
					t.Errorf("%s: lock state %q; want %q", id, got, want)
				}
			}
			if tt.android == sdk.LockUnlocked {
				p := &Phone{T: t, Driver: d, ID: Android}
				if got := len(p.notifications(t)) - base; got != tt.notes {
					t.Errorf("notifications beyond the world's: got %d; want %d", got, tt.notes)
				}
			}
		})
	}
}

func (p *Phone) notifications(t *testing.T) []sdk.Notification {
	t.Helper()
	ns, err := p.Driver.ListNotifications(t.Context(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

// TestPhone drives the Android phone into Messages and a conversation by
// tapping elements by text and by short resource id.
func TestPhone(t *testing.T) {
	p := NewPhone(t, Android)
	p.Unlock()
	p.Launch("com.google.android.apps.messaging")
	if got := p.Screen().App.ID; got != "com.google.android.apps.messaging" {
		t.Fatalf("after Launch: app %q", got)
	}
	p.Tap("Ana Silva")
	p.Tap("compose_message_text")
	p.Type("hello")
	e, ok := Find(p.Screen(), "compose_message_text")
	if !ok || e.Text != "hello" {
		t.Errorf("compose field: got %+v (found %v); want the text hello", e, ok)
	}
	p.Key(sdk.KeyBack)
}

func TestCenter(t *testing.T) {
	s := &sdk.Screen{Elements: []sdk.Element{{Text: "Send", Bounds: sdk.Rect{Left: 10, Top: 20, Right: 30, Bottom: 60}}}}
	if got, want := Center(t, s, "Send"), (sdk.Point{X: 20, Y: 40}); got != want {
		t.Errorf("Center: got %v; want %v", got, want)
	}
}

func TestFind(t *testing.T) {
	s := &sdk.Screen{Elements: []sdk.Element{
		{ID: 1, Text: "Send"},
		{ID: 2, ContentDescription: "Search"},
		{ID: 3, ResourceID: "com.example:id/compose"},
		{ID: 4, ResourceID: "password"},
		{ID: 5, ResourceID: "com.example:id/old_password"},
	}}
	for _, tt := range []struct {
		what string
		want int // 0 for none
	}{
		{"Send", 1}, {"Search", 2}, {"compose", 3}, {"com.example:id/compose", 3},
		{"password", 4}, {"old_password", 5}, {"pose", 0}, {"id/compose", 0}, {"Sen", 0},
	} {
		e, ok := Find(s, tt.what)
		if got := map[bool]int{true: e.ID}[ok]; got != tt.want {
			t.Errorf("Find(%q): got element %d; want %d", tt.what, got, tt.want)
		}
	}
}
