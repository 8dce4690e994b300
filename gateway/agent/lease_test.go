package agent

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/lease"
)

// refusing is a lease table that refuses every Take, Use and Release with
// err, and keeps the rest of the rules in memory.
type refusing struct {
	lease.Table
	err error
}

func (r refusing) Take(lease.Lease) (lease.Lease, error) { return lease.Lease{}, r.err }

func (r refusing) Use(lease.Holder, string) (lease.Lease, error) { return lease.Lease{}, r.err }

func (r refusing) Release(lease.Holder, string) (lease.Lease, error) { return lease.Lease{}, r.err }

// TestLeaseRefusals: each refusal of the lease table reaches the agent as
// the code and sentence it has always read, for phone_connect and for a
// call on a held phone (observe, release alike).
func TestLeaseRefusals(t *testing.T) {
	const dev = "sim-android-1"
	storeDown := errors.New("the store is down")
	since := time.Date(2026, 5, 4, 10, 0, 0, 0, time.Local)
	for _, tt := range []struct {
		name string
		err  error
		// connect and use are the codes and messages for phone_connect
		// (task "t2") and for a call on the phone; with prefix, the
		// messages are their beginnings.
		connect, use       Code
		connectMsg, useMsg string
		prefix             bool
	}{
		{
			name:    "held",
			err:     &lease.Error{Reason: lease.ErrHeld, Device: dev, Lease: lease.Lease{Holder: lease.Holder{Agent: "other"}, Task: "read mail"}},
			connect: CodeLeaseHeld, use: CodeLeaseHeld,
			connectMsg: `sim-android-1 is in use by "other" for the task "read mail"; pick another phone with phone_list, or wait until it is released`,
			useMsg:     `sim-android-1 is in use by "other" for the task "read mail"; pick another phone with phone_list, or wait until it is released`,
		},
		{
			name:    "stopped",
			err:     &lease.Error{Reason: lease.ErrStopped, Device: dev, StoppedTask: "t2"},
			connect: CodeStopped, use: CodeStopped,
			connectMsg: `the person stopped you on sim-android-1 for the task "t2"; do not take it again for this task`,
			useMsg:     `the person stopped you on sim-android-1 (task "t2"); do not use it for this task. Tell the user`,
		},
		{
			name:    "yours",
			err:     &lease.Error{Reason: lease.ErrYours, Device: dev, Lease: lease.Lease{Task: "first"}},
			connect: CodeInvalidArgument, use: CodeLeaseHeld,
			connectMsg: `you already hold sim-android-1 for the task "first"; release it first to start another task`,
			useMsg:     `sim-android-1 is in use by "" for the task "first"; pick another phone with phone_list, or wait until it is released`,
		},
		{
			name:    "not held",
			err:     &lease.Error{Reason: lease.ErrNotHeld, Device: dev},
			connect: CodeNotLeased, use: CodeNotLeased,
			connectMsg: `you do not hold sim-android-1; connect to it first with phone_connect`,
			useMsg:     `you do not hold sim-android-1; connect to it first with phone_connect`,
		},
		{
			name:    "offline",
			err:     &lease.Error{Reason: lease.ErrOffline, Device: dev, Since: since, Until: time.Now().Add(time.Hour)},
			connect: CodeDeviceOffline, use: CodeDeviceOffline,
			connectMsg: `sim-android-1 is offline since 10:00:00; your lease is kept for `,
			useMsg:     `sim-android-1 is offline since 10:00:00; your lease is kept for `,
			prefix:     true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{Leases: refusing{Table: lease.NewMemory(lease.Config{}), err: tt.err}})
			s := f.session(t, "agent")
			ctx := context.Background()
			_, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "t2"})
			wantMessage(t, "connect", err, tt.connect, tt.connectMsg, tt.prefix)
			f.m.mu.Lock()
			left := len(f.m.tasks)
			f.m.mu.Unlock()
			if left != 0 {
				t.Errorf("tasks after a refused connect: got %d; want none", left)
			}
			_, err = s.Observe(ctx, dev, false, false)
			wantMessage(t, "observe", err, tt.use, tt.useMsg, tt.prefix)
			if tt.name != "offline" { // release does not care that the phone is offline
				wantMessage(t, "release", s.Release(ctx, dev), tt.use, tt.useMsg, false)
			}
		})
	}

	// A table that fails (a shared table's store) is the gateway's fault,
	// not the agent's: the error is no refusal, and wraps the store's.
	f := newFixture(t, Config{Leases: refusing{Table: lease.NewMemory(lease.Config{}), err: storeDown}})
	s := f.session(t, "agent")
	ctx := context.Background()
	for what, err := range map[string]error{
		"connect": func() error { _, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "t"}); return err }(),
		"observe": func() error { _, err := s.Observe(ctx, dev, false, false); return err }(),
		"release": s.Release(ctx, dev),
	} {
		if _, isAgents := AsError(err); isAgents || !errors.Is(err, storeDown) {
			t.Errorf("%s with the store down: got %v; want an internal error wrapping the store's", what, err)
		}
	}
}

