package agent

import (
	"context"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// resumable opens a session of the named agent with a resume key; the test
// parks or closes it itself.
func (f *fixture) resumable(t *testing.T, name, key string) *Session {
	t.Helper()
	s, err := f.m.Open(context.Background(), Client{Name: name, Version: "1.0"}, "http")
	if err != nil {
		t.Fatal(err)
	}
	s.SetResumeKey(key)
	return s
}

func (f *fixture) tasks(t *testing.T) []history.TaskSummary {
	t.Helper()
	ts, err := f.store.Tasks(context.Background(), history.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestParkAndResume(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	a := f.resumable(t, "remote", "tok1/remote/1.0")
	f.drv.d.Unlock(ctx, "sim-android-1", "1234")
	if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "unlock"}); err != nil {
		t.Fatal(err)
	}
	tap(t, a, "Settings")
	if n := f.m.Park(a, time.Minute); n != 1 {
		t.Fatalf("Park: got %d leases; want 1", n)
	}
	ls := f.m.Leases()
	if len(ls) != 1 || ls[0].ParkedUntil.IsZero() {
		t.Fatalf("leases while parked: got %+v; want one, parked", ls)
	}

	b := f.resumable(t, "remote", "tok1/remote/1.0")
	defer b.Close()
	if n := b.Resume(); n != 1 {
		t.Fatalf("Resume: got %d; want 1", n)
	}
	tap(t, b, "Wi-Fi")
	if ls := f.m.Leases(); len(ls) != 1 || !ls[0].ParkedUntil.IsZero() || ls[0].Steps != 3 {
		t.Errorf("leases after resume: got %+v; want one, not parked, 3 steps", ls)
	}
	// The grace has no hold on a lease that was taken over.
	f.m.sweep(time.Now().Add(2 * time.Minute))
	tap(t, b, "Bluetooth")

	ts := f.tasks(t)
	if len(ts) != 1 || ts[0].Outcome != "" || ts[0].Steps != 4 {
		t.Fatalf("tasks: got %+v; want one open task with connect and three taps", ts)
	}
	sess, err := f.store.Session(ctx, a.ID())
	if err != nil || sess.EndedAt.IsZero() {
		t.Errorf("the parked session: got %+v, %v; want it ended in the history", sess, err)
	}
	b.Close()
	if ts := f.tasks(t); ts[0].Outcome != "session_closed" {
		t.Errorf("task after the resuming session closed: got %q; want session_closed", ts[0].Outcome)
	}
}

// A session that started before the old one was parked takes a parked
// lease over when it first uses the phone.
func TestResumeOnUse(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	a := f.resumable(t, "remote", "k")
	b := f.resumable(t, "remote", "k")
	defer b.Close()
	if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	f.m.Park(a, time.Minute)
	phones, _ := b.Phones(ctx)
	if p := phones[0]; p.Lease == nil || !p.Lease.Yours || p.Lease.TaskID == "" {
		t.Errorf("phone_list of the same agent: got lease %+v; want it shown as yours", p.Lease)
	}
	if _, err := b.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatalf("observe a parked lease of the same agent: %v", err)
	}
	if err := b.Release(ctx, "sim-android-1"); err != nil {
		t.Fatal(err)
	}
	if ts := f.tasks(t); len(ts) != 1 || ts[0].Outcome != "released" {
		t.Errorf("tasks: got %+v; want one released", ts)
	}
}

func TestParkedLeaseRefusesOthers(t *testing.T) {
	for _, tt := range []struct {
		name, agent, key string
	}{
		{"another agent, same key", "other", "k"},
		{"same agent, another key", "remote", "k2"},
		{"no key", "remote", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			ctx := context.Background()
			a := f.resumable(t, "remote", "k")
			if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
				t.Fatal(err)
			}
			f.m.Park(a, time.Minute)
			b := f.resumable(t, tt.agent, tt.key)
			defer b.Close()
			if n := b.Resume(); n != 0 {
				t.Errorf("Resume: got %d; want 0", n)
			}
			_, err := b.Observe(ctx, "sim-android-1", false, false)
			wantCode(t, "observe", err, CodeLeaseHeld)
			_, err = b.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "mine now"})
			wantCode(t, "connect", err, CodeLeaseHeld)
			err = b.Release(ctx, "sim-android-1")
			wantCode(t, "release", err, CodeLeaseHeld)
		})
	}
}

func TestParkedLeaseEndsAfterGrace(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	a := f.resumable(t, "remote", "k")
	if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	f.m.Park(a, time.Minute)
	f.m.sweep(time.Now().Add(30 * time.Second))
	if len(f.m.Leases()) != 1 {
		t.Fatal("the lease ended within its grace")
	}
	f.m.sweep(time.Now().Add(61 * time.Second))
	b := f.resumable(t, "remote", "k")
	defer b.Close()
	if n := b.Resume(); n != 0 {
		t.Errorf("Resume after the grace: got %d; want 0", n)
	}
	_, err := b.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "after the grace", err, CodeNotLeased)
	if ts := f.tasks(t); len(ts) != 1 || ts[0].Outcome != "session_closed" {
		t.Errorf("tasks: got %+v; want one ended session_closed", ts)
	}
}

// Without a key (or a grace), Park is Close.
func TestParkWithoutKeyCloses(t *testing.T) {
	for _, tt := range []struct {
		name  string
		key   string
		grace time.Duration
	}{
		{"no key", "", time.Minute},
		{"no grace", "k", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			a := f.resumable(t, "remote", tt.key)
			if _, err := a.Connect(context.Background(), ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
				t.Fatal(err)
			}
			if n := f.m.Park(a, tt.grace); n != 0 {
				t.Errorf("Park: got %d; want 0", n)
			}
			if ls := f.m.Leases(); len(ls) != 0 {
				t.Errorf("leases: got %+v; want none", ls)
			}
		})
	}
}

// A client that opens a session per call and never closes the last one
// still reaches its lease: the same agent's new session takes it over from
// the live one when it uses the phone; another agent still cannot.
func TestResumeFromLiveSession(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	a := f.resumable(t, "remote", "k")
	defer a.Close()
	if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	other := f.resumable(t, "other", "k")
	defer other.Close()
	_, err := other.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "another agent", err, CodeLeaseHeld)
	b := f.resumable(t, "remote", "k")
	defer b.Close()
	if n := b.Resume(); n != 0 {
		t.Errorf("Resume at start took %d live leases; want 0 (only parked ones)", n)
	}
	if _, err := b.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatalf("the same agent's new session: %v", err)
	}
	if ls := f.m.Leases(); len(ls) != 1 || ls[0].Steps != 2 {
		t.Errorf("leases: %+v; want the one task, continued", ls)
	}
}
