package agent

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// salary is the blocked Bank's notification of issue 12, item 6.
const salary = "Salary received +$1,850.00, balance $4,281.08"

// blocksBank allows every action and blocks the Bank and the
// Authenticator, as the default policy does.
type blocksBank struct{}

func (blocksBank) Check(Check) Verdict { return Verdict{Decision: Allow} }
func (blocksBank) Blocked(app string) bool {
	return app == "com.pinky.sim.bank" || app == "com.google.android.apps.authenticator2"
}

// listing counts the driver's listings, and can make them fail or label
// apps by their ids, as Android's driver does.
type listing struct {
	*sim.Driver
	apps, notes atomic.Int32
	appsErr     error
	idLabels    bool
}

func (l *listing) ListApps(ctx context.Context, id string) ([]sdk.App, error) {
	l.apps.Add(1)
	if l.appsErr != nil {
		return nil, l.appsErr
	}
	apps, err := l.Driver.ListApps(ctx, id)
	if l.idLabels {
		for i := range apps {
			apps[i].Label = apps[i].ID
		}
	}
	return apps, err
}

// namesApps is blocksBank with an app table that names some apps.
type namesApps struct{ blocksBank }

func (namesApps) AppName(id string) string {
	return map[string]string{"com.pinky.sim.bank": "Bank", "com.google.android.apps.messaging": "Messages"}[id]
}

func (l *listing) ListNotifications(ctx context.Context, id string) ([]sdk.Notification, error) {
	l.notes.Add(1)
	return l.Driver.ListNotifications(ctx, id)
}

// hideFixture is newFixture on the default world with more notifications
// on sim-android-1, with the blocksBank guard and a driver that counts its
// listings.
func hideFixture(t *testing.T, notes ...sim.NotifySpec) (*fixture, *listing) {
	t.Helper()
	return hideFixtureWith(t, blocksBank{}, notes...)
}

func hideFixtureWith(t *testing.T, g Guard, notes ...sim.NotifySpec) (*fixture, *listing) {
	t.Helper()
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	w.Phones[0].Notifications = append(w.Phones[0].Notifications, notes...)
	d := sim.New(w)
	t.Cleanup(func() { d.Close() })
	l := &listing{Driver: d}
	sd := &simDrivers{d: d, online: map[string]bool{"sim-android-1": true, "sim-ios-1": true}, events: make(chan driverhost.Event, 16),
		wrap: func(sdk.Driver) sdk.Driver { return l }}
	f := &fixture{drv: sd, store: history.NewMemory()}
	f.m = NewManager(Config{Drivers: sd, Store: f.store, Guard: g})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f, l
}

const dev = "sim-android-1"

// swipeDown opens the shade as an agent would: a swipe from the top edge.
var swipeDown = Action{Kind: "swipe", Target: Target{X: 540, Y: 10, HasPoint: true}, To: Target{X: 540, Y: 1400, HasPoint: true}}

