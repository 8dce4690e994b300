package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
)

// watchLog is a Watcher that writes down what it hears, one line a call.
type watchLog struct {
	mu    sync.Mutex
	lines []string
}

func (w *watchLog) add(format string, a ...any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.lines = append(w.lines, fmt.Sprintf(format, a...))
}
func (w *watchLog) TaskStarted(device, task string, display int) {
	w.add("start %s", device)
}
func (w *watchLog) TaskEnded(device, task string) { w.add("end %s", device) }
func (w *watchLog) ScreenRead(device string, at time.Time, private string) {
	if at.IsZero() || time.Since(at) > time.Minute {
		w.add("read %s at a wrong time %v", device, at)
	}
	w.add("read %s private=%q", device, private)
}
func (w *watchLog) ScreenHidden(device, why string) { w.add("hidden %s", device) }

func (w *watchLog) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lines
	w.lines = nil
	return l
}

func TestWatcherHearsTasksReadsAndThePerson(t *testing.T) {
	w := &watchLog{}
	f := newFixture(t, Config{Watcher: w, Guard: askOnSend{}, Approvals: approval.NewBook(0)})
	s := f.connected(t)
	ctx := context.Background()
	const dev = "sim-android-1"
	step := func(name string, do func(), want ...string) {
		t.Helper()
		do()
		if diff := cmp.Diff(want, w.take()); diff != "" {
			t.Errorf("%s: the watcher heard (-want +got):\n%s", name, diff)
		}
	}
	step("connect", func() {}, "start "+dev, `read sim-android-1 private=""`)
	step("observe", func() { s.Observe(ctx, dev, false, false) }, `read sim-android-1 private=""`)
	step("take over", func() {
		if err := f.m.TakeOver(dev); err != nil {
			t.Fatal(err)
		}
	}, "hidden "+dev)
	step("a read while the person holds it", func() { s.Observe(ctx, dev, false, false) },
		`read sim-android-1 private="the person has the phone in hand"`)
	step("hand back", func() {
		if err := f.m.HandBack(dev); err != nil {
			t.Fatal(err)
		}
	}, "hidden "+dev)
	step("release", func() { s.Release(ctx, dev) }, "end "+dev)
}

func TestPrivate(t *testing.T) {
	f := newFixture(t, Config{Guard: askOnSend{}})
	const dev = "sim-android-1"
	open := sdk.Screen{App: sdk.App{ID: "com.pinky.sim.messages"}, LockState: sdk.LockUnlocked, Width: 100, Height: 100}
	for _, tc := range []struct {
		name   string
		screen func(sdk.Screen) sdk.Screen
		want   string // a word of the reason; "" when it may be recorded
	}{
		{"an app in use", func(s sdk.Screen) sdk.Screen { return s }, ""},
		{"locked", func(s sdk.Screen) sdk.Screen { s.LockState = sdk.LockLocked; return s }, "locked"},
		{"blocked app", func(s sdk.Screen) sdk.Screen { s.App.ID = "com.pinky.sim.bank"; return s }, "blocked"},
		{"one-time code", func(s sdk.Screen) sdk.Screen {
			s.Elements = []sdk.Element{{ID: 1, Class: "android.widget.TextView", Text: "Your verification code is 482913", Bounds: sdk.Rect{Right: 100, Bottom: 20}}}
			return s
		}, "one-time code"},
		{"password field", func(s sdk.Screen) sdk.Screen {
			s.Elements = []sdk.Element{{ID: 1, Class: "android.widget.EditText", Password: true, Editable: true, Text: "hunter2", Bounds: sdk.Rect{Right: 100, Bottom: 20}}}
			return s
		}, "password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := tc.screen(open)
			got := f.m.Private(dev, &sc)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Private = %q, want a reason with %q", got, tc.want)
			}
		})
	}
	if err := f.m.TakeOver(dev); err != nil {
		t.Fatal(err)
	}
	if got := f.m.Private(dev, &open); !strings.Contains(got, "person") {
		t.Errorf("Private while the person holds the phone = %q, want the person named", got)
	}
}

