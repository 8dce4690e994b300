package screen

import (
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// A bare screen is one whose tree says too little to act on: a Flutter,
// canvas or game app, or a web view, that draws its controls without
// accessibility nodes. The gateway then shows the agent a screenshot with
// a grid of numbered marks (package marks) instead of leaving it to guess
// coordinates.
//
// Precisely: a screen is bare when it is on and not locked, and the nodes
// that are actionable (clickable, long-clickable, editable, scrollable or
// checkable) or say something (a label or a hint), clipped to the content
// area, cover less than BareCover of the content area. The content area is
// the screen below the status bar (StatusBarDP, or the status bar's bottom
// when the read shows it lower). The system's own parts (the status bar,
// the navigation bar and other System UI, the keyboard) do not count: they
// are there over any app.

// BareCover is the share of the content area below which a screen is bare.
const BareCover = 0.10

// StatusBarDP is the height of the status bar strip left out of the
// content area, in density-independent pixels.
const StatusBarDP = 24

// DP converts density-independent pixels to the view's pixels (160 dpi
// when the driver gave no density).
func (v *View) DP(dp int) int {
	dpi := v.DensityDPI
	if dpi <= 0 {
		dpi = 160
	}
	return (dp*dpi + 80) / 160
}

// ContentArea is the part of the screen an app draws in: all of it but
// the status bar strip at the top. It is empty for a view with no size.
func (v *View) ContentArea() sdk.Rect {
	if v.Width <= 0 || v.Height <= 0 {
		return sdk.Rect{}
	}
	top := v.DP(StatusBarDP)
	for i := range v.Nodes {
		if n := &v.Nodes[i]; n.StatusBar && n.Bounds.Top < top {
			top = max(top, n.Bounds.Bottom)
		}
	}
	return sdk.Rect{Top: min(top, v.Height), Right: v.Width, Bottom: v.Height}
}

// Covered is the share of the content area (0 to 1) that actionable or
// labelled nodes of the app cover, their overlaps counted once.
func (v *View) Covered() float64 {
	area := v.ContentArea()
	total := area.Width() * area.Height()
	if total <= 0 {
		return 0
	}
	var rects []sdk.Rect
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if !n.interactive() && n.Label == "" && n.Hint == "" {
			continue
		}
		if n.StatusBar || n.Role == RoleKeyboard || system(n) {
			continue
		}
		if r := clipRect(n.Bounds, area); r.Width() > 0 && r.Height() > 0 {
			rects = append(rects, r)
		}
	}
	return float64(unionArea(rects)) / float64(total)
}

// Bare reports whether the screen is bare: on, not locked, and covered by
// actionable or labelled nodes on less than BareCover of its content area.
func (v *View) Bare() bool {
	if v == nil || !v.ScreenOn || v.LockState == sdk.LockLocked || v.ContentArea().Height() <= 0 {
		return false
	}
	return v.Covered() < BareCover
}

// system reports whether n belongs to the phone's System UI (the
// navigation bar, a heads-up) rather than to the app.
func system(n *Node) bool {
	return strings.HasPrefix(n.Element.ResourceID, "com.android.systemui:id/")
}

func clipRect(a, b sdk.Rect) sdk.Rect {
	r := sdk.Rect{Left: max(a.Left, b.Left), Top: max(a.Top, b.Top), Right: min(a.Right, b.Right), Bottom: min(a.Bottom, b.Bottom)}
	if r.Right < r.Left || r.Bottom < r.Top {
		return sdk.Rect{}
	}
	return r
}

// unionArea is the area the rectangles cover together: for each vertical
// strip between two consecutive edges, the length of the union of the
// rectangles' spans across it.
func unionArea(rects []sdk.Rect) int {
	xs := make([]int, 0, 2*len(rects))
	for _, r := range rects {
		xs = append(xs, r.Left, r.Right)
	}
	slices.Sort(xs)
	xs = slices.Compact(xs)
	total := 0
	type span struct{ lo, hi int }
	var spans []span
	for i := 0; i+1 < len(xs); i++ {
		x0, x1 := xs[i], xs[i+1]
		spans = spans[:0]
		for _, r := range rects {
			if r.Left <= x0 && r.Right >= x1 {
				spans = append(spans, span{r.Top, r.Bottom})
			}
		}
		slices.SortFunc(spans, func(a, b span) int { return a.lo - b.lo })
		covered, end := 0, -1<<31
		for _, s := range spans {
			lo := max(s.lo, end)
			if s.hi > lo {
				covered += s.hi - lo
				end = s.hi
			}
		}
		total += covered * (x1 - x0)
	}
	return total
}
