package history_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/history"
)

var p0 = time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

// prunable records task old (ended at p0+10m, with a step, its screenshot,
// an approval and a recording) and task run (open, started a day before),
// each in its own session, and returns the cut that prunes old.
func prunable(t *testing.T, s history.Store) time.Time {
	t.Helper()
	ctx := context.Background()
	for _, k := range []struct {
		id    string
		start time.Time
	}{{"old", p0}, {"run", p0.Add(-24 * time.Hour)}} {
		steps := []history.Step{{ID: k.id + "-p1", TaskID: k.id, Seq: 1, Tool: "tap", StartedAt: k.start.Add(time.Second)}}
		must(t, s.StartSession(ctx, history.Session{ID: "s-" + k.id, StartedAt: k.start}))
		must(t, s.StartTask(ctx, history.Task{ID: k.id, SessionID: "s-" + k.id, StartedAt: k.start}))
		must(t, s.AddStep(ctx, steps[0]))
		must(t, s.AddMedia(ctx, history.Media{ID: k.id + "-p1-after", TaskID: k.id, StepID: k.id + "-p1",
			Kind: history.KindAfter, Path: k.id + "/" + k.id + "-p1-after.jpg", Bytes: 3}))
		must(t, s.UpsertApproval(ctx, history.Approval{ID: k.id + "-ap", TaskID: k.id, StepID: k.id + "-p1",
			Status: history.ApprovalDenied, CreatedAt: k.start}))
		must(t, s.PutRecording(ctx, history.Recording{TaskID: k.id, Path: k.id + ".mp4",
			Codec: history.CodecH264, StartedAt: k.start, Bytes: 4}))
	}
	must(t, s.EndTask(ctx, "old", p0.Add(10*time.Minute), "released"))
	must(t, s.EndSession(ctx, "s-old", p0.Add(10*time.Minute)))
	return p0.Add(time.Hour)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// counts is what a database holds, table by table.
func counts(t *testing.T, s *history.SQLite) map[string]int {
	t.Helper()
	db := rawDB(t, s.Path())
	out := make(map[string]int)
	for _, table := range []string{"sessions", "tasks", "steps", "approvals", "media", "recordings"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// A Prune that fails part way deletes nothing.
func TestPruneAtomic(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	ctx := context.Background()
	before := prunable(t, s)
	want := counts(t, s)

	// The tasks are deleted after their steps, media, approvals and
	// recordings; a trigger makes that last delete fail.
	db := rawDB(t, s.Path())
	if _, err := db.Exec(`CREATE TRIGGER no_prune BEFORE DELETE ON tasks
		BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`); err != nil {
		t.Fatal(err)
	}
	_, err := s.Prune(ctx, before)
	if err == nil || !strings.Contains(err.Error(), "refused by the test") {
		t.Fatalf("Prune with a failing delete: got %v; want the trigger's error", err)
	}
	if diff := cmp.Diff(want, counts(t, s)); diff != "" {
		t.Errorf("rows after a failed Prune (-want +got):\n%s", diff)
	}
	if _, err := s.Recording(ctx, "old"); err != nil {
		t.Errorf("Recording of old after a failed Prune: %v", err)
	}

	// Without the trigger the same Prune goes through.
	if _, err := db.Exec(`DROP TRIGGER no_prune`); err != nil {
		t.Fatal(err)
	}
	p, err := s.Prune(ctx, before)
	must(t, err)
	if p.Tasks != 1 || p.Sessions != 1 {
		t.Errorf("Prune: got %+v; want one task and one session", p)
	}
	want = map[string]int{"sessions": 1, "tasks": 1, "steps": 1, "approvals": 1, "media": 1, "recordings": 1}
	if diff := cmp.Diff(want, counts(t, s)); diff != "" {
		t.Errorf("rows after Prune (-want +got):\n%s", diff)
	}
}

func TestPruneClosed(t *testing.T) {
	s := openTemp(t)
	before := prunable(t, s)
	must(t, s.Close())
	if _, err := s.Prune(context.Background(), before); err == nil {
		t.Error("Prune on a closed store: got nil error")
	}
	if _, err := history.PruneFiles(context.Background(), s, t.TempDir(), t.TempDir(), before, nil); err == nil {
		t.Error("PruneFiles on a closed store: got nil error")
	}
}

// tree writes files under dir; a zero age is new, else the file's time is
// set that far back.
func tree(t *testing.T, dir string, files map[string]time.Duration) {
	t.Helper()
	for rel, age := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		must(t, os.MkdirAll(filepath.Dir(p), 0o700))
		must(t, os.WriteFile(p, []byte("data"), 0o600))
		if age > 0 {
			old := time.Now().Add(-age)
			must(t, os.Chtimes(p, old, old))
		}
	}
}

// exists lists which of the paths under dir exist.
func exists(dir string, rels ...string) map[string]bool {
	out := make(map[string]bool)
	for _, rel := range rels {
		_, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
		out[rel] = err == nil
	}
	return out
}

func TestPruneFiles(t *testing.T) {
	stores := []struct {
		name string
		open func(t *testing.T) history.Store
	}{
		{"SQLite", func(t *testing.T) history.Store { return openTemp(t) }},
		{"Memory", func(t *testing.T) history.Store { return history.NewMemory() }},
	}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			s := st.open(t)
			defer s.Close()
			ctx := context.Background()
			before := prunable(t, s)
			home := t.TempDir()
			mediaDir, recDir := filepath.Join(home, "media"), filepath.Join(home, "recordings")
			const day = 24 * time.Hour
			tree(t, mediaDir, map[string]time.Duration{
				"old/old-p1-after.jpg": 0,   // named by a pruned row: goes, however new
				"run/run-p1-after.jpg": day, // named by a row that stays: stays, however old
				"gone/x.jpg":           day, // an orphan: goes, with its folder
				"run/.p2-before.jpg.1": day, // a writer's temporary file, orphaned
				"run/p3-before.jpg":    0,   // no row yet, but new: stays
			})
			tree(t, recDir, map[string]time.Duration{
				"old.mp4":   0,
				"run.mp4":   day,
				"crash.mp4": 2 * time.Hour,
				"fresh.mp4": 0,
			})
			// A link to a file outside, old and unnamed, is not ours to
			// delete, nor is what it points to.
			outside := filepath.Join(home, "outside.jpg")
			must(t, os.WriteFile(outside, []byte("keep"), 0o600))
			must(t, os.Symlink(outside, filepath.Join(mediaDir, "link.jpg")))
			old := time.Now().Add(-day)
			must(t, os.Chtimes(filepath.Join(mediaDir, "gone"), old, old))

			var logs bytes.Buffer
			p, err := history.PruneFiles(ctx, s, mediaDir, recDir, before,
				slog.New(slog.NewTextHandler(&logs, nil)))
			must(t, err)
			want := history.Pruned{
				Tasks: 1, Steps: 1, Approvals: 1, Media: 1, Recordings: 1, Sessions: 1,
				Files: history.Files{Media: []string{"old/old-p1-after.jpg"}, Recordings: []string{"old.mp4"}},
				// old's screenshot and recording; gone/x.jpg, the
				// temporary file and crash.mp4.
				Removed: 2, Orphans: 3,
			}
			if diff := cmp.Diff(want, p); diff != "" {
				t.Errorf("PruneFiles (-want +got):\n%s", diff)
			}
			wantMedia := map[string]bool{
				"old/old-p1-after.jpg": false, "old": false,
				"run/run-p1-after.jpg": true,
				"gone/x.jpg":           false, "gone": false,
				"run/.p2-before.jpg.1": false,
				"run/p3-before.jpg":    true,
				"link.jpg":             true,
			}
			if diff := cmp.Diff(wantMedia, exists(mediaDir, keys(wantMedia)...)); diff != "" {
				t.Errorf("media files (-want +got):\n%s", diff)
			}
			wantRec := map[string]bool{"old.mp4": false, "run.mp4": true, "crash.mp4": false, "fresh.mp4": true}
			if diff := cmp.Diff(wantRec, exists(recDir, keys(wantRec)...)); diff != "" {
				t.Errorf("recordings (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(outside); err != nil {
				t.Errorf("the file a link points to: %v", err)
			}
			if !strings.Contains(logs.String(), "crash.mp4") {
				t.Errorf("log does not name the orphan crash.mp4:\n%s", logs.String())
			}

			// The running task is whole.
			sum, steps, err := s.Task(ctx, "run")
			must(t, err)
			if sum.EndedAt != (time.Time{}) || len(steps) != 1 || !sum.Recording {
				t.Errorf("running task: got %+v, %d steps; want it open, with its step and recording", sum, len(steps))
			}

			// Again: nothing left to do.
			p, err = history.PruneFiles(ctx, s, mediaDir, recDir, before, slog.New(slog.DiscardHandler))
			must(t, err)
			if diff := cmp.Diff(history.Pruned{}, p); diff != "" {
				t.Errorf("PruneFiles again (-want +got):\n%s", diff)
			}
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Missing folders have nothing to sweep; a file a pruned row names that is
// already gone is not an error.
func TestPruneFilesMissing(t *testing.T) {
	s := history.NewMemory()
	before := prunable(t, s)
	home := t.TempDir()
	p, err := history.PruneFiles(context.Background(), s, filepath.Join(home, "media"),
		filepath.Join(home, "recordings"), before, slog.New(slog.DiscardHandler))
	must(t, err)
	if p.Tasks != 1 || p.Removed != 0 || p.Orphans != 0 {
		t.Errorf("PruneFiles: got %+v; want one task and no files", p)
	}
	if _, err := history.PruneFiles(context.Background(), s, "", home, before, nil); !errors.Is(err, history.ErrInvalid) {
		t.Errorf("PruneFiles without a media folder: got %v; want ErrInvalid", err)
	}
}

// A pruned row naming a path outside its folder deletes nothing there.
func TestPruneFilesStaysInside(t *testing.T) {
	s := history.NewMemory()
	ctx := context.Background()
	must(t, s.StartTask(ctx, history.Task{ID: "k1", StartedAt: p0}))
	must(t, s.AddMedia(ctx, history.Media{ID: "m1", TaskID: "k1", Path: "../victim.jpg"}))
	must(t, s.EndTask(ctx, "k1", p0, "released"))
	home := t.TempDir()
	victim := filepath.Join(home, "victim.jpg")
	must(t, os.WriteFile(victim, []byte("x"), 0o600))
	mediaDir := filepath.Join(home, "media")
	must(t, os.Mkdir(mediaDir, 0o700))

	p, err := history.PruneFiles(ctx, s, mediaDir, filepath.Join(home, "recordings"), p0.Add(time.Hour),
		slog.New(slog.DiscardHandler))
	if !errors.Is(err, history.ErrInvalid) {
		t.Errorf("PruneFiles: got %v; want ErrInvalid for the path outside", err)
	}
	if p.Tasks != 1 || p.Removed != 0 {
		t.Errorf("PruneFiles: got %+v; want the row pruned and no file removed", p)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("the file outside the media folder: %v", err)
	}
}
