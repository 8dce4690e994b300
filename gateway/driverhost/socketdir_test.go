//go:build linux

package driverhost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testkit"
)

// socketDirOf is the PLUGIN_UNIX_SOCKET_DIR in a process's environment, ""
// when it has none.
func socketDirOf(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	dir := ""
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := strings.CutPrefix(string(kv), SocketDirEnv+"="); ok {
			dir = v // the last one counts, as in exec
		}
	}
	return dir
}

// entries lists the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestSocketDirsGoWithTheirDrivers kills a driver with SIGKILL again and
// again: each process gets a private socket folder of its own under
// Config.SocketDir, its socket is in it, and no folder is left behind.
func TestSocketDirsGoWithTheirDrivers(t *testing.T) {
	cycles := 10
	base := filepath.Join(t.TempDir(), "s")
	cfg := testConfig(driverDir(t, "fake"))
	cfg.SocketDir = base
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for cycle := range cycles {
		s := status(h, "fake")
		if s.State != StateRunning {
			t.Fatalf("cycle %d: status %+v; want running", cycle, s)
		}
		dir := socketDirOf(t, s.Pid)
		if filepath.Dir(dir) != base {
			t.Fatalf("cycle %d: %s = %q; want a folder in %q", cycle, SocketDirEnv, dir, base)
		}
		if seen[dir] {
			t.Fatalf("cycle %d: socket folder %q used twice", cycle, dir)
		}
		seen[dir] = true
		fi, err := os.Stat(dir)
		if err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("cycle %d: socket folder mode %v; want 0700", cycle, fi.Mode().Perm())
		}
		if got := entries(t, dir); len(got) != 1 {
			t.Errorf("cycle %d: socket folder holds %v; want the driver's socket", cycle, got)
		}
		if got := entries(t, base); len(got) != 1 {
			t.Errorf("cycle %d: %s holds %v; want one folder, the running driver's", cycle, base, got)
		}
		if err := testkit.Kill(s.Pid); err != nil {
			t.Fatal(err)
		}
		waitFor(t, 5*time.Second, fmt.Sprintf("cycle %d: driver back", cycle), func() bool {
			n := status(h, "fake")
			return n.State == StateRunning && n.Pid != s.Pid
		})
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("cycle %d: the killed driver's socket folder %q: %v; want it removed", cycle, dir, err)
		}
	}
	h.Stop()
	if got := entries(t, base); len(got) != 0 {
		t.Errorf("after Stop, %s holds %v; want nothing", base, got)
	}
}

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if testkit.Alive(pid) {
		t.Fatalf("pid %d of an ended process is in use again", pid)
	}
	return pid
}

// TestStaleSocketDirsGoAtStart: the folders of a host that is no longer
// running go at the first start; those of live hosts (this process) stay.
func TestStaleSocketDirsGoAtStart(t *testing.T) {
	base := filepath.Join(t.TempDir(), "s")
	stale := filepath.Join(base, strconv.Itoa(deadPid(t))+"-123")
	live := filepath.Join(base, strconv.Itoa(os.Getpid())+"-456")
	other := filepath.Join(base, "notes")
	for _, d := range []string{stale, live, other} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(stale, "plugin123"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(driverDir(t, "fake"))
	cfg.SocketDir = base
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		dir  string
		kept bool
	}{
		{stale, false}, {live, true}, {other, true},
	}
	for _, tt := range tests {
		_, err := os.Stat(tt.dir)
		if kept := err == nil; kept != tt.kept {
			t.Errorf("%s: kept %v; want %v", filepath.Base(tt.dir), kept, tt.kept)
		}
	}
}

// TestUnsafeSocketBaseIsNotUsed: a base folder others can enter is not
// used; the driver still starts, choosing its own place.
func TestUnsafeSocketBaseIsNotUsed(t *testing.T) {
	base := filepath.Join(t.TempDir(), "s")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(driverDir(t, "fake"))
	cfg.SocketDir = base
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := status(h, "fake")
	if s.State != StateRunning {
		t.Fatalf("status %+v; want running", s)
	}
	if dir := socketDirOf(t, s.Pid); dir != "" {
		t.Errorf("%s = %q; want none with a base of mode 0755", SocketDirEnv, dir)
	}
	if got := entries(t, base); len(got) != 0 {
		t.Errorf("%s holds %v; want nothing", base, got)
	}
}
