package testkit

import (
	"testing"
	"time"
)

// Limit is how long WaitUntil waits. It only guards against a hang: no
// test that uses it asserts how fast something happens.
const Limit = 10 * time.Second

// WaitUntil polls cond until it holds, and fails the test with what when it
// does not hold within Limit. Call it from the test's goroutine.
func WaitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, Limit, what, cond)
}

// WaitWithin is WaitUntil with another limit, for a test that checks that
// something happens in time.
func WaitWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(limit, cond) {
		t.Fatalf("%s: not within %s", what, limit)
	}
}

// Poll calls cond until it returns true or limit passes, and reports
// whether it returned true. It checks often at first and then less, up to
// every 20 ms, so that a quick condition is seen at once and a slow one
// does not keep a small machine busy.
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	pause := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
		pause = min(2*pause, 20*time.Millisecond)
	}
	return true
}
