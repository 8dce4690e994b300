package sim

import (
	"strconv"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Sizes of the system parts, in dp.
const (
	statusBarDP = 24
	keyboardDP  = 240
	gapDP       = 4
)

// defaultHeight is an element's height in dp when the world gives none.
var defaultHeight = map[string]int{
	"text": 32, "button": 56, "field": 56, "password": 56, "image": 160,
	"item": 72, "switch": 56, "group": 48, "": 48,
}

// instance is an element spec with its template values (repeats, list items).
type instance struct {
	spec   *ElementSpec
	locals map[string]string
	path   string
}

// appLayer lays out an app screen, or a dialog of it, inside area.
func (ds *display) appLayer(e *entry, s *ScreenSpec, area sdk.Rect, dialog bool) *layer {
	l := &layer{area: area, modal: dialog, secure: ds.secure(e.app)}
	box := area
	if dialog {
		h := 0
		for _, in := range ds.instances(s.Elements, nil, "d") {
			h += ds.px(ds.natural(in.spec) + gapDP)
		}
		h = min(h+ds.px(32), area.Height())
		box = sdk.Rect{Left: area.Left + ds.px(24), Right: area.Right - ds.px(24)}
		box.Top = area.Top + (area.Height()-h)/2
		box.Bottom = box.Top + h
		l.area = box
		box.Top += ds.px(16)
		box.Bottom -= ds.px(16)
	}
	root := &node{el: sdk.Element{
		Class: ds.class("group", PerPlatform{}), Bounds: l.area, Enabled: true, Visible: true,
		ResourceID: ds.rootID(e.app, dialog),
	}, fill: white}
	if dialog {
		root.fill, root.el.Class = dialogFill, ds.class("dialog", PerPlatform{})
		if top := ds.top(); top != nil && top.app != e.app {
			// Another app's window (the permission controller's): its
			// package is its elements', as in a dump of that window.
			root.el.ResourceID = ""
		}
	}
	ri := l.add(-1, root)
	ds.column(l, ri, e, ds.instances(s.Elements, nil, "e"), box, box)
	if s.Canvas {
		// The app draws its screen itself: accessibility sees one View.
		root.el.Class, root.el.ResourceID = ds.class("", PerPlatform{Android: "android.view.View"}), ""
		for _, n := range l.nodes[ri+1:] {
			n.drawn = true
		}
	}
	return l
}

func (p *phone) rootID(a *AppSpec, dialog bool) string {
	if p.spec.Platform != sdk.PlatformAndroid {
		return ""
	}
	if dialog {
		return "android:id/parentPanel"
	}
	return "android:id/content"
}

// instances expands repeat and each into one instance per copy.
func (p *phone) instances(specs []*ElementSpec, locals map[string]string, path string) []instance {
	var out []instance
	for i, s := range specs {
		base := path + "/" + strconv.Itoa(i)
		switch {
		case s.Repeat > 0:
			for n := 1; n <= s.Repeat; n++ {
				out = append(out, instance{s, with(locals, "n", strconv.Itoa(n)), base + "." + strconv.Itoa(n)})
			}
		case s.Each != "":
			for n, item := range p.lists[p.expand(s.Each, locals)] {
				loc := with(with(locals, "n", strconv.Itoa(n+1)), "item", item)
				out = append(out, instance{s, loc, base + "." + strconv.Itoa(n)})
			}
		default:
			out = append(out, instance{s, locals, base})
		}
	}
	return out
}

func with(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for a, b := range m {
		out[a] = b
	}
	out[k] = v
	return out
}

// natural is an element's height in dp before fill.
func (p *phone) natural(s *ElementSpec) int {
	if s.Height > 0 {
		return s.Height
	}
	if len(s.Children) == 0 || s.Role == "list" {
		return defaultHeight[s.Role]
	}
	h := 0
	for _, in := range p.instances(s.Children, nil, "") {
		if s.Row {
			h = max(h, p.natural(in.spec))
		} else {
			h += p.natural(in.spec) + gapDP
		}
	}
	return h
}

// column stacks instances top to bottom inside box, docked ones from the
// bottom up, fill ones sharing what is left; clip is the visible part.
func (ds *display) column(l *layer, parent int, e *entry, ins []instance, box, clip sdk.Rect) {
	used, fills := 0, 0
	for _, in := range ins {
		if in.spec.Fill || (in.spec.Role == "list" && in.spec.Height == 0) {
			fills++
			continue
		}
		used += ds.px(ds.natural(in.spec) + gapDP)
	}
	rest := 0
	if fills > 0 {
		rest = max(box.Height()-used, ds.px(48)*fills) / fills
	}
	top, bottom := box.Top, box.Bottom
	// Docked elements are measured first, so the flow knows where the bottom is.
	docked := map[int]sdk.Rect{}
	for i := len(ins) - 1; i >= 0; i-- {
		if in := ins[i]; in.spec.Dock == "bottom" {
			h := ds.px(ds.natural(in.spec))
			bottom -= h + ds.px(gapDP)
			docked[i] = sdk.Rect{Left: box.Left, Top: bottom, Right: box.Right, Bottom: bottom + h}
		}
	}
	flowClip := clip
	flowClip.Bottom = min(flowClip.Bottom, bottom)
	for i, in := range ins {
		if r, ok := docked[i]; ok {
			ds.place(l, parent, e, in, r, clip)
			continue
		}
		h := ds.px(ds.natural(in.spec))
		if in.spec.Fill || (in.spec.Role == "list" && in.spec.Height == 0) {
			h = min(rest-ds.px(gapDP), bottom-top)
		}
		r := sdk.Rect{Left: box.Left, Top: top, Right: box.Right, Bottom: top + h}
		if len(in.spec.Bounds) == 4 {
			b := in.spec.Bounds
			r = sdk.Rect{Left: box.Left + ds.px(b[0]), Top: box.Top + ds.px(b[1]), Right: box.Left + ds.px(b[2]), Bottom: box.Top + ds.px(b[3])}
		} else {
			top += h + ds.px(gapDP)
		}
		ds.place(l, parent, e, in, r, flowClip)
	}
}

// row lays instances side by side in r: fixed widths first, the rest share.
func (ds *display) row(l *layer, parent int, e *entry, kids []instance, r, clip sdk.Rect) {
	free, flex := r.Width(), 0
	for _, k := range kids {
		if k.spec.Width > 0 {
			free -= ds.px(k.spec.Width)
		} else {
			flex++
		}
	}
	x := r.Left
	for _, k := range kids {
		w := ds.px(k.spec.Width)
		if k.spec.Width == 0 {
			w = max(free, 0) / max(flex, 1)
		}
		ds.place(l, parent, e, k, sdk.Rect{Left: x, Top: r.Top, Right: x + w, Bottom: r.Bottom}, clip)
		x += w
	}
}

// place adds one instance at r, if any of it shows inside clip, and lays out its children.
func (ds *display) place(l *layer, parent int, e *entry, in instance, r, clip sdk.Rect) {
	vis := intersect(r, clip)
	if vis.Empty() {
		return
	}
	n := ds.element(e, in)
	n.el.Bounds = vis
	i := l.add(parent, n)
	if len(in.spec.Children) == 0 {
		return
	}
	kids := ds.instances(in.spec.Children, in.locals, in.path)
	switch {
	case in.spec.Row:
		ds.row(l, i, e, kids, r, vis)
	case n.el.Scrollable:
		content := 0
		for _, kid := range kids {
			content += ds.px(ds.natural(kid.spec) + gapDP)
		}
		sc := &scroller{entry: e, key: in.path, max: max(content-r.Height(), 0)}
		sc.offset = min(e.scroll[in.path], sc.max)
		n.scroll = sc
		inner := r
		inner.Top -= sc.offset
		inner.Bottom = inner.Top + max(content, r.Height())
		ds.column(l, i, e, kids, inner, vis)
	default:
		ds.column(l, i, e, kids, r, vis)
	}
}

func intersect(a, b sdk.Rect) sdk.Rect {
	r := sdk.Rect{Left: max(a.Left, b.Left), Top: max(a.Top, b.Top), Right: min(a.Right, b.Right), Bottom: min(a.Bottom, b.Bottom)}
	if r.Empty() {
		return sdk.Rect{}
	}
	return r
}
