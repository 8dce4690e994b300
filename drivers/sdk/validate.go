package sdk

import (
	"net/url"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of SPEC.md that do not depend on the phone. The server adapter
// checks them, so that no Go driver has to; the driver still checks what
// only it knows (the screen's size, its apps).
const (
	maxDuration = 10 * time.Second
	maxText     = 4096 // Unicode code points (runes), not bytes or UTF-16 units
	maxURL      = 8192 // bytes
	maxAppID    = 256  // bytes

	// MinPinchScale and MaxPinchScale bound a pinch's scale, in thousandths;
	// 1000 (no zoom) is refused too.
	MinPinchScale = 100
	MaxPinchScale = 10000
)

// checkAction returns ErrInvalidArgument for an action outside SPEC.md 5.5.
func checkAction(a Action) error {
	switch a.Kind {
	case ActLongPress, ActSwipe:
		if a.Duration < 0 || a.Duration > maxDuration {
			return Invalid("%s duration %v: want 0 to %v", a.Kind, a.Duration, maxDuration)
		}
	case ActPinch:
		if a.Scale < MinPinchScale || a.Scale > MaxPinchScale || a.Scale == 1000 {
			return Invalid("pinch scale %d‰: want %d to %d, not 1000", a.Scale, MinPinchScale, MaxPinchScale)
		}
		if a.Duration < 0 || a.Duration > maxDuration {
			return Invalid("pinch duration %v: want 0 to %v", a.Duration, maxDuration)
		}
	case ActScroll:
		if a.Direction == "" {
			return Invalid("scroll needs a direction")
		}
		if a.Amount < 0 || a.Amount > 1000 {
			return Invalid("scroll amount %d‰: want 0 to 1000", a.Amount)
		}
	case ActType:
		return checkText(a.Text)
	case ActKey:
		if a.Key == "" {
			return Invalid("press_key needs a key")
		}
	case ActLaunch, ActStop:
		if a.AppID == "" {
			return Invalid("%s needs an app id", a.Kind)
		}
		if len(a.AppID) > maxAppID {
			return Invalid("app id is %d bytes; the limit is %d", len(a.AppID), maxAppID)
		}
	case ActOpenURL:
		if len(a.URL) > maxURL {
			return Invalid("url is %d bytes; the limit is %d", len(a.URL), maxURL)
		}
		if u, err := url.Parse(a.URL); err != nil || !u.IsAbs() {
			return Invalid("url %q is not absolute", a.URL)
		}
	}
	return nil
}

func checkText(s string) error {
	if n := utf8.RuneCountInString(s); n < 1 || n > maxText {
		return Invalid("text has %d characters: want 1 to %d", n, maxText)
	}
	if !utf8.ValidString(s) {
		return Invalid("text is not valid UTF-8")
	}
	return nil
}

// checkInput returns ErrInvalidArgument for an input event outside SPEC.md 5.6.
func checkInput(e InputEvent) error {
	switch {
	case e.Pointer != nil:
		if e.Pointer.Action == "" {
			return Invalid("pointer event needs an action")
		}
		if e.Pointer.PointerID < 0 || e.Pointer.PointerID > 9 {
			return Invalid("pointer id %d: want 0 to 9", e.Pointer.PointerID)
		}
	case e.Key != nil:
		if e.Key.Action == "" || e.Key.Key == "" {
			return Invalid("key event needs an action and a key")
		}
	default:
		return checkText(e.Text)
	}
	return nil
}

// CheckPath returns ErrInvalidArgument for a path that SPEC.md 5.13 refuses:
// absolute, with a ".." element, a backslash or a NUL byte. "" is the Pinky
// folder itself. Drivers still must not follow symbolic links out of it.
func CheckPath(p string) error {
	switch {
	case strings.HasPrefix(p, "/"):
		return Invalid("path %q is absolute; want one relative to the Pinky folder", p)
	case strings.ContainsRune(p, 0):
		return Invalid("path %q contains a NUL byte", p)
	case strings.ContainsRune(p, '\\'):
		return Invalid("path %q contains a backslash; use /", p)
	case !utf8.ValidString(p):
		return Invalid("path %q is not valid UTF-8", p)
	}
	for _, el := range strings.Split(p, "/") {
		if el == ".." {
			return Invalid("path %q leaves the Pinky folder", p)
		}
	}
	return nil
}
