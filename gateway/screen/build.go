package screen

import (
	"strings"
	"unicode"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Limits of label merging: a clickable container takes its children's texts
// only when there are few of them and it does not cover most of the screen
// (a full-screen clickable root would otherwise swallow everything).
const (
	maxMerged        = 8
	maxMergedPercent = 60
)

// bnode is a node while the tree is being condensed.
type bnode struct {
	Node
	kids []*bnode
}

// builder condenses one screen's element tree.
type builder struct {
	s        *sdk.Screen
	kids     [][]int // element index -> child element indexes
	area     int     // screen area in pixels
	keyboard bool    // a keyboard node was made
	keys     []Key   // the keyboard's keys
}

// build condenses s into trees of meaningful nodes, without refs, and
// returns the on-screen keyboard's keys.
func build(s *sdk.Screen) ([]*bnode, []Key) {
	if s == nil || !s.ScreenOn {
		return nil, nil
	}
	b := &builder{s: s, kids: make([][]int, len(s.Elements)), area: s.Width * s.Height}
	index := make(map[int]int, len(s.Elements))
	var roots []int
	for i, e := range s.Elements {
		index[e.ID] = i
		if p, ok := index[e.ParentID]; ok && e.ParentID != 0 {
			b.kids[p] = append(b.kids[p], i)
		} else {
			roots = append(roots, i)
		}
	}
	var out []*bnode
	for _, i := range roots {
		out = append(out, b.condense(i, false, false, false)...)
	}
	return out, b.keys
}

// collectKeys keeps the keys of the keyboard at element i: every visible
// element under it with a name and a place. Agents never see them (the
// keyboard is one node), but the gate judges a touch on the keyboard by
// the key under it.
func (b *builder) collectKeys(i int) {
	for _, c := range b.kids[i] {
		e := &b.s.Elements[c]
		if !e.Visible {
			continue
		}
		if label := first(clean(e.ContentDescription), clean(e.Text)); label != "" && !e.Bounds.Empty() {
			b.keys = append(b.keys, Key{Label: label, Bounds: e.Bounds})
		}
		b.collectKeys(c)
	}
}

// condense returns what element i and its subtree become: one node, or its
// children's nodes when the element itself only groups them, or nothing.
func (b *builder) condense(i int, inList, underList, inStatus bool) []*bnode {
	e := &b.s.Elements[i]
	if !e.Visible {
		return nil
	}
	if isKeyboard(e) {
		if b.keyboard || e.Bounds.Empty() {
			return nil
		}
		b.keyboard = true
		b.collectKeys(i)
		n := newNode(e, RoleKeyboard)
		n.Label, n.texts, n.Clickable, n.Focused = "", nil, false, false
		return []*bnode{n}
	}
	inStatus = inStatus || b.isStatusBar(i)
	role := roleOf(e, inList)
	var kids []*bnode
	for _, c := range b.kids[i] {
		kids = append(kids, b.condense(c, role == RoleList, underList || role == RoleList, inStatus)...)
	}
	if e.Bounds.Empty() || isWindow(e.Class) {
		return kids
	}
	n := newNode(e, role)
	n.underList, n.StatusBar = underList, inStatus
	if inStatus && !strings.Contains(strings.ToLower(n.Label), "notification") {
		// The clock, battery and signal change on their own and would make
		// every diff noisy; only the notification count is worth a line.
		return kids
	}
	if len(kids) == 0 && !n.interactive() && isClock(e, n.Label) {
		return nil // a clock changes on its own and would make every diff noisy
	}
	if classRole(e.Class) == "" && !n.interactive() && n.Label != "" && len(kids) > 0 && repeatsKids(n.Label, kids) {
		n.Label = "" // iOS containers repeat their children's labels
	}
	if !n.meaningful(len(kids) > 0) {
		return kids
	}

	switch {
	case b.canMerge(n, kids):
		n.merge(kids)
		kids = nil
	case n.Label != "":
		// iOS repeats a cell's label in a static text inside it.
		kept := kids[:0]
		for _, k := range kids {
			if len(k.kids) == 0 && !k.interactive() && strings.EqualFold(k.Label, n.Label) {
				continue
			}
			kept = append(kept, k)
		}
		kids = kept
	}

	// A container that only wraps one control with the same name is that
	// control; a group that only wraps one node with its name is that node.
	if len(kids) == 1 {
		k := kids[0]
		same := n.Label == "" || strings.EqualFold(n.Label, k.Label) || strings.EqualFold(n.Label, k.Hint)
		if same && !n.Scrollable && !n.Editable && !structural(n.Role) && (k.interactive() || !n.interactive()) {
			k.Selected = k.Selected || n.Selected
			return kids
		}
	}
	if len(kids) > 0 && n.Role == RoleText && classRole(e.Class) == "" {
		n.Role = RoleGroup
	}
	if n.Label == "" && n.Hint == "" && (n.Clickable || n.LongClickable || n.Editable || n.Checkable) {
		if _, id, ok := strings.Cut(e.ResourceID, ":id/"); ok {
			n.ShortID = id // the only name an unlabelled control has
		}
	}
	n.kids = kids
	return []*bnode{n}
}

// structural roles stand for a region, not a control, and are never
// collapsed into their only child.
func structural(r Role) bool {
	switch r {
	case RoleList, RoleWeb, RoleDialog, RoleTabs, RoleMenu, RoleKeyboard:
		return true
	}
	return false
}

// meaningful reports whether a node is worth showing on its own.
func (n *bnode) meaningful(hasKids bool) bool {
	if n.Label != "" || n.Hint != "" || n.interactive() || n.Password || n.Role == RoleProgress {
		return true
	}
	return hasKids && structural(n.Role)
}

// canMerge reports whether a clickable container should absorb its
// children: all of them only show something (no control among them).
func (b *builder) canMerge(n *bnode, kids []*bnode) bool {
	if len(kids) == 0 || !(n.Clickable || n.LongClickable) || n.Editable || n.Scrollable {
		return false
	}
	if b.area > 0 && n.Bounds.Width()*n.Bounds.Height()*100 > b.area*maxMergedPercent {
		return false
	}
	count := 0
	ok := true
	var walk func([]*bnode)
	walk = func(ks []*bnode) {
		for _, k := range ks {
			if k.Clickable || k.LongClickable || k.Editable || k.Scrollable || structural(k.Role) {
				ok = false
				return
			}
			if k.Label != "" {
				count++
			}
			walk(k.kids)
		}
	}
	walk(kids)
	return ok && count <= maxMerged
}

// merge takes the labels and the checked state of n's descendants.
func (n *bnode) merge(kids []*bnode) {
	var labels []string
	add := func(s string) {
		if s == "" {
			return
		}
		ls := strings.ToLower(s)
		for _, l := range labels {
			if strings.Contains(strings.ToLower(l), ls) {
				return
			}
		}
		labels = append(labels, s)
	}
	add(n.Label)
	var walk func([]*bnode)
	walk = func(ks []*bnode) {
		for _, k := range ks {
			add(k.Label)
			n.texts = append(n.texts, k.texts...)
			if k.Checkable && !n.Checkable {
				n.Checkable, n.Checked = true, k.Checked
				if n.Role == RoleButton || n.Role == RoleItem || n.Role == RoleGroup || n.Role == RoleText {
					n.Role = k.Role
				}
			}
			walk(k.kids)
		}
	}
	walk(kids)
	n.Label = strings.Join(labels, " · ")
}

// newNode makes the node for element e with role r. Password content never
// enters the node.
func newNode(e *sdk.Element, r Role) *bnode {
	n := &bnode{Node: Node{
		Role:          r,
		Bounds:        e.Bounds,
		Clickable:     e.Clickable,
		LongClickable: e.LongClickable,
		Editable:      e.Editable,
		Password:      e.Password || r == RolePassword,
		Scrollable:    e.Scrollable,
		Checkable:     e.Checkable,
		Checked:       e.Checked,
		Focused:       e.Focused,
		Selected:      e.Selected,
		Enabled:       e.Enabled,
		Element:       *e,
	}}
	text, desc, hint := clean(e.Text), clean(e.ContentDescription), clean(e.Hint)
	switch {
	case n.Password:
		n.Element.Text, n.Element.Value = "", ""
		n.Filled = text != "" && text != hint
		n.Hint = first(hint, desc)
		n.texts = nonEmpty(hint, desc)
		return n
	case r == RoleField:
		if text == hint {
			text = "" // an empty Android field reports its hint as text
		}
		n.Label = text
		if hint == "" && desc != text {
			hint = desc
		}
		n.Hint = hint
		n.texts = nonEmpty(text, hint, desc)
	default:
		n.Label = text
		if text == "" || (desc != "" && !hasAlnum(text)) {
			n.Label = desc // "←" described as "Back"
		}
		n.texts = nonEmpty(text, desc)
	}
	if v := clean(e.Value); v != "" && !n.Checkable && v != n.Label && v != text {
		n.Value = v
	}
	return n
}

// isKeyboard reports whether e is a software keyboard's window.
func isKeyboard(e *sdk.Element) bool {
	if e.Class == "XCUIElementTypeKeyboard" {
		return true
	}
	pkg, _, ok := strings.Cut(e.ResourceID, ":id/")
	return ok && (strings.Contains(pkg, "inputmethod") || strings.Contains(pkg, "keyboard"))
}

// isStatusBar reports whether element i is the system status bar: a thin
// strip at the top holding the clock, battery and notification icons.
func (b *builder) isStatusBar(i int) bool {
	e := &b.s.Elements[i]
	if strings.HasSuffix(e.Class, "StatusBar") || strings.HasSuffix(e.ResourceID, ":id/status_bar") {
		return true
	}
	if e.Bounds.Top != 0 || e.Clickable || e.Bounds.Height()*16 > b.s.Height || len(b.kids[i]) == 0 {
		return false
	}
	for _, c := range b.kids[i] {
		if !strings.HasPrefix(b.s.Elements[c].ResourceID, "com.android.systemui:id/") {
			return false
		}
	}
	return true
}

// isClock reports whether e is a clock showing the time, such as the lock
// screen's.
func isClock(e *sdk.Element, label string) bool {
	if !strings.Contains(strings.ToLower(e.ResourceID), "clock") {
		return false
	}
	digits, colon := 0, false
	for _, r := range label {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ':':
			colon = true
		}
	}
	return colon && digits >= 3 && len(label) <= 8
}

// isWindow reports whether class is an iOS application or window element,
// whose label only repeats the app's name.
func isWindow(class string) bool {
	switch strings.TrimPrefix(strings.TrimPrefix(class, "XCUIElementType"), "UIA") {
	case "Application", "Window":
		return true
	}
	return false
}

// repeatsKids reports whether every word of label appears in the labels of
// the nodes below.
func repeatsKids(label string, kids []*bnode) bool {
	var hay strings.Builder
	var walk func([]*bnode)
	walk = func(ks []*bnode) {
		for _, k := range ks {
			for _, t := range k.texts {
				hay.WriteString(strings.ToLower(t))
				hay.WriteByte(' ')
			}
			walk(k.kids)
		}
	}
	walk(kids)
	h := hay.String()
	words := strings.FieldsFunc(strings.ToLower(label), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		if !strings.Contains(h, w) {
			return false
		}
	}
	return len(words) > 0
}

// clean collapses runs of white space (line breaks included) into single spaces.
func clean(s string) string {
	if s == "" {
		return ""
	}
	return strings.Join(strings.Fields(s), " ")
}

func hasAlnum(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func nonEmpty(ss ...string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
