// Package leasetest is the suite every lease.Table passes: call Run from a
// Go test with a function that returns a new, empty table with the
// config's rules and clock.
package leasetest

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/lease"
)

// The suite's rules: a lease ends after an hour unused, or a minute offline.
const (
	idle  = time.Hour
	grace = time.Minute
)

// Run runs the suite. newTable returns a new, empty table for each
// subtest, with cfg's durations and clock (the suite moves the clock).
func Run(t *testing.T, newTable func(t *testing.T, cfg lease.Config) lease.Table) {
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"TakeAndGet", testTakeAndGet},
		{"TakeRefusals", testTakeRefusals},
		{"Use", testUse},
		{"Offline", testOffline},
		{"Release", testRelease},
		{"Stop", testStop},
		{"Drop", testDrop},
		{"Close", testClose},
		{"ParkAndResume", testParkAndResume},
		{"ParkRefusals", testParkRefusals},
		{"ResumeOnUse", testResumeOnUse},
		{"ResumeFromLiveSession", testResumeFromLiveSession},
		{"Update", testUpdate},
		{"Touch", testTouch},
		{"Sweep", testSweep},
		{"ConcurrentTake", testConcurrentTake},
		{"Fences", testFences},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &env{now: time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)}
			e.table = newTable(t, lease.Config{IdleTimeout: idle, OfflineGrace: grace, Now: e.clock})
			tt.run(t, e)
		})
	}
}

// env is one subtest's table and clock.
type env struct {
	table lease.Table
	mu    sync.Mutex
	now   time.Time
}

func (e *env) clock() time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.now
}

// wait moves the clock on by d.
func (e *env) wait(d time.Duration) {
	e.mu.Lock()
	e.now = e.now.Add(d)
	e.mu.Unlock()
}

// The holders the tests use: two sessions of one agent with one resume
// key, another agent with that key, and a session without a key.
var (
	ana1   = lease.Holder{Session: "s1", Agent: "remote", Version: "1.0", ResumeKey: "k"}
	ana2   = lease.Holder{Session: "s2", Agent: "remote", Version: "1.0", ResumeKey: "k"}
	ben    = lease.Holder{Session: "s3", Agent: "other", Version: "1.0", ResumeKey: "k"}
	nokey  = lease.Holder{Session: "s4", Agent: "remote", Version: "1.0"}
	newer  = lease.Holder{Session: "s5", Agent: "remote", Version: "2.0", ResumeKey: "k"}
	keyed2 = lease.Holder{Session: "s6", Agent: "remote", Version: "1.0", ResumeKey: "k2"}
)

// take leases device to h for a task named after both, and fails the test
// when the table refuses.
func (e *env) take(t *testing.T, h lease.Holder, device string) lease.Lease {
	t.Helper()
	l, err := e.table.Take(lease.Lease{Device: device, Holder: h, TaskID: "t-" + h.Session + "-" + device, Task: "task", Since: e.clock()})
	if err != nil {
		t.Fatalf("Take %s for %s: %v", device, h.Session, err)
	}
	return l
}

// wantReason fails unless err is a *lease.Error with the reason.
func wantReason(t *testing.T, what string, err, reason error) *lease.Error {
	t.Helper()
	e, ok := lease.AsError(err)
	if !ok || !errors.Is(err, reason) {
		t.Fatalf("%s: got %v; want %v", what, err, reason)
	}
	return e
}

// holderOf is the session holding device, "" when none.
func (e *env) holderOf(device string) string {
	l, ok := e.table.Get(device)
	if !ok {
		return ""
	}
	return l.Holder.Session
}

func testTakeAndGet(t *testing.T, e *env) {
	apps := []string{"Messages"}
	want := lease.Lease{Device: "p1", Holder: ana1, TaskID: "t1", Task: "reply to Ben", Apps: apps, Since: e.clock()}
	got, err := e.table.Take(want)
	if err != nil {
		t.Fatal(err)
	}
	apps[0] = "changed" // the table keeps its own copy
	if got.Fence <= 0 {
		t.Errorf("Take: fence %d; want one above 0", got.Fence)
	}
	want.Apps, want.LastUsed, want.Fence = []string{"Messages"}, want.Since, got.Fence
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Take (-want +got):\n%s", diff)
	}
	if l, ok := e.table.Get("p1"); !ok || !cmp.Equal(l, want) {
		t.Errorf("Get: got %+v, %v; want %+v", l, ok, want)
	}
	if l, ok := e.table.Get("p2"); ok {
		t.Errorf("Get of a free phone: got %+v; want none", l)
	}
	e.take(t, ben, "p2")
	var devices []string
	for _, l := range e.table.List() {
		devices = append(devices, l.Device)
	}
	sort.Strings(devices)
	if want := []string{"p1", "p2"}; !slices.Equal(devices, want) {
		t.Errorf("List: got %v; want %v", devices, want)
	}
}

