package agent

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// hanging is a driver whose screen reads (with screen set) or actions
// (with act set) wait until their context ends, like a driver that stopped
// answering behind the driver host, which gives up when the context does.
type hanging struct {
	sdk.Driver
	screen, act atomic.Bool
	inside      atomic.Int32 // calls waiting now
}

func (h *hanging) hang(ctx context.Context) error {
	h.inside.Add(1)
	defer h.inside.Add(-1)
	<-ctx.Done()
	return ctx.Err()
}

func (h *hanging) Screen(ctx context.Context, id string, display int) (*sdk.Screen, error) {
	if h.screen.Load() {
		return nil, h.hang(ctx)
	}
	return h.Driver.Screen(ctx, id, display)
}

func (h *hanging) Act(ctx context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	if h.act.Load() {
		return sdk.ActResult{}, h.hang(ctx)
	}
	return h.Driver.Act(ctx, id, a)
}

func (f *fixture) hanging() *hanging {
	h := &hanging{Driver: f.drv.d}
	f.drv.wrap = func(sdk.Driver) sdk.Driver { return h }
	return h
}

// background runs call in the background until the driver hangs, and
// returns a function that waits (up to limit) for its error.
func background(t *testing.T, h *hanging, call func() error) func(limit time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	waitUntil(t, func() bool { return h.inside.Load() > 0 })
	return func(limit time.Duration) error {
		t.Helper()
		select {
		case err := <-done:
			return err
		case <-time.After(limit):
			t.Fatalf("the call did not return within %s", limit)
			return nil
		}
	}
}

// TestPersonEndsHungCalls: the person's stop ends a call that waits on a
// hung driver at once, read or action; a take-over ends an action (not a
// read) and refuses the next ones until the hand-back.
func TestPersonEndsHungCalls(t *testing.T) {
	const device = "sim-android-1"
	tapMessages := func(s *Session) error {
		_, err := s.Act(context.Background(), device, Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil)
		return err
	}
	observe := func(s *Session) error {
		_, err := s.Observe(context.Background(), device, true, false)
		return err
	}
	tests := []struct {
		name    string
		act     bool // hang actions; else screen reads
		call    func(*Session) error
		person  func(m *Manager) error
		code    Code
		message string
	}{
		{"stop ends a read", false, observe, func(m *Manager) error { return m.Stop(device) }, CodeStopped, "do not use it for this task"},
		{"stop ends an action", true, tapMessages, func(m *Manager) error { return m.Stop(device) }, CodeStopped, "it may or may not have happened"},
		{"stop all ends an action", true, tapMessages, func(m *Manager) error {
			if n := m.StopAll(); n != 1 {
				return fmt.Errorf("stopped %d; want 1", n)
			}
			return nil
		}, CodeStopped, "it may or may not have happened"},
		{"take-over ends an action", true, tapMessages, func(m *Manager) error { return m.TakeOver(device) }, CodePersonInControl, "observe before repeating"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			s := f.connected(t)
			h := f.hanging()
			h.act.Store(tt.act)
			h.screen.Store(!tt.act)
			wait := background(t, h, func() error { return tt.call(s) })
			if err := tt.person(f.m); err != nil {
				t.Fatal(err)
			}
			e := wantCode(t, tt.name, wait(2*time.Second), tt.code)
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q; want it to contain %q", e.Message, tt.message)
			}
			if h.inside.Load() != 0 {
				waitUntil(t, func() bool { return h.inside.Load() == 0 }) // the driver's call was cancelled too
			}
		})
	}
}

// TestTakeOverRefusesActionsUntilHandBack: while the person has the phone,
// an action never reaches the driver, even one that passed the first
// check (an approval's); reads still work; after the hand-back actions go.
func TestTakeOverRefusesActionsUntilHandBack(t *testing.T) {
	const device = "sim-android-1"
	f := newFixture(t, Config{})
	s := f.connected(t)
	l, err := s.hold(device)
	if err != nil {
		t.Fatal(err)
	}
	drv := f.m.bind(l, sdk.Complete(f.drv.d))
	if err := f.m.TakeOver(device); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = drv.Act(ctx, device, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	wantCode(t, "an action while the person has the phone", err, CodePersonInControl)
	if _, err := drv.Screen(ctx, device, 0); err != nil {
		t.Errorf("a read while the person has the phone: %v", err)
	}
	if err := f.m.HandBack(device); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.Act(ctx, device, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Errorf("an action after the hand-back: %v", err)
	}
}

// TestStopEndsApprovalWait: an agent waiting for the person's approval is
// stopped at once, and its card is denied so that nothing it asked runs.
func TestStopEndsApprovalWait(t *testing.T) {
	book := approval.NewBook(0)
	f := newFixture(t, Config{Guard: askOnSend{}, Approvals: book, ApprovalWait: 30 * time.Second})
	s := f.session(t, "agent")
	inThread(t, f, s)
	done := make(chan error, 1)
	go func() {
		_, err := s.Act(context.Background(), "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Send"}}, nil)
		done <- err
	}()
	waitUntil(t, func() bool { return len(book.List(true)) == 1 })
	id := book.List(true)[0].ID
	start := time.Now()
	if err := f.m.Stop("sim-android-1"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		wantCode(t, "the send waiting for its approval", err, CodeStopped)
	case <-time.After(3 * time.Second):
		t.Fatalf("the approval wait did not end within 3 s of the stop")
	}
	if took := time.Since(start); took > testkit.Scaled(2*time.Second) {
		t.Errorf("the wait ended %s after the stop; want at once", took)
	}
	if c, _, err := book.Get(id, s.ID()); err != nil || c.Status != approval.Denied {
		t.Errorf("card after the stop: %+v, %v; want denied", c, err)
	}
}

// TestReleaseEndsHungCall: the agent's own release (from another call of
// its session) ends a call waiting on the driver with not_leased.
func TestReleaseEndsHungCall(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	h := f.hanging()
	h.screen.Store(true)
	wait := background(t, h, func() error {
		_, err := s.Observe(context.Background(), "sim-android-1", true, false)
		return err
	})
	if err := s.Release(context.Background(), "sim-android-1"); err != nil {
		t.Fatal(err)
	}
	e := wantCode(t, "observe cut by the release", wait(2*time.Second), CodeNotLeased)
	if !strings.Contains(e.Message, "released") {
		t.Errorf("message %q; want it to say the lease was released", e.Message)
	}
}

// TestFromDriverTimeout: a driver call past its deadline is timeout for a
// read and uncertain for an action.
func TestFromDriverTimeout(t *testing.T) {
	err := fmt.Errorf(`driver "sim": screen on x did not answer within 25s: %w`, sdk.ErrTimeout)
	tests := []struct {
		acting bool
		code   Code
		text   string
	}{
		{false, CodeTimeout, "did not answer within 25s"},
		{true, CodeUncertain, "observe before repeating"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint("acting=", tt.acting), func(t *testing.T) {
			e := wantCode(t, "timeout", fromDriver("x", err, tt.acting), tt.code)
			if !strings.Contains(e.Message, tt.text) {
				t.Errorf("message %q; want it to contain %q", e.Message, tt.text)
			}
		})
	}
}
