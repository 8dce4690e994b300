package screen

import (
	"sort"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Delta is what changed between two Views of one Model.
type Delta struct {
	// Header lists changes of the screen as a whole: "app Mail → Messages",
	// "unlocked", "keyboard hidden", "screen off"…
	Header []string
	// Lines are node changes ordered by position in the new view (a removed
	// node where it used to be): "+ [15] button "Reply"", "- [9] text "Draft"",
	// "~ [7] field "Message" → "Hello"".
	Lines []string

	appChanged bool
	whole      bool // the change is big enough that the whole screen reads better
}

// Diff compares two Views read by the same Model. A nil prev counts as a
// change of app.
func Diff(prev, next *View) Delta {
	var d Delta
	if next == nil {
		next = &View{}
	}
	if prev == nil {
		d.appChanged, d.whole = true, true
		prev = &View{}
	}
	if prev.ScreenOn != next.ScreenOn {
		d.whole = true
		if next.ScreenOn {
			d.Header = append(d.Header, "screen on")
		} else {
			d.Header = append(d.Header, "screen off")
		}
	}
	if prev.LockState != next.LockState && next.LockState != sdk.LockUnknown {
		d.whole = true
		d.Header = append(d.Header, string(next.LockState))
	}
	if prev.App.ID != next.App.ID && next.ScreenOn {
		d.appChanged, d.whole = true, true
		d.Header = append(d.Header, "app "+appName(prev.App)+" → "+appName(next.App))
	}
	if prev.KeyboardShown != next.KeyboardShown && next.ScreenOn {
		if next.KeyboardShown {
			d.Header = append(d.Header, "keyboard shown")
		} else {
			d.Header = append(d.Header, "keyboard hidden")
		}
	}
	if (prev.Width != next.Width || prev.Height != next.Height || prev.Orientation != next.Orientation) && next.ScreenOn && prev.ScreenOn {
		d.whole = true
		d.Header = append(d.Header, "screen now "+next.size())
	}

	type line struct {
		pos, kind, order int // position in next; a removed node (kind 0) goes right after the node that preceded it
		text             string
	}
	var lines []line
	after := 0 // where in next the last node of prev that is still there sits, plus one
	for i := range prev.Nodes {
		p := &prev.Nodes[i]
		if j, ok := next.byRef[p.Ref]; ok {
			after = j + 1
			continue
		}
		lines = append(lines, line{pos: after, kind: 0, order: i, text: "- " + p.line()})
	}
	for j := range next.Nodes {
		n := &next.Nodes[j]
		i, ok := prev.byRef[n.Ref]
		if !ok {
			lines = append(lines, line{pos: j, kind: 1, order: j, text: "+ " + n.line()})
			continue
		}
		if c := changed(&prev.Nodes[i], n); c != "" {
			lines = append(lines, line{pos: j, kind: 1, order: j, text: c})
		}
	}
	sort.SliceStable(lines, func(a, b int) bool {
		x, y := lines[a], lines[b]
		if x.pos != y.pos {
			return x.pos < y.pos
		}
		if x.kind != y.kind {
			return x.kind < y.kind
		}
		return x.order < y.order
	})
	for _, l := range lines {
		d.Lines = append(d.Lines, l.text)
	}
	return d
}

// changed describes how a node changed, or is "" when it reads the same.
func changed(p, n *Node) string {
	if p.Role == n.Role && p.rest() == n.rest() {
		return ""
	}
	head := "~ [" + strconv.Itoa(n.Ref) + "] "
	if p.Role != n.Role {
		return head + string(p.Role) + p.rest() + " →" + " " + string(n.Role) + n.rest()
	}
	q, m := *p, *n
	q.Label, m.Label = "", ""
	if q.rest() == m.rest() {
		return head + string(n.Role) + " " + quote(p.Label) + " → " + quote(n.Label)
	}
	if p.describe() == n.describe() { // only the marks changed
		return head + string(n.Role) + n.describe() + " " + marksText(p.marks()) + " → " + marksText(n.marks())
	}
	return head + string(n.Role) + p.rest() + " →" + n.rest()
}

// marksText is "(focused, checked)", or "(none)".
func marksText(m []string) string {
	if len(m) == 0 {
		return "(none)"
	}
	return "(" + strings.Join(m, ", ") + ")"
}

// Empty reports whether nothing changed.
func (d Delta) Empty() bool { return len(d.Header) == 0 && len(d.Lines) == 0 }

// AppChanged reports whether another app came to the front (or there was no
// previous view): callers show the whole screen instead of the delta.
func (d Delta) AppChanged() bool { return d.appChanged }

// Text is the delta as lines: the header changes first, then node changes.
// An empty delta reads "(no change on screen)".
func (d Delta) Text() string {
	if d.Empty() {
		return "(no change on screen)\n"
	}
	var b strings.Builder
	if len(d.Header) > 0 {
		b.WriteString(strings.Join(d.Header, " · "))
		b.WriteByte('\n')
	}
	for _, l := range d.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// Render is what an agent should read after an action that led from prev to
// next: the whole screen (full is true) when the app, the lock state or the
// screen changed, or when the delta would be longer than the screen itself;
// otherwise the delta.
func Render(prev, next *View) (text string, full bool) {
	if next == nil {
		next = &View{}
	}
	d := Diff(prev, next)
	whole := next.Text()
	if d.whole {
		return whole, true
	}
	delta := d.Text()
	if len(delta) >= len(whole) {
		return whole, true
	}
	return delta, false
}