func testTakeRefusals(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	tests := []struct {
		name   string
		h      lease.Holder
		task   string
		reason error
	}{
		{"the same session", ana1, "another task", lease.ErrYours},
		{"another agent", ben, "task", lease.ErrHeld},
		{"the same agent without a key", nokey, "task", lease.ErrHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.table.Take(lease.Lease{Device: "p1", Holder: tt.h, TaskID: "x", Task: tt.task, Since: e.clock()})
			le := wantReason(t, tt.name, err, tt.reason)
			if le.Device != "p1" || le.Lease.TaskID != "t-s1-p1" || le.Lease.Holder.Agent != "remote" {
				t.Errorf("the refusal names %+v; want the lease there", le)
			}
		})
	}
	if got := e.holderOf("p1"); got != "s1" {
		t.Errorf("after the refusals p1 is held by %q; want s1", got)
	}
}

func testUse(t *testing.T, e *env) {
	taken := e.take(t, ana1, "p1")
	e.wait(time.Minute)
	l, err := e.table.Use(ana1, "p1")
	if err != nil {
		t.Fatal(err)
	}
	if l.TaskID != taken.TaskID || !l.LastUsed.Equal(e.clock()) || !l.Since.Equal(taken.Since) {
		t.Errorf("Use: got %+v; want the lease, used now", l)
	}
	tests := []struct {
		name   string
		h      lease.Holder
		device string
		reason error
	}{
		{"another agent's phone", ben, "p1", lease.ErrHeld},
		{"a free phone", ana1, "p2", lease.ErrNotHeld},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.table.Use(tt.h, tt.device)
			wantReason(t, tt.name, err, tt.reason)
		})
	}
}

func testOffline(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	down := e.clock()
	e.table.SetOnline("p1", false, down)
	e.wait(10 * time.Second)
	e.table.SetOnline("p1", false, e.clock()) // not a new "since"
	_, err := e.table.Use(ana1, "p1")
	le := wantReason(t, "use offline", err, lease.ErrOffline)
	if !le.Since.Equal(down) || !le.Until.Equal(down.Add(grace)) || le.Lease.TaskID != "t-s1-p1" {
		t.Errorf("the refusal: got %+v; want since %v, until %v and the lease", le, down, down.Add(grace))
	}
	if l, _ := e.table.Get("p1"); !l.LastUsed.Equal(e.clock()) {
		t.Errorf("last used %v; want %v: a use of an offline phone is a use", l.LastUsed, e.clock())
	}
	e.table.SetOnline("p1", true, time.Time{})
	if _, err := e.table.Use(ana1, "p1"); err != nil {
		t.Errorf("use once online: %v", err)
	}
	// A phone offline before anyone leased it is offline for its lease.
	e.table.SetOnline("p2", false, e.clock())
	e.take(t, ana1, "p2")
	_, err = e.table.Use(ana1, "p2")
	wantReason(t, "use of a phone offline before its lease", err, lease.ErrOffline)
}

func testRelease(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	_, err := e.table.Release(ben, "p1")
	wantReason(t, "release another's", err, lease.ErrHeld)
	_, err = e.table.Release(ana1, "p2")
	wantReason(t, "release a free phone", err, lease.ErrNotHeld)
	e.table.SetOnline("p1", false, e.clock())
	l, err := e.table.Release(ana1, "p1")
	if err != nil || l.TaskID != "t-s1-p1" {
		t.Fatalf("release (offline): got %+v, %v; want the lease", l, err)
	}
	if got := e.holderOf("p1"); got != "" {
		t.Errorf("after the release p1 is held by %q", got)
	}
	e.take(t, ben, "p1")
}

