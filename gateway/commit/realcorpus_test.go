package commit

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The real-app corpus (corpus/README.md): rows/<app>.jsonl, one line per
// labeled resource and language.
// rowsDir is the rows folder; COMMIT_ROWS_DIR points tuning runs at a
// fixed copy of the training apps while more rows arrive.
var rowsDir = cmp.Or(os.Getenv("COMMIT_ROWS_DIR"), "corpus/rows")

// realRow is one line of rows/<app>.jsonl (the fields the tests read).
type realRow struct {
	App       string `json:"app"`
	Lang      string `json:"lang"`
	Text      string `json:"text"`
	Role      string `json:"role"`
	Kind      string `json:"kind"`
	Lookalike bool   `json:"lookalike"`
	Resource  string `json:"resource"`
	Category  string `json:"category"`
	Platform  string `json:"platform"`
}

// want is the kind the row expects, "" for none.
func (r realRow) want() Kind {
	if r.Kind == "none" {
		return ""
	}
	return Kind(r.Kind)
}

// heldOut reports whether an app belongs to the held-out part of the
// corpus: the first byte of the SHA-256 of its name is below 77 (about
// 30 % of apps). Held-out apps are read only by TestHeldOut, never while
// tuning or training.
func heldOut(app string) bool {
	return sha256.Sum256([]byte(app))[0] < 77
}

