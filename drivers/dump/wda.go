package dump

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// wdaNode is one element of a WebDriverAgent page source, from XML or JSON.
type wdaNode struct {
	Type, Name, Label, Value, Placeholder string
	X, Y, W, H                            float64
	Enabled, Visible, Focused, Selected   bool
	Children                              []*wdaNode
}

// ParseWDA parses a WebDriverAgent page source: the XML of /source (with or
// without Appium's <AppiumAUT> wrapper) or its JSON, both the current shape
// (rect{x,y,width,height}) and the legacy one (value.tree, rect{origin,size},
// "1"/"0" booleans). Coordinates stay in points.
func ParseWDA(data []byte) (*sdk.Screen, error) {
	trimmed := bytes.TrimSpace(data)
	var root *wdaNode
	var err error
	switch {
	case len(trimmed) > 0 && trimmed[0] == '{':
		root, err = parseWDAJSON(trimmed)
	case len(trimmed) > 0 && trimmed[0] == '<':
		root, err = parseWDAXML(trimmed)
	default:
		err = fmt.Errorf("neither XML nor JSON")
	}
	if err != nil {
		return nil, fmt.Errorf("wda source: %w", err)
	}
	s := &sdk.Screen{
		App:         sdk.App{Label: root.Label},
		LockState:   sdk.LockUnknown,
		ScreenOn:    true,
		Width:       int(math.Round(root.W)),
		Height:      int(math.Round(root.H)),
		Orientation: sdk.OrientationPortrait,
	}
	if s.Width <= 0 || s.Height <= 0 {
		return nil, fmt.Errorf("wda source: root %s has no area", root.Type)
	}
	if s.Width > s.Height {
		s.Orientation = sdk.OrientationLandscape
	}
	b := &builder{screen: sdk.Rect{Right: s.Width, Bottom: s.Height}}
	b.wdaWalk(0, root, s)
	s.Elements = b.elems
	return s, nil
}

func (b *builder) wdaWalk(parent int, n *wdaNode, s *sdk.Screen) {
	class := n.Type
	if !strings.HasPrefix(class, "XCUIElementType") && !strings.HasPrefix(class, "UIA") {
		class = "XCUIElementType" + class
	}
	kind := strings.TrimPrefix(strings.TrimPrefix(class, "XCUIElementType"), "UIA")
	e := sdk.Element{
		Class:              class,
		ContentDescription: n.Label,
		ResourceID:         n.Name,
		Hint:               n.Placeholder,
		Bounds: sdk.Rect{
			Left: int(math.Round(n.X)), Top: int(math.Round(n.Y)),
			Right: int(math.Round(n.X + n.W)), Bottom: int(math.Round(n.Y + n.H)),
		},
		Focused:  n.Focused,
		Enabled:  n.Enabled,
		Visible:  n.Visible,
		Selected: n.Selected,
	}
	switch kind {
	case "StaticText":
		e.Text = firstNonEmpty(n.Value, n.Label)
	case "TextField", "SecureTextField", "TextView", "SearchField":
		e.Text, e.Editable, e.Focusable, e.Clickable = n.Value, true, true, true
		e.Password = kind == "SecureTextField"
	case "Switch", "CheckBox", "Toggle":
		e.Value, e.Checkable, e.Checked, e.Clickable = n.Value, true, n.Value == "1", true
	case "Button", "Cell", "Link", "Key", "Icon", "Tab", "MenuItem", "SegmentedControl":
		e.Text, e.Value, e.Clickable = n.Label, n.Value, true
	case "Table", "CollectionView", "ScrollView", "WebView":
		e.Scrollable = true
	case "Keyboard":
		s.KeyboardShown = true
	default:
		e.Value = n.Value
	}
	id := b.add(parent, e)
	for _, c := range n.Children {
		b.wdaWalk(id, c, s)
	}
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// xmlNode is an element of the XML page source; the tag is the type.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
}

func parseWDAXML(data []byte) (*wdaNode, error) {
	var x xmlNode
	if err := xml.Unmarshal(data, &x); err != nil {
		return nil, err
	}
	if x.XMLName.Local == "AppiumAUT" {
		if len(x.Children) != 1 {
			return nil, fmt.Errorf("<AppiumAUT> holds %d elements; want 1", len(x.Children))
		}
		x = x.Children[0]
	}
	return x.node()
}

