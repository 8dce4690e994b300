package agent

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// TestCoordinatesFollowTheTurn: points the gateway places itself (a
// scroll's path, an element's centre) are in the screen as the current
// read gives it, table by orientation and size, never in a size from
// before a turn.
func TestCoordinatesFollowTheTurn(t *testing.T) {
	tests := []struct {
		name        string
		w, h        int
		orientation sdk.Orientation
	}{
		{"phone portrait", 1080, 2400, sdk.OrientationPortrait},
		{"phone landscape", 2400, 1080, sdk.OrientationLandscape},
		{"phone landscape right", 2400, 1080, sdk.OrientationLandscapeRight},
		{"phone upside down", 1080, 2400, sdk.OrientationPortraitUpsideDown},
		{"iPhone landscape", 2556, 1179, sdk.OrientationLandscape},
		{"tablet landscape", 2560, 1600, sdk.OrientationLandscape},
		{"small background display", 544, 1200, sdk.OrientationPortrait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A button in the right-hand third, where a landscape layout
			// puts a player's controls.
			btn := sdk.Rect{Left: tt.w * 2 / 3, Top: tt.h - 100, Right: tt.w, Bottom: tt.h}
			view := screen.NewModel().Read(&sdk.Screen{
				App: sdk.App{ID: "com.pinky.sim.video"}, LockState: sdk.LockUnlocked, ScreenOn: true,
				Width: tt.w, Height: tt.h, Orientation: tt.orientation,
				Elements: []sdk.Element{{ID: 1, Class: "android.widget.Button", Text: "Exit full screen", Clickable: true,
					Enabled: true, Visible: true, Bounds: btn}},
			})
			acts, n, err := plan(view, Action{Kind: "tap", Target: Target{Text: "Exit full screen"}})
			if err != nil || n == nil || len(acts) != 1 {
				t.Fatalf("plan tap by text: got %v, %v, %v", acts, n, err)
			}
			if p := acts[0].Point; p != btn.Center() {
				t.Errorf("tap by text at %v; want the button's centre %v", p, btn.Center())
			}
			acts, n, err = plan(view, Action{Kind: "tap", Target: Target{X: btn.Center().X, Y: btn.Center().Y, HasPoint: true}})
			if err != nil || n == nil || n.Label != "Exit full screen" {
				t.Fatalf("plan tap at the button's centre: got %v, %v, %v; want the button under it", acts, n, err)
			}
			acts, _, err = plan(view, Action{Kind: "scroll", Direction: "down"})
			if err != nil || len(acts) != 1 {
				t.Fatalf("plan scroll: got %v, %v", acts, err)
			}
			from := sdk.Point{X: tt.w / 2, Y: tt.h / 2}
			if acts[0].HasPoint && acts[0].Point != from {
				t.Errorf("scroll from %v; want the centre %v", acts[0].Point, from)
			}
			for _, dir := range []sdk.ScrollDirection{sdk.ScrollDown, sdk.ScrollUp, sdk.ScrollLeft, sdk.ScrollRight} {
				end := scrollEnd(view, from, dir)
				if end.X < 0 || end.Y < 0 || end.X >= tt.w || end.Y >= tt.h {
					t.Errorf("scroll %s ends at %v; want it on the %dx%d screen", dir, end, tt.w, tt.h)
				}
				// 60 % of the side in this orientation, kept on the screen:
				// at least 40 %, which a side from before the turn misses.
				d, side := abs(end.Y-from.Y), tt.h
				if dir == sdk.ScrollLeft || dir == sdk.ScrollRight {
					d, side = abs(end.X-from.X), tt.w
				}
				if d < side*4/10 {
					t.Errorf("scroll %s moves %d; want 40 to 60 %% of the %d side", dir, d, side)
				}
			}
		})
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