// corpusApps lists the apps that have rows, by file name, sorted.
func corpusApps(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(rowsDir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var apps []string
	for _, f := range files {
		apps = append(apps, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
	}
	sort.Strings(apps)
	return apps
}

// trainingApps and heldOutApps split corpusApps.
func trainingApps(t testing.TB) []string {
	return slices.DeleteFunc(corpusApps(t), heldOut)
}

func heldOutApps(t testing.TB) []string {
	return slices.DeleteFunc(corpusApps(t), func(a string) bool { return !heldOut(a) })
}

// readRows reads the rows of the given apps, and returns them with the
// files' bytes (for the model's digest). It opens no other app's file.
func readRows(t testing.TB, apps []string) ([]realRow, [][]byte) {
	t.Helper()
	var rows []realRow
	var files [][]byte
	for _, app := range apps {
		b, err := os.ReadFile(filepath.Join(rowsDir, app+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, b)
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, 1<<20)
		for n := 1; sc.Scan(); n++ {
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			var r realRow
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				t.Fatalf("rows/%s.jsonl:%d: %v", app, n, err)
			}
			if r.App != app {
				t.Fatalf("rows/%s.jsonl:%d: app %q in the file of %q", app, n, r.App, app)
			}
			if _, ok := parseRole(r.Role); !ok {
				t.Fatalf("rows/%s.jsonl:%d: unknown role %q", app, n, r.Role)
			}
			if k := r.want(); k != "" && (rank[k] >= len(Kinds) || !slices.Contains(Kinds, k)) {
				t.Fatalf("rows/%s.jsonl:%d: unknown kind %q", app, n, r.Kind)
			}
			rows = append(rows, r)
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("rows/%s.jsonl: %v", app, err)
		}
	}
	return rows, files
}

// detectRow runs the detector with model m on a row as its role would
// appear on a screen of an app of its category: a tap on it.
func detectRow(m *model, r realRow, askAt float64) Result {
	v, a, err := Control{Text: r.Text, Role: r.Role, Category: r.Category}.View()
	if err != nil {
		panic(err)
	}
	return detect(m, askAt, v, a)
}

// tally counts a detector's outcomes over rows, by kind, language and
// role, in two ways. The exact score: a row is right only with the exact
// kind; a wrong kind counts against both precision and recall. The gate's
// score: whether the gate asks (the detector found some commit, of any
// kind) for a row that commits something; that is what matters to the
// person, and a wrong kind still asks. asked counts, of the rows that
// commit, those where the gate asks.
type tally struct {
	all                     score
	asked, commits          int
	byKind                  map[Kind]*score
	byLang, byRole, byApp   map[string]*score
	apps                    map[string]bool
	misses, falseAlarms     []string
	askedByKind, wantByKind map[Kind]int
	// gate is the gate's score: a true positive asks for a row that
	// commits, a false positive asks for one that commits nothing.
	// gateKind counts recall by the kind expected and false positives by
	// the kind found.
	gate               score
	gateKind           map[Kind]*score
	gateLang, gateRole map[string]*score
}

func newTally() *tally {
	t := &tally{byKind: map[Kind]*score{}, byLang: map[string]*score{}, byRole: map[string]*score{}, byApp: map[string]*score{},
		apps: map[string]bool{}, askedByKind: map[Kind]int{}, wantByKind: map[Kind]int{},
		gateKind: map[Kind]*score{}, gateLang: map[string]*score{}, gateRole: map[string]*score{}}
	for _, k := range Kinds {
		t.byKind[k] = &score{}
		t.gateKind[k] = &score{}
	}
	return t
}

func group[K comparable](m map[K]*score, k K) *score {
	if m[k] == nil {
		m[k] = &score{}
	}
	return m[k]
}

// gateAdd counts one row in a gate score: asks is whether the gate asked,
// commits whether the row commits something.
func (s *score) gateAdd(commits, asks bool) {
	s.rows++
	switch {
	case commits && asks:
		s.tp++
	case asks:
		s.fp++
	case commits:
		s.fn++
	}
}

func (t *tally) add(r realRow, got Result) {
	want := r.want()
	t.all.add(want, got.Kind)
	t.apps[r.App] = true
	group(t.byLang, r.Lang).add(want, got.Kind)
	group(t.byRole, r.Role).add(want, got.Kind)
	group(t.byApp, r.App).add(want, got.Kind)
	for k, s := range t.byKind {
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
	commits, asks := want != "", got.Kind != ""
	t.gate.gateAdd(commits, asks)
	group(t.gateLang, r.Lang).gateAdd(commits, asks)
	group(t.gateRole, r.Role).gateAdd(commits, asks)
	switch {
	case commits:
		group(t.gateKind, want).gateAdd(true, asks)
	case asks:
		group(t.gateKind, got.Kind).fp++
	}
	if want != "" {
		t.commits++
		t.wantByKind[want]++
		if got.Kind != "" {
			t.asked++
			t.askedByKind[want]++
		}
	}
	line := fmt.Sprintf("%s %s %s %q (%s): got %q; want %q — %s", r.App, r.Lang, r.Role, r.Text, r.Category, got.Kind, want, got.Evidence)
	switch {
	case want != "" && got.Kind != want:
		t.misses = append(t.misses, line)
	case want == "" && got.Kind != "":
		t.falseAlarms = append(t.falseAlarms, line)
	}
}

// gatePrecision is, of the gate's asks that found kind k, the share for
// a control that commits something (of any kind).
func (t *tally) gatePrecision(k Kind) string {
	asks := t.askedAs(k)
	return ratio(asks-t.gateKind[k].fp, asks)
}

// askedAs counts the rows where the detector found kind k.
func (t *tally) askedAs(k Kind) int { return t.byKind[k].tp + t.byKind[k].fp }

// table prints the tally as the Markdown tables of BENCHMARKS.md: per
// kind, language and role the exact kind's precision and recall, and the
// gate's: "asks" is the share of the controls that commit for which the
// gate asks (of any kind), "asks' precision" the share of its asks that
// are for a control that commits.
func (t *tally) table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows from %d apps; %d expect a commit, %d none\n\n", t.all.rows, len(t.apps), t.commits, t.all.rows-t.commits)
	b.WriteString("| kind | rows | precision | recall | asks (any kind) | asks' precision |\n|---|---:|---:|---:|---:|---:|\n")
	for _, k := range Kinds {
		s := t.byKind[k]
		if s.rows == 0 && s.fp == 0 {
			continue
		}
		fmt.Fprintf(&b, "| %s | %d | %.3f | %.3f | %s | %s |\n", k, s.rows, s.precision(), s.recall(), ratio(t.askedByKind[k], t.wantByKind[k]), t.gatePrecision(k))
	}
	fmt.Fprintf(&b, "| **all** | %d | %.3f | %.3f | %s | %.3f |\n\n", t.all.rows, t.all.precision(), t.all.recall(), ratio(t.asked, t.commits), t.gate.precision())
	asks := t.all.tp + t.all.fp
	fmt.Fprintf(&b, "%d asks, %d of them (%s) for a control that commits nothing\n\n", asks, len(t.falseAlarms), ratio(len(t.falseAlarms), asks))
	for _, g := range []struct {
		name    string
		m, gate map[string]*score
	}{{"language", t.byLang, t.gateLang}, {"role", t.byRole, t.gateRole}} {
		fmt.Fprintf(&b, "| %s | rows | of which none | precision | recall | asks (any kind) | asks' precision |\n|---|---:|---:|---:|---:|---:|---:|\n", g.name)
		for _, k := range sortedKeys(g.m) {
			s, gs := g.m[k], g.gate[k]
			fmt.Fprintf(&b, "| %s | %d | %d | %.3f | %.3f | %.3f | %.3f |\n", k, s.rows, s.rows-(s.tp+s.fn), s.precision(), s.recall(), gs.recall(), gs.precision())
		}
		b.WriteString("\n")
	}
	return b.String()
}

func ratio(a, b int) string {
	if b == 0 {
		return "–"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