// wantMessage fails unless err is the agent's error with code and message
// (or a message that starts with it, with prefix).
func wantMessage(t *testing.T, what string, err error, code Code, msg string, prefix bool) {
	t.Helper()
	e := wantCode(t, what, err, code)
	if prefix && !strings.HasPrefix(e.Message, msg) || !prefix && e.Message != msg {
		t.Errorf("%s: got message %q; want %q", what, e.Message, msg)
	}
}

// sweeping is a lease table whose sweep ends every lease with one outcome,
// whatever the time.
type sweeping struct {
	*lease.Memory
	outcome lease.Outcome
}

func (s sweeping) Sweep(time.Time) []lease.Ended {
	var out []lease.Ended
	for _, l := range s.List() {
		if s.Drop(l.TaskID) {
			out = append(out, lease.Ended{Lease: l, Outcome: s.outcome})
		}
	}
	return out
}

// TestSweepOutcomes: the table decides how a swept lease ended; the agent
// writes that outcome in the history and the person's events, and tells
// the agent.
func TestSweepOutcomes(t *testing.T) {
	for _, outcome := range []lease.Outcome{lease.Expired, lease.Offline, lease.SessionClosed} {
		t.Run(string(outcome), func(t *testing.T) {
			log := events.New(0)
			f := newFixture(t, Config{Events: log, Leases: sweeping{lease.NewMemory(lease.Config{}), outcome}})
			s := f.session(t, "agent")
			ctx := context.Background()
			if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
				t.Fatal(err)
			}
			f.m.sweep(time.Now())
			_, err := s.Observe(ctx, "sim-android-1", false, false)
			wantCode(t, "after the sweep", err, CodeNotLeased)
			tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
			if len(tasks) != 1 || tasks[0].Outcome != string(outcome) {
				t.Errorf("tasks: got %+v; want one ended %s", tasks, outcome)
			}
			var ended []events.Event
			for _, e := range log.Since(0, 0).Events {
				if e.Kind == events.LeaseEnded {
					ended = append(ended, e)
				}
			}
			if len(ended) != 1 || ended[0].Data["outcome"] != string(outcome) || ended[0].Agent != "agent" || ended[0].Device != "sim-android-1" {
				t.Errorf("lease ended events: got %+v; want one, %s, of agent on sim-android-1", ended, outcome)
			}
		})
	}
}

// TestSharedTable: two gateways that share one lease table see each
// other's leases: a phone one of them leased is held for the other's
// agents, until it is released there.
func TestSharedTable(t *testing.T) {
	shared := lease.NewMemory(lease.Config{})
	a := newFixture(t, Config{Leases: shared})
	b := newFixture(t, Config{Leases: shared})
	ctx := context.Background()
	sa := a.session(t, "ana")
	sb := b.session(t, "ben")
	if _, err := sa.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "read mail"}); err != nil {
		t.Fatal(err)
	}
	_, err := sb.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "mine"})
	wantMessage(t, "connect on the other gateway", err, CodeLeaseHeld,
		`sim-android-1 is in use by "ana" for the task "read mail"; pick another phone with phone_list, or wait until it is released`, false)
	_, err = sb.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "observe on the other gateway", err, CodeLeaseHeld)
	phones, _ := sb.Phones(ctx)
	for _, p := range phones {
		if held := p.ID == "sim-android-1"; (p.Lease != nil) != held || held && (p.Lease.Yours || p.Lease.Agent != "ana" || p.Lease.TaskID != "") {
			t.Errorf("phone_list on the other gateway, %s: got lease %+v", p.ID, p.Lease)
		}
	}
	if ls := b.m.Leases(); len(ls) != 1 || ls[0].Agent != "ana" || ls[0].Task != "read mail" {
		t.Errorf("leases on the other gateway: got %+v; want ana's", ls)
	}
	if err := sa.Release(ctx, "sim-android-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "mine"}); err != nil {
		t.Errorf("connect once released on the first gateway: %v", err)
	}
}