func (x *xmlNode) node() (*wdaNode, error) {
	attr := map[string]string{}
	for _, a := range x.Attrs {
		attr[a.Name.Local] = a.Value
	}
	n := &wdaNode{
		Type: firstNonEmpty(attr["type"], x.XMLName.Local), Name: attr["name"], Label: attr["label"],
		Value: attr["value"], Placeholder: attr["placeholderValue"],
		Enabled: attr["enabled"] == "true", Visible: attr["visible"] != "false",
		Focused: attr["focused"] == "true", Selected: attr["selected"] == "true",
	}
	for _, f := range []struct {
		key string
		dst *float64
	}{{"x", &n.X}, {"y", &n.Y}, {"width", &n.W}, {"height", &n.H}} {
		v, err := strconv.ParseFloat(attr[f.key], 64)
		if err != nil {
			return nil, fmt.Errorf("<%s> %s=%q: not a number", x.XMLName.Local, f.key, attr[f.key])
		}
		*f.dst = v
	}
	for i := range x.Children {
		c, err := x.Children[i].node()
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// jsonNode is an element of the JSON page source, either shape.
type jsonNode struct {
	Type             string          `json:"type"`
	Name             jsonText        `json:"name"`
	Label            jsonText        `json:"label"`
	Value            jsonText        `json:"value"`
	PlaceholderValue jsonText        `json:"placeholderValue"`
	Rect             json.RawMessage `json:"rect"`
	IsEnabled        jsonBool        `json:"isEnabled"`
	IsVisible        *jsonBool       `json:"isVisible"`
	IsFocused        jsonBool        `json:"isFocused"`
	HasKeyboardFocus jsonBool        `json:"hasKeyboardFocus"`
	IsSelected       jsonBool        `json:"isSelected"`
	Children         []jsonNode      `json:"children"`
	Tree             *jsonNode       `json:"tree"`
}

func parseWDAJSON(data []byte) (*wdaNode, error) {
	var env struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, err
	}
	body := data
	if len(env.Value) > 0 && env.Value[0] == '{' {
		body = env.Value
	}
	var n jsonNode
	if err := json.Unmarshal(body, &n); err != nil {
		return nil, err
	}
	if n.Tree != nil {
		n = *n.Tree
	}
	if n.Type == "" {
		return nil, fmt.Errorf("JSON has no element tree")
	}
	return n.node()
}

func (j *jsonNode) node() (*wdaNode, error) {
	n := &wdaNode{
		Type: j.Type, Name: string(j.Name), Label: string(j.Label), Value: string(j.Value),
		Placeholder: string(j.PlaceholderValue),
		Enabled:     bool(j.IsEnabled), Visible: j.IsVisible == nil || bool(*j.IsVisible),
		Focused: bool(j.IsFocused || j.HasKeyboardFocus), Selected: bool(j.IsSelected),
	}
	var r struct {
		X, Y, Width, Height float64
		Origin              *struct{ X, Y float64 }
		Size                *struct{ Width, Height float64 }
	}
	if err := json.Unmarshal(j.Rect, &r); err != nil {
		return nil, fmt.Errorf("%s rect: %w", j.Type, err)
	}
	n.X, n.Y, n.W, n.H = r.X, r.Y, r.Width, r.Height
	if r.Origin != nil && r.Size != nil {
		n.X, n.Y, n.W, n.H = r.Origin.X, r.Origin.Y, r.Size.Width, r.Size.Height
	}
	for i := range j.Children {
		c, err := j.Children[i].node()
		if err != nil {
			return nil, err
		}
		n.Children = append(n.Children, c)
	}
	return n, nil
}

// jsonText accepts a string, a number or null.
type jsonText string

func (t *jsonText) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*t = jsonText(s)
		return nil
	}
	if string(b) == "null" {
		*t = ""
		return nil
	}
	*t = jsonText(b)
	return nil
}

// jsonBool accepts true/false, "1"/"0", "true"/"false" and 1/0.
type jsonBool bool

func (v *jsonBool) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	switch s {
	case "true", "1":
		*v = true
	case "false", "0", "null", "":
		*v = false
	default:
		return fmt.Errorf("boolean %s", b)
	}
	return nil
}
