package adbd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

var errNoRoot = errors.New("null root node")

// dumper is what a driver implements to hand over a captured UI Automator
// dump as it was recorded (the sim does, for screens that come from one).
type dumper interface {
	UIAutomatorDump(ctx context.Context, deviceID string) ([]byte, error)
}

// uiXML is what `uiautomator dump` writes for the screen now: the captured
// fixture's own bytes when the screen is one, else XML built from Screen.
func (d *Device) uiXML(ctx context.Context) ([]byte, error) {
	if dm, ok := d.cfg.Driver.(dumper); ok {
		if b, err := dm.UIAutomatorDump(ctx, d.id); err == nil && len(b) > 0 {
			return b, nil
		}
	}
	s, err := d.screen(ctx)
	if err != nil {
		return nil, err
	}
	return uiAutomatorXML(s)
}

// uiAutomatorXML writes s as `uiautomator dump` writes a screen: the
// active window only (UiAutomation.getRootInActiveWindow), as one root
// <node> under <hierarchy>. That root is the window's decor view: a
// FrameLayout with no resource id, of the window's package, over the whole
// screen, whose children are the window's views. The status bar, a
// heads-up notification and the keyboard are windows of their own that are
// never the active one, so they are not in the dump; an open notification
// shade or the recents screen is the active window, alone. Invisible
// elements are left out, as uiautomator does.
func uiAutomatorXML(s *sdk.Screen) ([]byte, error) {
	children := map[int][]int{}
	for i, e := range s.Elements {
		if e.ParentID != 0 {
			children[e.ParentID] = append(children[e.ParentID], i)
		}
	}
	if !s.ScreenOn {
		return nil, errNoRoot
	}
	roots, pkg := activeWindow(s, children)
	if len(roots) == 0 {
		return nil, errNoRoot
	}
	bounds := sdk.Rect{Right: s.Width, Bottom: s.Height}
	if len(roots) == 1 && otherApp(s, pkg) {
		// A floating window of its own (the permission controller's
		// dialog): its decor view is the window's size, not the screen's.
		bounds = s.Elements[roots[0]].Bounds
	}
	rot := map[sdk.Orientation]int{sdk.OrientationLandscape: 1, sdk.OrientationPortraitUpsideDown: 2, sdk.OrientationLandscapeRight: 3}[s.Orientation]
	var b bytes.Buffer
	fmt.Fprintf(&b, "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"%d\">", rot)
	fmt.Fprintf(&b, `<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="%s" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[%d,%d][%d,%d]">`,
		esc(pkg), bounds.Left, bounds.Top, bounds.Right, bounds.Bottom)
	nw := &nodeWriter{b: &b, s: s, children: children}
	for n, r := range roots {
		nw.walk(r, n, pkg)
	}
	b.WriteString("</node></hierarchy>")
	return b.Bytes(), nil
}

// activeWindow returns the roots (indexes in s.Elements) of the window
// uiautomator dumps, the active one, and its package. Each visible root of
// a sim screen is a window or a part of the app's: System UI's are its own
// windows (the status bar, a heads-up notification, the shade), and so are
// the keyboard and the recents screen; so is another app's dialog over the
// app (the permission controller's runtime permission dialog, an activity
// that takes the focus); the rest is the app's window. The topmost of the
// shade and recents is active when shown, else another app's dialog, else
// the app's.
func activeWindow(s *sdk.Screen, children map[int][]int) ([]int, string) {
	var app []int
	appPkg := s.App.ID
	var overlay, dialog []int
	overlayPkg, dialogPkg := "", ""
	for i, e := range s.Elements {
		if e.ParentID != 0 || !e.Visible {
			continue
		}
		pkg := windowPackage(s, i, children)
		switch {
		case strings.Contains(pkg, "inputmethod"):
			// The keyboard's window is never the active one.
		case strings.HasSuffix(e.ResourceID, ":id/notification_panel"), strings.HasSuffix(e.ResourceID, ":id/overview_panel"):
			overlay, overlayPkg = []int{i}, pkg
		case pkg == "com.android.systemui" && (s.App.ID != pkg || contains(s, i, children, "com.android.systemui:id/clock")):
			// The status bar (over the lock screen too, whose window is
			// System UI's) and a heads-up notification.
		case otherApp(s, pkg):
			dialog, dialogPkg = []int{i}, pkg
		default:
			if appPkg == "" {
				appPkg = pkg
			}
			app = append(app, i)
		}
	}
	if overlay != nil {
		return overlay, overlayPkg
	}
	if dialog != nil {
		return dialog, dialogPkg
	}
	return app, appPkg
}

