package sim

import (
	"context"
	"errors"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestPinchZoomsThePhoto(t *testing.T) {
	for _, id := range []string{android, "sim-ios-1"} {
		t.Run(id, func(t *testing.T) {
			d := newDefault(t)
			unlock(t, d, id)
			act(t, d, id, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"})
			photo, ok := find(screen(t, d, id), "product_image")
			if !ok {
				t.Fatal("no product photo on the Shop's screen")
			}
			if e, _ := find(screen(t, d, id), "photo_zoom"); e.Text != "Zoom 100%" {
				t.Fatalf("before a pinch: got %q; want Zoom 100%%", e.Text)
			}
			steps := []struct {
				scale      int
				want, text string
			}{
				{1500, "zoomed to 150%", "Zoom 150%"},
				{2000, "zoomed to 300%", "Zoom 300%"},
				{10000, "zoomed to 500%", "Zoom 500%"},
				{2000, "already at 500%", "Zoom 500%"},
				{500, "zoomed to 250%", "Zoom 250%"},
				{100, "zoomed to 100%", "Zoom 100%"},
				{500, "already at 100%", "Zoom 100%"},
			}
			for _, s := range steps {
				got := act(t, d, id, sdk.Action{Kind: sdk.ActPinch, Point: photo.Bounds.Center(), Scale: s.scale})
				if got != s.want {
					t.Errorf("pinch %d‰: got %q; want %q", s.scale, got, s.want)
				}
				if e, _ := find(screen(t, d, id), "photo_zoom"); e.Text != s.text {
					t.Errorf("after pinch %d‰: got %q; want %q", s.scale, e.Text, s.text)
				}
			}
			title, _ := find(screen(t, d, id), "Shop")
			if got := act(t, d, id, sdk.Action{Kind: sdk.ActPinch, Point: title.Bounds.Center(), Scale: 2000}); got != "nothing to zoom" {
				t.Errorf("pinch on the title: got %q; want nothing to zoom", got)
			}
			if e, _ := find(screen(t, d, id), "photo_zoom"); e.Text != "Zoom 100%" {
				t.Errorf("a pinch elsewhere changed the photo: got %q", e.Text)
			}
		})
	}
}

func TestPinchRefusals(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	s := screen(t, d, android)
	if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: 10, Y: 10}, Scale: 2000}); !errors.Is(err, sdk.ErrLocked) {
		t.Errorf("pinch on the lock screen: got %v; want ErrLocked", err)
	}
	unlock(t, d, android)
	tests := []struct {
		name string
		a    sdk.Action
	}{
		{"centre right of the screen", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: s.Width, Y: 10}, Scale: 2000}},
		{"centre above the screen", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: 10, Y: -1}, Scale: 2000}},
		{"scale 1000", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: 10, Y: 10}, Scale: 1000}},
		{"no scale", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: 10, Y: 10}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.Act(ctx, android, tt.a); !errors.Is(err, sdk.ErrInvalidArgument) {
				t.Errorf("got %v; want ErrInvalidArgument", err)
			}
		})
	}
	info, err := sdk.Complete(d).Info(ctx)
	if err != nil || !info.Has(sdk.CapPinch) {
		t.Errorf("capabilities: got %v, %v; want pinch among them", info.Capabilities, err)
	}
}
