package screen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// maxLabel is how many characters of a label the text shows; lookups still
// match the whole label.
const maxLabel = 120

// View is one read of a screen: its meaningful elements, with refs, as a tree
// in pre-order. A View does not change after Model.Read returns it.
type View struct {
	App           sdk.App
	LockState     sdk.LockState
	ScreenOn      bool
	Width, Height int
	Orientation   sdk.Orientation
	KeyboardShown bool
	DensityDPI    int    // 0 when the driver does not say
	Nodes         []Node // pre-order; Depth and Parent give the tree
	// Keys are the on-screen keyboard's keys, which the view shows as one
	// keyboard node: the gate judges a touch on the keyboard by its key.
	Keys []Key

	byRef map[int]int // ref -> index in Nodes
}

// Key is one key of the on-screen keyboard: what it says and where it is.
type Key struct {
	Label  string // its text or description: "q", "space", "enter", "Send"
	Bounds sdk.Rect
}

// KeyAt reports whether p is on the on-screen keyboard, and the key under
// it: the smallest key that holds p, or a zero Key when the keyboard names
// none there (many keyboards expose no keys at all).
func (v *View) KeyAt(p sdk.Point) (Key, bool) {
	on := false
	for i := range v.Nodes {
		if v.Nodes[i].Role == RoleKeyboard && v.Nodes[i].Bounds.Contains(p) {
			on = true
			break
		}
	}
	var best Key
	for _, k := range v.Keys {
		if k.Bounds.Contains(p) && (best.Label == "" || k.Bounds.Width()*k.Bounds.Height() < best.Bounds.Width()*best.Bounds.Height()) {
			best, on = k, true
		}
	}
	return best, on
}

// Focused returns the focused field (an editable node with focus), if any.
func (v *View) Focused() (Node, bool) {
	for _, n := range v.Nodes {
		if n.Focused && (n.Editable || n.Role == RoleField || n.Role == RolePassword) {
			return n, true
		}
	}
	return Node{}, false
}

func newView(s *sdk.Screen) *View {
	if s == nil {
		return &View{}
	}
	return &View{
		App: s.App, LockState: s.LockState, ScreenOn: s.ScreenOn,
		Width: s.Width, Height: s.Height, Orientation: s.Orientation,
		KeyboardShown: s.KeyboardShown && s.ScreenOn, DensityDPI: s.DensityDPI,
	}
}

func (v *View) index() {
	v.byRef = make(map[int]int, len(v.Nodes))
	for i, n := range v.Nodes {
		v.byRef[n.Ref] = i
	}
}

// Text is the compact form an agent reads: a header line, then one line per
// node, indented by depth.
//
//	app Messages (com.google.android.apps.messaging) · unlocked · keyboard shown · 1080x2400
//	[4] list (scrollable)
//	  [5] item "Ana Silva · Yes, 12:30 at Rosa's"
//	[9] field hint="Text message" (focused)
func (v *View) Text() string {
	var b strings.Builder
	b.WriteString(v.Header())
	b.WriteByte('\n')
	if v.ScreenOn && len(v.Nodes) == 0 {
		b.WriteString("(nothing on screen)\n")
	}
	for i := range v.Nodes {
		n := &v.Nodes[i]
		for range n.Depth {
			b.WriteString("  ")
		}
		b.WriteString(n.line())
		b.WriteByte('\n')
	}
	return b.String()
}

// Header is the first line of Text: the app in front, the lock state, the
// keyboard and the screen size.
func (v *View) Header() string {
	if !v.ScreenOn {
		if v.LockState == sdk.LockLocked {
			return "screen off · locked"
		}
		return "screen off"
	}
	parts := make([]string, 0, 4)
	if v.LockState == sdk.LockLocked {
		parts = append(parts, "LOCKED: the lock screen is in front")
	} else {
		parts = append(parts, "app "+appName(v.App))
		if v.LockState == sdk.LockUnlocked {
			parts = append(parts, "unlocked")
		}
	}
	if v.KeyboardShown {
		parts = append(parts, "keyboard shown")
	}
	parts = append(parts, v.size())
	return strings.Join(parts, " · ")
}

// size is "1080x2400", with the orientation unless it is portrait.
func (v *View) size() string {
	s := fmt.Sprintf("%dx%d", v.Width, v.Height)
	if v.Orientation != sdk.OrientationPortrait && v.Orientation != sdk.OrientationUnknown {
		s += " " + string(v.Orientation)
	}
	return s
}

// appName is "Label (id)", or what of it is known.
func appName(a sdk.App) string {
	a.ID, a.Label = clean(a.ID), clean(a.Label)
	switch {
	case a.ID == "" && a.Label == "":
		return "unknown"
	case a.Label == "" || a.Label == a.ID:
		return a.ID
	case a.ID == "":
		return strconv.Quote(a.Label)
	}
	return a.Label + " (" + a.ID + ")"
}

// line renders a node without indentation: [ref] role "label" value=… hint=… (marks).
func (n *Node) line() string {
	return "[" + strconv.Itoa(n.Ref) + "] " + string(n.Role) + n.rest()
}

// rest is everything of a line after the role, starting with a space when
// not empty.
func (n *Node) rest() string {
	s := n.describe()
	if m := n.marks(); len(m) > 0 {
		s += " (" + strings.Join(m, ", ") + ")"
	}
	return s
}

// describe is the label, value, hint and id part of a line.
func (n *Node) describe() string {
	var b strings.Builder
	if n.Label != "" {
		b.WriteByte(' ')
		b.WriteString(quote(n.Label))
	}
	if n.Value != "" {
		b.WriteString(" value=")
		b.WriteString(quote(n.Value))
	}
	if n.Hint != "" {
		b.WriteString(" hint=")
		b.WriteString(quote(n.Hint))
	}
	if n.ShortID != "" {
		b.WriteString(" id=")
		b.WriteString(n.ShortID)
	}
	return b.String()
}

// marks are the states worth saying; a role's usual abilities (a field is
// editable) go without saying.
func (n *Node) marks() []string {
	var m []string
	if n.Password && n.Filled {
		m = append(m, "filled, hidden")
	}
	if n.Focused && n.Role != RoleKeyboard {
		m = append(m, "focused")
	}
	if n.Checkable {
		if n.Checked {
			m = append(m, "checked")
		} else {
			m = append(m, "unchecked")
		}
	}
	if n.Selected {
		m = append(m, "selected")
	}
	if n.Editable && n.Role != RoleField && n.Role != RolePassword {
		m = append(m, "editable")
	}
	if n.Scrollable {
		m = append(m, "scrollable")
	}
	if !n.Enabled {
		m = append(m, "disabled")
	}
	return m
}

// quote renders a label or value for an agent: shortened and quoted. Every
// string shown from the screen passes here, so masking (one-time codes) has
// one place to go.
func quote(s string) string {
	if utf8.RuneCountInString(s) > maxLabel {
		s = prefix(s, maxLabel-1) + "…"
	}
	return strconv.Quote(s)
}
