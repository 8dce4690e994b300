package commit

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// row is one labeled line of testdata/corpus.tsv.
type row struct {
	line                                  int
	lang, text, role, context, want, note string
}

func readCorpus(t testing.TB) []row {
	t.Helper()
	f, err := os.Open("testdata/corpus.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []row
	sc := bufio.NewScanner(f)
	n, header := 0, false
	for sc.Scan() {
		n++
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		c := strings.Split(l, "\t")
		if len(c) != 6 {
			t.Fatalf("corpus.tsv:%d: got %d columns; want 6", n, len(c))
		}
		if !header {
			header = true // the column names
			continue
		}
		rows = append(rows, row{n, c[0], c[1], c[2], c[3], c[4], c[5]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// build makes the screen and action a corpus row describes: the target in
// its dialog or under the screen's titles, in its app.
func (r row) build() (*screen.View, Action) {
	v := &screen.View{ScreenOn: true, Width: 1080, Height: 2400}
	ref := 1
	depth, parent := 0, 0
	for _, part := range strings.Split(r.context, "; ") {
		key, val, _ := strings.Cut(part, "=")
		switch key {
		case "app":
			v.App = sdk.App{ID: val}
		case "dialog":
			v.Nodes = append(v.Nodes, screen.Node{Ref: ref, Role: screen.RoleDialog, Enabled: true})
			parent, depth = ref, 1
			ref++
			for _, s := range strings.Split(val, "|") {
				if s != "" {
					v.Nodes = append(v.Nodes, screen.Node{Ref: ref, Role: screen.RoleText, Label: s, Depth: 1, Parent: parent, Enabled: true})
					ref++
				}
			}
		case "screen":
			for _, s := range strings.Split(val, "|") {
				v.Nodes = append(v.Nodes, screen.Node{Ref: ref, Role: screen.RoleText, Label: s, Enabled: true})
				ref++
			}
		}
	}
	n := screen.Node{Ref: 100, Depth: depth, Parent: parent, Enabled: true, Clickable: true, Label: r.text,
		Element: sdk.Element{Text: r.text, Clickable: true, Enabled: true, Visible: true}}
	a := Action{Kind: "tap"}
	switch r.role {
	case "button":
		n.Role = screen.RoleButton
	case "item":
		n.Role = screen.RoleItem
	case "tab":
		n.Role = screen.RoleTab
	case "link":
		n.Role = screen.RoleLink
	case "text":
		n.Role, n.Clickable, n.Element.Clickable = screen.RoleText, false, false
	case "switch", "checkbox":
		n.Role, n.Checkable = screen.Role(r.role), true
	case "field":
		n.Role, n.Editable, n.Focused, n.Label, n.Hint = screen.RoleField, true, true, "", r.text
		n.Element.Text, n.Element.Hint, n.Element.Editable = "", r.text, true
		a = Action{Kind: "type", Text: "hello", Submit: true}
	default:
		panic("corpus: unknown role " + r.role)
	}
	v.Nodes = append(v.Nodes, n)
	a.Target = &v.Nodes[len(v.Nodes)-1]
	return v, a
}

// score counts a classifier's outcomes for one kind or one group of rows.
type score struct{ tp, fp, fn, rows int }

func (s score) precision() float64 {
	if s.tp+s.fp == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fp)
}

func (s score) recall() float64 {
	if s.tp+s.fn == 0 {
		return 1
	}
	return float64(s.tp) / float64(s.tp+s.fn)
}

// add counts one row for a group (a language, or everything): a detected
// commit of the right kind is a true positive, of a wrong kind or where none
// is expected a false positive; an expected commit not detected with its
// kind is a false negative.
func (s *score) add(want, got Kind) {
	s.rows++
	switch {
	case got != "" && got == want:
		s.tp++
	case got != "" && want == "":
		s.fp++
	case got != "":
		s.fp++
		s.fn++
	case want != "":
		s.fn++
	}
}

// Since issue 13 the model learns from this corpus's rows that need no
// dialog or screen around them (train_test.go), so these figures are
// partly a training set's; the real-app corpus's held-out apps are the
// measurement (TestHeldOut). The floors stay where they were.
//
// Floors set from the first measurement over the whole corpus (overall
// precision 0.99 and recall 0.99; the lowest kind figures were 0.94
// precision for change_setting and 0.96 recall for call and install_app;
// the lowest language figures 0.97), a little under it, so that a table
// edit that costs accuracy fails here. Kinds with few rows get more room.
const (
	floorPrecision     = 0.97
	floorRecall        = 0.95
	floorKindPrecision = 0.90
	floorKindRecall    = 0.85
	floorLangPrecision = 0.93
	floorLangRecall    = 0.90
)

func TestCorpus(t *testing.T) {
	rows := readCorpus(t)
	if len(rows) < 400 {
		t.Fatalf("corpus: got %d rows; want at least 400", len(rows))
	}
	langs := map[string]int{}
	neg := 0
	var all score
	byKind := map[Kind]*score{}
	byLang := map[string]*score{}
	for _, k := range Kinds {
		byKind[k] = &score{}
	}
	for _, r := range rows {
		want := Kind(r.want)
		if _, ok := byKind[want]; !ok && want != "" {
			t.Fatalf("corpus.tsv:%d: unknown kind %q", r.line, want)
		}
		langs[r.lang]++
		if want == "" {
			neg++
		}
		v, a := r.build()
		got := Detect(v, a)
		if got.Kind != want {
			t.Logf("corpus.tsv:%d %s %s %q (%s): got %q (%s); want %q", r.line, r.lang, r.role, r.text, r.context, got.Kind, got.Evidence, want)
		}
		all.add(want, got.Kind)
		if byLang[r.lang] == nil {
			byLang[r.lang] = &score{}
		}
		byLang[r.lang].add(want, got.Kind)
		for k, s := range byKind {
			switch {
			case want == k && got.Kind == k:
				s.tp++
			case got.Kind == k:
				s.fp++
			case want == k:
				s.fn++
			}
			if want == k {
				s.rows++
			}
		}
	}
	if len(langs) < 11 {
		t.Errorf("corpus: got %d languages; want 11", len(langs))
	}
	if float64(neg) < 0.35*float64(len(rows)) {
		t.Errorf("corpus: got %d negatives of %d; want at least 35%%", neg, len(rows))
	}

	var b strings.Builder
	fmt.Fprintf(&b, "\n%d rows, %d expecting a commit, %d look-alikes expecting none\n\n", len(rows), len(rows)-neg, neg)
	b.WriteString("| kind | rows | precision | recall |\n|---|---:|---:|---:|\n")
	for _, k := range Kinds {
		s := byKind[k]
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f |\n", k, s.rows, s.precision(), s.recall())
		if s.rows > 0 && (s.precision() < floorKindPrecision || s.recall() < floorKindRecall) {
			t.Errorf("kind %s: got precision %.2f, recall %.2f; want at least %.2f, %.2f", k, s.precision(), s.recall(), floorKindPrecision, floorKindRecall)
		}
	}
	fmt.Fprintf(&b, "| **all** | %d | %.3f | %.3f |\n\n", all.rows, all.precision(), all.recall())
	b.WriteString("| language | rows | none | precision | recall |\n|---|---:|---:|---:|---:|\n")
	names := make([]string, 0, len(byLang))
	for l := range byLang {
		names = append(names, l)
	}
	sort.Strings(names)
	for _, l := range names {
		s := byLang[l]
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f | %.2f |\n", l, s.rows, s.rows-(s.tp+s.fn), s.precision(), s.recall())
		if s.precision() < floorLangPrecision || s.recall() < floorLangRecall {
			t.Errorf("language %s: got precision %.2f, recall %.2f; want at least %.2f, %.2f", l, s.precision(), s.recall(), floorLangPrecision, floorLangRecall)
		}
	}
	t.Log(b.String())
	if all.precision() < floorPrecision || all.recall() < floorRecall {
		t.Errorf("overall: got precision %.2f, recall %.2f; want at least %.2f, %.2f", all.precision(), all.recall(), floorPrecision, floorRecall)
	}
}
