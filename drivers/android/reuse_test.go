package android

import (
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// switchState is the Bluetooth switch's checked state on sc.
func switchState(t *testing.T, sc *sdk.Screen) bool {
	t.Helper()
	e, ok := simtest.Find(sc, "Bluetooth")
	if !ok {
		t.Fatal("no Bluetooth switch on the screen")
	}
	return e.Checked
}

// TestReuseRead: with the video running, a second read of a screen that
// did not change gives the first dump again (dumpsys read afresh); a change
// the driver did not make (the person, an app) shows as frames and voids
// it, as does the driver's own action and, with ReuseFor < 0, nothing is
// ever reused.
func TestReuseRead(t *testing.T) {
	// A real phone's dump (1–2 s), longer than the wait that makes reuse
	// safe: a dump quicker than that wait is never reused.
	r := newRigOn(t, simtest.New(t, simtest.Unlocked(simPhone)), func(c *adbd.Config) { c.Timing = timing.Phone })
	// A quiet period longer than the virtual phone's slowest frame on a
	// loaded machine: a change must reach the driver as a frame within it.
	r.quiet = idleTestQuiet
	d := r.driver(t)
	ctx := testkit.Context(t)
	if _, err := r.sim.Act(ctx, simPhone, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.android.settings")
	p, _, err := d.phone(ctx, r.serial)
	if err != nil {
		t.Fatal(err)
	}
	// WaitIdle starts the control session; its video's first frame comes.
	waitIdle(t, d, r.serial, idleScaled(5*time.Second))
	testkit.WaitUntil(t, "the control session's first frame", func() bool { return d.videoSession(p) != nil })
	read := func() *sdk.Screen {
		t.Helper()
		sc, err := d.Screen(ctx, r.serial, 0)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	first := read()
	n := p.dumps.Load()
	again := read()
	if got := p.dumps.Load(); got != n {
		t.Errorf("a second read of a still screen dumped (%d dumps, want %d)", got, n)
	}
	if switchState(t, again) != switchState(t, first) || again.App.ID != first.App.ID || len(again.Elements) != len(first.Elements) {
		t.Errorf("the reused read differs from the dump it reuses")
	}
	if !again.CapturedAt.After(first.CapturedAt) {
		t.Errorf("the reused read's time %v is not after the first's %v", again.CapturedAt, first.CapturedAt)
	}

	// The person flips the switch on the phone itself: same app, a new
	// frame; the next read must dump and show it.
	on := switchState(t, again)
	if _, err := r.sim.Act(ctx, simPhone, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, again, "Bluetooth")}); err != nil {
		t.Fatal(err)
	}
	if after := read(); switchState(t, after) == on {
		t.Errorf("after the person's tap the read still shows Bluetooth %v (a stale dump reused)", on)
	}

	// The driver's own action voids the kept read too.
	n = p.dumps.Load()
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyVolumeDown}); err != nil {
		t.Fatal(err)
	}
	read()
	if got := p.dumps.Load(); got != n+1 {
		t.Errorf("the read after the driver's action: %d dumps; want %d", got, n+1)
	}

	// ReuseFor < 0: every read dumps.
	d.cfg.ReuseFor = -1
	n = p.dumps.Load()
	read()
	read()
	if got := p.dumps.Load(); got != n+2 {
		t.Errorf("with ReuseFor < 0 two reads made %d dumps; want 2", got-n)
	}
}