func testStop(t *testing.T, e *env) {
	_, err := e.table.Stop("p1")
	wantReason(t, "stop a free phone", err, lease.ErrNotHeld)
	e.take(t, ana1, "p1")
	l, err := e.table.Stop("p1")
	if err != nil || l.Holder != ana1 {
		t.Fatalf("Stop: got %+v, %v", l, err)
	}
	for _, op := range []struct {
		name string
		do   func() error
	}{
		{"use", func() error { _, err := e.table.Use(ana1, "p1"); return err }},
		{"release", func() error { _, err := e.table.Release(ana1, "p1"); return err }},
		{"take for the same task", func() error {
			_, err := e.table.Take(lease.Lease{Device: "p1", Holder: ana1, TaskID: "again", Task: "task", Since: e.clock()})
			return err
		}},
	} {
		if le := wantReason(t, op.name+" after a stop", op.do(), lease.ErrStopped); le.StoppedTask != "task" {
			t.Errorf("%s: stopped task %q; want %q", op.name, le.StoppedTask, "task")
		}
	}
	// Another session may take the phone; then the stopped one sees it held.
	e.take(t, ben, "p2")
	l, err = e.table.Take(lease.Lease{Device: "p1", Holder: ben, TaskID: "b", Task: "task", Since: e.clock()})
	if err != nil {
		t.Fatalf("another session after the stop: %v", err)
	}
	_, err = e.table.Use(ana1, "p1")
	wantReason(t, "use of the phone another took after the stop", err, lease.ErrHeld)
	if _, err := e.table.Release(ben, l.Device); err != nil {
		t.Fatal(err)
	}
	// The stopped session may take the phone for another task, and keeps
	// it, until a stop names another.
	if _, err := e.table.Take(lease.Lease{Device: "p1", Holder: ana1, TaskID: "c", Task: "another task", Since: e.clock()}); err != nil {
		t.Fatalf("take for another task after a stop: %v", err)
	}
	if _, err := e.table.Release(ana1, "p1"); err != nil {
		t.Fatal(err)
	}
	_, err = e.table.Use(ana1, "p1")
	wantReason(t, "use after the release, the stop still there", err, lease.ErrStopped)
	e.take(t, ben, "p1")
	if _, err := e.table.Stop("p1"); err != nil {
		t.Fatal(err)
	}
	_, err = e.table.Use(ana1, "p1")
	wantReason(t, "use once a stop named another", err, lease.ErrNotHeld)
}

func testDrop(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	if e.table.Drop("nonesuch") {
		t.Error("Drop of an unknown task reported one")
	}
	if !e.table.Drop("t-s1-p1") {
		t.Error("Drop of the task reported none")
	}
	if got := e.holderOf("p1"); got != "" {
		t.Errorf("after the drop p1 is held by %q", got)
	}
	_, err := e.table.Use(ana1, "p1")
	wantReason(t, "use after a drop", err, lease.ErrNotHeld)
}

func testClose(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	e.take(t, ana1, "p2")
	e.take(t, ben, "p3")
	e.table.Park(lease.Holder{Session: "s1", Agent: "remote", Version: "1.0", ResumeKey: "k"}, time.Minute)
	e.take(t, ana1, "p4") // taken after the park: not parked
	ended := e.table.Close("s1")
	if len(ended) != 1 || ended[0].Device != "p4" {
		t.Errorf("Close: got %+v; want only the lease not parked", ended)
	}
	for device, want := range map[string]string{"p1": "s1", "p2": "s1", "p3": "s3", "p4": ""} {
		if got := e.holderOf(device); got != want {
			t.Errorf("after the close %s is held by %q; want %q", device, got, want)
		}
	}
}

func testParkAndResume(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	if n := e.table.Park(ana1, time.Minute); n != 1 {
		t.Fatalf("Park: got %d; want 1", n)
	}
	l, _ := e.table.Get("p1")
	if !l.Parked() || l.ParkKey != "k" || !l.ParkedUntil.Equal(e.clock().Add(time.Minute)) {
		t.Errorf("parked lease: got %+v; want parked under k for a minute", l)
	}
	e.wait(30 * time.Second)
	if n := e.table.Resume(ana2); n != 1 {
		t.Fatalf("Resume: got %d; want 1", n)
	}
	l, _ = e.table.Get("p1")
	if l.Parked() || l.Holder != ana2 || l.TaskID != "t-s1-p1" {
		t.Errorf("resumed lease: got %+v; want the same task, s2's, not parked", l)
	}
	if n := e.table.Resume(ana2); n != 0 {
		t.Errorf("a second Resume took %d; want 0", n)
	}
	if ended := e.table.Sweep(e.clock().Add(2 * time.Minute)); len(ended) != 0 {
		t.Errorf("Sweep past the old grace ended %+v; the grace has no hold on a lease taken over", ended)
	}
}

