package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// simDrivers serves the default world's phones in-process, with device
// events the test sends itself.
type simDrivers struct {
	d      *sim.Driver
	mu     sync.Mutex
	online map[string]bool
	events chan driverhost.Event
	wrap   func(sdk.Driver) sdk.Driver // optional, to inject faults
	// missing is what the phones lack, as their Caps would say (guarded
	// by mu; see lack).
	missing map[sdk.Capability]sdk.MissingCap
}

func newSimDrivers(t *testing.T) *simDrivers {
	t.Helper()
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	d := sim.New(w)
	t.Cleanup(func() { d.Close() })
	return &simDrivers{d: d, online: map[string]bool{"sim-android-1": true, "sim-ios-1": true}, events: make(chan driverhost.Event, 16)}
}

func (s *simDrivers) Devices() []driverhost.Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	return []driverhost.Device{
		{Device: sdk.Device{ID: "sim-android-1", Name: "Ana's Pixel", Platform: sdk.PlatformAndroid, State: sdk.StateOnline}, Driver: "sim", Online: s.online["sim-android-1"]},
		{Device: sdk.Device{ID: "sim-ios-1", Name: "Ana's iPhone", Platform: sdk.PlatformIOS, State: sdk.StateOnline}, Driver: "sim", Online: s.online["sim-ios-1"]},
	}
}

func (s *simDrivers) Drivers() []driverhost.DriverStatus {
	return []driverhost.DriverStatus{{Name: "sim", State: driverhost.StateRunning}}
}

func (s *simDrivers) DriverForDevice(id string) (sdk.Full, string, error) {
	return s.driver(), "sim", nil
}

// driver is the in-process sim, wrapped when the test injects faults.
func (s *simDrivers) driver() sdk.Full {
	if s.wrap != nil {
		return sdk.Complete(s.wrap(s.d))
	}
	return sdk.Complete(s.d)
}

// Serves reads the capabilities the (wrapped) driver declares, as the
// driver host does.
func (s *simDrivers) Serves(_ string, c sdk.Capability) bool {
	s.mu.Lock()
	_, lacks := s.missing[c]
	s.mu.Unlock()
	if lacks {
		return false
	}
	info, err := s.driver().Info(context.Background())
	return err == nil && slices.Contains(info.Capabilities, c)
}

// Missing is what the test says the phones lack.
func (s *simDrivers) Missing(_ string, c sdk.Capability) (sdk.MissingCap, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.missing[c]
	return m, ok
}

// lack makes the phones lack capability c, for reason m.
func (s *simDrivers) lack(c sdk.Capability, m sdk.MissingCap) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.missing == nil {
		s.missing = map[sdk.Capability]sdk.MissingCap{}
	}
	m.Cap = c
	s.missing[c] = m
}

func (s *simDrivers) Subscribe() (<-chan driverhost.Event, func()) { return s.events, func() {} }

func (s *simDrivers) setOnline(id string, on bool) {
	s.mu.Lock()
	s.online[id] = on
	s.mu.Unlock()
	kind := driverhost.EventOffline
	if on {
		kind = driverhost.EventOnline
	}
	s.events <- driverhost.Event{Kind: kind, Device: driverhost.Device{Device: sdk.Device{ID: id}, Online: on}}
}

