package wdad_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

// finger is one W3C touch pointer that goes down at (x1, y1), moves to
// (x2, y2) and lifts.
func finger(id string, x1, y1, x2, y2 float64) map[string]any {
	return map[string]any{"type": "pointer", "id": id, "parameters": map[string]any{"pointerType": "touch"}, "actions": []any{
		map[string]any{"type": "pointerMove", "duration": 0, "x": x1, "y": y1},
		map[string]any{"type": "pointerDown", "button": 0},
		map[string]any{"type": "pause", "duration": 25},
		map[string]any{"type": "pointerMove", "duration": 300, "x": x2, "y": y2},
		map[string]any{"type": "pointerUp", "button": 0},
	}}
}

func TestTwoFingersPinch(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	if _, err := g.d.Act(context.Background(), iphone, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"}); err != nil {
		t.Fatal(err)
	}
	sid := g.session(nil)
	photo, ok := find(g.sourceJSON(sid), "Wireless headphones photo")
	if !ok || !has(g.sourceJSON(sid), "Zoom 100%") {
		t.Fatal("no photo at Zoom 100% in the source")
	}
	c := photo.Bounds.Center()
	x, y := float64(c.X), float64(c.Y)
	tests := []struct {
		name    string
		fingers []any
		want    string
	}{
		{"spread to twice the distance", []any{finger("f1", x-20, y, x-40, y), finger("f2", x+20, y, x+40, y)}, "Zoom 200%"},
		{"spread diagonally by half again", []any{finger("f1", x-20, y-20, x-30, y-30), finger("f2", x+20, y+20, x+30, y+30)}, "Zoom 300%"},
		{"close to a third", []any{finger("f1", x, y-30, x, y-10), finger("f2", x, y+30, x, y+10)}, "Zoom 100%"},
		{"one finger still, the other moving away", []any{finger("f1", x-20, y, x-20, y), finger("f2", x, y, x+60, y)}, "Zoom 400%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g.ok("POST", "/session/"+sid+"/actions", map[string]any{"actions": tt.fingers}, nil)
			if !has(g.sourceJSON(sid), tt.want) {
				t.Errorf("after the pinch: no %q in the source", tt.want)
			}
		})
	}
	// Two fingers down on one spot cannot say how far apart they were.
	g.fails("POST", "/session/"+sid+"/actions", map[string]any{"actions": []any{finger("f1", x, y, x-10, y), finger("f2", x, y, x+10, y)}},
		http.StatusBadRequest, "invalid argument")
	// Three fingers are more than the virtual phone takes.
	g.fails("POST", "/session/"+sid+"/actions", map[string]any{"actions": []any{finger("f1", x, y, x-10, y), finger("f2", x+5, y, x+10, y), finger("f3", x, y+5, x, y+10)}},
		http.StatusInternalServerError, "unsupported operation")
}
