package wdad

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

const typePrefix = "XCUIElementType"

// node is one element of WebDriverAgent's page source, in points.
type node struct {
	typ         string // the full type, e.g. XCUIElementTypeButton
	identifier  string // accessibilityIdentifier
	label       string
	value       string // XCTest's raw value; wdValue derives WebDriverAgent's
	placeholder string
	selected    bool
	x, y, w, h  float64
	enabled     bool
	visible     bool
	focused     bool
	children    []*node
	// Only on the application element.
	bundleID string
	pid      int
}

// kind is the type without its XCUIElementType prefix, as JSON shows it.
func (n *node) kind() string { return strings.TrimPrefix(n.typ, typePrefix) }

func (n *node) textInput() bool {
	switch n.kind() {
	case "TextField", "SecureTextField", "TextView", "SearchField":
		return true
	}
	return false
}

// wdName is the identifier, else the label (XCUIElement+FBWebDriverAttributes).
func (n *node) wdName() (string, bool) {
	if n.identifier != "" {
		return n.identifier, true
	}
	return n.label, n.label != ""
}

// wdLabel is the label; text fields keep an empty one.
func (n *node) wdLabel() (string, bool) {
	if n.kind() == "TextField" || n.kind() == "SecureTextField" {
		return n.label, true
	}
	return n.label, n.label != ""
}

// wdValue is WebDriverAgent's value: static text falls back to its label,
// a selected button is "1", a switch "1" or "0", and an empty text field
// shows its placeholder.
func (n *node) wdValue() (string, bool) {
	v := n.value
	switch k := n.kind(); {
	case k == "StaticText":
		v = firstNonEmpty(v, n.label)
	case k == "Button" && v == "" && n.selected:
		v = "1"
	case k == "Switch":
		if v != "1" {
			v = "0"
		}
	case n.textInput():
		v = firstNonEmpty(v, n.placeholder)
	}
	return v, v != ""
}

// accessible is whether XCTest reports the element as an accessibility
// element: controls and texts are, containers are not.
func (n *node) accessible() bool {
	switch n.kind() {
	case "StaticText", "Button", "TextField", "SecureTextField", "SearchField", "TextView", "Switch",
		"Key", "Icon", "Link", "ActivityIndicator", "ProgressIndicator", "Slider":
		return true
	case "Image":
		return n.label != ""
	}
	return false
}

// frameIntegral is wdFrame: XCTest's frame through CGRectIntegral, the
// smallest rectangle of whole points that holds it. rect, frame and the XML's
// x, y, width and height show it; only nativeFrame keeps the fractions.
func (n *node) frameIntegral() (x, y, w, h float64) {
	x, y = math.Floor(n.x), math.Floor(n.y)
	return x, y, math.Ceil(n.x+n.w) - x, math.Ceil(n.y+n.h) - y
}

// wdAccessible is isWDAccessible: an accessibility element (a text field
// counts even when its inner element is the one) with no accessibility
// element above it, tables aside.
func (n *node) wdAccessible(underAccessible bool) bool {
	return (n.accessible() || n.kind() == "TextField" || n.kind() == "SecureTextField") && !underAccessible
}