type fixture struct {
	m     *Manager
	drv   *simDrivers
	store *history.Memory
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	f := &fixture{drv: newSimDrivers(t), store: history.NewMemory()}
	cfg.Drivers, cfg.Store = f.drv, f.store
	f.m = NewManager(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

func (f *fixture) session(t *testing.T, name string) *Session {
	t.Helper()
	s, err := f.m.Open(context.Background(), Client{Name: name, Version: "1.0"}, "stdio")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// connected opens an agent session holding the unlocked sim-android-1 for a
// task.
func (f *fixture) connected(t *testing.T) *Session {
	t.Helper()
	s := f.session(t, "agent")
	ctx := context.Background()
	f.drv.d.Unlock(ctx, "sim-android-1", "1234")
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	return s
}

func wantCode(t *testing.T, what string, err error, code Code) *Error {
	t.Helper()
	e, ok := AsError(err)
	if !ok || e.Code != code {
		t.Fatalf("%s: got %v; want code %s", what, err, code)
	}
	return e
}

func tap(t *testing.T, s *Session, text string) *Observation {
	t.Helper()
	obs, err := s.Act(context.Background(), "sim-android-1", Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: text}}, nil)
	if err != nil {
		t.Fatalf("tap %q: %v", text, err)
	}
	return obs
}

func TestConnectActReleaseRecordsATask(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.session(t, "Claude Code")
	ctx := context.Background()

	_, err := s.Connect(ctx, ConnectRequest{Task: "reply to Ben"})
	wantCode(t, "connect with two free phones and no device", err, CodeInvalidArgument)
	obs, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "reply to Ben"})
	if err != nil {
		t.Fatal(err)
	}
	if !obs.Full || !obs.Locked || !strings.Contains(obs.Text, `button "OK"`) {
		t.Errorf("connect: got %+v; want the whole lock screen", obs)
	}
	// Agents do not type PINs: acting on the lock screen is refused; the
	// person unlocks.
	_, err = s.Act(ctx, "sim-android-1", Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: "1"}}, nil)
	wantCode(t, "tap on the lock screen", err, CodeDeviceLocked)
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	obs, err = s.Observe(ctx, "sim-android-1", false, false)
	if err != nil || obs.Locked || !obs.Full || !strings.Contains(obs.Text, "Messages") {
		t.Errorf("after the person unlocked: got %+v, %v; want the launcher, whole", obs, err)
	}
	obs = tap(t, s, "Messages")
	if !strings.Contains(obs.Text, "Ben Okafor") {
		t.Errorf("Messages: got %q", obs.Text)
	}
	obs, err = s.Observe(ctx, "sim-android-1", false, true)
	if err != nil || len(obs.Screenshot) == 0 {
		t.Fatalf("observe with a screenshot: %v, %d bytes", err, len(obs.Screenshot))
	}
	if err := s.Release(ctx, "sim-android-1"); err != nil {
		t.Fatal(err)
	}
	tasks, err := f.store.Tasks(ctx, history.TaskFilter{})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %v, %+v", err, tasks)
	}
	sum, steps, err := f.store.Task(ctx, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Outcome != "released" || sum.Text != "reply to Ben" || sum.AgentName != "Claude Code" {
		t.Errorf("task: got %+v", sum)
	}
	// connect, the refused tap, observe, Messages, observe, release
	var tools []string
	for _, st := range steps {
		tools = append(tools, st.Tool)
	}
	if want := "phone_connect phone_tap phone_observe phone_tap phone_observe phone_release"; strings.Join(tools, " ") != want {
		t.Errorf("steps: got %q; want %q", strings.Join(tools, " "), want)
	}
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err == nil {
		t.Error("observe after release succeeded")
	}
}

func TestLeaseContention(t *testing.T) {
	f := newFixture(t, Config{})
	a, b := f.session(t, "Claude Code"), f.session(t, "Codex")
	ctx := context.Background()
	if _, err := a.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "book a table"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "check mail"})
	e := wantCode(t, "second agent", err, CodeLeaseHeld)
	if !strings.Contains(e.Message, "Claude Code") || !strings.Contains(e.Message, "book a table") {
		t.Errorf("lease_held should name the holder and its task: %q", e.Message)
	}
	_, err = b.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "observe another's phone", err, CodeLeaseHeld)
	// Without a device, b gets the only free phone.
	obs, err := b.Connect(ctx, ConnectRequest{Task: "check mail"})
	if err != nil || obs.Device != "sim-ios-1" {
		t.Fatalf("connect to the free phone: %v, %+v", err, obs)
	}
	phones, _ := b.Phones(ctx)
	for _, p := range phones {
		if p.Lease == nil || p.Lease.Yours != (p.ID == "sim-ios-1") {
			t.Errorf("phone %s: lease %+v", p.ID, p.Lease)
		}
	}
	// When a's session closes, its lease ends and the phone is free.
	a.Close()
	if _, err := b.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "check mail too"}); err != nil {
		t.Errorf("connect after the holder's session closed: %v", err)
	}
	_, err = b.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "again"})
	wantCode(t, "connect twice to one phone", err, CodeInvalidArgument)
}

func TestIdleExpiry(t *testing.T) {
	f := newFixture(t, Config{IdleTimeout: 50 * time.Millisecond})
	s := f.session(t, "agent")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	f.m.sweep(time.Now().Add(time.Second))
	_, err := s.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "after idle expiry", err, CodeNotLeased)
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].Outcome != "expired" {
		t.Errorf("tasks: %+v; want one expired", tasks)
	}
}

