package screen

import "github.com/pinky-gateway/pinky/drivers/sdk"

// Same reports whether two views show the same thing: the same screen state
// and the same nodes with the same labels, states, places and nesting. Refs
// are ignored, so views from different Models compare too. The gateway's
// settle step reads until two reads are the Same.
func Same(a, b *View) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.App.ID != b.App.ID || a.LockState != b.LockState || a.ScreenOn != b.ScreenOn ||
		a.Width != b.Width || a.Height != b.Height || a.Orientation != b.Orientation ||
		a.KeyboardShown != b.KeyboardShown || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		x, y := &a.Nodes[i], &b.Nodes[i]
		if x.Role != y.Role || x.Bounds != y.Bounds || x.Depth != y.Depth || x.rest() != y.rest() {
			return false
		}
	}
	return true
}

// SameScreen reports whether two driver reads match element for element,
// ignoring element ids (which drivers may renumber) and the capture time.
func SameScreen(a, b *sdk.Screen) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.App != b.App || a.LockState != b.LockState || a.ScreenOn != b.ScreenOn ||
		a.Width != b.Width || a.Height != b.Height || a.Orientation != b.Orientation ||
		a.KeyboardShown != b.KeyboardShown || len(a.Elements) != len(b.Elements) {
		return false
	}
	pos := func(s *sdk.Screen) map[int]int {
		m := make(map[int]int, len(s.Elements))
		for i, e := range s.Elements {
			m[e.ID] = i
		}
		return m
	}
	pa, pb := pos(a), pos(b)
	for i := range a.Elements {
		x, y := a.Elements[i], b.Elements[i]
		// Compare parents by position, not by id.
		px, okx := pa[x.ParentID]
		py, oky := pb[y.ParentID]
		if okx != oky || (okx && px != py) {
			return false
		}
		x.ID, x.ParentID, y.ID, y.ParentID = 0, 0, 0, 0
		if x != y {
			return false
		}
	}
	return true
}
