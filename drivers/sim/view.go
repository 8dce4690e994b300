package sim

import (
	"image/color"
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// view is what the phone shows now: layers of nodes, bottom first.
type view struct {
	app      sdk.App
	keyboard bool
	layers   []*layer
}

// layer is a window: the app, a dialog, the keyboard, the shade.
type layer struct {
	area  sdk.Rect
	modal bool // taps outside the area go nowhere
	nodes []*node
}

// node is an element with how it looks and what acting on it does.
type node struct {
	el     sdk.Element
	parent int // index in the layer, -1 for the root
	fill   color.RGBA
	ink    color.RGBA
	bold   bool
	tap    func() (string, error)
	long   func() (string, error)
	scroll *scroller
}

// scroller moves a scrollable element's content.
type scroller struct {
	entry  *entry
	key    string
	offset int
	max    int
}

func (l *layer) add(parent int, n *node) int {
	n.parent = parent
	l.nodes = append(l.nodes, n)
	return len(l.nodes) - 1
}

// screen turns the view into the contract's element list.
func (v *view) screen(p *phone) *sdk.Screen {
	s := &sdk.Screen{
		App: v.app, LockState: sdk.LockUnlocked, ScreenOn: p.screenOn,
		Width: p.spec.Width, Height: p.spec.Height, DensityDPI: p.spec.Density,
		Orientation: sdk.OrientationPortrait, KeyboardShown: v.keyboard, CapturedAt: p.d.now(),
	}
	if p.spec.Width > p.spec.Height {
		s.Orientation = sdk.OrientationLandscape
	}
	if p.locked {
		s.LockState = sdk.LockLocked
	}
	s.Elements = []sdk.Element{}
	for _, l := range v.layers {
		base := len(s.Elements)
		for _, n := range l.nodes {
			e := n.el
			e.ID = len(s.Elements) + 1
			if n.parent >= 0 {
				e.ParentID = base + n.parent + 1
			}
			s.Elements = append(s.Elements, e)
		}
	}
	return s
}

// hit finds what a tap at pt lands on: the topmost node with a handler in
// the topmost layer containing pt. A modal layer swallows taps outside it.
func (v *view) hit(pt sdk.Point) *node {
	for i := len(v.layers) - 1; i >= 0; i-- {
		l := v.layers[i]
		if l.area.Contains(pt) {
			for j := len(l.nodes) - 1; j >= 0; j-- {
				if n := l.nodes[j]; n.tap != nil && n.el.Visible && n.el.Bounds.Contains(pt) {
					return n
				}
			}
			return nil
		}
		if l.modal {
			return nil
		}
	}
	return nil
}

// scrollerAt finds the innermost scrollable node containing pt.
func (v *view) scrollerAt(pt sdk.Point) *node {
	for i := len(v.layers) - 1; i >= 0; i-- {
		for j := len(v.layers[i].nodes) - 1; j >= 0; j-- {
			if n := v.layers[i].nodes[j]; n.scroll != nil && n.el.Bounds.Contains(pt) {
				return n
			}
		}
		if v.layers[i].modal {
			return nil
		}
	}
	return nil
}

// homeApp is the system app in front on the home or lock screen, as real
// phones report it.
func (p *phone) homeApp(locked bool) sdk.App {
	switch {
	case p.spec.Platform == sdk.PlatformIOS:
		return sdk.App{ID: "com.apple.springboard", Label: "Home Screen", System: true}
	case locked:
		return sdk.App{ID: "com.android.systemui", Label: "System UI", System: true}
	}
	return sdk.App{ID: "com.google.android.apps.nexuslauncher", Label: "Pixel Launcher", System: true}
}

// view builds what the phone shows now. p.mu is held.
func (p *phone) view() *view {
	v := &view{}
	if !p.screenOn {
		return v
	}
	full := sdk.Rect{Right: p.spec.Width, Bottom: p.spec.Height}
	if p.spec.dump != nil {
		v.app = p.spec.dump.App
		v.layers = append(v.layers, p.dumpLayer(p.spec.dump, full))
		return v
	}
	if e := p.top(); e != nil && !p.locked && e.app.Screens[e.screen].dump != nil {
		v.app = p.appInfo(e.app)
		v.layers = append(v.layers, p.dumpLayer(e.app.Screens[e.screen].dump, full))
		return v
	}
	v.layers = append(v.layers, p.statusBar())
	content := full
	content.Top = p.px(statusBarDP)
	if p.locked {
		v.app = p.homeApp(true)
		v.layers = append(v.layers, p.lockScreen(content))
		return v
	}
	kb := p.keyboardShown()
	if kb {
		content.Bottom -= p.px(keyboardDP)
	}
	if e := p.top(); e != nil {
		v.app = p.appInfo(e.app)
		v.layers = append(v.layers, p.appLayer(e, e.app.Screens[e.screen], content, false))
		if p.dialog != "" {
			v.layers = append(v.layers, p.appLayer(e, e.app.Screens[p.dialog], content, true))
		}
	} else {
		v.app = p.homeApp(false)
		v.layers = append(v.layers, p.launcher(content))
	}
	if p.anim != nil {
		v.layers = append(v.layers, p.progress(content))
	}
	if kb {
		v.keyboard = true
		v.layers = append(v.layers, p.keyboard(sdk.Rect{Top: content.Bottom, Right: full.Right, Bottom: full.Bottom}))
	}
	switch {
	case p.shade:
		v.layers = append(v.layers, p.shadeLayer(content))
	case p.recents:
		v.layers = append(v.layers, p.recentsLayer(content))
	}
	return v
}

func (p *phone) appInfo(a *AppSpec) sdk.App {
	return sdk.App{ID: p.appID(a), Label: a.Label, Version: a.Version, System: a.System}
}

// keyboardShown reports whether a field on the screen in front has focus.
func (p *phone) keyboardShown() bool {
	e := p.top()
	if p.focus == "" || e == nil {
		return false
	}
	screen := e.app.Screens[e.screen]
	if p.dialog != "" {
		screen = e.app.Screens[p.dialog]
	}
	return hasField(screen.Elements, p.focus)
}

func hasField(els []*ElementSpec, name string) bool {
	for _, e := range els {
		if (e.editable() && e.Name == name) || hasField(e.Children, name) {
			return true
		}
	}
	return false
}

// px converts density-independent pixels to pixels.
func (p *phone) px(dp int) int { return int(float64(dp)*p.scale + 0.5) }

// dumpLayer shows a captured screen scaled to the phone; nothing in it navigates.
func (p *phone) dumpLayer(s *sdk.Screen, area sdk.Rect) *layer {
	fx := float64(area.Width()) / float64(s.Width)
	fy := float64(area.Height()) / float64(s.Height)
	l := &layer{area: area}
	for _, e := range s.Elements {
		b := e.Bounds
		e.Bounds = sdk.Rect{
			Left: int(float64(b.Left) * fx), Top: int(float64(b.Top) * fy),
			Right: int(float64(b.Right) * fx), Bottom: int(float64(b.Bottom) * fy),
		}
		n := &node{el: e, fill: white, ink: black}
		if e.Clickable || e.Editable {
			n.fill = paleBlue
			n.tap = func() (string, error) { return "tapped a captured screen; nothing happens", nil }
		}
		l.add(e.ParentID-1, n)
	}
	return l
}

// editable reports whether the element is a text field.
func (e *ElementSpec) editable() bool {
	return e.Role == "field" || e.Role == "password" || slices.Contains(e.Flags, "editable")
}

// resourceID is the element's resource id on this phone, in the platform's form.
func (p *phone) resourceID(e *ElementSpec, a *AppSpec) string {
	rid := e.ResourceID.For(p.spec.Platform)
	if rid != "" && p.spec.Platform == sdk.PlatformAndroid && !strings.ContainsAny(rid, ":/") {
		rid = p.appID(a) + ":id/" + rid
	}
	return rid
}
