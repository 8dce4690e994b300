package android

import (
	"fmt"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// TestPinchZooms: a pinch goes the whole real way, through Debian's adb
// server to the virtual phone's scrcpy server, as two pointer ids from DOWN
// to UP, and zooms the Shop's photo; a centre off the screen is refused
// before anything is sent.
func TestPinchZooms(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.pinky.sim.shop")
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	photo := simtest.Center(t, sc, "Wireless headphones photo")
	zoom := func() int {
		s, _ := r.sim.Screen(ctx, simPhone, 0)
		e, _ := simtest.Find(s, "photo_zoom")
		var z int
		fmt.Sscanf(e.Text, "Zoom %d%%", &z)
		return z
	}
	// The fingers are placed in screen pixels and sent in the video's, so
	// the scale the phone sees is within a few percent of the one asked for.
	for _, step := range []struct{ scale, want int }{{2000, 200}, {1500, 300}, {250, 100}} {
		if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActPinch, Point: photo, Scale: step.scale}); err != nil {
			t.Fatalf("pinch %d‰: %v", step.scale, err)
		}
		if !testkit.Poll(testkit.Scaled(5*time.Second), func() bool { z := zoom(); return z >= step.want*97/100 && z <= step.want*103/100 }) {
			t.Errorf("after a pinch of %d‰: zoom %d%%; want about %d%%", step.scale, zoom(), step.want)
		}
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: -1, Y: 10}, Scale: 2000}); !errorsIs(err, sdk.ErrInvalidArgument) {
		t.Errorf("pinch off the screen: got %v; want ErrInvalidArgument", err)
	}
}
