package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestFullScreenTurnsLandscape opens the video app, taps Full screen, finds
// the screen landscape with its size swapped, taps a control that lies
// beyond the portrait width, and turns back.
func TestFullScreenTurnsLandscape(t *testing.T) {
	for _, id := range []string{android, "sim-ios-1"} {
		t.Run(id, func(t *testing.T) {
			d := newDefault(t)
			ctx := context.Background()
			unlock(t, d, id)
			act(t, d, id, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.video"})
			portrait := screen(t, d, id)
			if portrait.Orientation != sdk.OrientationPortrait || portrait.Width > portrait.Height {
				t.Fatalf("player: got %s %dx%d; want portrait", portrait.Orientation, portrait.Width, portrait.Height)
			}
			tapOn(t, d, id, "Full screen")
			s := screen(t, d, id)
			if s.Orientation != sdk.OrientationLandscape || s.Width != portrait.Height || s.Height != portrait.Width {
				t.Fatalf("full screen: got %s %dx%d; want landscape %dx%d", s.Orientation, s.Width, s.Height, portrait.Height, portrait.Width)
			}
			exit, ok := find(s, "Exit full screen")
			if !ok || exit.Bounds.Center().X < portrait.Width {
				t.Fatalf("Exit full screen at %+v; want it beyond x %d (the landscape layout)", exit.Bounds, portrait.Width)
			}
			tapOn(t, d, id, "Resume")
			if _, ok := find(screen(t, d, id), "Playing"); !ok {
				t.Fatal("after Resume: no Playing on screen")
			}
			shot, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: id, Format: sdk.FormatPNG})
			if err != nil || shot.Width != s.Width || shot.Height != s.Height {
				t.Fatalf("screenshot: got %v, %v; want %dx%d", shot, err, s.Width, s.Height)
			}
			act(t, d, id, sdk.Action{Kind: sdk.ActTap, Point: exit.Bounds.Center()})
			back := screen(t, d, id)
			if back.Orientation != sdk.OrientationPortrait || back.Width != portrait.Width {
				t.Fatalf("after exit: got %s %dx%d; want portrait %dx%d", back.Orientation, back.Width, back.Height, portrait.Width, portrait.Height)
			}
		})
	}
}

// TestSetRotation turns the phone as a tool does, table by rotation: the
// screen follows unless a screen in front locks it or the lock screen is up;
// background displays keep their own.
func TestSetRotation(t *testing.T) {
	tests := []struct {
		turns   int
		want    sdk.Orientation
		swapped bool
	}{
		{0, sdk.OrientationPortrait, false},
		{1, sdk.OrientationLandscape, true},
		{2, sdk.OrientationPortraitUpsideDown, false},
		{3, sdk.OrientationLandscapeRight, true},
	}
	for _, tt := range tests {
		t.Run(string(tt.want), func(t *testing.T) {
			d := newDefault(t)
			ctx := context.Background()
			locked := screen(t, d, android)
			if _, err := d.SetRotation(ctx, android, 0, tt.turns); err != nil {
				t.Fatal(err)
			}
			if s := screen(t, d, android); s.Orientation != sdk.OrientationPortrait {
				t.Fatalf("lock screen: got %s; want portrait (a keyguard does not turn)", s.Orientation)
			}
			bg, err := d.CreateDisplay(ctx, android, 800, 1200, 0)
			if err != nil {
				t.Fatal(err)
			}
			unlock(t, d, android)
			s := screen(t, d, android)
			w, h := locked.Width, locked.Height
			if tt.swapped {
				w, h = h, w
			}
			if s.Orientation != tt.want || s.Width != w || s.Height != h {
				t.Fatalf("got %s %dx%d; want %s %dx%d", s.Orientation, s.Width, s.Height, tt.want, w, h)
			}
			if b, err := d.Screen(ctx, android, bg); err != nil || b.Orientation != sdk.OrientationPortrait || b.Width != 800 {
				t.Fatalf("background display: got %+v, %v; want portrait 800 wide", b, err)
			}
			if cur, user, err := d.Rotation(ctx, android, 0); err != nil || cur != tt.turns || user != tt.turns {
				t.Fatalf("Rotation: got %d, %d, %v; want %d, %d", cur, user, err, tt.turns, tt.turns)
			}
		})
	}
	d := newDefault(t)
	if _, err := d.SetRotation(context.Background(), android, 0, 4); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("rotation 4: got %v; want invalid argument", err)
	}
}