// bankRow is where the sim draws the Bank's notification now.
func bankRow(t *testing.T, d sdk.Driver) sdk.Rect {
	t.Helper()
	sc, err := d.Screen(context.Background(), dev, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sc.Elements {
		if strings.HasSuffix(e.ResourceID, ":id/notification") && strings.HasPrefix(e.ContentDescription, "Bank") {
			return e.Bounds
		}
	}
	t.Fatalf("the sim shows no Bank notification: %+v", secrets.Notices(sc))
	return sdk.Rect{}
}

func boxesOf(f *fixture) []sdk.Rect {
	p := f.m.phone(dev)
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return append([]sdk.Rect(nil), p.boxes...)
}

func hasBox(boxes []sdk.Rect, r sdk.Rect) bool {
	for _, b := range boxes {
		if b == r {
			return true
		}
	}
	return false
}

// noSalary fails if an agent's text holds anything of the Bank's
// notification, or does not say one was hidden.
func noSalary(t *testing.T, where, text string) {
	t.Helper()
	for _, x := range []string{"Salary", "1,850", "4,281", "Bank ·"} {
		if strings.Contains(text, x) {
			t.Errorf("%s: the agent reads %q:\n%s", where, x, text)
		}
	}
	if !strings.Contains(text, secrets.HiddenNotice) {
		t.Errorf("%s: no %q in:\n%s", where, secrets.HiddenNotice, text)
	}
}

// TestBlockedNotificationsHidden is the attack of issue 12, item 6: an
// agent reads a blocked Bank's notification on the lock screen and in the
// shade. Neither shows it, the row is covered in screenshots, the screen is
// kept out of recordings, and Ben's message stays readable.
func TestBlockedNotificationsHidden(t *testing.T) {
	f, l := hideFixture(t, sim.NotifySpec{App: "bank", Title: "Bank", Text: salary})
	ctx := context.Background()
	s := f.session(t, "agent")

	// The lock screen: the phone is locked, and the agent reads it.
	obs, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "read my notifications"})
	if err != nil {
		t.Fatal(err)
	}
	if !obs.Locked {
		t.Fatalf("the phone is not locked:\n%s", obs.Text)
	}
	noSalary(t, "lock screen", obs.Text)
	if !strings.Contains(obs.Text, "Did you get the tickets?") {
		t.Errorf("lock screen: Ben's message is hidden too:\n%s", obs.Text)
	}
	if row := bankRow(t, l); !hasBox(boxesOf(f), row) {
		t.Errorf("lock screen: boxes %v do not cover the row %v", boxesOf(f), row)
	}

	// The shade, opened by a swipe from the top edge.
	if err := f.drv.d.Unlock(ctx, dev, "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, dev, swipeDown, nil); err != nil {
		t.Fatal(err)
	}
	obs, err = s.Observe(ctx, dev, true, false)
	if err != nil {
		t.Fatal(err)
	}
	noSalary(t, "shade", obs.Text)
	if !strings.Contains(obs.Text, "Did you get the tickets?") {
		t.Errorf("shade: Ben's message is hidden too:\n%s", obs.Text)
	}
	row := bankRow(t, l)
	if !hasBox(boxesOf(f), row) {
		t.Errorf("shade: boxes %v do not cover the row %v", boxesOf(f), row)
	}
	// The recorder's own reads of the same screen keep it out too.
	sc, _ := l.Screen(ctx, dev, 0)
	if why := f.m.Private(dev, sc); why == "" {
		t.Error("Private: the shade with a blocked app's notification may be recorded")
	}

	// Reading again costs no more listings: what the phone showed is placed.
	apps, notes := l.apps.Load(), l.notes.Load()
	for range 5 {
		if _, err := s.Observe(ctx, dev, false, false); err != nil {
			t.Fatal(err)
		}
	}
	if a, n := l.apps.Load(), l.notes.Load(); a != apps || n != notes {
		t.Errorf("5 more reads listed apps %d and notifications %d more times; want none", a-apps, n-notes)
	}
	if apps != 1 || notes > 2 {
		t.Errorf("listings so far: %d of apps, %d of notifications; want 1 and at most 2", apps, notes)
	}
}

