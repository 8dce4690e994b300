//go:build !linux

package testdep

import (
	"errors"
	"os"
	"testing"
)

// Immutable sets a file's immutable flag on Linux; elsewhere the test
// skips, and fails in CI.
func Immutable(t testing.TB, path string) (clear func()) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("immutable files are tested on Linux only")
	}
	t.Skip("immutable files are tested on Linux only")
	return func() {}
}

// SetImmutable fails outside Linux.
func SetImmutable(path string, on bool) error {
	return errors.New("immutable files: Linux only")
}
