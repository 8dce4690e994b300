package history

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadMigrations(t *testing.T) {
	sqlFile := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name    string
		files   []string
		want    []int
		wantErr string
	}{
		{"sorted by number", []string{"0002_b.sql", "0001_a.sql", "0010_j.sql", "0003_c.sql",
			"0004_d.sql", "0005_e.sql", "0006_f.sql", "0007_g.sql", "0008_h.sql", "0009_i.sql"},
			[]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ""},
		{"gap", []string{"0001_a.sql", "0003_c.sql"}, nil, "version 3, want 2"},
		{"duplicate", []string{"0001_a.sql", "0001_b.sql"}, nil, "version 1, want 2"},
		{"no number", []string{"init.sql"}, nil, "NNNN_name.sql"},
		{"zero", []string{"0000_a.sql"}, nil, "NNNN_name.sql"},
		{"none", nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for _, f := range tt.files {
				fsys["migrations/"+f] = sqlFile
			}
			ms, err := loadMigrations(fsys)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v; want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range ms {
				got = append(got, m.version)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
		})
	}
}

// The embedded migrations load; a misnamed file fails here, not in the
// field.
func TestEmbeddedMigrations(t *testing.T) {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || SchemaVersion() != len(ms) {
		t.Errorf("SchemaVersion: got %d; want %d > 0", SchemaVersion(), len(ms))
	}
}

func TestMigrateStepByStep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open("sqlite3", path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	v1 := migration{1, "0001_a.sql", "CREATE TABLE a (x INTEGER);"}
	v2 := migration{2, "0002_b.sql", "ALTER TABLE a ADD COLUMN y TEXT; CREATE TABLE b (z INTEGER);"}
	bad := migration{3, "0003_bad.sql", "CREATE TABLE c (x INTEGER); INSERT INTO nowhere VALUES (1);"}

	version := func() int {
		t.Helper()
		v, err := userVersion(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tableExists := func(name string) bool {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = ?`, name).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	if err := migrate(ctx, db, []migration{v1}); err != nil {
		t.Fatal(err)
	}
	if got := version(); got != 1 {
		t.Errorf("after v1: version %d; want 1", got)
	}
	// An upgraded binary applies only what is new.
	if err := migrate(ctx, db, []migration{v1, v2}); err != nil {
		t.Fatal(err)
	}
	if got := version(); got != 2 || !tableExists("b") {
		t.Errorf("after v2: version %d, table b %v; want 2, true", got, tableExists("b"))
	}
	// A failing migration leaves nothing of itself behind.
	err = migrate(ctx, db, []migration{v1, v2, bad})
	if err == nil || !strings.Contains(err.Error(), "0003_bad.sql") {
		t.Errorf("bad migration: got %v; want an error naming it", err)
	}
	if got := version(); got != 2 || tableExists("c") {
		t.Errorf("after bad: version %d, table c %v; want 2, false", got, tableExists("c"))
	}
	// An older binary refuses.
	if err := migrate(ctx, db, []migration{v1}); !errors.Is(err, ErrSchemaTooNew) {
		t.Errorf("older binary: got %v; want ErrSchemaTooNew", err)
	}
}

// The connections are set up as the doc comment promises.
func TestConnectionSettings(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		db     *sql.DB
		pragma string
		want   string
	}{
		{s.w, "journal_mode", "wal"},
		{s.w, "synchronous", "1"}, // NORMAL
		{s.w, "foreign_keys", "1"},
		{s.w, "busy_timeout", "5000"},
		{s.r, "foreign_keys", "1"},
		{s.r, "busy_timeout", "5000"},
		{s.r, "query_only", "1"},
	}
	for _, tt := range tests {
		var got string
		if err := tt.db.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			name := "writer"
			if tt.db == s.r {
				name = "reader"
			}
			t.Errorf("%s %s: got %s; want %s", name, tt.pragma, got, tt.want)
		}
	}
	if _, err := s.r.Exec(`INSERT INTO devices (id) VALUES ('x')`); err == nil {
		t.Error("a write through the read pool succeeded; want it refused")
	}
}

// A history written before approvals kept their details upgrades: the old
// rows read back with the new fields empty.
func TestMigrateApprovalDetails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if err := migrate(ctx, db, ms[:1]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`
		INSERT INTO tasks (id, text, started_at) VALUES ('k1', 'old', 1000);
		INSERT INTO approvals (id, task_id, tool, args, status, created_at, decided_at, decided_by)
		VALUES ('ap1', 'k1', 'tap', '{}', 'approved', 2000, 3000, 'person');`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Approvals(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	want := []Approval{{ID: "ap1", TaskID: "k1", Tool: "tap", Args: "{}", Status: ApprovalApproved,
		CreatedAt: time.UnixMilli(2000).UTC(), DecidedAt: time.UnixMilli(3000).UTC(), DecidedBy: "person"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("an old approval after the upgrade (-want +got):\n%s", diff)
	}
}

// A history written before recordings upgrades: its tasks read back without
// a recording, their steps at VideoAt -1, and a recording can be added.
func TestMigrateRecordings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if err := migrate(ctx, db, ms[:2]); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`
		INSERT INTO tasks (id, text, started_at, ended_at, outcome) VALUES ('k1', 'old', 1000, 5000, 'released');
		INSERT INTO steps (id, task_id, seq, tool, started_at) VALUES ('p1', 'k1', 1, 'tap', 2000);`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sum, steps, err := s.Task(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Recording || len(steps) != 1 || steps[0].VideoAt != -1 {
		t.Errorf("an old task after the upgrade: got recording %v, steps %+v; want none, VideoAt -1", sum.Recording, steps)
	}
	if err := s.PutRecording(ctx, Recording{TaskID: "k1", Path: "k1.mp4", Codec: CodecH264,
		StartedAt: time.UnixMilli(1500), Bytes: 1}); err != nil {
		t.Fatal(err)
	}
	if _, steps, err = s.Task(ctx, "k1"); err != nil || steps[0].VideoAt != 500*time.Millisecond {
		t.Errorf("VideoAt after PutRecording: got %+v, %v; want 500ms", steps, err)
	}
}
