package dump

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

type uiHierarchy struct {
	Rotation string   `xml:"rotation,attr"`
	Nodes    []uiNode `xml:"node"`
}

type uiNode struct {
	Attrs []xml.Attr `xml:",any,attr"`
	Nodes []uiNode   `xml:"node"`
}

func (n *uiNode) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n *uiNode) flag(name string) bool { return n.attr(name) == "true" }

// ParseUIAutomator parses the XML that `uiautomator dump` writes. Every
// top-level window under <hierarchy> becomes a root; the screen size is the
// union of the windows' bounds, and the foreground app is the package of the
// largest window that is not the system UI or a keyboard.
func ParseUIAutomator(r io.Reader) (*sdk.Screen, error) {
	var h uiHierarchy
	if err := xml.NewDecoder(r).Decode(&h); err != nil {
		return nil, fmt.Errorf("uiautomator dump: %w", err)
	}
	if len(h.Nodes) == 0 {
		return nil, fmt.Errorf("uiautomator dump: no <node> under <hierarchy>")
	}
	s := &sdk.Screen{LockState: sdk.LockUnknown, ScreenOn: true, Orientation: rotation(h.Rotation)}
	var area int
	for i := range h.Nodes {
		n := &h.Nodes[i]
		b, err := parseBounds(n.attr("bounds"))
		if err != nil {
			return nil, err
		}
		s.Width, s.Height = max(s.Width, b.Right), max(s.Height, b.Bottom)
		pkg := n.attr("package")
		switch {
		case isKeyboard(pkg):
			s.KeyboardShown = true
		case pkg != "com.android.systemui" && b.Width()*b.Height() >= area:
			area = b.Width() * b.Height()
			s.App = sdk.App{ID: pkg}
		}
	}
	if s.Width <= 0 || s.Height <= 0 {
		return nil, fmt.Errorf("uiautomator dump: windows have no area")
	}
	bd := &builder{screen: sdk.Rect{Right: s.Width, Bottom: s.Height}}
	for i := range h.Nodes {
		if err := bd.uiWalk(0, &h.Nodes[i]); err != nil {
			return nil, err
		}
	}
	s.Elements = bd.elems
	return s, nil
}

func (b *builder) uiWalk(parent int, n *uiNode) error {
	bounds, err := parseBounds(n.attr("bounds"))
	if err != nil {
		return err
	}
	visible := !bounds.Empty()
	if v := n.attr("visible-to-user"); v != "" {
		visible = v == "true"
	}
	class := n.attr("class")
	text, hint := n.attr("text"), n.attr("hint")
	if hint != "" && text == hint && strings.Contains(class, "EditText") {
		// An empty field's text is its hint in a real dump (the
		// accessibility text of an empty TextView); hint="…" next to it is
		// how the dump tells the two apart. The field is empty.
		text = ""
	}
	id := b.add(parent, sdk.Element{
		Class:              class,
		Text:               text,
		ContentDescription: n.attr("content-desc"),
		ResourceID:         n.attr("resource-id"),
		Hint:               hint,
		Bounds:             bounds,
		Clickable:          n.flag("clickable"),
		LongClickable:      n.flag("long-clickable"),
		Focusable:          n.flag("focusable"),
		Focused:            n.flag("focused"),
		Editable:           strings.Contains(class, "EditText"),
		Password:           n.flag("password"),
		Scrollable:         n.flag("scrollable"),
		Checkable:          n.flag("checkable"),
		Checked:            n.flag("checked"),
		Enabled:            n.flag("enabled"),
		Selected:           n.flag("selected"),
		Visible:            visible,
	})
	for i := range n.Nodes {
		if err := b.uiWalk(id, &n.Nodes[i]); err != nil {
			return err
		}
	}
	return nil
}

// parseBounds reads "[left,top][right,bottom]".
func parseBounds(s string) (sdk.Rect, error) {
	var r sdk.Rect
	if _, err := fmt.Sscanf(s, "[%d,%d][%d,%d]", &r.Left, &r.Top, &r.Right, &r.Bottom); err != nil {
		return r, fmt.Errorf("uiautomator dump: bounds %q: %w", s, err)
	}
	return r, nil
}

func rotation(s string) sdk.Orientation {
	switch s {
	case "1":
		return sdk.OrientationLandscape
	case "2":
		return sdk.OrientationPortraitUpsideDown
	case "3":
		return sdk.OrientationLandscapeRight
	}
	return sdk.OrientationPortrait
}

func isKeyboard(pkg string) bool {
	return strings.Contains(pkg, "inputmethod") || strings.Contains(pkg, "keyboard")
}
