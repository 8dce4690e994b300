package sim

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The Stars game draws its screen itself: its tree is one full-screen View
// with no text and no children on both platforms, while the picture shows
// its Start button, and a tap where Start is drawn starts level 1.
func TestCanvasApp(t *testing.T) {
	for _, tt := range []struct{ device, class string }{
		{android, "android.view.View"},
		{"sim-ios-1", "XCUIElementTypeOther"},
	} {
		t.Run(tt.device, func(t *testing.T) {
			d := newDefault(t)
			unlock(t, d, tt.device)
			act(t, d, tt.device, sdk.Action{Kind: sdk.ActLaunch, AppID: "stars"})
			s := screen(t, d, tt.device)
			if s.App.Label != "Stars" {
				t.Fatalf("app in front: got %+v; want Stars", s.App)
			}
			var canvas []sdk.Element
			for _, e := range s.Elements {
				if e.Bounds.Top > 0 { // below the status bar
					canvas = append(canvas, e)
				}
			}
			if len(canvas) != 1 {
				t.Fatalf("elements below the status bar: got %+v; want one View", canvas)
			}
			v := canvas[0]
			if v.Class != tt.class || v.Text != "" || v.ContentDescription != "" || v.Clickable || v.Bounds.Width() != s.Width || v.Bounds.Height() < s.Height*9/10 {
				t.Errorf("the canvas: got %+v; want a full-screen %s with no text", v, tt.class)
			}
			for _, e := range s.Elements {
				if e.ParentID == v.ID {
					t.Errorf("the canvas has a child %+v; want none", e)
				}
			}
			start := purple(t, d, tt.device)
			if start.Empty() {
				t.Fatal("no Start button drawn")
			}
			act(t, d, tt.device, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: (start.Min.X + start.Max.X) / 2, Y: (start.Min.Y + start.Max.Y) / 2}})
			var level, at string
			if err := d.with(context.Background(), "test", tt.device, "", func(p *phone) error {
				level, at = p.vars["level"], p.main().top().screen
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if level != "1" || at != "play" {
				t.Errorf("after tapping Start: got level %q on %q; want level 1 on play", level, at)
			}
		})
	}
}

// purple is the bounding box of the game's button colour (#7b1fa2) in a
// full-size screenshot of device.
func purple(t *testing.T, d *Driver, device string) image.Rectangle {
	t.Helper()
	img, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: device, Format: sdk.FormatPNG})
	if err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	var box image.Rectangle
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := m.At(x, y).RGBA()
			if r>>8 == 0x7b && g>>8 == 0x1f && bl>>8 == 0xa2 {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box
}
