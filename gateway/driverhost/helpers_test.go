package driverhost

import (
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testkit"
)

// bin holds the test programs TestMain builds.
var bin struct {
	dir  string
	fake string // testdata/pinky-driver-fake
	host string // testdata/hostprog
	sim  string // drivers/sim/cmd/pinky-driver-sim
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "driverhost-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin.dir = dir
	build := func(out, pkg string) error {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Stderr = os.Stderr
		return cmd.Run()
	}
	bin.fake = filepath.Join(dir, "pinky-driver-fake")
	bin.host = filepath.Join(dir, "hostprog")
	bin.sim = filepath.Join(dir, "pinky-driver-sim")
	for out, pkg := range map[string]string{
		bin.fake: "./testdata/pinky-driver-fake", bin.host: "./testdata/hostprog", bin.sim: "../../drivers/sim/cmd/pinky-driver-sim",
	} {
		if err := build(out, pkg); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			return 1
		}
	}
	sim := filepath.Join(dir, "pinky-driver-sim")
	cmd := exec.Command("go", "build", "-o", sim, "../../drivers/sim/cmd/pinky-driver-sim")
	if out, err := cmd.CombinedOutput(); err == nil {
		bin.sim = sim
	} else if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "pinky-driver-sim does not build; using the fake driver: %s\n", out)
	}
	return m.Run()
}

// driverDir returns a folder with pinky-driver-<name> links to the fake
// driver, one per name.
func driverDir(t testing.TB, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.Symlink(bin.fake, filepath.Join(dir, Prefix+n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// testConfig is a config for tests: fast backoff, no search but dir.
func testConfig(dir string) Config {
	cfg := Config{
		ExeDir:       dir,
		StartTimeout: 5 * time.Second,
		Backoff: Backoff{
			Initial:     5 * time.Millisecond,
			Max:         50 * time.Millisecond,
			Stable:      time.Millisecond, // every run is stable: crash tests never reach failed
			MaxFailures: 3,
			FailedRetry: time.Hour,
		},
		Logger: slog.New(slog.DiscardHandler),
	}
	if os.Getenv("DRIVERHOST_LOG") != "" {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// waitFor polls cond until it holds; each caller names its limit.
var waitFor = testkit.WaitWithin

func status(h *Host, name string) DriverStatus {
	for _, s := range h.Drivers() {
		if s.Name == name {
			return s
		}
	}
	return DriverStatus{}
}

// onlineDevices returns the ids of the driver's online devices.
func onlineDevices(h *Host, driver string) []string {
	var ids []string
	for _, d := range h.Devices() {
		if d.Driver == driver && d.Online {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// alive reports whether pid is a process that has not exited (a zombie has).
func alive(pid int) bool {
	if !testkit.Alive(pid) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
		return false
	}
	return true
}

// children lists the pids whose parent is this process.
func children(t testing.TB) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	self := os.Getpid()
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state, ppid, ...
		if len(f) > 1 && f[1] == strconv.Itoa(self) {
			out = append(out, pid)
		}
	}
	return out
}

func countFDs(t testing.TB) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// vmRSS returns a process's resident memory in KiB.
func vmRSS(pid int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for %d", pid)
}