func testParkRefusals(t *testing.T, e *env) {
	tests := []struct {
		name  string
		h     lease.Holder
		after time.Duration // since the park
	}{
		{"another agent, same key", ben, 0},
		{"same agent, another key", keyed2, 0},
		{"same agent, another version", newer, 0},
		{"no key", nokey, 0},
		{"the same agent after the grace", ana2, time.Minute},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			device := fmt.Sprintf("p%d", i)
			parker := lease.Holder{Session: "parker-" + device, Agent: "remote", Version: "1.0", ResumeKey: "k"}
			e.take(t, parker, device)
			if n := e.table.Park(parker, time.Minute); n != 1 {
				t.Fatalf("Park: got %d; want 1", n)
			}
			e.wait(tt.after)
			if n := e.table.Resume(tt.h); n != 0 {
				t.Errorf("Resume: got %d; want 0", n)
			}
			_, err := e.table.Use(tt.h, device)
			wantReason(t, "use", err, lease.ErrHeld)
			_, err = e.table.Release(tt.h, device)
			wantReason(t, "release", err, lease.ErrHeld)
			_, err = e.table.Take(lease.Lease{Device: device, Holder: tt.h, TaskID: "mine", Task: "mine now", Since: e.clock()})
			wantReason(t, "take", err, lease.ErrHeld)
			if got := e.holderOf(device); got != parker.Session {
				t.Errorf("%s is held by %q; want %s still", device, got, parker.Session)
			}
		})
	}
	e.take(t, nokey, "q1")
	if n := e.table.Park(nokey, time.Minute); n != 0 {
		t.Errorf("Park without a key: got %d; want 0", n)
	}
	e.take(t, ana2, "q2")
	if n := e.table.Park(ana2, 0); n != 0 {
		t.Errorf("Park without a grace: got %d; want 0", n)
	}
	for _, device := range []string{"q1", "q2"} {
		if l, _ := e.table.Get(device); l.Parked() {
			t.Errorf("a lease parked without a key or a grace: %+v", l)
		}
	}
}

func testResumeOnUse(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	e.table.Park(ana1, time.Minute)
	l, err := e.table.Use(ana2, "p1")
	if err != nil || l.Holder != ana2 || l.Parked() {
		t.Fatalf("use of a parked lease of the same agent: got %+v, %v; want it taken over", l, err)
	}
	if l, _ := e.table.Get("p1"); l.Holder != ana2 || l.Parked() {
		t.Errorf("after the take-over: got %+v; want it s2's, not parked", l)
	}
	_, err = e.table.Use(ben, "p1")
	wantReason(t, "another agent after the take-over", err, lease.ErrHeld)
	// Take and Release take a lease over too: Take then refuses it as the
	// session's own.
	e.take(t, ana1, "p2")
	e.table.Park(ana1, time.Minute)
	_, err = e.table.Take(lease.Lease{Device: "p2", Holder: ana2, TaskID: "x", Task: "x", Since: e.clock()})
	wantReason(t, "take of a parked lease of the same agent", err, lease.ErrYours)
	if got := e.holderOf("p2"); got != "s2" {
		t.Errorf("p2 is held by %q; want s2", got)
	}
	e.take(t, ana1, "p3")
	e.table.Park(ana1, time.Minute)
	if l, err := e.table.Release(ana2, "p3"); err != nil || l.Holder != ana2 {
		t.Errorf("release of a parked lease of the same agent: got %+v, %v", l, err)
	}
}

