// Package dump parses captured UI dumps into sdk.Screen values: Android UI
// Automator XML (the single-display document of `uiautomator dump`, and
// the multi-display one of Android 13's `uiautomator dump --windows`) and
// WebDriverAgent page sources (XML and JSON). A parsed
// screen keeps the dump's coordinates, clipped to the screen, its text intact
// except for password fields, which show dots.
//
// The virtual phones serve captured screens with it, and the Android and
// iOS drivers read real phones' dumps with it: one parser, tested on every
// captured fixture.
package dump

import (
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// builder collects elements in pre-order and assigns ids.
type builder struct {
	screen sdk.Rect
	elems  []sdk.Element
}

// add appends e under parent, clipping its bounds to the screen, and returns its id.
func (b *builder) add(parent int, e sdk.Element) int {
	e.ID = len(b.elems) + 1
	e.ParentID = parent
	e.Bounds = clip(e.Bounds, b.screen)
	if e.Password {
		e.Text = dots(e.Text)
	}
	b.elems = append(b.elems, e)
	return e.ID
}

// clip returns r inside s; a rectangle outside s becomes empty at s's nearest corner.
func clip(r, s sdk.Rect) sdk.Rect {
	r.Left = min(max(r.Left, s.Left), s.Right)
	r.Top = min(max(r.Top, s.Top), s.Bottom)
	r.Right = min(max(r.Right, r.Left), s.Right)
	r.Bottom = min(max(r.Bottom, r.Top), s.Bottom)
	return r
}

// dots hides a password: what is already dots stays, anything else becomes
// one dot per character.
func dots(s string) string {
	if strings.Trim(s, "•●*") == "" {
		return s
	}
	return strings.Repeat("•", utf8.RuneCountInString(s))
}
