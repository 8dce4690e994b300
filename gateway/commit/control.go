package commit

import (
	"fmt"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Control is a string as an app would show it, for classifying strings
// without a phone: `pinky policy classify` and the real-app corpus's
// measurement build a screen from it and ask Detect about a tap on it.
type Control struct {
	Text string // what the control says
	// Role is how the app shows it: button (the default), menu_item,
	// toggle, link, field_hint or text.
	Role string
	// App is the app's id, Category its category (one of the policy's app
	// table or of the corpus; see IsCategory). Either may be empty.
	App, Category string
	// Screen are other texts on the screen (a title, a message); in a
	// dialog around the control when Dialog is set.
	Screen []string
	Dialog bool
}

// View builds the screen c would be on and the tap on it: a button, a
// menu entry, a switch, a link, a field with the text as its hint, or text
// that cannot be touched (a title or a message), after the other texts
// and, with Dialog, inside a dialog with them.
func (c Control) View() (*screen.View, Action, error) {
	r := roleButton
	if c.Role != "" {
		var ok bool
		if r, ok = parseRole(c.Role); !ok {
			return nil, Action{}, fmt.Errorf("role %q: want one of %s", c.Role, strings.Join(roleNames[:], ", "))
		}
	}
	if c.Category != "" && !IsCategory(c.Category) {
		return nil, Action{}, fmt.Errorf("category %q is not an app category", c.Category)
	}
	v := &screen.View{App: sdk.App{ID: c.App}, ScreenOn: true, Width: 1080, Height: 2400}
	ref, depth, parent := 1, 0, 0
	if c.Dialog {
		v.Nodes = append(v.Nodes, screen.Node{Ref: ref, Role: screen.RoleDialog, Enabled: true})
		parent, depth = ref, 1
		ref++
	}
	for _, s := range c.Screen {
		if s != "" {
			v.Nodes = append(v.Nodes, screen.Node{Ref: ref, Role: screen.RoleText, Label: s, Depth: depth, Parent: parent, Enabled: true})
			ref++
		}
	}
	n := screen.Node{Ref: ref, Depth: depth, Parent: parent, Enabled: true, Clickable: true, Label: c.Text,
		Element: sdk.Element{Text: c.Text, Clickable: true, Enabled: true, Visible: true}}
	switch r {
	case roleButton:
		n.Role = screen.RoleButton
	case roleMenuItem:
		n.Role = screen.RoleItem
	case roleToggle:
		n.Role, n.Checkable, n.Element.Checkable = screen.RoleSwitch, true, true
	case roleLink:
		n.Role = screen.RoleLink
	case roleFieldHint:
		n.Role, n.Editable, n.Label, n.Hint = screen.RoleField, true, "", c.Text
		n.Element.Text, n.Element.Hint, n.Element.Editable = "", c.Text, true
	case roleText:
		n.Role, n.Clickable, n.Element.Clickable = screen.RoleText, false, false
	}
	v.Nodes = append(v.Nodes, n)
	return v, Action{Kind: "tap", Target: &v.Nodes[len(v.Nodes)-1], AppCategory: c.Category}, nil
}
