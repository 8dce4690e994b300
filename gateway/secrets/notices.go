package secrets

import (
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// HiddenNotice is what a hidden notification shows in place of its app, its
// title and its text.
const HiddenNotice = "[hidden: blocked app]"

// A Notice is a notification as a screen shows it: a row of the shade or of
// the lock screen, or a heads-up banner over an app. A row names its app by
// its label, as the phone writes it ("Bank"), never by its id.
type Notice struct {
	App   string // the app's label, without the time ("Bank · 15:04" gives "Bank")
	Title string
	Text  string
}

// Notices returns the notifications s shows, in screen order.
func Notices(s *sdk.Screen) []Notice {
	if s == nil {
		return nil
	}
	rows := noticeRows(s)
	out := make([]Notice, len(rows))
	for i, r := range rows {
		out[i] = r.n
	}
	return out
}

// noticeRow is one notification on a screen: the element that holds it,
// every element of its subtree (the root first), and what it says.
type noticeRow struct {
	root    int
	members []int
	title   int // the element of the title, or -1
	n       Notice
}

// Resource ids of notification rows and their parts (the name after
// ":id/"). Android's rows are SystemUI's expandableNotificationRow, with the
// platform's app_name_text, title and text inside; the virtual phones use
// the same parts in a row named notification. An iOS banner is a
// NotificationShortLookView whose label reads "App, time, title, text".
var (
	rowIDs   = map[string]bool{"expandableNotificationRow": true, "notification": true, "NotificationShortLookView": true, "NotificationCell": true}
	appIDs   = map[string]bool{"app_name_text": true}
	titleIDs = map[string]bool{"title": true, "notification_title": true, "conversation_text": true}
	textIDs  = map[string]bool{"text": true, "big_text": true, "notification_text": true}
)

// idName splits a resource id into its package and name:
// "com.android.systemui:id/notification" gives "com.android.systemui" and
// "notification"; an iOS identifier is all name.
func idName(rid string) (pkg, name string) {
	if i := strings.Index(rid, ":id/"); i >= 0 {
		return rid[:i], rid[i+len(":id/"):]
	}
	return "", rid
}

// isRow reports whether an element is a notification row by its id. The
// short name "notification" counts only in SystemUI or without a package,
// so that an app's own "notification" bell is not one.
func isRow(rid string) bool {
	pkg, name := idName(rid)
	if !rowIDs[name] {
		return false
	}
	return name != "notification" || pkg == "" || pkg == "com.android.systemui"
}

// isAppName reports whether an element is a notification's app name: the
// platform's (android:id/app_name_text) or SystemUI's, not an app's own
// element of that name.
func isAppName(rid string) bool {
	pkg, name := idName(rid)
	return appIDs[name] && (pkg == "" || pkg == "android" || pkg == "com.android.systemui")
}

// noticeRows finds the notifications on s: elements with a row id, and
// around each app name that no row holds, the largest element that holds
// no other app name (stopping at a list or at a screen-wide element).
func noticeRows(s *sdk.Screen) []noticeRow {
	els := s.Elements
	found := false
	for _, e := range els {
		if e.ResourceID != "" && (isRow(e.ResourceID) || isAppName(e.ResourceID)) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	parent := make([]int, len(els))
	index := make(map[int]int, len(els))
	for i, e := range els {
		index[e.ID] = i
	}
	for i, e := range els {
		parent[i] = -1
		if p, ok := index[e.ParentID]; ok && e.ParentID != 0 && p != i {
			parent[i] = p
		}
	}
	isRoot := make([]bool, len(els))
	for i, e := range els {
		isRoot[i] = isRow(e.ResourceID)
	}
	// Count the app names under each element, to find the rows that have
	// no row id.
	names := make([]int, len(els))
	for i, e := range els {
		if !isAppName(e.ResourceID) {
			continue
		}
		for p, n := i, 0; p >= 0 && n < len(els); p, n = parent[p], n+1 {
			names[p]++
		}
	}
	wide := s.Width * s.Height * 9 / 10
	for i, e := range els {
		if !isAppName(e.ResourceID) || rowOf(i, parent, isRoot) >= 0 {
			continue
		}
		r := i
		for p := parent[r]; p >= 0 && names[p] == 1 && !els[p].Scrollable && area(els[p].Bounds) < wide; p = parent[p] {
			r = p
		}
		if r == i && parent[i] >= 0 {
			r = parent[i]
		}
		isRoot[r] = true
	}
	// Each element belongs to the outermost row above it: a row inside a
	// row is part of it.
	var rows []noticeRow
	at := map[int]int{} // row root → index in rows
	for i := range els {
		root := rowOf(i, parent, isRoot)
		if root < 0 {
			continue
		}
		k, ok := at[root]
		if !ok {
			k = len(rows)
			at[root] = k
			rows = append(rows, noticeRow{root: root})
		}
		rows[k].members = append(rows[k].members, i)
	}
	for k := range rows {
		r := &rows[k]
		if r.members[0] != r.root {
			// The root first, whatever the order of the elements.
			for j, m := range r.members {
				if m == r.root {
					r.members[0], r.members[j] = r.members[j], r.members[0]
				}
			}
		}
		r.n, r.title = describe(els, r.members)
	}
	return rows
}

// rowOf returns the outermost row at or above element i, or -1.
func rowOf(i int, parent []int, isRoot []bool) int {
	root := -1
	for n := 0; i >= 0 && n < len(parent); i, n = parent[i], n+1 {
		if isRoot[i] {
			root = i
		}
	}
	return root
}

// name is the name part of a resource id.
func name(rid string) string {
	_, n := idName(rid)
	return n
}

func area(r sdk.Rect) int {
	if r.Empty() {
		return 0
	}
	return r.Width() * r.Height()
}

// describe reads a row's app, title and text from its parts, else from
// the texts it holds in order, and returns the title's element (or -1).
func describe(els []sdk.Element, members []int) (Notice, int) {
	var n Notice
	title := -1
	var rest []string
	for _, i := range members {
		e := els[i]
		t := first(e.Text, e.ContentDescription)
		id := name(e.ResourceID)
		switch {
		case t == "":
		case isAppName(e.ResourceID) && n.App == "":
			n.App = appLabel(t)
		case titleIDs[id] && n.Title == "":
			n.Title, title = t, i
		case textIDs[id] && n.Text == "":
			n.Text = t
		case i != members[0]:
			rest = append(rest, t)
		}
	}
	root := els[members[0]]
	if label := first(root.ContentDescription, root.Text); n.App == "" && label != "" {
		// An iOS banner's label: "Messages, now, Ben, Did you get the tickets?"
		app, more, _ := strings.Cut(label, ", ")
		n.App = strings.TrimSpace(app)
		if n.Title == "" && n.Text == "" && len(rest) == 0 {
			n.Text = strings.TrimSpace(more)
		}
	}
	if n.Title == "" && n.Text == "" && len(rest) > 0 {
		n.Title, rest = rest[0], rest[1:]
		n.Text = strings.Join(rest, " ")
	}
	return n, title
}

// appLabel cuts the time and the sub-text off a row's app name: "Bank ·
// 15:04" gives "Bank".
func appLabel(s string) string {
	for _, sep := range []string{" · ", " • ", "·", "•"} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return strings.TrimSpace(s)
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// hideRow blanks every text of a notification's row in out and gives its
// root HiddenNotice. What it held is learned by recall as a blocked app's:
// every number with the shape of a code.
func hideRow(out *sdk.Screen, row noticeRow, recall *Recall) {
	for _, i := range row.members {
		e := &out.Elements[i]
		for _, f := range []string{e.Text, e.ContentDescription, e.Value, e.Hint} {
			if recall != nil && mayHoldCode(f) {
				for _, sp := range findCodes(f, scope{all: true, notice: true}) {
					recall.Add(f[sp.Start:sp.End])
				}
			}
		}
		e.Text, e.ContentDescription, e.Value, e.Hint = "", "", "", ""
	}
	out.Elements[row.root].ContentDescription = HiddenNotice
}