// traits is the element's accessibility traits, as WebDriverAgent names them.
func (n *node) traits() string {
	switch n.kind() {
	case "Button", "Switch", "Icon", "Cell":
		return "Button"
	case "Key":
		return "Button, KeyboardKey"
	case "StaticText":
		return "StaticText"
	case "Image":
		return "Image"
	case "Link":
		return "Link"
	case "SearchField":
		return "SearchField"
	case "ActivityIndicator":
		return "UpdatesFrequently"
	}
	return ""
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// tree builds the page source of scr: the application element, a window per
// top-level element of the sim's screen, and the elements in points. A
// captured screen's own application element is kept as the root.
func (s *Server) tree(scr *sdk.Screen) *node {
	bundle := frontApp(scr)
	label := scr.App.Label
	if bundle == springboard {
		label = "Home Screen"
	}
	root := &node{
		typ: typePrefix + "Application", label: label, w: s.points(s.width()), h: s.points(s.height()),
		enabled: true, visible: true, bundleID: bundle, pid: pid(bundle),
	}
	kids := map[int][]int{}
	var tops []int
	for i, e := range scr.Elements {
		if e.ParentID == 0 {
			tops = append(tops, i)
		} else {
			kids[e.ParentID] = append(kids[e.ParentID], i)
		}
	}
	// On the lock screen the passcode pad follows iOS: keys carry no
	// identifiers (a driver finds "1" by name), and the pad's OK key is
	// Cancel, which clears the digits typed (see passcodeTap).
	lock := map[int]bool{}
	if scr.LockState == sdk.LockLocked {
		var mark func(i int)
		mark = func(i int) {
			lock[i] = true
			for _, c := range kids[scr.Elements[i].ID] {
				mark(c)
			}
		}
		for _, t := range tops {
			if scr.Elements[t].Class != typePrefix+"StatusBar" {
				mark(t)
			}
		}
	}
	var build func(i int) *node
	build = func(i int) *node {
		n := s.element(scr.Elements[i])
		if n.typ == typePrefix+"Key" && keyNames[n.label] != "" {
			n.label = keyNames[n.label]
		}
		if lock[i] {
			n.identifier = ""
			if e := scr.Elements[i]; e.Clickable && e.ContentDescription == "OK" {
				n.label = "Cancel"
			}
		}
		for _, c := range kids[scr.Elements[i].ID] {
			n.children = append(n.children, build(c))
		}
		return n
	}
	for _, t := range tops {
		n := build(t)
		if n.typ == typePrefix+"Application" {
			n.bundleID, n.pid = root.bundleID, root.pid
			if n.label == "" {
				n.label = root.label
			}
			root = n
			continue
		}
		win := &node{typ: typePrefix + "Window", w: root.w, h: root.h, enabled: true, visible: true, children: []*node{n}}
		root.children = append(root.children, win)
	}
	return root
}

// keyNames are the names an iPhone's keyboard gives the sim's keys.
var keyNames = map[string]string{"⌫": "delete", "enter": "return"}

// element turns one sim element into a source node.
func (s *Server) element(e sdk.Element) *node {
	typ := e.Class
	if !strings.HasPrefix(typ, typePrefix) && !strings.HasPrefix(typ, "UIA") {
		typ = typePrefix + "Other"
	}
	n := &node{
		typ: typ, identifier: e.ResourceID, value: e.Value, selected: e.Selected,
		x: s.points(e.Bounds.Left), y: s.points(e.Bounds.Top), w: s.points(e.Bounds.Width()), h: s.points(e.Bounds.Height()),
		enabled: e.Enabled, visible: e.Visible, focused: e.Focused,
	}
	switch k := n.kind(); {
	case k == "StaticText":
		n.label = firstNonEmpty(e.Text, e.ContentDescription)
	case n.textInput():
		n.label, n.value, n.placeholder = e.ContentDescription, e.Text, e.Hint
	case k == "Switch":
		n.label = firstNonEmpty(e.Text, e.ContentDescription)
		if n.value == "" && e.Checkable {
			n.value = map[bool]string{true: "1", false: "0"}[e.Checked]
		}
	default:
		n.label = firstNonEmpty(e.ContentDescription, e.Text)
	}
	return n
}

// cut drops what lies deeper than maxDepth below n, as XCTest's snapshot
// does with WebDriverAgent's snapshotMaxDepth: the application is at depth
// 0 and an element at depth maxDepth comes without its children, with
// nothing in the source to say any were there. A maxDepth of 0 or less
// cuts nothing. cut returns how many elements are left.
func (n *node) cut(maxDepth int) int {
	var walk func(n *node, depth int) int
	walk = func(n *node, depth int) int {
		if maxDepth > 0 && depth >= maxDepth {
			n.children = nil
		}
		count := 1
		for _, c := range n.children {
			count += walk(c, depth+1)
		}
		return count
	}
	return walk(n, 0)
}

// excluded is the set of attribute names excluded_attributes asks to drop.
type excluded map[string]bool

func parseExcluded(q string) excluded {
	ex := excluded{}
	for _, a := range strings.Split(q, ",") {
		if a = strings.TrimSpace(a); a != "" {
			ex[strings.ToLower(a)] = true
		}
	}
	return ex
}

func (ex excluded) has(name string) bool { return ex[strings.ToLower(name)] }

// json is the node as /source?format=json shows it
// (XCUIApplication+FBHelpers dictionaryForElement).
func (n *node) json(ex excluded) map[string]any { return n.jsonUnder(ex, false) }

// jsonUnder is json for a node under an accessibility element or not.
func (n *node) jsonUnder(ex excluded, underAccessible bool) map[string]any {
	opt := func(v string, ok bool) any {
		if !ok {
			return nil
		}
		return v
	}
	x, y, w, h := n.frameIntegral()
	m := map[string]any{
		"type":                         n.kind(),
		"rawIdentifier":                opt(n.identifier, n.identifier != ""),
		"name":                         opt(n.wdName()),
		"value":                        opt(n.wdValue()),
		"label":                        opt(n.wdLabel()),
		"rect":                         map[string]any{"x": x, "y": y, "width": w, "height": h},
		"customActions":                nil, // the sim's elements have none
		"frame":                        cgRect(x, y, w, h),
		"nativeFrame":                  cgRect(n.x, n.y, n.w, n.h),
		"isEnabled":                    flag(n.enabled),
		"isVisible":                    flag(n.visible),
		"isAccessible":                 flag(n.wdAccessible(underAccessible)),
		"isNativeAccessibilityElement": flag(n.accessible()),
		"isFocused":                    flag(n.focused),
		"traits":                       n.traits(),
	}
	if n.textInput() {
		m["placeholderValue"] = opt(n.placeholder, n.placeholder != "")
	}
	for k := range m {
		if k == "isNativeAccessibilityElement" && ex.has("nativeAccessibilityElement") {
			delete(m, k)
		} else if k != "type" && k != "rect" && k != "customActions" && (ex.has(k) || (strings.HasPrefix(k, "is") && ex.has(k[2:]))) {
			delete(m, k) // rect and customActions are always there, as in dictionaryForElement
		}
	}
	if len(n.children) > 0 {
		kids := make([]any, len(n.children))
		under := underAccessible || (n.accessible() && n.kind() != "Table")
		for i, c := range n.children {
			kids[i] = c.jsonUnder(ex, under)
		}
		m["children"] = kids
	}
	return m
}

// flag is how the JSON source writes booleans: the strings "1" and "0".
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// cgRect is NSStringFromCGRect: "{{x, y}, {width, height}}".
func cgRect(x, y, w, h float64) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "{{" + f(x) + ", " + f(y) + "}, {" + f(w) + ", " + f(h) + "}}"
}

