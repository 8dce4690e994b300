//go:build linux

package history_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/history/historytest"
	"github.com/pinky-gateway/pinky/internal/testdep"
)

// TestSQLiteFaults runs the suite of a store that cannot be written on a
// real database, broken two real ways: a file size limit of zero for this
// process, so that every write of SQLite fails with EFBIG as it does on a
// full disk (Go ignores SIGXFSZ), and the database files made immutable
// while open, so that writes fail with EPERM.
func TestSQLiteFaults(t *testing.T) {
	t.Run("file size limit", func(t *testing.T) {
		historytest.RunFaults(t, func(t *testing.T) historytest.Faulty {
			return historytest.Faulty{Store: openTemp(t), Break: limitFileSize}
		})
	})
	t.Run("immutable", func(t *testing.T) {
		historytest.RunFaults(t, func(t *testing.T) historytest.Faulty {
			s := openTemp(t)
			return historytest.Faulty{Store: s, Break: func(t *testing.T) func() {
				fixes := []func(){testdep.Immutable(t, s.Path()), testdep.Immutable(t, s.Path()+"-wal")}
				return func() {
					for _, f := range fixes {
						f()
					}
				}
			}}
		})
	})
}

// limitFileSize sets this process's file size limit to zero: a write to
// any regular file fails with EFBIG. It returns the function that puts the
// old limit back. Nothing else of the package's tests runs meanwhile.
func limitFileSize(t *testing.T) func() {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 0, Max: old.Max}); err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// unwritable makes a file one this process cannot open for writing: the
// immutable flag for root (whom permissions do not stop), mode 0400
// otherwise. It returns the function that undoes it.
func unwritable(t *testing.T, path string) func() {
	t.Helper()
	if os.Geteuid() == 0 {
		return testdep.Immutable(t, path)
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	return func() { os.Chmod(path, 0o600) }
}

// TestOpenUnwritable: a database the daemon cannot write when it starts is
// opened for reading; every write fails with ErrUnwritable, and Health says
// why and that the daemon needs a restart once the file is writable.
func TestOpenUnwritable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}))
	must(t, s.AddStep(ctx, history.Step{ID: "p1", TaskID: "k1", Seq: 1, Outcome: "ok"}))
	must(t, s.Close())
	fix := unwritable(t, path)

	s, err = history.Open(path)
	if err != nil {
		t.Fatalf("Open of a read-only database: %v; want it opened for reading", err)
	}
	defer s.Close()
	if _, steps, err := s.Task(ctx, "k1"); err != nil || len(steps) != 1 {
		t.Errorf("Task: got %d steps, %v; want the step", len(steps), err)
	}
	err = s.AddStep(ctx, history.Step{ID: "p2", TaskID: "k1", Seq: 2, Outcome: history.StepRunning})
	if !errors.Is(err, history.ErrUnwritable) {
		t.Fatalf("AddStep: got %v; want ErrUnwritable", err)
	}
	h := s.Health()
	if !h.Failing || !strings.Contains(h.Cause, "read-only") || !strings.Contains(h.Fix, path) || !strings.Contains(h.Fix, "restart") {
		t.Errorf("Health: got %+v; want failing, read-only, naming the file and a restart", h)
	}
	fix()
}

// TestOpenWithImmutableShm: a -shm file that a crashed daemon of an older
// Pinky left behind, made immutable, neither crashes the store nor stops
// its writes: the WAL index is in memory, so the file is never opened.
// Before, SQLite fell back to a read-only index and every write failed.
func TestOpenWithImmutableShm(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "history.db")
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}))
	must(t, s.Close())
	if err := os.WriteFile(path+"-shm", make([]byte, 32<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	testdep.Immutable(t, path+"-shm")

	s, err = history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 20; i++ {
		must(t, s.AddStep(ctx, history.Step{ID: fmt.Sprint("p", i), TaskID: "k1", Seq: i, Outcome: "ok"}))
	}
	if n, err := s.CountSteps(ctx, "k1"); n != 20 || err != nil {
		t.Errorf("CountSteps: got %d, %v; want 20", n, err)
	}
}

const shmChildEnv = "PINKY_HISTORY_SHM_CHILD"

// TestShmChild is the child of TestImmutableShmWhileOpen; alone it skips.
// It opens the store, writes, makes the -shm file immutable (creating it
// when there is none), and writes again.
func TestShmChild(t *testing.T) {
	path := os.Getenv(shmChildEnv)
	if path == "" {
		t.Skip("the child process of TestImmutableShmWhileOpen")
	}
	ctx := context.Background()
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must(t, s.StartTask(ctx, history.Task{ID: "k1", StartedAt: time.Now()}))
	must(t, s.AddStep(ctx, history.Step{ID: "p1", TaskID: "k1", Seq: 1, Outcome: "ok"}))
	f, err := os.OpenFile(path+"-shm", os.O_CREATE|os.O_RDONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := testdep.SetImmutable(path+"-shm", true); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 50; i++ {
		if err := s.AddStep(ctx, history.Step{ID: fmt.Sprint("p", i), TaskID: "k1", Seq: i, Outcome: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("wrote 50 steps")
}

// TestImmutableShmWhileOpen makes the -shm file immutable under an open
// store, in a child process: with the index mapped from that file, the
// next write that touches a page of it dies of SIGBUS, and so would the
// daemon. The store must write on.
func TestImmutableShmWhileOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.db")
	// The child sets the flag itself; make sure it can here.
	probe := filepath.Join(t.TempDir(), "probe")
	if err := os.WriteFile(probe, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	testdep.Immutable(t, probe)()
	t.Cleanup(func() { testdep.SetImmutable(path+"-shm", false) })

	cmd := exec.Command(os.Args[0], "-test.run=^TestShmChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), shmChildEnv+"="+path)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "wrote 50 steps") {
		t.Fatalf("the store's process: %v; want it to write on\n%s", err, out)
	}
	s, err := history.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.CountSteps(context.Background(), "k1"); n != 50 || err != nil {
		t.Errorf("CountSteps: got %d, %v; want 50", n, err)
	}
}
