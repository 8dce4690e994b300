// Package testdep finds the programs tests need (ffmpeg, ffprobe, adb,
// chromium): a missing one skips the test on a developer's machine and
// fails it in CI (CI=true), where scripts/test-deps.sh installs it, so that
// CI never passes by skipping.
package testdep

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Need returns the path of the first of names found on PATH.
func Need(t testing.TB, names ...string) string {
	t.Helper()
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	what := strings.Join(names, " or ")
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed: scripts/test-deps.sh installs it", what)
	}
	t.Skipf("%s is not installed (make test installs it)", what)
	return ""
}
