package history_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// rawDB opens the file without the package, to look at it from outside.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func pragma(t *testing.T, db *sql.DB, name string) string {
	t.Helper()
	var v string
	if err := db.QueryRow("PRAGMA " + name).Scan(&v); err != nil {
		t.Fatalf("PRAGMA %s: %v", name, err)
	}
	return v
}

func TestOpenMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	ctx := context.Background()
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertDevice(ctx, history.Device{ID: "d1", Name: "kept", LastSeen: time.UnixMilli(1)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopening applies nothing and keeps the data.
	for i := range 2 {
		s, err := history.Open(path)
		if err != nil {
			t.Fatalf("reopen %d: %v", i, err)
		}
		d, err := s.Device(ctx, "d1")
		if err != nil || d.Name != "kept" {
			t.Errorf("reopen %d: got %+v, %v; want the device kept", i, d, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}

	db := rawDB(t, path)
	if got, want := pragma(t, db, "user_version"), fmt.Sprint(history.SchemaVersion()); got != want {
		t.Errorf("user_version: got %s; want %s", got, want)
	}
	if got := pragma(t, db, "journal_mode"); got != "wal" {
		t.Errorf("journal_mode: got %s; want wal", got)
	}
	rows, err := db.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var tables []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	want := []string{"agents", "approvals", "devices", "media", "recordings", "sessions", "steps", "tasks"}
	if diff := cmp.Diff(want, tables); diff != "" {
		t.Errorf("tables (-want +got):\n%s", diff)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	future := history.SchemaVersion() + 1
	if _, err := rawDB(t, path).Exec(fmt.Sprintf("PRAGMA user_version = %d", future)); err != nil {
		t.Fatal(err)
	}

	s, err = history.Open(path)
	if err == nil {
		s.Close()
		t.Fatal("Open: got nil error; want ErrSchemaTooNew")
	}
	if !errors.Is(err, history.ErrSchemaTooNew) {
		t.Errorf("Open: got %v; want ErrSchemaTooNew", err)
	}
	// The message says what is wrong and what to do.
	for _, want := range []string{path, fmt.Sprint(future), fmt.Sprint(history.SchemaVersion()), "newer pinky"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Open error %q does not mention %q", err, want)
		}
	}
	// Refusing left the database as it was.
	if got := pragma(t, rawDB(t, path), "user_version"); got != fmt.Sprint(future) {
		t.Errorf("user_version after refusal: got %s; want %d", got, future)
	}
}

func TestOpenFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "home")
	path := filepath.Join(dir, "history.db")
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.UpsertDevice(context.Background(), history.Device{ID: "d"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path string
		want os.FileMode
	}{
		{dir, 0o700 | os.ModeDir},
		{path, 0o600},
		{path + "-wal", 0o600},
	}
	// The WAL index is in memory (the unix-excl VFS): no -shm file to map.
	if _, err := os.Stat(path + "-shm"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("history.db-shm: got %v; want no such file", err)
	}
	for _, tt := range tests {
		fi, err := os.Stat(tt.path)
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode() != tt.want {
			t.Errorf("%s: got mode %v; want %v", filepath.Base(tt.path), fi.Mode(), tt.want)
		}
	}
}

// The durability test kills a child process that is adding steps and checks
// that every step the child was told about survived: a step is committed when
// AddStep returns.

const killChildEnv = "PINKY_HISTORY_KILL_CHILD"

// TestKillChild is the child of TestDurableAcrossKill; alone it skips.
func TestKillChild(t *testing.T) {
	path := os.Getenv(killChildEnv)
	if path == "" {
		t.Skip("the child process of TestDurableAcrossKill")
	}
	s, err := history.Open(path)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second) // the parent kills us long before
	for i := 1; time.Now().Before(deadline); i++ {
		st := history.Step{ID: fmt.Sprintf("p%d", i), TaskID: "k1", Seq: i, Tool: "tap",
			Args: `{"ref":7}`, Outcome: "ok", Diff: strings.Repeat("x", 500), StartedAt: time.Now()}
		if err := s.AddStep(ctx, st); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		// Unbuffered: the parent sees the id as soon as AddStep returned.
		fmt.Println("step", st.ID)
	}
	os.Exit(2)
}

func TestDurableAcrossKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	path := filepath.Join(t.TempDir(), "history.db")
	ctx := context.Background()
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKillChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildEnv+"="+path)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const before = 300 // steps to see before the kill
	var acked []string
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "step "); ok {
			acked = append(acked, id)
		} else if strings.HasPrefix(line, "error ") {
			t.Errorf("child: %s", line)
		}
		if len(acked) == before && !killed {
			if err := cmd.Process.Kill(); err != nil { // SIGKILL
				t.Fatal(err)
			}
			killed = true
			// Keep reading: what the child printed before dying counts too.
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child ended before the kill after %d steps: %v\n%s", len(acked), err, stderr.String())
	}
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("child: got %v; want killed", err)
	}

	s, err = history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, steps, err := s.Task(context.Background(), "k1")
	if err != nil {
		t.Fatal(err)
	}
	have := make(map[string]bool, len(steps))
	for _, st := range steps {
		have[st.ID] = true
	}
	missing := 0
	for _, id := range acked {
		if !have[id] {
			missing++
			t.Errorf("step %s was acknowledged but is not in the history", id)
		}
	}
	t.Logf("acknowledged %d steps, found %d after SIGKILL, %d missing", len(acked), len(steps), missing)
	if len(acked) < before {
		t.Errorf("acknowledged: got %d; want at least %d", len(acked), before)
	}
}

// TestOpenDamaged: a damaged database is refused at Open with ErrDamaged
// and a message that names the file and says what to do, and it is left as
// it was for the person to look at.
func TestOpenDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a damaged page", func(t *testing.T, path string) {
			// Page 1 and the schema read fine; a page of the steps table
			// does not, which only a check of every page finds.
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, err := f.Stat()
			if err != nil {
				t.Fatal(err)
			}
			const page = 4096
			if fi.Size() < 40*page {
				t.Fatalf("the database has %d bytes; want at least 40 pages", fi.Size())
			}
			if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, page), 30*page); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "history.db")
			s, err := history.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 200; i++ {
				if err := s.AddStep(ctx, history.Step{ID: fmt.Sprint("p", i), TaskID: "k1", Seq: i, Outcome: "ok",
					Diff: strings.Repeat("+ [3] text \"a line\"\n", 40)}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil { // checkpoints the WAL into the file
				t.Fatal(err)
			}
			tt.damage(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}

			s, err = history.Open(path)
			if err == nil {
				s.Close()
				t.Fatal("Open of a damaged database: got nil error; want ErrDamaged")
			}
			if !errors.Is(err, history.ErrDamaged) {
				t.Errorf("Open: got %v; want ErrDamaged", err)
			}
			for _, want := range []string{path, "damaged", "mv " + path + " " + path + ".damaged", "start the daemon again", "new history"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("Open's error %q does not say %q", err, want)
				}
			}
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(before, after) {
				t.Errorf("the damaged file changed at Open (%v); want it left as it was", err)
			}
		})
	}
}