// xml writes the source as FBXPath does (libxml2's formatted dump), inside
// a scope element when one is given.
func (n *node) xml(ex excluded, scope string) string {
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	depth := 0
	if scope != "" {
		b.WriteString("<" + xmlName(scope) + ">\n")
		depth = 1
	}
	n.writeXML(&b, ex, depth, 0)
	if scope != "" {
		b.WriteString("</" + xmlName(scope) + ">\n")
	}
	return b.String()
}

func (n *node) writeXML(b *strings.Builder, ex excluded, depth, index int) {
	n.writeXMLUnder(b, ex, depth, index, false)
}

// writeXMLUnder writes the node's element; FBXPath's default attributes on
// iOS (focused is tvOS's only; nativeFrame, nativeAccessibilityElement,
// hittable and customActions only when a setting asks for them).
func (n *node) writeXMLUnder(b *strings.Builder, ex excluded, depth, index int, underAccessible bool) {
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 16, 64) }
	tf := func(v bool) string { return strconv.FormatBool(v) }
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteString("<" + n.typ)
	attr := func(name, v string, ok bool) {
		if ok && !ex.has(name) {
			b.WriteString(" " + name + "=\"" + escape(v) + "\"")
		}
	}
	attr("type", n.typ, true)
	v, ok := n.wdValue()
	attr("value", v, ok)
	v, ok = n.wdName()
	attr("name", v, ok)
	v, ok = n.wdLabel()
	attr("label", v, ok)
	attr("enabled", tf(n.enabled), true)
	attr("visible", tf(n.visible), true)
	attr("accessible", tf(n.wdAccessible(underAccessible)), true)
	x, y, w, h := n.frameIntegral()
	attr("x", num(x), true)
	attr("y", num(y), true)
	attr("width", num(w), true)
	attr("height", num(h), true)
	attr("index", strconv.Itoa(index), true)
	attr("placeholderValue", n.placeholder, n.textInput() && n.placeholder != "")
	attr("traits", n.traits(), true)
	attr("bundleId", n.bundleID, n.bundleID != "")
	attr("processId", strconv.Itoa(n.pid), n.bundleID != "")
	if len(n.children) == 0 {
		b.WriteString("/>\n")
		return
	}
	b.WriteString(">\n")
	under := underAccessible || (n.accessible() && n.kind() != "Table")
	for i, c := range n.children {
		c.writeXMLUnder(b, ex, depth+1, i, under)
	}
	b.WriteString(strings.Repeat("  ", depth) + "</" + n.typ + ">\n")
}

// description is a plain-text outline, like XCUIElement's debugDescription.
func (n *node) description() string {
	var b strings.Builder
	var walk func(n *node, depth int)
	walk = func(n *node, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		b.WriteString(n.kind())
		if n.bundleID != "" {
			fmt.Fprintf(&b, ", pid: %d", n.pid)
		}
		fmt.Fprintf(&b, ", {{%.1f, %.1f}, {%.1f, %.1f}}", n.x, n.y, n.w, n.h)
		if n.identifier != "" {
			fmt.Fprintf(&b, ", identifier: '%s'", n.identifier)
		}
		if n.label != "" {
			fmt.Fprintf(&b, ", label: '%s'", n.label)
		}
		if v, ok := n.wdValue(); ok && v != n.label {
			fmt.Fprintf(&b, ", value: %s", v)
		}
		b.WriteString("\n")
		for _, c := range n.children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "\n", "&#10;", "\r", "&#13;", "\t", "&#9;")

// escape escapes an attribute value and drops what XML cannot carry, as
// fb_xmlSafeStringWithReplacement does.
func escape(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0xfffe || r == 0xffff {
			return -1
		}
		return r
	}, s)
	return xmlEscaper.Replace(s)
}