func testResumeFromLiveSession(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	if n := e.table.Resume(ana2); n != 0 {
		t.Errorf("Resume took %d live leases; want 0 (only parked ones)", n)
	}
	_, err := e.table.Use(ben, "p1")
	wantReason(t, "another agent", err, lease.ErrHeld)
	_, err = e.table.Use(nokey, "p1")
	wantReason(t, "the same agent without a key", err, lease.ErrHeld)
	if l, err := e.table.Use(ana2, "p1"); err != nil || l.Holder != ana2 {
		t.Errorf("the same agent's new session: got %+v, %v; want the lease taken over", l, err)
	}
}

func testUpdate(t *testing.T, e *env) {
	early := lease.Holder{Session: "s1"} // before MCP's initialize names the agent
	e.take(t, early, "p1")
	_, err := e.table.Use(ana2, "p1")
	wantReason(t, "before the update", err, lease.ErrHeld)
	e.table.Update(ana1)
	if l, _ := e.table.Get("p1"); l.Holder != ana1 {
		t.Errorf("after the update: holder %+v; want %+v", l.Holder, ana1)
	}
	if _, err := e.table.Use(ana2, "p1"); err != nil {
		t.Errorf("the same agent and key after the update: %v", err)
	}
	e.take(t, ana1, "p2")
	e.table.Park(ana1, time.Minute)
	e.table.Update(lease.Holder{Session: "s1", Agent: "renamed", Version: "1.0", ResumeKey: "k"})
	if l, _ := e.table.Get("p2"); l.Holder.Agent != "renamed" || !l.Parked() {
		t.Errorf("a parked lease after the update: got %+v; want it renamed and still parked", l)
	}
}

func testTouch(t *testing.T, e *env) {
	e.take(t, ana1, "p1")
	e.wait(time.Minute)
	e.table.Touch("t-s1-p1")
	e.table.Touch("nonesuch")
	if l, _ := e.table.Get("p1"); !l.LastUsed.Equal(e.clock()) {
		t.Errorf("last used %v; want %v", l.LastUsed, e.clock())
	}
}

func testSweep(t *testing.T, e *env) {
	start := e.clock()
	parker := func(name string) lease.Holder { return lease.Holder{Session: name, Agent: "a", ResumeKey: "k"} }
	for _, device := range []string{"idle", "used", "offline", "back online", "parked", "parked long"} {
		h := ana1
		if device == "parked" || device == "parked long" {
			h = parker(device)
		}
		if _, err := e.table.Take(lease.Lease{Device: device, Holder: h, TaskID: device, Since: start}); err != nil {
			t.Fatal(err)
		}
	}
	e.table.SetOnline("offline", false, start)
	e.table.SetOnline("back online", false, start)
	e.table.SetOnline("back online", true, time.Time{})
	e.table.Park(parker("parked"), grace)
	e.table.Park(parker("parked long"), 2*grace)
	e.wait(time.Second)
	if _, err := e.table.Use(ana1, "used"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		after time.Duration // since start
		want  map[string]lease.Outcome
	}{
		{grace - time.Second, map[string]lease.Outcome{}},
		{grace, map[string]lease.Outcome{"offline": lease.Offline, "parked": lease.SessionClosed}},
		{2 * grace, map[string]lease.Outcome{"parked long": lease.SessionClosed}},
		{idle - time.Second, map[string]lease.Outcome{}},
		{idle, map[string]lease.Outcome{"idle": lease.Expired, "back online": lease.Expired}},
		{idle + time.Second, map[string]lease.Outcome{"used": lease.Expired}},
	}
	for _, tt := range tests {
		got := map[string]lease.Outcome{}
		for _, ended := range e.table.Sweep(start.Add(tt.after)) {
			got[ended.Device] = ended.Outcome
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("sweep at +%s (-want +got):\n%s", tt.after, diff)
		}
		for device := range tt.want {
			if _, held := e.table.Get(device); held {
				t.Errorf("%s is held after the sweep that ended it", device)
			}
		}
	}
	if ls := e.table.List(); len(ls) != 0 {
		t.Errorf("leases after every sweep: %+v; want none", ls)
	}
}

