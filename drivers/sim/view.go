package sim

import (
	"image/color"
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// view is what a display shows now: layers of nodes, bottom first.
type view struct {
	app      sdk.App
	keyboard bool
	layers   []*layer
}

// layer is a window: the app, a dialog, the keyboard, the shade.
type layer struct {
	area  sdk.Rect
	modal bool // taps outside the area go nowhere
	// secure is a window of an app with FLAG_SECURE: pictures draw its
	// area black (secure.go).
	secure bool
	nodes  []*node
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
	zoom   func(scale int) string // for a pinch; scale in thousandths
	// drawn is a node of a canvas screen: drawn and tapped, but not in the
	// tree the screen reports.
	drawn bool
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

// screen turns the view of ds into the contract's element list. A
// background display reports itself on and unlocked: it shows its app
// whatever the phone's own screen does.
func (v *view) screen(ds *display) *sdk.Screen {
	s := &sdk.Screen{
		App: v.app, LockState: sdk.LockUnlocked, ScreenOn: ds.lit(),
		Width: ds.width, Height: ds.height, DensityDPI: ds.density,
		Orientation: ds.orientation(), KeyboardShown: v.keyboard, CapturedAt: ds.d.now(),
	}
	if ds.keyguard() {
		s.LockState = sdk.LockLocked
	}
	s.Elements = []sdk.Element{}
	for _, l := range v.layers {
		ids := make([]int, len(l.nodes)) // a node's element id; 0 for a drawn node
		for i, n := range l.nodes {
			if n.drawn {
				continue
			}
			e := n.el
			e.ID = len(s.Elements) + 1
			ids[i] = e.ID
			if n.parent >= 0 {
				e.ParentID = ids[n.parent]
			}
			s.Elements = append(s.Elements, e)
		}
	}
	return s
}

// clip cuts every node's bounds to r; a node wholly outside gets empty bounds.
func (v *view) clip(r sdk.Rect) {
	for _, l := range v.layers {
		for _, n := range l.nodes {
			n.el.Bounds = intersect(n.el.Bounds, r)
		}
	}
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

// zoomerAt finds the innermost zoomable node containing pt.
func (v *view) zoomerAt(pt sdk.Point) *node {
	for i := len(v.layers) - 1; i >= 0; i-- {
		for j := len(v.layers[i].nodes) - 1; j >= 0; j-- {
			if n := v.layers[i].nodes[j]; n.zoom != nil && n.el.Visible && n.el.Bounds.Contains(pt) {
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

// view builds what the display shows now. The phone's mu is held.
func (ds *display) view() *view {
	ds.orient()
	v := &view{}
	if !ds.lit() {
		return v
	}
	full := sdk.Rect{Right: ds.width, Bottom: ds.height}
	if ds.background() {
		// A small background display at a high density cannot hold the
		// system parts: what falls outside it is cut off. (Display 0 is
		// left as it always was: captured dumps keep their bounds.)
		defer v.clip(full)
	}
	if ds.spec.dump != nil && !ds.background() {
		v.app = ds.spec.dump.App
		v.layers = append(v.layers, ds.dumpLayer(ds.spec.dump, full))
		return v
	}
	if e := ds.top(); e != nil && !ds.keyguard() && e.app.Screens[e.screen].dump != nil {
		v.app = ds.appInfo(e.app)
		v.layers = append(v.layers, ds.dumpLayer(e.app.Screens[e.screen].dump, full))
		return v
	}
	v.layers = append(v.layers, ds.statusBar())
	content := full
	content.Top = ds.px(statusBarDP)
	if ds.keyguard() {
		v.app = ds.homeApp(true)
		v.layers = append(v.layers, ds.lockScreen(content))
		return v
	}
	kb := ds.keyboardShown()
	if kb {
		// At most half a small background display.
		content.Bottom -= min(ds.px(keyboardDP), ds.height/2)
	}
	if e := ds.top(); e != nil {
		v.app = ds.appInfo(e.app)
		v.layers = append(v.layers, ds.appLayer(e, e.app.Screens[e.screen], content, false))
		if ds.dialog != "" {
			a, s := ds.dialogScreen(e)
			de := e
			if a != e.app {
				// Another app's dialog over this one (the permission
				// controller's): its taps run that app's steps.
				de = &entry{app: a, screen: ds.dialog, scroll: map[string]int{}}
			}
			v.layers = append(v.layers, ds.appLayer(de, s, content, true))
		}
	} else {
		v.app = ds.homeApp(false)
		v.layers = append(v.layers, ds.launcher(content))
	}
	if ds.anim != nil {
		v.layers = append(v.layers, ds.progress(content))
	}
	if kb {
		v.keyboard = true
		v.layers = append(v.layers, ds.keyboard(sdk.Rect{Top: content.Bottom, Right: full.Right, Bottom: full.Bottom}))
	}
	switch {
	case ds.shade:
		v.layers = append(v.layers, ds.shadeLayer(content))
	case ds.recents:
		v.layers = append(v.layers, ds.recentsLayer(content))
	case ds.headsUp != nil && !ds.background():
		v.layers = append(v.layers, ds.headsUpLayer())
	}
	return v
}

func (p *phone) appInfo(a *AppSpec) sdk.App {
	return sdk.App{ID: p.appID(a), Label: a.Label, Version: a.Version, System: a.System}
}

// keyboardShown reports whether a field on the screen in front has focus.
func (ds *display) keyboardShown() bool {
	e := ds.top()
	if ds.focus == "" || e == nil {
		return false
	}
	screen := e.app.Screens[e.screen]
	if ds.dialog != "" {
		_, screen = ds.dialogScreen(e)
	}
	return hasField(screen.Elements, ds.focus)
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
func (ds *display) px(dp int) int { return int(float64(dp)*ds.scale + 0.5) }

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