// xmlName keeps what may stand in an element name.
func xmlName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return -1
	}, s)
}

// source answers GET /source?format=xml|json|description, with scope and
// excluded_attributes. A screen that is a captured WebDriverAgent source in
// the asked format is served byte for byte.
func (s *Server) source(r *request) (any, error) {
	if s.hang.Load() {
		<-r.ctx.Done()
		return nil, r.ctx.Err()
	}
	format := r.query.Get("format")
	if format == "" {
		format = "xml"
	}
	if format != "xml" && format != "json" && format != "description" {
		return nil, invalidArgument("Unknown source format '%s'. Only 'xml', 'json' and 'description' source formats are supported.", format)
	}
	scope, exq := r.query.Get("scope"), r.query.Get("excluded_attributes")
	if format == "xml" {
		// FBXPath waits for the app to be stable before it snapshots the
		// tree for XML, up to animationCoolOffTimeout; the JSON source
		// (fb_tree) snapshots at once.
		if err := s.waitStable(r.ctx, s.seconds("animationCoolOffTimeout")); err != nil {
			return nil, err
		}
	}
	if scope == "" && exq == "" && format != "description" {
		if raw := s.captured(r.ctx, format); raw != nil {
			if format == "xml" {
				return string(raw), nil
			}
			return s.rawSource(raw), nil
		}
	}
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	root := s.tree(scr)
	ex := parseExcluded(exq)
	n := root.cut(s.setting("snapshotMaxDepth"))
	if d := s.cfg.Timing.Visible; d > 0 && format != "description" && !ex.has("visible") {
		// The visible attribute is computed element by element; excluding
		// it saves that time (the attribute blocks of dictionaryForElement
		// are only run for attributes not excluded).
		if err := (timing.Range{Min: time.Duration(n) * d, Max: time.Duration(n) * d}).Wait(r.ctx); err != nil {
			return nil, err
		}
	}
	switch format {
	case "json":
		return root.json(ex), nil
	case "description":
		return root.description(), nil
	}
	return root.xml(ex, scope), nil
}

// rawSource is the response body for a captured JSON source: the file
// itself when it is a whole response ({"value": …}), else the file as the
// value of an envelope.
func (s *Server) rawSource(raw []byte) rawJSON {
	var top map[string]json.RawMessage
	if json.Unmarshal(raw, &top) == nil && top["value"] != nil {
		return rawJSON(raw)
	}
	sid := "null"
	if id := s.sessionID(); id != "" {
		sid = strconv.Quote(id)
	}
	var b bytes.Buffer
	b.WriteString("{\n  \"value\" : ")
	b.Write(bytes.TrimSpace(raw))
	b.WriteString(",\n  \"sessionId\" : " + sid + "\n}")
	return rawJSON(b.Bytes())
}

// captured returns the bytes of the captured WebDriverAgent source the
// phone shows, when it is in format and was captured at the phone's size in
// points (else its coordinates would not match the screen).
func (s *Server) captured(ctx context.Context, format string) []byte {
	c, ok, err := s.d.CapturedScreen(ctx, s.id)
	if err != nil || !ok || c.Width*s.cfg.Scale != s.width() || c.Height*s.cfg.Scale != s.height() {
		return nil
	}
	path := filepath.Join(s.cfg.WorldDir, c.File)
	s.mu.Lock()
	data, seen := s.sources[path]
	s.mu.Unlock()
	if !seen {
		data = s.readSource(path, c.Width, c.Height)
		s.mu.Lock()
		s.sources[path] = data
		s.mu.Unlock()
	}
	t := bytes.TrimSpace(data)
	switch {
	case len(t) == 0:
		return nil
	case format == "xml" && t[0] == '<', format == "json" && t[0] == '{':
		return data
	}
	return nil
}

// readSource reads a captured source and checks that it is the one the sim
// shows; nil when it cannot be read or differs.
func (s *Server) readSource(path string, w, h int) []byte {
	data, err := os.ReadFile(path)
	if err != nil {
		s.log.Debug("wdad: captured source unreadable; building the source", "path", path, "err", err)
		return nil
	}
	scr, err := dump.ParseWDA(data)
	if err != nil || scr.Width != w || scr.Height != h {
		s.log.Debug("wdad: captured source differs from the world's; building the source", "path", path, "err", err)
		return nil
	}
	return data
}
