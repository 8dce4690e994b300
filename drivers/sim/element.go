package sim

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// classes maps roles to each platform's class names.
var classes = map[string][2]string{
	"":         {"android.widget.FrameLayout", "XCUIElementTypeOther"},
	"group":    {"android.widget.FrameLayout", "XCUIElementTypeOther"},
	"text":     {"android.widget.TextView", "XCUIElementTypeStaticText"},
	"button":   {"android.widget.Button", "XCUIElementTypeButton"},
	"field":    {"android.widget.EditText", "XCUIElementTypeTextField"},
	"password": {"android.widget.EditText", "XCUIElementTypeSecureTextField"},
	"image":    {"android.widget.ImageView", "XCUIElementTypeImage"},
	"list":     {"androidx.recyclerview.widget.RecyclerView", "XCUIElementTypeTable"},
	"item":     {"android.widget.LinearLayout", "XCUIElementTypeCell"},
	"switch":   {"android.widget.Switch", "XCUIElementTypeSwitch"},
	"web":      {"android.webkit.WebView", "XCUIElementTypeWebView"},
	"dialog":   {"android.widget.FrameLayout", "XCUIElementTypeAlert"},
	"icon":     {"android.widget.TextView", "XCUIElementTypeIcon"},
	"key":      {"android.widget.FrameLayout", "XCUIElementTypeKey"},
	"keyboard": {"android.widget.FrameLayout", "XCUIElementTypeKeyboard"},
	"progress": {"android.widget.ProgressBar", "XCUIElementTypeActivityIndicator"},
}

// class is the platform class for role, unless the world overrides it.
func (p *phone) class(role string, override PerPlatform) string {
	if c := override.For(p.spec.Platform); c != "" {
		return c
	}
	if p.spec.Platform == sdk.PlatformIOS {
		return classes[role][1]
	}
	return classes[role][0]
}

// element makes the node for one instance: its element, looks and handlers.
func (ds *display) element(e *entry, in instance) *node {
	s := in.spec
	el := sdk.Element{
		Class:              ds.class(s.Role, s.Class),
		Text:               ds.expand(s.Text, in.locals),
		ContentDescription: ds.expand(s.ContentDescription, in.locals),
		ResourceID:         ds.resourceID(s, e.app),
		Hint:               ds.expand(s.Hint, in.locals),
		Value:              ds.expand(s.Value, in.locals),
		Enabled:            true,
		Visible:            true,
	}
	n := &node{el: el, fill: transparent, ink: black}
	switch s.Role {
	case "button", "item", "switch":
		n.el.Clickable, n.el.Focusable = true, true
		n.fill = paleBlue
		if s.Role == "item" {
			n.fill = white
		}
	case "field", "password":
		n.el.Clickable, n.el.Focusable, n.el.Editable, n.el.LongClickable = true, true, true, true
		n.el.Password = s.Role == "password"
		n.fill = fieldFill
	case "list", "web":
		n.el.Scrollable = s.Role == "list"
	case "image":
		n.fill = grey
	}
	ds.applyFlags(&n.el, s.Flags)
	if c, _ := parseColor(s.Color); s.Color != "" {
		n.fill = c
	}
	if s.Role == "button" && s.Color != "" {
		n.ink = white
	}
	if n.el.Editable {
		ds.field(n, s)
	}
	if s.Role == "switch" && s.Name != "" {
		n.el.Checkable, n.el.Checked = true, ds.vars[s.Name] == "1"
		n.el.Value = "0"
		if n.el.Checked {
			n.el.Value = "1"
		}
	}
	if len(s.OnTap) > 0 || s.Role == "switch" {
		n.tap = func() (string, error) {
			if s.Role == "switch" && s.Name != "" {
				ds.vars[s.Name] = map[bool]string{true: "0", false: "1"}[ds.vars[s.Name] == "1"]
			}
			return ds.run(e.app, s.OnTap, in.locals)
		}
	}
	if len(s.OnLongPress) > 0 {
		n.long = func() (string, error) { return ds.run(e.app, s.OnLongPress, in.locals) }
	}
	if s.Zoom != "" {
		n.zoom = func(scale int) string { return ds.zoomBy(s.Zoom, scale) }
	}
	return n
}

// Limits of an element's zoom, in percent.
const (
	minZoom = 100
	maxZoom = 500
)

// zoomBy multiplies the zoom held in the variable name by scale thousandths,
// within minZoom and maxZoom, and says what it did.
func (ds *display) zoomBy(name string, scale int) string {
	cur, err := strconv.Atoi(ds.vars[name])
	if err != nil {
		cur = minZoom
	}
	next := min(max(cur*scale/1000, minZoom), maxZoom)
	ds.vars[name] = strconv.Itoa(next)
	if next == cur {
		return fmt.Sprintf("already at %d%%", cur)
	}
	return fmt.Sprintf("zoomed to %d%%", next)
}

// field binds a text field to its variable: its text, focus, tap and paste.
func (ds *display) field(n *node, s *ElementSpec) {
	v := ds.vars[s.Name]
	n.el.Text = v
	if n.el.Password {
		n.el.Text = strings.Repeat("•", utf8.RuneCountInString(v))
	}
	n.el.Focused = ds.focus == s.Name
	if n.el.Focused {
		n.fill = focusFill
	}
	n.tap = func() (string, error) {
		ds.focus = s.Name
		return "focused " + s.Name, nil
	}
	n.long = func() (string, error) {
		ds.focus = s.Name
		ds.vars[s.Name] += ds.clipboard
		return "pasted", nil
	}
}

func (p *phone) applyFlags(el *sdk.Element, flags []string) {
	for _, f := range flags {
		switch f {
		case "clickable":
			el.Clickable = true
		case "long_clickable":
			el.LongClickable = true
		case "focusable":
			el.Focusable = true
		case "focused":
			el.Focused = true
		case "editable":
			el.Editable = true
		case "password":
			el.Password = true
		case "scrollable":
			el.Scrollable = true
		case "checkable":
			el.Checkable = true
		case "checked":
			el.Checked = true
		case "selected":
			el.Selected = true
		case "disabled":
			el.Enabled = false
		case "invisible":
			el.Visible = false
		}
	}
}

// Colours used by the built-in looks.
var (
	transparent = color.RGBA{}
	white       = color.RGBA{255, 255, 255, 255}
	black       = color.RGBA{20, 20, 20, 255}
	grey        = color.RGBA{200, 200, 205, 255}
	paleBlue    = color.RGBA{225, 235, 250, 255}
	fieldFill   = color.RGBA{242, 242, 246, 255}
	focusFill   = color.RGBA{230, 240, 255, 255}
	dialogFill  = color.RGBA{250, 250, 252, 255}
	darkFill    = color.RGBA{32, 33, 36, 255}
	keyFill     = color.RGBA{210, 213, 219, 255}
)

// parseColor reads "#rrggbb"; "" is transparent.
func parseColor(s string) (color.RGBA, error) {
	c := color.RGBA{A: 255}
	if s == "" {
		return transparent, nil
	}
	if _, err := fmt.Sscanf(s, "#%02x%02x%02x", &c.R, &c.G, &c.B); err != nil || len(s) != 7 {
		return c, fmt.Errorf("%q: want #rrggbb", s)
	}
	return c, nil
}

// More colours of the system parts.
var (
	launcherFill = color.RGBA{52, 73, 94, 255}
	keyboardFill = color.RGBA{230, 232, 236, 255}
	shadeFill    = color.RGBA{236, 239, 244, 255}
	accent       = color.RGBA{26, 115, 232, 255}
)
