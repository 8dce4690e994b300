package screen

import (
	"math"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// bareScreen is a 1000x2000 screen at 160 dpi (1 dp = 1 px) with els, on
// and unlocked unless changed.
func bareScreen(els ...sdk.Element) *sdk.Screen {
	s := &sdk.Screen{App: sdk.App{ID: "com.example.game"}, ScreenOn: true, LockState: sdk.LockUnlocked, Width: 1000, Height: 2024, DensityDPI: 160}
	for i, e := range els {
		e.ID, e.Visible, e.Enabled = i+1, true, true
		s.Elements = append(s.Elements, e)
	}
	return s
}

func TestBare(t *testing.T) {
	canvas := sdk.Element{Class: "android.view.View", Bounds: sdk.Rect{Top: 24, Right: 1000, Bottom: 2024}}
	// The content area is 1000x2000 below the 24 px status bar: 10 % is
	// 200 000 px².
	button := func(top, h int) sdk.Element {
		return sdk.Element{Class: "android.widget.Button", Text: "Go", Clickable: true, Bounds: sdk.Rect{Top: top, Right: 1000, Bottom: top + h}}
	}
	tests := []struct {
		name  string
		s     *sdk.Screen
		cover float64
		bare  bool
	}{
		{"a canvas alone", bareScreen(canvas), 0, true},
		{"a canvas with a small ad", bareScreen(canvas, button(1924, 100)), 0.05, true},
		{"just under a tenth", bareScreen(canvas, button(100, 199)), 0.0995, true},
		{"a tenth", bareScreen(canvas, button(100, 200)), 0.10, false},
		{"overlaps count once", bareScreen(canvas, button(100, 150), button(150, 100)), 0.075, true},
		{"a text counts", bareScreen(canvas, sdk.Element{Class: "android.widget.TextView", Text: "Level 1", Bounds: sdk.Rect{Top: 24, Right: 1000, Bottom: 1024}}), 0.5, false},
		{"a labelled image counts", bareScreen(sdk.Element{Class: "android.widget.ImageView", ContentDescription: "Map", Bounds: sdk.Rect{Top: 24, Right: 1000, Bottom: 2024}}), 1, false},
		{"the status bar does not count", bareScreen(canvas, sdk.Element{Class: "android.widget.TextView", Text: "3 notifications", ResourceID: "com.android.systemui:id/notification_icon_area", Bounds: sdk.Rect{Right: 1000, Bottom: 24}}), 0, true},
		{"System UI does not count", bareScreen(canvas, sdk.Element{Class: "android.widget.Button", ContentDescription: "Back", Clickable: true, ResourceID: "com.android.systemui:id/back", Bounds: sdk.Rect{Top: 1024, Right: 1000, Bottom: 2024}}), 0, true},
		{"the keyboard does not count", bareScreen(canvas, sdk.Element{Class: "android.widget.FrameLayout", ResourceID: "com.google.android.inputmethod.latin:id/keyboard_holder", Clickable: true, Bounds: sdk.Rect{Top: 1024, Right: 1000, Bottom: 2024}}), 0, true},
		{"off", func() *sdk.Screen { s := bareScreen(canvas); s.ScreenOn = false; return s }(), 0, false},
		{"locked", func() *sdk.Screen { s := bareScreen(canvas); s.LockState = sdk.LockLocked; return s }(), 0, false},
		{"no size", func() *sdk.Screen { s := bareScreen(); s.Width, s.Height = 0, 0; return s }(), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewModel().Read(tt.s)
			if got := v.Covered(); math.Abs(got-tt.cover) > 1e-9 {
				t.Errorf("Covered: got %v; want %v", got, tt.cover)
			}
			if got := v.Bare(); got != tt.bare {
				t.Errorf("Bare: got %v; want %v", got, tt.bare)
			}
		})
	}
}

func TestContentArea(t *testing.T) {
	tests := []struct {
		name      string
		w, h, dpi int
		statusLow int // the bottom of a status bar node, 0 for none
		want      sdk.Rect
	}{
		{"160 dpi", 1000, 2000, 160, 0, sdk.Rect{Top: 24, Right: 1000, Bottom: 2000}},
		{"420 dpi", 1080, 2400, 420, 0, sdk.Rect{Top: 63, Right: 1080, Bottom: 2400}},
		{"no density", 320, 640, 0, 0, sdk.Rect{Top: 24, Right: 320, Bottom: 640}},
		{"a taller status bar", 1000, 2000, 160, 80, sdk.Rect{Top: 80, Right: 1000, Bottom: 2000}},
		{"no size", 0, 0, 160, 0, sdk.Rect{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sdk.Screen{ScreenOn: true, Width: tt.w, Height: tt.h, DensityDPI: tt.dpi}
			if tt.statusLow > 0 {
				s.Elements = []sdk.Element{
					{ID: 1, Class: "android.widget.FrameLayout", ResourceID: "com.android.systemui:id/status_bar", Visible: true, Bounds: sdk.Rect{Right: tt.w, Bottom: tt.statusLow}},
					{ID: 2, ParentID: 1, Class: "android.widget.TextView", Text: "2 notifications", ResourceID: "com.android.systemui:id/notification_icon_area", Visible: true, Bounds: sdk.Rect{Right: tt.w / 2, Bottom: tt.statusLow}},
				}
			}
			if got := NewModel().Read(s).ContentArea(); got != tt.want {
				t.Errorf("got %+v; want %+v", got, tt.want)
			}
		})
	}
}

func TestUnionArea(t *testing.T) {
	r := func(l, t, rr, b int) sdk.Rect { return sdk.Rect{Left: l, Top: t, Right: rr, Bottom: b} }
	tests := []struct {
		name  string
		rects []sdk.Rect
		want  int
	}{
		{"none", nil, 0},
		{"one", []sdk.Rect{r(0, 0, 10, 10)}, 100},
		{"apart", []sdk.Rect{r(0, 0, 10, 10), r(20, 20, 30, 30)}, 200},
		{"overlapping", []sdk.Rect{r(0, 0, 10, 10), r(5, 5, 15, 15)}, 175},
		{"inside", []sdk.Rect{r(0, 0, 10, 10), r(2, 2, 4, 4)}, 100},
		{"a cross", []sdk.Rect{r(0, 4, 10, 6), r(4, 0, 6, 10)}, 36},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unionArea(tt.rects); got != tt.want {
				t.Errorf("got %d; want %d", got, tt.want)
			}
		})
	}
}
