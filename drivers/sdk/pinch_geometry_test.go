package sdk

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPinchPlacesTheFingers(t *testing.T) {
	const w, h = 1000, 2000 // two fifths of the shorter side: a span of 400, 200 each side
	tests := []struct {
		name   string
		center Point
		scale  int
		want   PinchFingers
	}{
		{"zoom in at the centre", Point{X: 500, Y: 1000}, 2000, PinchFingers{
			Start: [2]Point{{X: 500, Y: 900}, {X: 500, Y: 1100}}, End: [2]Point{{X: 500, Y: 800}, {X: 500, Y: 1200}}}},
		{"zoom out at the centre", Point{X: 500, Y: 1000}, 500, PinchFingers{
			Start: [2]Point{{X: 500, Y: 800}, {X: 500, Y: 1200}}, End: [2]Point{{X: 500, Y: 900}, {X: 500, Y: 1100}}}},
		{"near the top, sideways", Point{X: 500, Y: 10}, 4000, PinchFingers{
			Start: [2]Point{{X: 450, Y: 10}, {X: 550, Y: 10}}, End: [2]Point{{X: 300, Y: 10}, {X: 700, Y: 10}}}},
		{"near a corner, shortened", Point{X: 30, Y: 40}, 2000, PinchFingers{
			Start: [2]Point{{X: 30, Y: 20}, {X: 30, Y: 60}}, End: [2]Point{{X: 30, Y: 0}, {X: 30, Y: 80}}}},
		{"on the edge", Point{X: 0, Y: 0}, 500, PinchFingers{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Pinch(tt.center, tt.scale, w, h)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Pinch(%v, %d) (-want +got):\n%s", tt.center, tt.scale, diff)
			}
			screen := Rect{Right: w, Bottom: h}
			for _, p := range append(got.Start[:], got.End[:]...) {
				if !screen.Contains(p) {
					t.Errorf("finger at %v leaves the %dx%d screen", p, w, h)
				}
			}
		})
	}
}
