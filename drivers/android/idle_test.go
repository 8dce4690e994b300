package android

import (
	"context"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// WaitIdle goes the real way too (e2e_test.go): the driver watches the
// video that the virtual phone's scrcpy server sends through Debian's adb
// server, or compares its screencaps without one.

// longReload makes the Browser's Reload animate for 5 s (the most a world
// allows), so that the screen keeps changing for longer than a wait.
func longReload(w *sim.World) {
	for _, app := range w.Apps {
		if app.Key != "browser" {
			continue
		}
		for _, sc := range app.Screens {
			var walk func([]*sim.ElementSpec)
			walk = func(es []*sim.ElementSpec) {
				for _, e := range es {
					for _, st := range e.OnTap {
						if st.Animate != nil {
							st.Animate.Duration = 5 * time.Second
						}
					}
					walk(e.Children)
				}
			}
			walk(sc.Elements)
		}
	}
}

// idleTestQuiet is the quiet period of the WaitIdle tests; their waits
// while something animates are longer, so that they could see it idle.
const idleTestQuiet = time.Second

// idleRig is a rig whose Browser reloads for 5 s, with the driver (with
// scrcpy or without), the phone unlocked on the Browser.
func idleRig(t *testing.T, scrcpy bool) (*rig, *Driver) {
	t.Helper()
	r := newRigOn(t, simtest.New(t, simtest.Edit(longReload), simtest.Unlocked(simPhone)))
	if !scrcpy {
		r.scrcpy = ScrcpyServer{}
	}
	// The virtual phone polls its screen every 100 ms and, on a loaded
	// machine or under -race, draws and encodes a frame in up to 250 ms:
	// a quiet period of a second keeps its animation from looking idle
	// between two slow frames. (A real phone's animation sends a frame
	// every 16 ms.)
	r.quiet = idleTestQuiet
	d := r.driver(t)
	if _, err := r.sim.Act(testkit.Context(t), simPhone, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.chrome"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.android.chrome")
	return r, d
}

// waitIdle calls WaitIdle under a context far longer than its timeout: a
// wait that ignored its timeout would end with the context's error, not
// with false.
func waitIdle(t *testing.T, d *Driver, serial string, timeout time.Duration) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Context(t), timeout+30*time.Second)
	defer cancel()
	idle, err := d.WaitIdle(ctx, serial, timeout)
	if err != nil {
		t.Fatalf("WaitIdle(%v): %v", timeout, err)
	}
	return idle
}

// TestWaitIdle: after a tap whose effect is instant the screen is idle, and
// the read after the wait shows the effect; while an animation runs the
// wait ends at its timeout with false; once it ended the screen is idle
// again. With the video and, without a scrcpy server, with screencaps.
func TestWaitIdle(t *testing.T) {
	for _, tt := range []struct {
		name   string
		scrcpy bool
	}{{"video", true}, {"screencap", false}} {
		t.Run(tt.name, func(t *testing.T) {
			r, d := idleRig(t, tt.scrcpy)
			ctx := testkit.Context(t)
			sc, err := d.Screen(ctx, r.serial, 0)
			if err != nil {
				t.Fatal(err)
			}
			// Typing a URL changes the field at once, nothing animates.
			if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "url_bar")}); err != nil {
				t.Fatal(err)
			}
			if !waitIdle(t, d, r.serial, idleScaled(5*time.Second)) {
				t.Fatal("WaitIdle after a tap on a field: got false; want true")
			}
			if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "reload")}); err != nil {
				t.Fatal(err)
			}
			if waitIdle(t, d, r.serial, 3*idleTestQuiet) {
				t.Errorf("WaitIdle(%v) while the page reloads (5 s): got true; want false", 3*idleTestQuiet)
			}
			if !waitIdle(t, d, r.serial, idleScaled(15*time.Second)) {
				t.Error("WaitIdle(15s) with a 5 s reload: got false; want true once it ended")
			}
			after, err := d.Screen(ctx, r.serial, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, loading := simtest.Find(after, "Loading…"); loading {
				t.Error("the read after an idle wait still shows Loading…")
			}
		})
	}
}

// TestWaitIdleBackgroundDisplay: WaitIdle names no display, so it waits
// for every display of the phone: an animation on a background display
// keeps the phone from idling while display 0 stands still.
func TestWaitIdleBackgroundDisplay(t *testing.T) {
	r, d := idleRig(t, true)
	ctx := testkit.Context(t)
	// A small display: the virtual phone renders and encodes each frame of
	// its animation quickly, well within the quiet period, even under -race.
	id, err := d.CreateDisplay(ctx, r.serial, 360, 640, 160)
	if err != nil {
		t.Fatalf("CreateDisplay: %v", err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.chrome", DisplayID: id}); err != nil {
		t.Fatal(err)
	}
	var sc *sdk.Screen
	if !testkit.Poll(10*time.Second, func() bool {
		if sc, err = d.Screen(ctx, r.serial, id); err != nil {
			return false
		}
		_, ok := simtest.Find(sc, "reload")
		return ok
	}) {
		t.Fatalf("display %d shows no Browser: %v", id, err)
	}
	if !waitIdle(t, d, r.serial, idleScaled(5*time.Second)) {
		t.Fatal("WaitIdle with the Browser shown on a background display: got false; want true")
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "reload"), DisplayID: id}); err != nil {
		t.Fatal(err)
	}
	if waitIdle(t, d, r.serial, 3*idleTestQuiet) {
		t.Errorf("WaitIdle(%v) while the display's page reloads (5 s): got true; want false", 3*idleTestQuiet)
	}
	if !waitIdle(t, d, r.serial, idleScaled(15*time.Second)) {
		t.Error("WaitIdle(15s) with a 5 s reload on the display: got false; want true once it ended")
	}
}

// TestWaitIdleArguments: a timeout outside the contract's 1 ms to 30 s is
// INVALID_ARGUMENT; a phone the adb server does not know is NOT_FOUND.
func TestWaitIdleArguments(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	for _, tt := range []struct {
		name    string
		serial  string
		timeout time.Duration
		want    error
	}{
		{"zero", r.serial, 0, sdk.ErrInvalidArgument},
		{"negative", r.serial, -time.Second, sdk.ErrInvalidArgument},
		{"over 30 s", r.serial, 31 * time.Second, sdk.ErrInvalidArgument},
		{"unknown phone", "no-such-phone", time.Second, sdk.ErrDeviceNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.WaitIdle(ctx, tt.serial, tt.timeout); !errorsIs(err, tt.want) {
				t.Errorf("WaitIdle(%q, %v): got %v; want %v", tt.serial, tt.timeout, err, tt.want)
			}
		})
	}
}

// idleScaled is d given the machine's slack, within WaitIdle's limit.
func idleScaled(d time.Duration) time.Duration { return min(testkit.Scaled(d), maxIdleTimeout) }
