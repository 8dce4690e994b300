package history

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Health says whether the history can be written, as its writes found it:
// a write that fails because the history cannot be written at all (see
// ErrUnwritable) makes it failing, and the next write that works makes it
// healthy again. Errors about what was written (ErrExists, ErrNotFound,
// ErrEnded, ErrInvalid) and a caller's cancelled context change nothing.
type Health struct {
	// Failing is true from a write that failed until one works again.
	Failing bool
	// Cause is why the last write failed, in words for people and without
	// paths: "the disk is full (no space left on device)". Empty when the
	// store has not failed.
	Cause string
	// Fix says what the person should do about Cause, naming the files.
	Fix string
	// Since is when writes began to fail; Last when the last one failed;
	// Failures counts the writes that failed since Since.
	Since, Last time.Time
	Failures    int
	// Recovered is when writes last worked again after failing; zero when
	// they never failed.
	Recovered time.Time
}

// A WriteError is a write that failed because the history cannot be
// written: errors.Is(err, ErrUnwritable) is true for it.
type WriteError struct {
	// Cause says why in words for people, without paths, as Health.Cause.
	Cause string
	// Err is the store's error, with what was being written.
	Err error
}

func (e *WriteError) Error() string {
	return fmt.Sprintf("%v (%s): %v", ErrUnwritable, e.Cause, e.Err)
}

// Is makes errors.Is(err, ErrUnwritable) true.
func (e *WriteError) Is(target error) bool { return target == ErrUnwritable }

func (e *WriteError) Unwrap() error { return e.Err }

// CauseOf returns the cause of a write that failed because the history
// cannot be written, and whether err is such a failure.
func CauseOf(err error) (string, bool) {
	var we *WriteError
	if errors.As(err, &we) {
		return we.Cause, true
	}
	return "", false
}

// meter keeps a store's Health. Its fast path, a write that works while
// the store is healthy, takes no lock.
type meter struct {
	failing atomic.Bool
	mu      sync.Mutex
	h       Health
}

// failed records a write that failed because the history cannot be
// written, and logs the change when writes were working.
func (m *meter) failed(cause, fix string, err error) {
	now := time.Now()
	m.mu.Lock()
	first := !m.h.Failing
	if first {
		m.h.Since, m.h.Failures = now, 0
	}
	m.h.Failing, m.h.Cause, m.h.Fix, m.h.Last = true, cause, fix, now
	m.h.Failures++
	m.failing.Store(true)
	m.mu.Unlock()
	if first {
		slog.Error("history: writes fail; agents' actions are refused until they work again", "cause", cause, "fix", fix, "err", err)
	}
}

// worked records a write that worked.
func (m *meter) worked() {
	if !m.failing.Load() {
		return
	}
	m.mu.Lock()
	if !m.h.Failing {
		m.mu.Unlock()
		return
	}
	m.h.Failing, m.h.Recovered = false, time.Now()
	failures, since := m.h.Failures, m.h.Since
	m.failing.Store(false)
	m.mu.Unlock()
	slog.Info("history: writes work again", "failed_writes", failures, "since", since)
}

func (m *meter) get() Health {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.h
}

// neutral reports whether a write's error says nothing about whether the
// history can be written: a refusal of what was written, or a call whose
// context ended (the caller's deadline, not the disk's fault).
func neutral(err error) bool {
	for _, e := range []error{ErrExists, ErrNotFound, ErrEnded, ErrInvalid, ErrSchemaTooNew, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