// otherApp reports whether a window of package pkg belongs to another app
// than the one in front, and not to the system: a window of its own over
// the app, such as the permission controller's dialog. The app's own
// windows name the framework's ids ("android:id/content") or the app's.
func otherApp(s *sdk.Screen, pkg string) bool {
	switch {
	case pkg == "" || pkg == "android" || pkg == s.App.ID || s.App.ID == "":
		return false
	case pkg == "com.android.systemui", strings.Contains(pkg, "inputmethod"):
		return false
	}
	return true
}

// contains reports whether the tree at root has an element of resource id
// rid.
func contains(s *sdk.Screen, root int, children map[int][]int, rid string) bool {
	queue := []int{root}
	for len(queue) > 0 {
		e := s.Elements[queue[0]]
		queue = queue[1:]
		if e.ResourceID == rid {
			return true
		}
		queue = append(queue, children[e.ID]...)
	}
	return false
}

// nodeWriter writes elements of a screen as UI Automator <node>s.
type nodeWriter struct {
	b        *bytes.Buffer
	s        *sdk.Screen
	children map[int][]int // element indexes by parent id
}

// walk writes element i, the index-th child of its parent, and its visible
// children, as nodes of package pkg.
func (w *nodeWriter) walk(i, index int, pkg string) {
	e := w.s.Elements[i]
	text := e.Text
	if text == "" && e.Editable {
		// A real dump gives an empty field's hint as its text (and again
		// as hint="…", which tells an empty field apart).
		text = e.Hint
	}
	fmt.Fprintf(w.b, `<node index="%d" text="%s" resource-id="%s" class="%s" package="%s" content-desc="%s" checkable="%t" checked="%t" clickable="%t" enabled="%t" focusable="%t" focused="%t" scrollable="%t" long-clickable="%t" password="%t" selected="%t" bounds="[%d,%d][%d,%d]"`,
		index, esc(text), esc(e.ResourceID), esc(e.Class), esc(pkg), esc(e.ContentDescription),
		e.Checkable, e.Checked, e.Clickable, e.Enabled, e.Focusable, e.Focused, e.Scrollable,
		e.LongClickable, e.Password, e.Selected,
		e.Bounds.Left, e.Bounds.Top, e.Bounds.Right, e.Bounds.Bottom)
	if e.Hint != "" {
		fmt.Fprintf(w.b, ` hint="%s"`, esc(e.Hint))
	}
	var kids []int
	for _, c := range w.children[e.ID] {
		if w.s.Elements[c].Visible {
			kids = append(kids, c)
		}
	}
	if len(kids) == 0 {
		w.b.WriteString(" />")
		return
	}
	w.b.WriteString(">")
	for n, c := range kids {
		w.walk(c, n, pkg)
	}
	w.b.WriteString("</node>")
}

// windowPackage guesses a window's package from the first resource id of
// the form "pkg:id/name" in it, else the app in front.
func windowPackage(s *sdk.Screen, root int, children map[int][]int) string {
	queue := []int{root}
	for len(queue) > 0 {
		e := s.Elements[queue[0]]
		queue = queue[1:]
		if pkg, _, ok := strings.Cut(e.ResourceID, ":id/"); ok && pkg != "" {
			return pkg
		}
		queue = append(queue, children[e.ID]...)
	}
	return s.App.ID
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;")

// esc escapes an attribute value and drops characters XML cannot carry.
func esc(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0xfffe || r == 0xffff {
			return -1
		}
		return r
	}, s)
	return xmlEscaper.Replace(s)
}