func TestOfflineGrace(t *testing.T) {
	f := newFixture(t, Config{OfflineGrace: time.Hour})
	s := f.session(t, "agent")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	f.drv.setOnline("sim-android-1", false)
	waitUntil(t, func() bool {
		_, err := s.Observe(ctx, "sim-android-1", false, false)
		e, ok := AsError(err)
		return ok && e.Code == CodeDeviceOffline
	})
	// Back within the grace: the lease is still ours.
	f.drv.setOnline("sim-android-1", true)
	waitUntil(t, func() bool { _, err := s.Observe(ctx, "sim-android-1", false, false); return err == nil })
	// Offline past the grace: the lease ends.
	f.drv.setOnline("sim-android-1", false)
	waitUntil(t, func() bool {
		_, err := s.Observe(ctx, "sim-android-1", false, false)
		e, ok := AsError(err)
		return ok && e.Code == CodeDeviceOffline
	})
	f.m.sweep(time.Now().Add(2 * time.Hour))
	_, err := s.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "after the grace", err, CodeNotLeased)
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].Outcome != "offline" {
		t.Errorf("tasks: %+v; want one ended offline", tasks)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// goneOnAct is a driver whose actions die with the driver.
type goneOnAct struct{ sdk.Driver }

func (g goneOnAct) Act(context.Context, string, sdk.Action) (sdk.ActResult, error) {
	return sdk.ActResult{}, sdk.ErrDriverGone
}

func TestActionCutByCrashIsUncertain(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	f.drv.wrap = func(d sdk.Driver) sdk.Driver { return goneOnAct{d} }
	_, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil)
	e := wantCode(t, "act while the driver dies", err, CodeUncertain)
	if !strings.Contains(e.Message, "observe before repeating") {
		t.Errorf("uncertain must advise to observe: %q", e.Message)
	}
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	_, steps, _ := f.store.Task(ctx, tasks[0].ID)
	if last := steps[len(steps)-1]; last.Outcome != "uncertain" {
		t.Errorf("last step outcome %q; want uncertain", last.Outcome)
	}
}

func TestTargets(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		a    Action
		code Code
		text string
	}{
		{"unknown text", Action{Kind: "tap", Target: Target{Text: "Nope"}}, CodeNotFound, "Nope"},
		{"unknown ref", Action{Kind: "tap", Target: Target{Ref: 999}}, CodeNotFound, "999"},
		{"no target", Action{Kind: "tap"}, CodeInvalidArgument, "ref"},
		{"bad key", Action{Kind: "key", Key: "hyper"}, CodeInvalidArgument, "back"},
		{"bad direction", Action{Kind: "scroll", Direction: "sideways"}, CodeInvalidArgument, "down"},
		{"outside", Action{Kind: "tap", Target: Target{X: 5000, Y: 1, HasPoint: true}}, CodeInvalidArgument, "outside"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Act(ctx, "sim-android-1", tt.a, nil)
			e := wantCode(t, tt.name, err, tt.code)
			if !strings.Contains(e.Message, tt.text) {
				t.Errorf("message %q should mention %q", e.Message, tt.text)
			}
		})
	}
}

func TestPasswordNotRecorded(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.session(t, "agent")
	ctx := context.Background()
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "sign in"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "com.pinky.sim.bank"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "type", Target: Target{Text: "Password"}, Text: "hunter2"}, nil); err != nil {
		t.Fatal(err)
	}
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	_, steps, _ := f.store.Task(ctx, tasks[0].ID)
	for _, st := range steps {
		if strings.Contains(st.Args, "hunter2") || strings.Contains(st.Diff, "hunter2") {
			t.Errorf("step %s keeps the password: args %s, diff %q", st.Tool, st.Args, st.Diff)
		}
	}
}

func TestAskPersonWaitsForHandBack(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.session(t, "agent")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.AskPerson(ctx, "sim-android-1", "please unlock", nil)
		done <- err
	}()
	waitUntil(t, func() bool { return f.m.HandBack("sim-android-1") == nil })
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ask person: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ask person did not return after the hand-back")
	}
	if err := f.m.HandBack("sim-android-1"); err == nil {
		t.Error("a second hand-back succeeded with nobody asking")
	}
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	_, err := s.AskPerson(cctx, "sim-android-1", "please unlock", nil)
	wantCode(t, "cancelled ask", err, CodeTimeout)
}

