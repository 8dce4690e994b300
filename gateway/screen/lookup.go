package screen

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Lookup error kinds.
const (
	NotFound  = "not_found"
	Ambiguous = "ambiguous"
)

// maxCandidates is how many nodes a LookupError lists.
const maxCandidates = 10

// ErrNotFound and ErrAmbiguous match a *LookupError of that kind with errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("ambiguous")
)

// LookupError says why a lookup found no single node. Its text is written for
// a model: what was asked, what is on screen instead, what to do next.
type LookupError struct {
	Kind       string // NotFound or Ambiguous
	Query      string // what was looked for, e.g. `"Send"` or `[9]`
	Candidates []Node // nodes the caller may have meant, at most 10
	msg        string
}

// Error lists the candidates as "[ref] role "label"", one a line.
func (e *LookupError) Error() string {
	var b strings.Builder
	b.WriteString(e.msg)
	for i := range e.Candidates {
		b.WriteString("\n")
		b.WriteString(e.Candidates[i].brief())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotFound) and errors.Is(err, ErrAmbiguous) work.
func (e *LookupError) Is(target error) bool {
	return (target == ErrNotFound && e.Kind == NotFound) || (target == ErrAmbiguous && e.Kind == Ambiguous)
}

// brief is "[ref] role "label"", the short form candidates are listed in.
func (n *Node) brief() string {
	s := "[" + fmt.Sprint(n.Ref) + "] " + string(n.Role)
	switch {
	case n.Label != "":
		s += " " + quote(n.Label)
	case n.Hint != "":
		s += " hint=" + quote(n.Hint)
	}
	return s
}

// ByRef returns the node with ref, or a *LookupError when the current view
// has no such node.
func (v *View) ByRef(ref int) (Node, error) {
	if i, ok := v.byRef[ref]; ok {
		return v.Nodes[i], nil
	}
	return Node{}, &LookupError{Kind: NotFound, Query: fmt.Sprintf("[%d]", ref),
		msg: fmt.Sprintf("no element [%d] on the screen now: it is gone, or the ref is from an earlier screen; read the screen and use a ref from it", ref)}
}

// ByText returns the node whose text, description or hint matches text:
// trimmed and case-insensitive, an exact match preferred over a substring.
// Occurrence picks among several matches, counted from 1 in screen order;
// 0 means the match must be unique. The error lists candidates.
func (v *View) ByText(text string, occurrence int) (Node, error) {
	q := strings.ToLower(clean(text))
	query := quote(clean(text))
	if q == "" {
		return Node{}, &LookupError{Kind: NotFound, Query: query, msg: "no text given to look for"}
	}
	if occurrence < 0 {
		return Node{}, &LookupError{Kind: NotFound, Query: query, msg: fmt.Sprintf("occurrence %d: count from 1", occurrence)}
	}
	var exact, part []int
	for i := range v.Nodes {
		n := &v.Nodes[i]
		ex, sub := false, false
		for _, s := range n.searchable() {
			s = strings.ToLower(s)
			if s == q {
				ex = true
			} else if strings.Contains(s, q) {
				sub = true
			}
		}
		switch {
		case ex:
			exact = append(exact, i)
		case sub:
			part = append(part, i)
		}
	}
	matches := exact
	if len(matches) == 0 {
		matches = part
	}
	switch {
	case len(matches) == 0:
		return Node{}, &LookupError{Kind: NotFound, Query: query, Candidates: v.suggest(q),
			msg: fmt.Sprintf("no element on screen shows %s. Elements on screen:", query)}
	case occurrence == 0 && len(matches) == 1:
		return v.Nodes[matches[0]], nil
	case occurrence == 0:
		return Node{}, &LookupError{Kind: Ambiguous, Query: query, Candidates: v.pick(matches),
			msg: fmt.Sprintf("%d elements show %s; pass an occurrence from 1 to %d (in this order) or use a ref:", len(matches), query, len(matches))}
	case occurrence > len(matches):
		return Node{}, &LookupError{Kind: NotFound, Query: query, Candidates: v.pick(matches),
			msg: fmt.Sprintf("occurrence %d of %s: only %d elements show it:", occurrence, query, len(matches))}
	}
	return v.Nodes[matches[occurrence-1]], nil
}

// searchable is every string of a node ByText looks at. A password's content is not among them.
func (n *Node) searchable() []string {
	if n.Label == "" || (len(n.texts) > 0 && n.texts[0] == n.Label) {
		return n.texts
	}
	return append([]string{n.Label}, n.texts...)
}

func (v *View) pick(idx []int) []Node {
	out := make([]Node, 0, min(len(idx), maxCandidates))
	for _, i := range idx {
		if len(out) == maxCandidates {
			break
		}
		out = append(out, v.Nodes[i])
	}
	return out
}

// suggest ranks the labelled nodes for a query that matched none: nodes
// sharing a word with it first, then controls, then the rest, in screen order.
func (v *View) suggest(q string) []Node {
	words := strings.Fields(q)
	type cand struct{ score, i int }
	var cs []cand
	for i := range v.Nodes {
		n := &v.Nodes[i]
		if n.Label == "" && n.Hint == "" {
			continue
		}
		score := 0
		hay := strings.ToLower(strings.Join(n.searchable(), " "))
		for _, w := range words {
			if len([]rune(w)) >= 2 && strings.Contains(hay, w) {
				score += 4
			}
		}
		if n.interactive() {
			score++
		}
		cs = append(cs, cand{score, i})
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].score > cs[b].score })
	idx := make([]int, 0, len(cs))
	for _, c := range cs {
		idx = append(idx, c.i)
	}
	return v.pick(idx)
}

// ByPoint returns the smallest node whose bounds contain p (the deepest
// when sizes tie), and false when none does.
func (v *View) ByPoint(p sdk.Point) (Node, bool) {
	best := -1
	bestArea := 0
	for i := range v.Nodes {
		b := v.Nodes[i].Bounds
		if b.Empty() || !b.Contains(p) {
			continue
		}
		if a := b.Width() * b.Height(); best < 0 || a <= bestArea {
			best, bestArea = i, a
		}
	}
	if best < 0 {
		return Node{}, false
	}
	return v.Nodes[best], true
}