// TestHomeLeavesABlockedApp: with a blocked app in front (the person opened
// it), reads answer blocked_app and say to go home with phone_key; the
// agent's home key works even when the gateway must read the screen first
// (after a wake), and the recording hears of a private screen.
func TestHomeLeavesABlockedApp(t *testing.T) {
	w := &watchLog{}
	f := newFixture(t, Config{Watcher: w, Guard: askOnSend{}, Approvals: approval.NewBook(0), WakeEvery: time.Millisecond})
	s := f.connected(t)
	ctx := context.Background()
	const dev = "sim-android-1"
	if _, err := f.drv.d.Act(ctx, dev, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.bank"}); err != nil {
		t.Fatal(err)
	}
	w.take()
	_, err := s.Observe(ctx, dev, false, false)
	wantCode(t, "a read with the bank in front", err, CodeBlockedApp)
	if got := w.take(); len(got) != 1 || !strings.Contains(got[0], "blocked app") {
		t.Errorf("the watcher heard %q; want one private read naming the blocked app", got)
	}
	time.Sleep(2 * time.Millisecond) // the next action wakes the phone, then reads it
	if _, err := s.Act(ctx, dev, Action{Kind: "key", Key: "home"}, nil); err != nil {
		t.Fatalf("home with a blocked app in front: %v", err)
	}
	if sc, err := f.drv.d.Screen(ctx, dev, 0); err != nil || sc.App.ID == "com.pinky.sim.bank" {
		t.Errorf("after home the phone shows %q (%v), want the launcher", sc.App.ID, err)
	}
	_, err = s.Act(ctx, dev, Action{Kind: "key", Key: "enter"}, nil)
	if e, ok := AsError(err); ok && e.Code == CodeBlockedApp {
		t.Errorf("enter on the launcher: %v", err)
	}
}

// TestBackgroundDisplay: a task on a background display reads and acts
// there, on a locked phone the gateway never unlocks or wakes, starts its
// recording on that display, and removes the display at release.
func TestBackgroundDisplay(t *testing.T) {
	w := &displayWatch{}
	f := newFixture(t, Config{Watcher: w, WakeEvery: time.Millisecond})
	s := f.session(t, "agent")
	ctx := context.Background()
	const dev = "sim-android-1"
	if _, err := f.drv.d.Act(ctx, dev, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeySleep}); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "in the background", Background: true})
	if err != nil {
		t.Fatal(err)
	}
	if obs.Locked || w.display <= 0 {
		t.Fatalf("a background task on a locked phone: locked %v, recorded display %d", obs.Locked, w.display)
	}
	if _, err := s.Act(ctx, dev, Action{Kind: "launch", App: "Notes"}, nil); err != nil {
		t.Fatalf("launch on the background display: %v", err)
	}
	own, _ := f.drv.d.Screen(ctx, dev, 0)
	bg, _ := f.drv.d.Screen(ctx, dev, w.display)
	if own.LockState != sdk.LockLocked || own.ScreenOn || own.App.ID == "com.google.android.keep" || bg.App.ID != "com.google.android.keep" {
		t.Errorf("own screen: %q, on %v, %q; background display: %q; want the phone locked, off and untouched, Notes in the background",
			own.LockState, own.ScreenOn, own.App.ID, bg.App.ID)
	}
	if err := s.Release(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if _, err := f.drv.d.Screen(ctx, dev, w.display); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("the background display after the release: %v, want it removed", err)
	}
	// Without the driver's displays capability, the agent is told to
	// connect without background.
	nd := newFixture(t, Config{})
	nd.drv.wrap = func(d sdk.Driver) sdk.Driver { return struct{ sdk.Driver }{d} } // no Displayer
	_, err = nd.session(t, "agent").Connect(ctx, ConnectRequest{Device: dev, Task: "t", Background: true})
	wantCode(t, "background on a driver without displays", err, CodeUnsupported)
}

// displayWatch keeps the display a task started on.
type displayWatch struct {
	noWatcher
	display int
}

func (w *displayWatch) TaskStarted(device, task string, display int) { w.display = display }
