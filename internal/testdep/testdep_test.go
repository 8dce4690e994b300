package testdep

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeedFailsInCI runs a missing-program check in a child test process,
// with and without CI=true, and checks that it skips, or fails in CI.
func TestNeedFailsInCI(t *testing.T) {
	if os.Getenv("TESTDEP_CHILD") == "1" {
		Need(t, "pinky-no-such-program")
		return
	}
	for ci, want := range map[string]string{"": "--- SKIP", "true": "--- FAIL"} {
		c := exec.Command(os.Args[0], "-test.run=^TestNeedFailsInCI$", "-test.v")
		c.Env = append(os.Environ(), "TESTDEP_CHILD=1", "CI="+ci)
		out, _ := c.CombinedOutput()
		if !strings.Contains(string(out), want) {
			t.Errorf("CI=%q: want %s in:\n%s", ci, want, out)
		}
	}
	if p := Need(t, "pinky-no-such-program", "sh"); p == "" {
		t.Error("Need found no sh")
	}
}

// TestImmutable: an immutable file cannot be written, even by root, and
// can once the flag is cleared.
func TestImmutable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	clear := Immutable(t, path)
	if err := os.WriteFile(path, []byte("y"), 0o600); err == nil {
		t.Error("wrote an immutable file")
	}
	clear()
	if err := os.WriteFile(path, []byte("y"), 0o600); err != nil {
		t.Errorf("writing the file once the flag is cleared: %v", err)
	}
}
