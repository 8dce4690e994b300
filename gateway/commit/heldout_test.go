package commit

import (
	"fmt"
	"os"
	"testing"
)

// Floors on the held-out apps, a little under what the committed model
// reached when it was last measured there (BENCHMARKS.md: precision
// 0.766, recall 0.752, 0.791 for money, deletes, messages, posts and
// calls, 0.679 for the weakest language, Arabic; the gate asks for 0.821
// of the controls that commit), so that a change to the tables, the
// features or the trainer that costs accuracy on apps nobody tuned for
// fails here. They are far from the targets of issue 13 (recall 0.98 and
// 0.95, precision 0.90, no language below 0.95).
const (
	heldOutFloorPrecision      = 0.75
	heldOutFloorRecall         = 0.73
	heldOutFloorAskFirstRecall = 0.78
	heldOutFloorLangRecall     = 0.66
	heldOutFloorAsks           = 0.80
)

// TestHeldOut measures the committed detector on the held-out apps of the
// real-app corpus: the result BENCHMARKS.md reports. Nothing is tuned on
// these apps; `make commit-eval` prints the tables (COMMIT_EVAL=1).
func TestHeldOut(t *testing.T) {
	apps := heldOutApps(t)
	if len(apps) < 10 {
		t.Fatalf("corpus: got %d held-out apps; want at least 10", len(apps))
	}
	m := defaultModel()
	if m == nil {
		t.Fatal("the committed model does not load")
	}
	rows, _ := readRows(t, apps)
	all, blind, tables := newTally(), newTally(), newTally()
	for _, r := range rows {
		all.add(r, detectRow(m, r, askAt))
		tables.add(r, detectRow(nil, r, askAt))
		r.Category = ""
		blind.add(r, detectRow(m, r, askAt))
	}
	first := askFirstScore(all)
	out := fmt.Sprintf("held-out apps (%d of the corpus's %d), model trained on %d rows of %d apps, asking at %.2f\n\n%s",
		len(apps), len(corpusApps(t)), m.Rows, m.Apps, askAt, all.table())
	out += fmt.Sprintf("money, deletes, messages, posts and calls together: precision %.3f, recall %.3f\n", first.precision(), first.recall())
	out += fmt.Sprintf("without the app's category: precision %.3f, recall %.3f, asks when it commits %s\n",
		blind.all.precision(), blind.all.recall(), ratio(blind.asked, blind.commits))
	out += fmt.Sprintf("the gate (asking, whatever the kind): asks for %s of the controls that commit, %.3f of its asks are for one; for money, deletes, messages, posts and calls it asks for %s\n",
		ratio(all.asked, all.commits), all.gate.precision(), askFirstAsks(all))
	tf := askFirstScore(tables)
	out += fmt.Sprintf("the word tables and rules alone (no model): precision %.3f, recall %.3f, asks when it commits %s; money, deletes, messages, posts and calls: precision %.3f, recall %.3f\n",
		tables.all.precision(), tables.all.recall(), ratio(tables.asked, tables.commits), tf.precision(), tf.recall())
	out += fmt.Sprintf("the word tables and rules alone, the gate: %.3f of its asks are for a control that commits; for money, deletes, messages, posts and calls it asks for %s\n",
		tables.gate.precision(), askFirstAsks(tables))
	if os.Getenv("COMMIT_EVAL") != "" {
		fmt.Println(out)
		if os.Getenv("COMMIT_EVAL") == "verbose" {
			for _, l := range all.misses {
				fmt.Println("miss:", l)
			}
			for _, l := range all.falseAlarms {
				fmt.Println("false alarm:", l)
			}
		}
	} else {
		t.Log(out)
	}
	if p, r := all.all.precision(), all.all.recall(); p < heldOutFloorPrecision || r < heldOutFloorRecall {
		t.Errorf("held out: got precision %.3f, recall %.3f; want at least %.3f, %.3f", p, r, heldOutFloorPrecision, heldOutFloorRecall)
	}
	if r := all.gate.recall(); r < heldOutFloorAsks {
		t.Errorf("held out: the gate asks for %.3f of the controls that commit; want at least %.3f", r, heldOutFloorAsks)
	}
	if r := first.recall(); r < heldOutFloorAskFirstRecall {
		t.Errorf("held out, money, deletes, messages, posts and calls: got recall %.3f; want at least %.3f", r, heldOutFloorAskFirstRecall)
	}
	for _, l := range sortedKeys(all.byLang) {
		if r := all.byLang[l].recall(); r < heldOutFloorLangRecall {
			t.Errorf("held out, %s: got recall %.3f; want at least %.3f", l, r, heldOutFloorLangRecall)
		}
	}
}

// askFirstAsks is, of a tally's rows of the kinds that ask first, the
// share for which the gate asks (of any kind).
func askFirstAsks(tl *tally) string {
	asked, want := 0, 0
	for _, k := range Kinds {
		if askFirst(k) {
			asked += tl.askedByKind[k]
			want += tl.wantByKind[k]
		}
	}
	return ratio(asked, want)
}
