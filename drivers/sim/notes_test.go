package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// rows returns the notification rows of s as "app line / title / text".
func rows(s *sdk.Screen) []string {
	var out []string
	parent := map[int]int{}
	for _, e := range s.Elements {
		parent[e.ID] = e.ParentID
	}
	byRow := map[int][]string{}
	var order []int
	for _, e := range s.Elements {
		if strings.HasSuffix(e.ResourceID, "notification") {
			order = append(order, e.ID)
			continue
		}
		if p := parent[e.ID]; p != 0 && e.Text != "" {
			byRow[p] = append(byRow[p], e.Text)
		}
	}
	for _, id := range order {
		out = append(out, strings.Join(byRow[id], " / "))
	}
	return out
}

// TestLockScreenNotifications: the lock screen shows the notifications,
// newest first, with their app, as phones do; a tap on one asks for the
// PIN.
func TestLockScreenNotifications(t *testing.T) {
	w, err := DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	w.Phones[0].Notifications = append(w.Phones[0].Notifications, NotifySpec{App: "bank", Title: "Bank", Text: "Salary received"})
	d := New(w)
	t.Cleanup(func() { d.Close() })
	s := screen(t, d, android)
	want := []string{"Bank · now / Bank / Salary received", "Messages · now / Ben / Did you get the tickets?"}
	if got := rows(s); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("lock screen rows: got %q; want %q", got, want)
	}
	row, _ := find(s, "Bank Bank")
	if _, err := d.Act(t.Context(), android, sdk.Action{Kind: sdk.ActTap, Point: row.Bounds.Center()}); err == nil {
		t.Error("a tap on a lock screen notification went through; want the phone locked")
	}
}

// TestHeadsUp: a notification that comes while the phone is in use shows
// as a banner over the app for a while, and a tap on it opens its app.
func TestHeadsUp(t *testing.T) {
	old := headsUpFor
	headsUpFor = 400 * time.Millisecond
	t.Cleanup(func() { headsUpFor = old })
	w, err := DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	w.Phones[0].Notifications = append(w.Phones[0].Notifications, NotifySpec{App: "bank", Title: "Bank", Text: "Salary received", After: 300 * time.Millisecond})
	d := New(w)
	t.Cleanup(func() { d.Close() })
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"})
	if got := rows(screen(t, d, android)); len(got) != 0 {
		t.Fatalf("a banner before any notification came: %q", got)
	}
	var s *sdk.Screen
	testkit.Poll(2*time.Second, func() bool { s = screen(t, d, android); return len(rows(s)) > 0 })
	if got := rows(s); len(got) != 1 || got[0] != "Bank · now / Bank / Salary received" {
		t.Fatalf("banner: got %q; want the Bank's notification", got)
	}
	if s.App.ID != "com.google.android.keep" {
		t.Errorf("app in front: got %s; want Notes under the banner", s.App.ID)
	}
	if _, ok := find(s, "New note"); !ok {
		t.Error("Notes' screen is gone under the banner")
	}
	// It goes by itself.
	time.Sleep(600 * time.Millisecond)
	if got := rows(screen(t, d, android)); len(got) != 0 {
		t.Errorf("the banner is still there after %s: %q", headsUpFor, got)
	}

	// A tap on a banner opens its app.
	headsUpFor = time.Minute
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"})
	p := d.byID[android]
	p.mu.Lock()
	p.post(NotifySpec{App: "messages", Title: "Ana", Text: "Lunch?"})
	p.mu.Unlock()
	s = screen(t, d, android)
	banner, ok := find(s, "Messages Ana")
	if !ok {
		t.Fatalf("no banner for Ana's message: %q", rows(s))
	}
	act(t, d, android, sdk.Action{Kind: sdk.ActTap, Point: banner.Bounds.Center()})
	if got := screen(t, d, android).App.ID; got != "com.google.android.apps.messaging" {
		t.Errorf("after a tap on the banner: got %s in front; want Messages", got)
	}
}
