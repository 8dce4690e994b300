// Package testkit is what the module's tests share: a buffer that
// goroutines write while the test reads it (Buffer, with a logger over it),
// a logger into the test's own output (Logger), waiting for a condition
// with a message (WaitUntil), and golden files that UPDATE_GOLDEN=1
// rewrites (Golden). A virtual phone in one call is its
// subpackage simtest, kept apart so that tests which need no phone do not
// build the virtual phones; a real PostgreSQL server for a package's tests
// is subpackage pgtest. The end-to-end harness is internal/e2e, and
// the programs tests need are found by internal/testdep.
//
// A helper that a second package's tests would copy belongs here.
package testkit

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Buffer is a bytes.Buffer that goroutines may write while the test reads
// it: a logger's destination, a process's stderr. The zero value is ready
// to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Bytes returns a copy of what was written so far.
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.b.Bytes())
}

// Logger returns a logger that writes text lines of every level, debug
// included, into b.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// Logger returns a logger that writes text lines of every level into t's
// log (shown with -v, or when the test fails). Stop what logs to it before
// the test ends: the testing package panics at a log line after that.
func Logger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testLog struct{ t testing.TB }

func (w testLog) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
