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

// uiAutomatorXML writes s as UI Automator XML, one top-level <node> per
// window. Invisible elements are left out, as uiautomator does.
func uiAutomatorXML(s *sdk.Screen) ([]byte, error) {
	children := map[int][]int{}
	var roots []int
	for i, e := range s.Elements {
		if e.ParentID == 0 {
			roots = append(roots, i)
		} else {
			children[e.ParentID] = append(children[e.ParentID], i)
		}
	}
	if !s.ScreenOn || len(roots) == 0 {
		return nil, errNoRoot
	}
	rot := map[sdk.Orientation]int{sdk.OrientationLandscape: 1, sdk.OrientationPortraitUpsideDown: 2, sdk.OrientationLandscapeRight: 3}[s.Orientation]
	var b bytes.Buffer
	fmt.Fprintf(&b, "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"%d\">", rot)
	nw := &nodeWriter{b: &b, s: s, children: children}
	n := 0
	for _, r := range roots {
		if !s.Elements[r].Visible {
			continue
		}
		nw.walk(r, n, windowPackage(s, r, children))
		n++
	}
	b.WriteString("</hierarchy>")
	return b.Bytes(), nil
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
