package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// UpdateGolden reports whether the golden files are being rewritten:
// UPDATE_GOLDEN=1 in the environment.
func UpdateGolden() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Golden compares got with the file at path, byte for byte. With
// UPDATE_GOLDEN=1 it writes got to path instead, creating its folder. A
// missing file or a difference fails the test, showing the difference.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if UpdateGolden() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("golden file %s: %v (run the test with UPDATE_GOLDEN=1 to write it)", path, err)
		return
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (-want +got):\n%s\nrun the test with UPDATE_GOLDEN=1 to accept the change, and review the diff",
			path, cmp.Diff(string(want), string(got)))
	}
}