// TestBlockedHeadsUpHidden: the Bank's notification comes as a banner over
// Notes, where the agent is.
func TestBlockedHeadsUpHidden(t *testing.T) {
	f, l := hideFixture(t, sim.NotifySpec{App: "bank", Title: "Bank", Text: salary, After: 500 * time.Millisecond})
	ctx := context.Background()
	s := f.connected(t)
	if _, err := s.Act(ctx, dev, Action{Kind: "launch", App: "Notes"}, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(4 * time.Second)
	for {
		obs, err := s.Observe(ctx, dev, true, false)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(obs.Text, secrets.HiddenNotice) {
			noSalary(t, "heads-up", obs.Text)
			if obs.App != "Notes" {
				t.Errorf("app in front: got %q; want Notes under the banner", obs.App)
			}
			if row := bankRow(t, l); !hasBox(boxesOf(f), row) {
				t.Errorf("heads-up: boxes %v do not cover the banner %v", boxesOf(f), row)
			}
			return
		}
		if strings.Contains(obs.Text, "Salary") || time.Now().After(deadline) {
			t.Fatalf("the banner was not hidden:\n%s", obs.Text)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUnplacedNotificationsHidden: when the phone's apps cannot be listed,
// the gateway cannot tell a blocked app's rows from others and hides them
// all; once it can, it shows the allowed ones again.
func TestUnplacedNotificationsHidden(t *testing.T) {
	f, l := hideFixture(t, sim.NotifySpec{App: "bank", Title: "Balance", Text: "Low balance"})
	l.appsErr = errors.New("adb went away")
	ctx := context.Background()
	s := f.session(t, "agent")
	obs, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "read my notifications"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(obs.Text, "tickets") || strings.Contains(obs.Text, "Low balance") {
		t.Errorf("apps unknown: a notification shows:\n%s", obs.Text)
	}
	// Content is enough for the Bank's own, once the apps are known.
	l.appsErr = nil
	p := f.m.phone(dev)
	p.hide.mu.Lock()
	p.hide.appsAt = time.Time{}
	p.hide.mu.Unlock()
	obs, err = s.Observe(ctx, dev, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Text, "tickets") || strings.Contains(obs.Text, "Low balance") {
		t.Errorf("apps known: got\n%s\nwant Ben's message and not the Bank's", obs.Text)
	}
}

// TestLabelsFromTheAppTable: a driver that lists apps by id (Android's)
// gives no label to tell a row's app; the app table's names stand in for
// the apps it names, and a row of another app is hidden, since it could be
// a blocked app's.
func TestLabelsFromTheAppTable(t *testing.T) {
	f, l := hideFixtureWith(t, namesApps{},
		sim.NotifySpec{App: "bank", Title: "Bank", Text: salary},
		sim.NotifySpec{App: "shop", Title: "Shop", Text: "Your order shipped"})
	l.idLabels = true
	s := f.connected(t)
	if _, err := s.Act(context.Background(), dev, swipeDown, nil); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Observe(context.Background(), dev, true, false)
	if err != nil {
		t.Fatal(err)
	}
	noSalary(t, "shade", obs.Text)
	if !strings.Contains(obs.Text, "Did you get the tickets?") {
		t.Errorf("Ben's message, of an app the table names, is hidden:\n%s", obs.Text)
	}
	if strings.Contains(obs.Text, "order shipped") {
		t.Errorf("the Shop's row, whose app nothing names, shows:\n%s", obs.Text)
	}
}

// TestPastedCodeMasked is the clipboard attack of issue 12, item 5, on the
// gateway's second wall: a code copied from the Authenticator (blocked: the
// gateway reads it and shows nothing) and pasted into a note by a long
// press is masked like the code, and the note covered.
func TestPastedCodeMasked(t *testing.T) {
	f, l := hideFixture(t)
	ctx := context.Background()
	s := f.connected(t)
	if _, err := l.Act(ctx, dev, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.apps.authenticator2"}); err != nil {
		t.Fatal(err)
	}
	_, err := s.Observe(ctx, dev, true, false)
	wantCode(t, "observe the Authenticator", err, CodeBlockedApp)
	// The copy, as a blind tap once made it (the gate now refuses the tap;
	// the person may still copy a code in hand).
	sc, _ := l.Screen(ctx, dev, 0)
	var row sdk.Point
	for _, e := range sc.Elements {
		if e.Text == "305 118" {
			row = e.Bounds.Center()
		}
	}
	if _, err := l.Act(ctx, dev, sdk.Action{Kind: sdk.ActTap, Point: row}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Act(ctx, dev, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{
		{Kind: "launch", App: "Notes"},
		{Kind: "tap", Target: Target{Text: "New note"}},
		{Kind: "long_press", Target: Target{Text: "Note"}},
	} {
		if _, err := s.Act(ctx, dev, a, nil); err != nil {
			t.Fatalf("%s: %v", a.Kind, err)
		}
	}
	raw, _ := l.Screen(ctx, dev, 0)
	var field sdk.Element
	for _, e := range raw.Elements {
		if strings.HasSuffix(e.ResourceID, "edit_note_text") {
			field = e
		}
	}
	if field.Text != "305 118" {
		t.Fatalf("the note holds %q; want the pasted code", field.Text)
	}
	obs, err := s.Observe(ctx, dev, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(obs.Text, "305 118") || strings.Contains(obs.Text, "305118") {
		t.Errorf("the agent reads the pasted code:\n%s", obs.Text)
	}
	if !strings.Contains(obs.Text, "••• •••") {
		t.Errorf("the note does not show a masked code:\n%s", obs.Text)
	}
	if !hasBox(boxesOf(f), field.Bounds) {
		t.Errorf("boxes %v do not cover the note %v", boxesOf(f), field.Bounds)
	}
	if why := f.m.Private(dev, raw); why == "" {
		t.Error("Private: the note with the code may be recorded")
	}
}
