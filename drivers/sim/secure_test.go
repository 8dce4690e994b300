package sim

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// blackShare is the share of pure black pixels (0, 0, 0) in rect r of a
// PNG screenshot, sampled every 4 pixels.
func blackShare(t *testing.T, img *sdk.Image, r image.Rectangle) float64 {
	t.Helper()
	m, err := png.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Fatal(err)
	}
	r = r.Intersect(m.Bounds())
	black, all := 0, 0
	for y := r.Min.Y; y < r.Max.Y; y += 4 {
		for x := r.Min.X; x < r.Max.X; x += 4 {
			red, g, b, _ := m.At(x, y).RGBA()
			if red|g|b == 0 {
				black++
			}
			all++
		}
	}
	if all == 0 {
		t.Fatalf("no pixel in %v", r)
	}
	return float64(black) / float64(all)
}

// The Films app is secure (FLAG_SECURE): on Android its tree reads as
// usual, while its area is black in screenshots under a status bar that
// still shows, the screenshot says Blanked, and SecureWindow says so for
// the adb face. An iPhone has no such flag and draws the app.
func TestSecureApp(t *testing.T) {
	for _, tt := range []struct {
		device string
		secure bool
	}{
		{android, true},
		{"sim-ios-1", false},
	} {
		t.Run(tt.device, func(t *testing.T) {
			ctx := context.Background()
			d := newDefault(t)
			unlock(t, d, tt.device)
			if sec, err := d.SecureWindow(ctx, tt.device); err != nil || sec {
				t.Fatalf("SecureWindow on the home screen: got %v, %v; want false", sec, err)
			}
			act(t, d, tt.device, sdk.Action{Kind: sdk.ActLaunch, AppID: "films"})
			s := screen(t, d, tt.device)
			film, ok := find(s, "The Long Voyage")
			if s.App.Label != "Films" || !ok {
				t.Fatalf("got app %+v with the film read %v; want Films with its list read", s.App, ok)
			}
			img, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: tt.device, Format: sdk.FormatPNG})
			if err != nil {
				t.Fatal(err)
			}
			if img.Blanked != tt.secure {
				t.Errorf("Blanked: got %v; want %v", img.Blanked, tt.secure)
			}
			content := image.Rect(0, film.Bounds.Top-100, s.Width, s.Height)
			bar := image.Rect(0, 0, s.Width, 20)
			if got := blackShare(t, img, content); tt.secure != (got == 1) {
				t.Errorf("black share of the app's area: got %.2f; want 1 only when secure", got)
			}
			if got := blackShare(t, img, bar); got > 0.9 {
				t.Errorf("black share of the status bar: got %.2f; want it drawn", got)
			}
			if sec, err := d.SecureWindow(ctx, tt.device); err != nil || sec != tt.secure {
				t.Errorf("SecureWindow in Films: got %v, %v; want %v", sec, err, tt.secure)
			}
			// Video frames are drawn from the same boxes: one black box
			// for the app's window, none of its text.
			if err := d.with(ctx, "test", tt.device, "", func(p *phone) error {
				ds := p.main()
				for _, b := range ds.boxes(ds.view(), 1) {
					if b.Text == "The Long Voyage" && tt.secure {
						t.Errorf("a video frame draws the secure app's text %q", b.Text)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// A tap still works on the blanked screen.
			tapOn(t, d, tt.device, "The Long Voyage")
			if _, ok := find(screen(t, d, tt.device), "Now playing: The Long Voyage"); !ok {
				t.Error("the tap on the film did not open the player")
			}
			act(t, d, tt.device, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
			img, err = d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: tt.device, Format: sdk.FormatPNG})
			if err != nil || img.Blanked {
				t.Errorf("a screenshot of the home screen: got blanked %v, %v; want a picture", img != nil && img.Blanked, err)
			}
		})
	}
}