func TestLaunchByLabelAndScope(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.session(t, "agent")
	ctx := context.Background()
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "reply", Apps: []string{"Messages"}}); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "messages"}, nil)
	if err != nil || !strings.Contains(obs.Text, "Ben Okafor") {
		t.Fatalf("launch by label: %v, %+v", err, obs)
	}
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Bank"}, nil)
	wantCode(t, "launch outside the task's apps", err, CodeScopeDenied)
	// With another app in front (the person opened Notes), only keys work.
	f.drv.d.Act(ctx, "sim-android-1", keyAction("home"))
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatal(err)
	}
	// The launcher's icon of another app does not open it.
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Notes"}}, nil)
	if e := wantCode(t, "tap on the launcher", err, CodeScopeDenied); !strings.Contains(e.Message, "would open Notes") {
		t.Errorf("tap on the launcher: %q; want it refused before it opens Notes", e.Message)
	}
	// Opened some other way (the person, a link), nothing of it is shown.
	if _, err := f.drv.d.Act(ctx, "sim-android-1", sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Observe(ctx, "sim-android-1", false, false)
	if e := wantCode(t, "read of an app outside the task's list", err, CodeScopeDenied); strings.Contains(e.Message, "Groceries") {
		t.Errorf("the read shows Notes: %q", e.Message)
	}
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{X: 500, Y: 1000, HasPoint: true}}, nil)
	wantCode(t, "tap in an app outside the task's list", err, CodeScopeDenied)
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "key", Key: "home"}, nil); err != nil {
		t.Errorf("a key outside the task's apps: %v", err)
	}
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Nonesuch"}, nil)
	wantCode(t, "launch an unknown app", err, CodeNotFound)
	apps, err := s.Apps(ctx, "sim-android-1")
	if err != nil || len(apps) != 1 || apps[0].Label != "Messages" {
		t.Errorf("apps of a scoped task: got %+v, %v; want only Messages", apps, err)
	}
	// A task that starts with an app outside its list in front holds the
	// phone, and is told to leave it.
	if _, err := f.drv.d.Act(ctx, "sim-android-1", sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"}); err != nil {
		t.Fatal(err)
	}
	other := f.session(t, "other")
	s.Release(ctx, "sim-android-1")
	obs, err = other.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "reply", Apps: []string{"Messages"}})
	if err != nil || obs.TaskID == "" || !strings.Contains(obs.Text, "you may not see the screen") || strings.Contains(obs.Text, "Groceries") {
		t.Fatalf("connect with Notes in front: %v, %+v; want the lease and nothing of Notes", err, obs)
	}
	if _, err := other.Act(ctx, "sim-android-1", Action{Kind: "key", Key: "home"}, nil); err != nil {
		t.Errorf("home from an app outside the task: %v", err)
	}
}

func TestPersonStops(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.session(t, "agent")
	ctx := context.Background()
	for _, d := range []string{"sim-android-1", "sim-ios-1"} {
		if _, err := s.Connect(ctx, ConnectRequest{Device: d, Task: "t"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.m.Stop("sim-android-1"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Observe(ctx, "sim-android-1", false, false)
	wantCode(t, "after the person stopped it", err, CodeStopped)
	_, err = s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"})
	wantCode(t, "the same task again", err, CodeStopped)
	if err := f.m.Stop("sim-android-1"); err == nil {
		t.Error("stopping a free phone succeeded")
	}
	if n := f.m.StopAll(); n != 1 {
		t.Errorf("StopAll ended %d leases; want 1", n)
	}
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	for _, tk := range tasks {
		if tk.Outcome != "stopped" {
			t.Errorf("task on %s ended %q; want stopped", tk.DeviceID, tk.Outcome)
		}
	}
}

func TestScreenshotsOnlyWhenTheScreenChanged(t *testing.T) {
	drv, store := newSimDrivers(t), history.NewMemory()
	media := history.NewMediaWriter(store, t.TempDir(), history.MediaOptions{})
	m := NewManager(Config{Drivers: drv, Store: store, Media: media})
	s, err := m.Open(context.Background(), Client{Name: "agent", Version: "1"}, "stdio")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil { // nothing changed
		t.Fatal(err)
	}
	drv.d.Unlock(ctx, "sim-android-1", "1234")
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil); err != nil {
		t.Fatal(err)
	}
	// The shots are taken and written in the background: wait for them.
	waitUntil(t, func() bool {
		ts, _ := store.Tasks(ctx, history.TaskFilter{})
		_, steps, _ := store.Task(ctx, ts[0].ID)
		return len(steps) == 3 && steps[0].After != "" && steps[2].After != ""
	})
	media.Close()
	ts, _ := store.Tasks(ctx, history.TaskFilter{})
	_, steps, _ := store.Task(ctx, ts[0].ID)
	if got := []bool{steps[0].After != "", steps[1].After != "", steps[2].After != ""}; got[1] || !got[0] || !got[2] {
		t.Errorf("screenshots (connect, observe, tap): got %v; want the unchanged observe without one", got)
	}
}

func TestTakeOverAndHandBack(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	if err := f.m.TakeOver("sim-android-1"); err != nil {
		t.Fatal(err)
	}
	if err := f.m.TakeOver("sim-android-1"); err == nil {
		t.Error("a second take-over succeeded")
	}
	_, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil)
	wantCode(t, "act while the person has it", err, CodePersonInControl)
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Errorf("a read while the person has it: %v", err)
	}
	if ls := f.m.Leases(); len(ls) != 1 || !ls[0].WithPerson {
		t.Errorf("leases: %+v; want it with the person", ls)
	}
	if err := f.m.HandBack("sim-android-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil); err != nil {
		t.Errorf("act after the hand-back: %v", err)
	}
}
