package screen

import (
	"sort"
	"strings"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// maxMemory bounds how many elements a Model remembers; the ones seen
// longest ago are forgotten first (and get a new ref if they come back).
const maxMemory = 4096

// Model assigns refs to one device's screens. Refs are small positive
// integers, increasing, never reused: an element keeps its ref for as long
// as the Model recognises it, and a ref whose element is gone stays unused.
//
// An element is recognised, in order of preference, by the same app,
// class, resource id, text, description and merged label (at any position,
// the nearest one when several match); by the same app, class, resource id,
// text and description (an editable field's text may change); and, against
// the previous read only, by the same class, resource id and role at almost
// the same place (a label that changed). The numbering does not restart when
// another app comes to the front: refs only grow, so a ref from the old app
// can never name an element of the new one.
//
// A Model is safe for concurrent use.
type Model struct {
	mu    sync.Mutex
	next  int // the last ref handed out
	reads int
	mem   []*entry
}

// entry is an element the Model remembers.
type entry struct {
	ref     int
	app     string
	full    string // app, class, resource id, text, description, label
	own     string // app, class, resource id, text (except fields), description
	loose   string // app, class, resource id, role
	bounds  sdk.Rect
	seen    int // the read that last saw it
	claimed int // the read that claimed it, to match each entry once per read
}

// NewModel returns a Model with no refs handed out.
func NewModel() *Model { return &Model{} }

// Read condenses s into a View and gives each node its ref. A nil screen
// reads as a screen that is off.
func (m *Model) Read(s *sdk.Screen) *View {
	roots, keys := build(s)
	var flat []*bnode
	var walk func([]*bnode)
	walk = func(ns []*bnode) {
		for _, n := range ns {
			flat = append(flat, n)
			walk(n.kids)
		}
	}
	walk(roots)
	app := ""
	if s != nil {
		app = s.App.ID
	}

	m.mu.Lock()
	m.assign(app, flat)
	m.mu.Unlock()

	v := newView(s)
	v.Keys = keys
	v.Nodes = make([]Node, 0, len(flat))
	var place func(ns []*bnode, depth, parent int)
	place = func(ns []*bnode, depth, parent int) {
		for _, n := range ns {
			n.Depth, n.Parent = depth, parent
			v.Nodes = append(v.Nodes, n.Node)
			place(n.kids, depth+1, n.Ref)
		}
	}
	place(roots, 0, 0)
	v.index()
	return v
}

// assign gives refs to the nodes of one read. Callers hold m.mu.
func (m *Model) assign(app string, flat []*bnode) {
	m.reads++
	read := m.reads
	ks := make([]keys, len(flat))
	byFull := map[string][]*entry{}
	byOwn := map[string][]*entry{}
	byLoose := map[string][]*entry{}
	for _, e := range m.mem {
		if e.app != app {
			continue
		}
		byFull[e.full] = append(byFull[e.full], e)
		byOwn[e.own] = append(byOwn[e.own], e)
		if e.seen == read-1 && e.loose != "" {
			byLoose[e.loose] = append(byLoose[e.loose], e)
		}
	}
	for i, n := range flat {
		ks[i] = nodeKeys(app, &n.Node)
	}
	matched := make([]*entry, len(flat))
	pick := func(cands []*entry, n *bnode, near bool) *entry {
		var best *entry
		bestD := 0
		for _, e := range cands {
			if e.claimed == read {
				continue
			}
			if near && !nearby(e.bounds, n.Bounds) {
				continue
			}
			d := dist(e.bounds, n.Bounds)
			if e.seen != read-1 {
				d += 1 << 30 // prefer what the previous read showed
			}
			if best == nil || d < bestD {
				best, bestD = e, d
			}
		}
		return best
	}
	for tier := 0; tier < 3; tier++ {
		for i, n := range flat {
			if matched[i] != nil {
				continue
			}
			var e *entry
			switch tier {
			case 0:
				e = pick(byFull[ks[i].full], n, false)
			case 1:
				e = pick(byOwn[ks[i].own], n, false)
			case 2:
				e = pick(byLoose[ks[i].loose], n, true)
			}
			if e != nil {
				e.claimed = read
				matched[i] = e
			}
		}
	}
	for i, n := range flat {
		e := matched[i]
		if e == nil {
			m.next++
			e = &entry{ref: m.next, app: app, claimed: read}
			m.mem = append(m.mem, e)
		}
		e.full, e.own, e.loose = ks[i].full, ks[i].own, ks[i].loose
		e.bounds, e.seen = n.Bounds, read
		n.Ref = e.ref
	}
	if len(m.mem) > maxMemory {
		// Forget a quarter at once so that the sort is rare.
		sort.SliceStable(m.mem, func(a, b int) bool { return m.mem[a].seen > m.mem[b].seen })
		m.mem = m.mem[:maxMemory*3/4]
	}
}

// keys are the three identities Model matches a node by, most exact first.
type keys struct{ full, own, loose string }

// nodeKeys are the three identities Model matches a node by.
func nodeKeys(app string, n *Node) keys {
	e := &n.Element
	base := strings.Join([]string{app, e.Class, e.ResourceID, string(n.Role)}, "\x00")
	text := e.Text
	label := n.Label
	if n.Editable || n.Password {
		text, label = "", ""
	}
	own := base + "\x00" + text + "\x00" + e.ContentDescription + "\x00" + e.Hint
	// A changed label keeps the ref only for an element that names itself
	// (a resource id, or a field); in a list the same place shows another
	// element after a scroll.
	loose := ""
	if !n.underList && (e.ResourceID != "" || n.Role == RoleField) {
		loose = base
	}
	return keys{full: own + "\x00" + label, own: own, loose: loose}
}

// nearby reports whether two rectangles are nearly the same place: edges
// within a small tolerance, allowing one side to move with a text's width.
func nearby(a, b sdk.Rect) bool {
	tol := max(24, (a.Height()+b.Height())/4)
	near := func(x, y int) bool { return abs(x-y) <= tol }
	return near(a.Top, b.Top) && near(a.Bottom, b.Bottom) && (near(a.Left, b.Left) || near(a.Right, b.Right))
}

// dist is the distance between two rectangles' centres (Manhattan).
func dist(a, b sdk.Rect) int {
	ca, cb := a.Center(), b.Center()
	return abs(ca.X-cb.X) + abs(ca.Y-cb.Y)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
