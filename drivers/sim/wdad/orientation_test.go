package wdad_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"image/png"
	"net/http"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

// TestSetOrientation turns the iPhone as WebDriverAgent's clients do, table
// by orientation: the names and rotations read back, the window size in
// points of the current orientation and the screenshot's size.
func TestSetOrientation(t *testing.T) {
	tests := []struct {
		name, set, get string
		z              int
		device         string
		w, h           float64 // points
	}{
		{"portrait", "PORTRAIT", "PORTRAIT", 0, "UIDeviceOrientationPortrait", 393, 852},
		{"landscape", "LANDSCAPE", "LANDSCAPE", 270, "UIDeviceOrientationLandscapeLeft", 852, 393},
		{"landscape right", "UIA_DEVICE_ORIENTATION_LANDSCAPERIGHT", "LANDSCAPE", 90, "UIDeviceOrientationLandscapeRight", 852, 393},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil, wdad.Config{})
			g.unlock()
			id := g.session(nil)
			g.ok("POST", "/session/"+id+"/orientation", map[string]any{"orientation": tt.set}, nil)
			var o string
			g.ok("GET", "/session/"+id+"/orientation", nil, &o)
			var rot map[string]int
			g.ok("GET", "/rotation", nil, &rot)
			var dev string
			g.ok("GET", "/wda/deviceOrientation", nil, &dev)
			if o != tt.get || rot["z"] != tt.z || dev != tt.device {
				t.Errorf("got %s, z %d, %s; want %s, z %d, %s", o, rot["z"], dev, tt.get, tt.z, tt.device)
			}
			var size map[string]float64
			g.ok("GET", "/window/size", nil, &size)
			if size["width"] != tt.w || size["height"] != tt.h {
				t.Errorf("window size %v; want %vx%v points", size, tt.w, tt.h)
			}
			var shot string
			g.ok("GET", "/screenshot", nil, &shot)
			data, err := base64.StdEncoding.DecodeString(shot)
			if err != nil {
				t.Fatal(err)
			}
			img, err := png.Decode(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); float64(b.Dx()) != tt.w*3 || float64(b.Dy()) != tt.h*3 {
				t.Errorf("screenshot %dx%d; want %vx%v pixels, upright in the current orientation", b.Dx(), b.Dy(), tt.w*3, tt.h*3)
			}
		})
	}
}

// TestRotationRefused: what WebDriverAgent refuses, it refuses with its
// own errors: upside down on an iPhone with Face ID, an unknown rotation,
// a missing axis, and portrait while the app in front locks landscape.
func TestRotationRefused(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	id := g.session(nil)
	g.fails("POST", "/session/"+id+"/orientation", map[string]any{"orientation": "UIA_DEVICE_ORIENTATION_PORTRAIT_UPSIDEDOWN"}, http.StatusInternalServerError, "unknown error")
	g.fails("POST", "/session/"+id+"/orientation", map[string]any{"orientation": "SIDEWAYS"}, http.StatusInternalServerError, "unknown error")
	g.fails("POST", "/session/"+id+"/rotation", map[string]any{"x": 0, "y": 0, "z": 45}, http.StatusBadRequest, "invalid argument")
	g.fails("POST", "/session/"+id+"/rotation", map[string]any{"x": 0, "z": 90}, http.StatusBadRequest, "invalid argument")

	// The video player's full screen locks landscape: the interface does
	// not follow a turn to portrait.
	g.ok("POST", "/session/"+id+"/wda/apps/launch", map[string]any{"bundleId": "com.pinky.sim.video"}, nil)
	tapText(t, g, id, "Full screen")
	g.fails("POST", "/session/"+id+"/orientation", map[string]any{"orientation": "PORTRAIT"}, http.StatusInternalServerError, "unknown error")
	var o string
	g.ok("GET", "/orientation", nil, &o)
	if o != "LANDSCAPE" {
		t.Fatalf("full screen: orientation %q; want LANDSCAPE", o)
	}
	// A tap in points of the landscape frame lands on a control beyond
	// the portrait width.
	tapText(t, g, id, "Exit full screen")
	g.ok("GET", "/orientation", nil, &o)
	if s := g.simScreen(iphone); o != "PORTRAIT" || s.Orientation != sdk.OrientationPortrait {
		t.Errorf("after Exit full screen: %q, %s; want PORTRAIT", o, s.Orientation)
	}
	g.ok("POST", "/session/"+id+"/rotation", map[string]any{"x": 0, "y": 0, "z": 90}, nil)
	if s := g.simScreen(iphone); s.Orientation != sdk.OrientationLandscapeRight {
		t.Errorf("after POST /rotation z 90: %s; want landscape_right", s.Orientation)
	}
}

// tapText taps the element with text what by its centre in points.
func tapText(t *testing.T, g *rig, id, what string) {
	t.Helper()
	s, err := g.d.Screen(context.Background(), iphone, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Elements {
		if e.Text == what {
			c := e.Bounds.Center()
			if what == "Exit full screen" && c.X < s.Height {
				t.Fatalf("%q at x %d; want it beyond the portrait width %d", what, c.X, s.Height)
			}
			g.ok("POST", "/session/"+id+"/wda/tap", map[string]any{"x": float64(c.X) / 3, "y": float64(c.Y) / 3}, nil)
			return
		}
	}
	t.Fatalf("no %q on screen", what)
}
