package scrcpyd

import (
	"context"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// TestServePinch: two pointer ids down, moving and up through
// INJECT_TOUCH_EVENT become the sim's pinch, which zooms the Shop's photo.
func TestServePinch(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"}); err != nil {
		t.Fatal(err)
	}
	c, _ := start(t, d, "4.1", scrcpy.DefaultOptions())
	go c.Stream(ctx, func(sdk.VideoPacket) error { return nil })
	s := screen(t, d)
	photo, ok := simtest.Find(s, "product_image")
	if !ok {
		t.Fatal("no photo on the Shop's screen")
	}
	vw, vh := c.VideoSize()
	video := func(p sdk.Point) sdk.Point { return sdk.Point{X: p.X * vw / s.Width, Y: p.Y * vh / s.Height} }
	center := video(photo.Bounds.Center())
	at := func(dx int) sdk.Point { return sdk.Point{X: center.X + dx, Y: center.Y} }
	zoom := func() string {
		e, _ := simtest.Find(screen(t, d), "photo_zoom")
		return e.Text
	}
	tests := []struct {
		name     string
		from, to [2]sdk.Point
		want     string
	}{
		{"spread to three times the distance", [2]sdk.Point{at(-20), at(20)}, [2]sdk.Point{at(-60), at(60)}, "Zoom 300%"},
		{"close to half", [2]sdk.Point{at(-40), at(40)}, [2]sdk.Point{at(-20), at(20)}, "Zoom 150%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Pinch(ctx, tt.from, tt.to, 100*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			testkit.WaitUntil(t, "the photo at "+tt.want, func() bool { return zoom() == tt.want })
		})
	}
	// One finger after the other is no pinch: a tap on the photo does not zoom.
	if err := c.Tap(center.X, center.Y); err != nil {
		t.Fatal(err)
	}
	if err := c.Pinch(ctx, [2]sdk.Point{at(-20), at(20)}, [2]sdk.Point{at(-40), at(40)}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the photo at Zoom 300%", func() bool { return zoom() == "Zoom 300%" })
}
