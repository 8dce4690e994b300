package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// taskSteps returns the steps of the fixture's only task.
func (f *fixture) taskSteps(t *testing.T) []history.Step {
	t.Helper()
	ctx := context.Background()
	tasks, err := f.store.Tasks(ctx, history.TaskFilter{})
	if err != nil || len(tasks) != 1 {
		t.Fatalf("tasks: %+v, %v; want one", tasks, err)
	}
	_, steps, err := f.store.Task(ctx, tasks[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

// app returns the app in front of sim-android-1, as its driver says.
func (f *fixture) app(t *testing.T) string {
	t.Helper()
	sc, err := f.drv.d.Screen(context.Background(), "sim-android-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	return sc.App.ID
}

// seesRunning is a driver that, at each action, looks up the history for
// the step of the call: it must already be there, running.
type seesRunning struct {
	sdk.Driver
	store *history.Memory
	mu    sync.Mutex
	seen  []string // the last step's tool and outcome at each action
}

func (d *seesRunning) Act(ctx context.Context, device string, a sdk.Action) (sdk.ActResult, error) {
	tasks, _ := d.store.Tasks(ctx, history.TaskFilter{})
	_, steps, _ := d.store.Task(ctx, tasks[0].ID)
	last := steps[len(steps)-1]
	d.mu.Lock()
	d.seen = append(d.seen, last.Tool+" "+last.Outcome)
	d.mu.Unlock()
	return d.Driver.Act(ctx, device, a)
}

// TestStepCommittedBeforeTheAction: when the driver acts, the history
// already holds the call's step as running; after it, the same step holds
// the outcome.
func TestStepCommittedBeforeTheAction(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	d := &seesRunning{store: f.store}
	f.drv.wrap = func(drv sdk.Driver) sdk.Driver { d.Driver = drv; return d }
	obs := tap(t, s, "Messages")
	d.mu.Lock()
	seen := strings.Join(d.seen, ", ")
	d.mu.Unlock()
	if seen != "phone_tap running" {
		t.Errorf("the history when the driver acted: got %q; want the tap's step, running", seen)
	}
	steps := f.taskSteps(t)
	last := steps[len(steps)-1]
	if last.ID != obs.Step || last.Tool != "phone_tap" || last.Outcome != "ok" || last.Diff != obs.Text {
		t.Errorf("the step after the tap: got %+v; want step %s ended ok with the diff the agent saw", last, obs.Step)
	}
}

// TestNoActionWhenHistoryCannotBeWritten: with the history failing its
// writes, an action answers internal "history cannot be written", and
// nothing reaches the phone; reads go on, without a step id; once writes
// work again, so do actions.
func TestNoActionWhenHistoryCannotBeWritten(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	before := len(f.taskSteps(t))
	home := f.app(t)

	f.store.FailWrites("the disk is full")
	for _, a := range []Action{
		{Kind: "tap", Target: Target{Text: "Messages"}},
		{Kind: "long_press", Target: Target{Text: "Messages"}},
		{Kind: "launch", App: "Messages"},
		{Kind: "key", Key: "back"},
	} {
		_, err := s.Act(ctx, "sim-android-1", a, nil)
		e := wantCode(t, a.Kind+" with the history failing", err, CodeInternal)
		if !strings.HasPrefix(e.Message, "history cannot be written: the disk is full") || !strings.Contains(e.Message, "nothing was done") {
			t.Errorf("%s: got %q; want it to say the history cannot be written and nothing was done", a.Kind, e.Message)
		}
		if got := f.app(t); got != home {
			t.Errorf("after a %s the history could not take: the phone shows %s; want %s, untouched", a.Kind, got, home)
		}
	}
	obs, err := s.Observe(ctx, "sim-android-1", true, false)
	if err != nil || !strings.Contains(obs.Text, "Messages") || obs.Step != "" {
		t.Errorf("observe with the history failing: got %+v, %v; want the screen and no step id", obs, err)
	}
	if h := f.store.Health(); !h.Failing {
		t.Errorf("Health: %+v; want failing", h)
	}

	f.store.FailWrites("")
	obs = tap(t, s, "Messages")
	steps := f.taskSteps(t)
	if len(steps) != before+1 || steps[before].ID != obs.Step || steps[before].Outcome != "ok" {
		t.Errorf("steps after the fix: got %+v; want the %d before and the tap, ok", steps, before)
	}
	for _, st := range steps {
		if st.Outcome == history.StepRunning {
			t.Errorf("step %d (%s) is left running", st.Seq, st.Tool)
		}
	}
}

// endFails is a store that cannot write a step's end: a disk that filled
// between the two writes of an action.
type endFails struct{ *history.Memory }

func (endFails) FinishStep(context.Context, history.Step) error {
	return &history.WriteError{Cause: "the disk is full", Err: context.DeadlineExceeded}
}

// TestActionWhoseEndIsNotWritten: the action ran, but its end could not be
// written. The agent is not told ok: it learns that the action was done and
// that the history has it only as begun; the step stays running.
func TestActionWhoseEndIsNotWritten(t *testing.T) {
	mem := history.NewMemory()
	f := &fixture{drv: newSimDrivers(t), store: mem}
	f.m = NewManager(Config{Drivers: f.drv, Store: endFails{mem}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	s := f.connected(t)

	_, err := s.Act(ctx, "sim-android-1", Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: "Messages"}}, nil)
	e := wantCode(t, "a tap whose end is not written", err, CodeInternal)
	for _, want := range []string{"history cannot be written: the disk is full", "the action was done", "observe before acting again"} {
		if !strings.Contains(strings.ToLower(e.Message), want) {
			t.Errorf("got %q; want it to say %q", e.Message, want)
		}
	}
	if got := f.app(t); !strings.Contains(got, "messag") {
		t.Errorf("the phone shows %s; want Messages: the tap ran", got)
	}
	steps := f.taskSteps(t)
	if last := steps[len(steps)-1]; last.Tool != "phone_tap" || last.Outcome != history.StepRunning {
		t.Errorf("the tap's step: got %+v; want it running", last)
	}
}

// TestConnectWhenHistoryCannotBeWritten: an agent that arrives while the
// history cannot be written is told so when it connects, and connects once
// writes work again (its session is recorded then, not lost).
func TestConnectWhenHistoryCannotBeWritten(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	f.store.FailWrites("the disk is full")
	s, err := f.m.Open(ctx, Client{}, "stdio") // as the daemon opens a pinky mcp session
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if err := s.SetClient(ctx, Client{Name: "agent", Version: "1.0"}); err == nil {
		t.Fatal("SetClient with the history failing: got nil error")
	}
	_, err = s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"})
	e := wantCode(t, "connect with the history failing", err, CodeInternal)
	if !strings.HasPrefix(e.Message, "history cannot be written: the disk is full") || !strings.Contains(e.Message, "not connected") {
		t.Errorf("connect: got %q; want it to say the history cannot be written and the phone was not connected", e.Message)
	}
	f.store.FailWrites("")
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatalf("connect once writes work: %v", err)
	}
	tasks, err := f.store.Tasks(ctx, history.TaskFilter{})
	if err != nil || len(tasks) != 1 || tasks[0].SessionID != s.ID() || tasks[0].AgentName != "agent" {
		t.Errorf("tasks: got %+v, %v; want the task of the session, with its agent", tasks, err)
	}
}
