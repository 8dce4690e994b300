package dump

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Errors of ParseUIAutomatorWindows.
var (
	// ErrSingleDisplay means the document is the single-display one
	// (<hierarchy>) that `uiautomator dump` writes: before Android 13,
	// uiautomator ignores --windows.
	ErrSingleDisplay = errors.New("the dump has one display only: `uiautomator dump --windows` needs Android 13 or later")
	// ErrNoDisplay means the display is not in the document: uiautomator
	// leaves out displays without windows, and displays that do not exist.
	ErrNoDisplay = errors.New("the display is not in the dump")
)

// Window types of the multi-display dump, as
// AccessibilityWindowInfo.typeToString spells them.
const (
	WindowApplication          = "TYPE_APPLICATION"
	WindowInputMethod          = "TYPE_INPUT_METHOD"
	WindowSystem               = "TYPE_SYSTEM"
	WindowAccessibilityOverlay = "TYPE_ACCESSIBILITY_OVERLAY"
	WindowSplitScreenDivider   = "TYPE_SPLIT_SCREEN_DIVIDER"
	WindowMagnificationOverlay = "TYPE_MAGNIFICATION_OVERLAY"
)

type uiDisplays struct {
	XMLName  xml.Name
	Displays []uiDisplay `xml:"display"`
}

type uiDisplay struct {
	ID      string     `xml:"id,attr"`
	Windows []uiWindow `xml:"window"`
}

type uiWindow struct {
	Title     string       `xml:"title,attr"`
	Bounds    string       `xml:"bounds,attr"`
	Active    string       `xml:"active,attr"`
	Focused   string       `xml:"focused,attr"`
	Layer     string       `xml:"layer,attr"`
	Type      string       `xml:"type,attr"`
	Windows   []uiWindow   `xml:"window"`
	Hierarchy *uiHierarchy `xml:"hierarchy"`
}

// window is one window of a display, flattened out of the document.
type window struct {
	*uiWindow
	bounds sdk.Rect
	layer  int
	order  int // place in the document, to keep ties stable
}

// pkg is the package of the window's content: its root node's.
func (w window) pkg() string {
	if w.Hierarchy == nil || len(w.Hierarchy.Nodes) == 0 {
		return ""
	}
	return w.Hierarchy.Nodes[0].attr("package")
}

// ParseUIAutomatorWindows parses the document that Android 13's
// `uiautomator dump --windows FILE` writes (<displays><display id="N">
// <window …><hierarchy>…), and returns display displayID as one screen.
//
// The display's windows are merged bottom first (by layer), each window's
// hierarchy a root: application and system windows and the input method
// (which sets KeyboardShown); accessibility and magnification overlays are
// left out. The app in front is the package of the focused application
// window, else of the active one, else of the topmost. The screen's size is
// the union of the windows' bounds (a caller that knows the display's size
// may set it); the lock state is unknown and the screen on.
//
// The single-display document of older Android is ErrSingleDisplay; a
// display the document does not hold (it had no window) is ErrNoDisplay.
func ParseUIAutomatorWindows(r io.Reader, displayID int) (*sdk.Screen, error) {
	var doc uiDisplays
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return nil, fmt.Errorf("uiautomator window dump: %w", err)
	}
	switch doc.XMLName.Local {
	case "displays":
	case "hierarchy":
		return nil, ErrSingleDisplay
	default:
		return nil, fmt.Errorf("uiautomator window dump: the root is <%s>; want <displays>", doc.XMLName.Local)
	}
	var ds *uiDisplay
	for i := range doc.Displays {
		if doc.Displays[i].ID == strconv.Itoa(displayID) {
			ds = &doc.Displays[i]
			break
		}
	}
	if ds == nil {
		return nil, fmt.Errorf("display %d: %w", displayID, ErrNoDisplay)
	}
	var wins []window
	var flatten func(ws []uiWindow) error
	flatten = func(ws []uiWindow) error {
		for i := range ws {
			w := window{uiWindow: &ws[i], order: len(wins)}
			b, err := parseBounds(w.Bounds)
			if err != nil {
				return fmt.Errorf("display %d: window %q: %w", displayID, w.Title, err)
			}
			w.bounds = b
			w.layer, _ = strconv.Atoi(w.Layer)
			switch w.Type {
			case WindowAccessibilityOverlay, WindowMagnificationOverlay:
				// Drawn by accessibility services over the app: not the app's.
			default:
				wins = append(wins, w)
			}
			if err := flatten(w.Windows); err != nil {
				return err
			}
		}
		return nil
	}
	if err := flatten(ds.Windows); err != nil {
		return nil, err
	}
	// Bottom first: the order the windows are drawn in, as in the
	// single-display dump (and a child window above its parent).
	slices.SortStableFunc(wins, func(a, b window) int {
		if a.layer != b.layer {
			return a.layer - b.layer
		}
		return a.order - b.order
	})
	s := &sdk.Screen{LockState: sdk.LockUnknown, ScreenOn: true, Orientation: sdk.OrientationPortrait}
	rotated := false
	var focused, active, top *window
	for i := range wins {
		w := &wins[i]
		s.Width, s.Height = max(s.Width, w.bounds.Right), max(s.Height, w.bounds.Bottom)
		if w.Hierarchy != nil && !rotated {
			s.Orientation, rotated = rotation(w.Hierarchy.Rotation), true
		}
		switch w.Type {
		case WindowInputMethod:
			s.KeyboardShown = true
		case WindowApplication:
			if w.pkg() == "" {
				continue
			}
			top = w
			if w.Focused == "true" {
				focused = w
			}
			if w.Active == "true" {
				active = w
			}
		}
	}
	for _, w := range []*window{focused, active, top} {
		if w != nil {
			s.App = sdk.App{ID: w.pkg()}
			break
		}
	}
	if len(wins) > 0 && (s.Width <= 0 || s.Height <= 0) {
		return nil, fmt.Errorf("uiautomator window dump: display %d: windows have no area", displayID)
	}
	bd := &builder{screen: sdk.Rect{Right: s.Width, Bottom: s.Height}}
	for _, w := range wins {
		if w.Hierarchy == nil {
			continue
		}
		for i := range w.Hierarchy.Nodes {
			if err := bd.uiWalk(0, &w.Hierarchy.Nodes[i]); err != nil {
				return nil, fmt.Errorf("display %d: %w", displayID, err)
			}
		}
	}
	s.Elements = bd.elems
	return s, nil
}