func testConcurrentTake(t *testing.T, e *env) {
	const n = 16
	var wg sync.WaitGroup
	won := make(chan string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := lease.Holder{Session: fmt.Sprintf("s%d", i), Agent: "a"}
			if _, err := e.table.Take(lease.Lease{Device: "p1", Holder: h, TaskID: h.Session, Since: e.clock()}); err == nil {
				won <- h.Session
			} else if !errors.Is(err, lease.ErrHeld) {
				t.Errorf("Take: %v; want ok or ErrHeld", err)
			}
		}()
	}
	wg.Wait()
	close(won)
	var winners []string
	for s := range won {
		winners = append(winners, s)
	}
	if len(winners) != 1 || e.holderOf("p1") != winners[0] {
		t.Errorf("winners %v, holder %q; want one, holding the phone", winners, e.holderOf("p1"))
	}
}

// testFences follows a lease's life on one phone, step by step: each step
// returns the fence the phone's lease has after it, and says whether the
// step gave a new one (a start or a change of holder) or kept it.
func testFences(t *testing.T, e *env) {
	var last int64
	fenceOf := func(device string) int64 {
		t.Helper()
		l, ok := e.table.Get(device)
		if !ok {
			t.Fatalf("%s is not leased", device)
		}
		return l.Fence
	}
	steps := []struct {
		name string
		do   func() int64
		new  bool // a new fence, above every one before; else the same
	}{
		{"take", func() int64 { return e.take(t, ana1, "p1").Fence }, true},
		{"use", func() int64 {
			l, err := e.table.Use(ana1, "p1")
			if err != nil {
				t.Fatal(err)
			}
			return l.Fence
		}, false},
		{"touch, park and update", func() int64 {
			e.table.Touch("t-s1-p1")
			e.table.Park(ana1, time.Minute)
			e.table.Update(ana1)
			return fenceOf("p1")
		}, false},
		{"resume", func() int64 {
			if n := e.table.Resume(ana2); n != 1 {
				t.Fatalf("Resume: got %d; want 1", n)
			}
			return fenceOf("p1")
		}, true},
		{"take over on use", func() int64 {
			l, err := e.table.Use(ana1, "p1") // ana1 may resume ana2's live lease
			if err != nil || l.Holder != ana1 {
				t.Fatalf("take over: got %+v, %v; want the lease moved to s1", l, err)
			}
			return l.Fence
		}, true},
		{"release, then take", func() int64 {
			if _, err := e.table.Release(ana1, "p1"); err != nil {
				t.Fatal(err)
			}
			return e.take(t, ben, "p1").Fence
		}, true},
		{"stop, then take", func() int64 {
			if _, err := e.table.Stop("p1"); err != nil {
				t.Fatal(err)
			}
			return e.take(t, ana2, "p1").Fence
		}, true},
		{"sweep, then take", func() int64 {
			if ended := e.table.Sweep(e.clock().Add(idle)); len(ended) != 1 {
				t.Fatalf("Sweep: ended %+v; want the lease", ended)
			}
			return e.take(t, ana1, "p1").Fence
		}, true},
		{"drop, then take", func() int64 {
			if !e.table.Drop("t-s1-p1") {
				t.Fatal("Drop found no lease")
			}
			return e.take(t, ana2, "p1").Fence
		}, true},
		{"close, then take", func() int64 {
			if ended := e.table.Close("s2"); len(ended) != 1 {
				t.Fatalf("Close: ended %+v; want the lease", ended)
			}
			return e.take(t, ana1, "p1").Fence
		}, true},
	}
	for _, st := range steps {
		got := st.do()
		switch {
		case st.new && got <= last:
			t.Errorf("%s: fence %d; want one above %d", st.name, got, last)
		case !st.new && got != last:
			t.Errorf("%s: fence %d; want %d kept", st.name, got, last)
		}
		last = got
	}
	// Refusals give no fence, and a refused take leaves the holder's.
	_, err := e.table.Take(lease.Lease{Device: "p1", Holder: ben, TaskID: "x", Task: "x", Since: e.clock()})
	le := wantReason(t, "take of a held phone", err, lease.ErrHeld)
	if le.Lease.Fence != last || fenceOf("p1") != last {
		t.Errorf("after a refused take: fences %d and %d; want %d", le.Lease.Fence, fenceOf("p1"), last)
	}
	// Another phone's fences are its own, and grow as well.
	first := e.take(t, ana1, "p2").Fence
	if _, err := e.table.Release(ana1, "p2"); err != nil {
		t.Fatal(err)
	}
	if again := e.take(t, ana1, "p2").Fence; again <= first {
		t.Errorf("p2 taken again: fence %d; want one above %d", again, first)
	}
}
