package testkit

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/load"
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
	pause := time.Millisecond / 2
	return poll(limit, cond, func() time.Duration {
		pause = min(2*pause, 20*time.Millisecond)
		return pause
	})
}

// PollEvery is Poll at a steady pace, for a condition that is costly to
// check (one that starts a process).
func PollEvery(limit, every time.Duration, cond func() bool) bool {
	return poll(limit, cond, func() time.Duration { return every })
}

func poll(limit time.Duration, cond func() bool, pause func() time.Duration) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause())
	}
	return true
}

// Slack is how many times longer than a promise a test on this machine
// gives a real process to keep it: 1, or 4 under the race detector, times
// the machine's load when it has more work than cores (the load average
// over the cores: a CI runner beside other jobs, or stress-ng beside make
// test), so that a busy host is not taken for a slow program. The two
// compound: the race detector slows the code, the load shares the cores.
func Slack() float64 {
	s := 1.0
	if Race {
		s = 4
	}
	return s * load.Factor()
}

// Scaled is d times Slack: a deadline a test gives a real process on
// this machine.
func Scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * Slack()) }

// CallLimit bounds every call a test makes through Context: far more
// than any call takes, so that it only ends a call that hangs, which
// then fails its test by name instead of the whole package's run.
const CallLimit = 2 * time.Minute

// Context is the context for a test's calls into a driver or a server:
// it ends when the test ends, or after CallLimit.
func Context(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), CallLimit)
	t.Cleanup(cancel)
	return ctx
}

// FreePort returns a loopback TCP port nothing listens on now, for a
// server a test starts that takes its port as an argument (adb's).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
