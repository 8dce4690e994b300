// Package historytest is the test suite every history.Store passes: call Run
// from a Go test with a function that returns a new, empty store.
package historytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// Run runs the suite. newStore returns a new, empty store for each subtest;
// Run closes it when the subtest ends.
func Run(t *testing.T, newStore func(t *testing.T) history.Store) {
	open := func(t *testing.T) history.Store {
		t.Helper()
		s := newStore(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return s
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s history.Store)
	}{
		{"Devices", testDevices},
		{"Agents", testAgents},
		{"Sessions", testSessions},
		{"TaskRoundTrip", testTaskRoundTrip},
		{"EndTask", testEndTask},
		{"Steps", testSteps},
		{"StepUniqueness", testStepUniqueness},
		{"RunningSteps", testRunningSteps},
		{"SettleSteps", testSettleSteps},
		{"HealthyWhenNew", testHealthyWhenNew},
		{"SetStepMedia", testSetStepMedia},
		{"Media", testMedia},
		{"NotFound", testNotFound},
		{"Invalid", testInvalid},
		{"TasksFilter", testTasksFilter},
		{"CloseOpen", testCloseOpen},
		{"Times", testTimes},
		{"ConcurrentAddStep", testConcurrentAddStep},
		{"Approvals", testApprovals},
		{"Recordings", testRecordings},
		{"RecordingInvalid", testRecordingInvalid},
		{"VideoAt", testVideoAt},
		{"Prune", testPrune},
		{"PruneKeepsReferences", testPruneKeepsReferences},
		{"NamedFiles", testNamedFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.run(t, open(t)) })
	}
}

// t0 is the fixtures' clock: millisecond precision, UTC, as stores keep it.
var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589_000_000, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// Fixtures set every field, so that a column a store forgets fails.

func device(id string) history.Device {
	return history.Device{
		ID: id, Driver: "android", Name: "Pixel of " + id, Model: "Pixel 8",
		Platform: "android", FirstSeen: at(-time.Hour), LastSeen: at(-time.Minute),
	}
}

func agent(id string) history.Agent {
	return history.Agent{
		ID: id, Name: "claude-code", Version: "2.1." + id,
		FirstSeen: at(-2 * time.Hour), LastSeen: at(-30 * time.Second),
	}
}

func session(id, agentID string) history.Session {
	return history.Session{ID: id, AgentID: agentID, Transport: "http", StartedAt: at(-10 * time.Minute)}
}

func task(id, sessionID, agentID, deviceID string, start time.Time) history.Task {
	return history.Task{
		ID: id, SessionID: sessionID, AgentID: agentID, DeviceID: deviceID,
		Text: "order the usual pizza (" + id + ")", Apps: []string{"com.pizza", "com.android.chrome"},
		StartedAt: start,
	}
}

func step(id, taskID string, seq int) history.Step {
	return history.Step{
		ID: id, TaskID: taskID, Seq: seq, Tool: "tap",
		Args:    fmt.Sprintf(`{"ref":%d,"text":"[redacted]"}`, seq),
		Outcome: "ok", Message: "tapped " + id, Diff: "+ [7] button \"Send\"\n- [3] text \"Draft\"",
		StartedAt: at(time.Duration(seq) * time.Second), Duration: 1234567 * time.Nanosecond,
		Before: id + "-b", After: id + "-a",
		VideoAt: -1, // as read back from a task without a recording; AddStep ignores it
	}
}

func media(id, taskID, stepID string) history.Media {
	return history.Media{
		ID: id, TaskID: taskID, StepID: stepID, Kind: "after", Path: taskID + "/" + id + ".jpg",
		Width: 1080, Height: 2400, Bytes: 123456, CreatedAt: at(5 * time.Second),
	}
}

// approval is a pending approval; every field is set but the decision's.
func approval(id, taskID, stepID string) history.Approval {
	return history.Approval{
		ID: id, TaskID: taskID, StepID: stepID, Tool: "tap", Args: `{"ref":12}`,
		Commit: "send_message", Rule: "ask-before-sending", Target: `[12] button "Send"`,
		Status: history.ApprovalPending, CreatedAt: at(10 * time.Second),
		Summary: `Send "on my way" to Ben (in Messages)`, Counterpart: "Ben",
	}
}

// seed records device d1, agent a1, session s1 and open task k1.
func seed(t *testing.T, s history.Store) history.Task {
	t.Helper()
	ctx := context.Background()
	must(t, s.UpsertDevice(ctx, device("d1")))
	must(t, s.UpsertAgent(ctx, agent("a1")))
	must(t, s.StartSession(ctx, session("s1", "a1")))
	k := task("k1", "s1", "a1", "d1", at(0))
	must(t, s.StartTask(ctx, k))
	return k
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v; want %v", what, err, want)
	}
}

func testDevices(t *testing.T, s history.Store) {
	ctx := context.Background()
	d := device("d1")
	must(t, s.UpsertDevice(ctx, d))
	got, err := s.Device(ctx, "d1")
	must(t, err)
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("Device after insert (-want +got):\n%s", diff)
	}

	// An update overwrites every field but the first sighting.
	upd := history.Device{ID: "d1", Driver: "sim", Name: "renamed", Model: "Pixel 9",
		Platform: "ios", FirstSeen: at(time.Hour), LastSeen: at(2 * time.Hour)}
	must(t, s.UpsertDevice(ctx, upd))
	want := upd
	want.FirstSeen = d.FirstSeen
	got, err = s.Device(ctx, "d1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Device after update (-want +got):\n%s", diff)
	}

	// A first record without FirstSeen takes LastSeen.
	must(t, s.UpsertDevice(ctx, history.Device{ID: "d2", Name: "x", LastSeen: at(0)}))
	got, err = s.Device(ctx, "d2")
	must(t, err)
	if !got.FirstSeen.Equal(at(0)) {
		t.Errorf("FirstSeen: got %v; want %v", got.FirstSeen, at(0))
	}
}

func testAgents(t *testing.T, s history.Store) {
	ctx := context.Background()
	a := agent("a1")
	must(t, s.UpsertAgent(ctx, a))
	got, err := s.Agent(ctx, "a1")
	must(t, err)
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("Agent after insert (-want +got):\n%s", diff)
	}

	upd := history.Agent{ID: "a1", Name: "codex", Version: "9", FirstSeen: at(time.Hour), LastSeen: at(2 * time.Hour)}
	must(t, s.UpsertAgent(ctx, upd))
	want := upd
	want.FirstSeen = a.FirstSeen
	got, err = s.Agent(ctx, "a1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Agent after update (-want +got):\n%s", diff)
	}

	must(t, s.UpsertAgent(ctx, history.Agent{ID: "a2", LastSeen: at(0)}))
	got, err = s.Agent(ctx, "a2")
	must(t, err)
	if !got.FirstSeen.Equal(at(0)) {
		t.Errorf("FirstSeen: got %v; want %v", got.FirstSeen, at(0))
	}
}

func testSessions(t *testing.T, s history.Store) {
	ctx := context.Background()
	must(t, s.UpsertAgent(ctx, agent("a1")))
	ss := session("s1", "a1")
	ss.EndedAt = at(time.Hour) // ignored by StartSession
	must(t, s.StartSession(ctx, ss))
	want := ss
	want.EndedAt = time.Time{}
	got, err := s.Session(ctx, "s1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Session after start (-want +got):\n%s", diff)
	}

	wantErr(t, "StartSession again", s.StartSession(ctx, ss), history.ErrExists)
	must(t, s.EndSession(ctx, "s1", at(time.Minute)))
	wantErr(t, "EndSession again", s.EndSession(ctx, "s1", at(time.Hour)), history.ErrEnded)
	want.EndedAt = at(time.Minute)
	got, err = s.Session(ctx, "s1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Session after end (-want +got):\n%s", diff)
	}

	// A session need not name an agent.
	must(t, s.StartSession(ctx, history.Session{ID: "s2", Transport: "stdio", StartedAt: at(0)}))
	got, err = s.Session(ctx, "s2")
	must(t, err)
	if diff := cmp.Diff(history.Session{ID: "s2", Transport: "stdio", StartedAt: at(0)}, got); diff != "" {
		t.Errorf("Session without agent (-want +got):\n%s", diff)
	}
}

func testTaskRoundTrip(t *testing.T, s history.Store) {
	ctx := context.Background()
	k := seed(t, s)
	dup := k
	wantErr(t, "StartTask again", s.StartTask(ctx, dup), history.ErrExists)

	// EndedAt and Outcome are ignored by StartTask.
	k2 := task("k2", "s1", "a1", "d1", at(time.Minute))
	k2.EndedAt, k2.Outcome = at(time.Hour), "released"
	must(t, s.StartTask(ctx, k2))
	k2.EndedAt, k2.Outcome = time.Time{}, ""

	a, d := agent("a1"), device("d1")
	want := history.TaskSummary{Task: k2, AgentName: a.Name, AgentVersion: a.Version, DeviceName: d.Name}
	got, steps, err := s.Task(ctx, "k2")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Task after start (-want +got):\n%s", diff)
	}
	if len(steps) != 0 {
		t.Errorf("steps: got %d; want 0", len(steps))
	}

	must(t, s.AddStep(ctx, step("p1", "k2", 1)))
	last := step("p2", "k2", 2)
	last.Outcome = "uncertain"
	must(t, s.AddStep(ctx, last))
	must(t, s.EndTask(ctx, "k2", at(2*time.Minute), "released"))
	want.EndedAt, want.Outcome = at(2*time.Minute), "released"
	want.Steps, want.LastOutcome = 2, "uncertain"
	got, _, err = s.Task(ctx, "k2")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Task after end (-want +got):\n%s", diff)
	}
	list, err := s.Tasks(ctx, history.TaskFilter{})
	must(t, err)
	if len(list) == 0 {
		t.Fatalf("Tasks: got none; want k2 and k1")
	}
	if diff := cmp.Diff(want, list[0]); diff != "" {
		t.Errorf("Tasks()[0] (-want +got):\n%s", diff)
	}

	// A task with no apps and no references reads back with nil Apps and
	// empty names.
	must(t, s.StartTask(ctx, history.Task{ID: "k3", Text: "bare", Apps: []string{}, StartedAt: at(0)}))
	got, _, err = s.Task(ctx, "k3")
	must(t, err)
	if diff := cmp.Diff(history.TaskSummary{Task: history.Task{ID: "k3", Text: "bare", StartedAt: at(0)}}, got); diff != "" {
		t.Errorf("bare task (-want +got):\n%s", diff)
	}
}

func testEndTask(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	tests := []struct {
		name    string
		id      string
		at      time.Time
		outcome string
		want    error
	}{
		{"first end", "k1", at(time.Minute), "expired", nil},
		{"second end", "k1", at(time.Hour), "stopped", history.ErrEnded},
		{"unknown task", "nope", at(time.Hour), "stopped", history.ErrNotFound},
		{"empty outcome", "k1", at(time.Hour), "", history.ErrInvalid},
		{"zero time", "k1", time.Time{}, "stopped", history.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.EndTask(ctx, tt.id, tt.at, tt.outcome)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("EndTask: got %v; want %v", err, tt.want)
			}
		})
	}
	got, _, err := s.Task(ctx, "k1")
	must(t, err)
	if !got.EndedAt.Equal(at(time.Minute)) || got.Outcome != "expired" {
		t.Errorf("after two ends: got %v %q; want %v %q (the first end kept)",
			got.EndedAt, got.Outcome, at(time.Minute), "expired")
	}
}

func testSteps(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	// Added out of order; read back in Seq order.
	want := []history.Step{step("p1", "k1", 1), step("p2", "k1", 2), step("p3", "k1", 3)}
	want[1].Before, want[1].After = "", "" // screenshots may be missing
	want[2].Outcome, want[2].Tool = "device_offline", "swipe"
	for _, i := range []int{2, 0, 1} {
		must(t, s.AddStep(ctx, want[i]))
	}
	// A step may still arrive after its task ended.
	must(t, s.EndTask(ctx, "k1", at(time.Hour), "released"))
	late := step("p4", "k1", 4)
	must(t, s.AddStep(ctx, late))
	want = append(want, late)

	sum, got, err := s.Task(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if sum.Steps != 4 || sum.LastOutcome != "ok" {
		t.Errorf("summary: got %d steps, last %q; want 4, %q", sum.Steps, sum.LastOutcome, "ok")
	}

	tests := []struct {
		task string
		want int
		err  error
	}{
		{"k1", 4, nil},
		{"", 4, nil},
		{"nope", 0, history.ErrNotFound},
	}
	for _, tt := range tests {
		n, err := s.CountSteps(ctx, tt.task)
		if n != tt.want || !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
			t.Errorf("CountSteps(%q): got %d, %v; want %d, %v", tt.task, n, err, tt.want, tt.err)
		}
	}
}

func testStepUniqueness(t *testing.T, s history.Store) {
	ctx := context.Background()
	k := seed(t, s)
	k2 := task("k2", "s1", "a1", "d1", at(time.Second))
	must(t, s.StartTask(ctx, k2))
	must(t, s.AddStep(ctx, step("p1", "k1", 1)))

	tests := []struct {
		name string
		step history.Step
		want error
	}{
		{"same seq, same task", step("p2", k.ID, 1), history.ErrExists},
		{"same id", step("p1", k.ID, 2), history.ErrExists},
		{"same id, other task", step("p1", k2.ID, 5), history.ErrExists},
		{"same seq, other task", step("p3", k2.ID, 1), nil},
		{"next seq", step("p4", k.ID, 2), nil},
		{"unknown task", step("p5", "nope", 1), history.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.AddStep(ctx, tt.step)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("AddStep: got %v; want %v", err, tt.want)
			}
		})
	}
	// The refused steps left nothing behind.
	_, got, err := s.Task(ctx, k.ID)
	must(t, err)
	if diff := cmp.Diff([]history.Step{step("p1", k.ID, 1), step("p4", k.ID, 2)}, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// testRunningSteps is an acting call's two writes: the step before the
// action, with outcome running, then how the action ended.
func testRunningSteps(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	begun := step("p1", "k1", 1)
	begun.Outcome, begun.Message, begun.Diff, begun.Duration = history.StepRunning, "", "", 0
	must(t, s.AddStep(ctx, begun))
	_, got, err := s.Task(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff([]history.Step{begun}, got); diff != "" {
		t.Errorf("the running step (-want +got):\n%s", diff)
	}

	want := step("p1", "k1", 1) // the fixture's outcome, message, diff and duration
	end := history.Step{ID: "p1", Outcome: want.Outcome, Message: want.Message, Diff: want.Diff, Duration: want.Duration,
		Tool: "ignored", Seq: 99, TaskID: "ignored", Args: "ignored", StartedAt: at(time.Hour)}
	must(t, s.FinishStep(ctx, end))
	sum, got, err := s.Task(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff([]history.Step{want}, got); diff != "" {
		t.Errorf("the finished step (-want +got):\n%s", diff)
	}
	if sum.LastOutcome != want.Outcome {
		t.Errorf("summary: last outcome %q; want %q", sum.LastOutcome, want.Outcome)
	}

	must(t, s.AddStep(ctx, step("p2", "k1", 2))) // an ok step that never ran
	tests := []struct {
		name string
		step history.Step
		want error
	}{
		{"finished twice", history.Step{ID: "p1", Outcome: "uncertain"}, history.ErrEnded},
		{"never running", history.Step{ID: "p2", Outcome: "uncertain"}, history.ErrEnded},
		{"unknown", history.Step{ID: "nope", Outcome: "ok"}, history.ErrNotFound},
		{"no id", history.Step{Outcome: "ok"}, history.ErrInvalid},
		{"no outcome", history.Step{ID: "p1"}, history.ErrInvalid},
		{"still running", history.Step{ID: "p1", Outcome: history.StepRunning}, history.ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, "FinishStep", s.FinishStep(ctx, tt.step), tt.want)
		})
	}
	// The refusals kept the first end.
	_, got, err = s.Task(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff([]history.Step{want, step("p2", "k1", 2)}, got); diff != "" {
		t.Errorf("steps after the refusals (-want +got):\n%s", diff)
	}
}

// testSettleSteps is the start of a daemon after one that died during an
// action: its running steps end, and no other step changes.
func testSettleSteps(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	must(t, s.StartTask(ctx, task("k2", "s1", "a1", "d1", at(time.Second))))
	var want []history.Step
	for i, k := range []string{"k1", "k1", "k2"} {
		st := step(fmt.Sprint("r", i), k, i+1)
		st.Outcome, st.Message = history.StepRunning, ""
		must(t, s.AddStep(ctx, st))
		st.Outcome, st.Message = "uncertain", "the daemon stopped during the action"
		want = append(want, st)
	}
	done := step("d", "k1", 10)
	must(t, s.AddStep(ctx, done))

	wantErr(t, "SettleSteps to running", func() error { _, err := s.SettleSteps(ctx, history.StepRunning, ""); return err }(), history.ErrInvalid)
	wantErr(t, "SettleSteps to nothing", func() error { _, err := s.SettleSteps(ctx, "", ""); return err }(), history.ErrInvalid)
	n, err := s.SettleSteps(ctx, "uncertain", "the daemon stopped during the action")
	if n != 3 || err != nil {
		t.Errorf("SettleSteps: got %d, %v; want 3, nil", n, err)
	}
	_, k1, err := s.Task(ctx, "k1")
	must(t, err)
	_, k2, err := s.Task(ctx, "k2")
	must(t, err)
	if diff := cmp.Diff(append(want[:2:2], done), k1); diff != "" {
		t.Errorf("k1's steps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want[2:], k2); diff != "" {
		t.Errorf("k2's steps (-want +got):\n%s", diff)
	}
	if n, err := s.SettleSteps(ctx, "uncertain", "again"); n != 0 || err != nil {
		t.Errorf("SettleSteps again: got %d, %v; want 0, nil", n, err)
	}
}

// testHealthyWhenNew: a new store has never failed, and refused writes
// (what was written was wrong) do not make it fail.
func testHealthyWhenNew(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	wantErr(t, "AddStep of an unknown task", s.AddStep(ctx, step("p1", "nope", 1)), history.ErrNotFound)
	wantErr(t, "StartTask again", s.StartTask(ctx, task("k1", "s1", "a1", "d1", at(0))), history.ErrExists)
	wantErr(t, "AddStep without id", s.AddStep(ctx, history.Step{TaskID: "k1"}), history.ErrInvalid)
	if h := s.Health(); h != (history.Health{}) {
		t.Errorf("Health: got %+v; want the zero Health", h)
	}
}

func testSetStepMedia(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	st := step("p1", "k1", 1)
	st.Before, st.After = "", ""
	must(t, s.AddStep(ctx, st))

	tests := []struct {
		name          string
		before, after string
		wantB, wantA  string
	}{
		{"before only", "mb", "", "mb", ""},
		{"after only keeps before", "", "ma", "mb", "ma"},
		{"neither keeps both", "", "", "mb", "ma"},
		{"both replaced", "mb2", "ma2", "mb2", "ma2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			must(t, s.SetStepMedia(ctx, "p1", tt.before, tt.after))
			_, steps, err := s.Task(ctx, "k1")
			must(t, err)
			want := st
			want.Before, want.After = tt.wantB, tt.wantA
			if diff := cmp.Diff([]history.Step{want}, steps); diff != "" {
				t.Errorf("steps (-want +got):\n%s", diff)
			}
		})
	}
	wantErr(t, "SetStepMedia unknown step", s.SetStepMedia(ctx, "nope", "x", "y"), history.ErrNotFound)
}

func testMedia(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	must(t, s.AddStep(ctx, step("p1", "k1", 1)))

	tests := []struct {
		name string
		m    history.Media
		want error
	}{
		{"of a step", media("m1", "k1", "p1"), nil},
		{"of the task", media("m2", "k1", ""), nil},
		{"same id", media("m1", "k1", "p1"), history.ErrExists},
		{"unknown task", media("m3", "nope", ""), history.ErrNotFound},
		{"unknown step", media("m4", "k1", "nope"), history.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.AddMedia(ctx, tt.m)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Fatalf("AddMedia: got %v; want %v", err, tt.want)
			}
			got, err := s.Media(ctx, tt.m.ID)
			if tt.want != nil && tt.want != history.ErrExists {
				wantErr(t, "Media", err, history.ErrNotFound)
				return
			}
			must(t, err)
			if diff := cmp.Diff(tt.m, got); diff != "" {
				t.Errorf("Media (-want +got):\n%s", diff)
			}
		})
	}
}

func testNotFound(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	tests := []struct {
		name string
		call func() error
	}{
		{"Device", func() error { _, err := s.Device(ctx, "nope"); return err }},
		{"Agent", func() error { _, err := s.Agent(ctx, "nope"); return err }},
		{"Session", func() error { _, err := s.Session(ctx, "nope"); return err }},
		{"Task", func() error { _, _, err := s.Task(ctx, "nope"); return err }},
		{"Media", func() error { _, err := s.Media(ctx, "nope"); return err }},
		{"CountSteps", func() error { _, err := s.CountSteps(ctx, "nope"); return err }},
		{"EndSession", func() error { return s.EndSession(ctx, "nope", at(0)) }},
		{"EndTask", func() error { return s.EndTask(ctx, "nope", at(0), "stopped") }},
		{"SetStepMedia", func() error { return s.SetStepMedia(ctx, "nope", "b", "a") }},
		{"Approvals", func() error { _, err := s.Approvals(ctx, "nope"); return err }},
		{"UpsertApproval to unknown task", func() error { return s.UpsertApproval(ctx, approval("ap9", "nope", "")) }},
		{"UpsertApproval of unknown step", func() error { return s.UpsertApproval(ctx, approval("ap9", "k1", "nope")) }},
		{"AddStep to unknown task", func() error { return s.AddStep(ctx, step("p9", "nope", 1)) }},
		{"StartSession of unknown agent", func() error { return s.StartSession(ctx, session("s9", "nope")) }},
		{"StartTask in unknown session", func() error {
			return s.StartTask(ctx, task("k9", "nope", "a1", "d1", at(0)))
		}},
		{"StartTask of unknown agent", func() error {
			return s.StartTask(ctx, task("k9", "s1", "nope", "d1", at(0)))
		}},
		{"StartTask on unknown device", func() error {
			return s.StartTask(ctx, task("k9", "s1", "a1", "nope", at(0)))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, tt.name, tt.call(), history.ErrNotFound)
		})
	}
	if _, _, err := s.Task(ctx, "k9"); !errors.Is(err, history.ErrNotFound) {
		t.Errorf("a refused task was recorded: got %v; want ErrNotFound", err)
	}
}

func testInvalid(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	tests := []struct {
		name string
		call func() error
	}{
		{"UpsertDevice", func() error { return s.UpsertDevice(ctx, history.Device{Name: "x"}) }},
		{"UpsertAgent", func() error { return s.UpsertAgent(ctx, history.Agent{Name: "x"}) }},
		{"StartSession", func() error { return s.StartSession(ctx, history.Session{}) }},
		{"StartTask", func() error { return s.StartTask(ctx, history.Task{Text: "x"}) }},
		{"AddStep without id", func() error { return s.AddStep(ctx, history.Step{TaskID: "k1", Seq: 1}) }},
		{"AddStep without task", func() error { return s.AddStep(ctx, history.Step{ID: "p1", Seq: 1}) }},
		{"AddMedia without id", func() error { return s.AddMedia(ctx, history.Media{TaskID: "k1"}) }},
		{"AddMedia without task", func() error { return s.AddMedia(ctx, history.Media{ID: "m1"}) }},
		{"UpsertApproval without id", func() error {
			return s.UpsertApproval(ctx, history.Approval{TaskID: "k1", Status: history.ApprovalPending})
		}},
		{"UpsertApproval without task", func() error {
			return s.UpsertApproval(ctx, history.Approval{ID: "ap1", Status: history.ApprovalPending})
		}},
		{"UpsertApproval without status", func() error {
			return s.UpsertApproval(ctx, history.Approval{ID: "ap1", TaskID: "k1"})
		}},
		{"UpsertApproval with an unknown status", func() error {
			return s.UpsertApproval(ctx, history.Approval{ID: "ap1", TaskID: "k1", Status: "maybe"})
		}},
		{"EndSession at zero", func() error { return s.EndSession(ctx, "s1", time.Time{}) }},
		{"CloseOpen at zero", func() error { _, err := s.CloseOpen(ctx, time.Time{}, "x"); return err }},
		{"CloseOpen without outcome", func() error { _, err := s.CloseOpen(ctx, at(0), ""); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantErr(t, tt.name, tt.call(), history.ErrInvalid)
		})
	}
}

func testTasksFilter(t *testing.T, s history.Store) {
	ctx := context.Background()
	for _, d := range []string{"d1", "d2"} {
		must(t, s.UpsertDevice(ctx, device(d)))
	}
	for _, a := range []string{"a1", "a2"} {
		must(t, s.UpsertAgent(ctx, agent(a)))
	}
	must(t, s.StartSession(ctx, session("s1", "a1")))
	must(t, s.StartSession(ctx, session("s2", "a2")))
	// Started out of order. t3b and t3 start in the same millisecond: ties
	// are listed by ID, descending, whatever order they were recorded in.
	for _, k := range []history.Task{
		task("t3b", "s2", "a2", "d1", at(3*time.Minute)),
		task("t3", "s1", "a1", "d2", at(3*time.Minute)),
		task("t1", "s1", "a1", "d1", at(1*time.Minute)),
		task("t5", "s2", "a2", "d1", at(5*time.Minute)),
		task("t2", "s2", "a2", "d2", at(2*time.Minute)),
		task("t4", "s1", "a1", "d1", at(4*time.Minute)),
	} {
		must(t, s.StartTask(ctx, k))
	}
	tests := []struct {
		name string
		f    history.TaskFilter
		want []string
	}{
		{"all, newest first", history.TaskFilter{}, []string{"t5", "t4", "t3b", "t3", "t2", "t1"}},
		{"device", history.TaskFilter{Device: "d1"}, []string{"t5", "t4", "t3b", "t1"}},
		{"agent", history.TaskFilter{Agent: "a2"}, []string{"t5", "t3b", "t2"}},
		{"device and agent", history.TaskFilter{Device: "d2", Agent: "a1"}, []string{"t3"}},
		{"limit", history.TaskFilter{Limit: 2}, []string{"t5", "t4"}},
		{"before", history.TaskFilter{Before: at(4 * time.Minute)}, []string{"t3b", "t3", "t2", "t1"}},
		{"before and limit", history.TaskFilter{Before: at(3 * time.Minute), Limit: 1}, []string{"t2"}},
		{"before and device", history.TaskFilter{Before: at(5 * time.Minute), Device: "d1"}, []string{"t4", "t3b", "t1"}},
		{"unknown device", history.TaskFilter{Device: "nope"}, nil},
		{"before everything", history.TaskFilter{Before: at(0)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := s.Tasks(ctx, tt.f)
			must(t, err)
			var got []string
			for _, ts := range list {
				got = append(got, ts.ID)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Tasks(%+v) ids (-want +got):\n%s", tt.f, diff)
			}
		})
	}

	// The default limit.
	for i := range history.DefaultTaskLimit + 5 {
		must(t, s.StartTask(ctx, history.Task{ID: fmt.Sprintf("bulk%03d", i), StartedAt: at(time.Hour)}))
	}
	list, err := s.Tasks(ctx, history.TaskFilter{})
	must(t, err)
	if len(list) != history.DefaultTaskLimit {
		t.Errorf("Tasks without limit: got %d; want %d", len(list), history.DefaultTaskLimit)
	}
}

func testCloseOpen(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s) // k1, open, started at(0)
	must(t, s.StartSession(ctx, session("s2", "a1")))
	must(t, s.EndSession(ctx, "s2", at(time.Minute)))
	k2 := task("k2", "s1", "a1", "d1", at(-time.Minute))
	k3 := task("k3", "s1", "a1", "d1", at(time.Minute))
	must(t, s.StartTask(ctx, k2))
	must(t, s.StartTask(ctx, k3))
	must(t, s.EndTask(ctx, "k3", at(2*time.Minute), "released"))

	open, err := s.OpenTasks(ctx)
	must(t, err)
	if diff := cmp.Diff([]history.Task{k2, task("k1", "s1", "a1", "d1", at(0))}, open); diff != "" {
		t.Errorf("OpenTasks, oldest first (-want +got):\n%s", diff)
	}

	n, err := s.CloseOpen(ctx, at(time.Hour), "daemon_restarted")
	must(t, err)
	if n != 2 {
		t.Errorf("CloseOpen: got %d; want 2", n)
	}
	open, err = s.OpenTasks(ctx)
	must(t, err)
	if len(open) != 0 {
		t.Errorf("OpenTasks after CloseOpen: got %d; want 0", len(open))
	}
	for _, tt := range []struct {
		id      string
		ended   time.Time
		outcome string
	}{
		{"k1", at(time.Hour), "daemon_restarted"},
		{"k2", at(time.Hour), "daemon_restarted"},
		{"k3", at(2 * time.Minute), "released"},
	} {
		got, _, err := s.Task(ctx, tt.id)
		must(t, err)
		if !got.EndedAt.Equal(tt.ended) || got.Outcome != tt.outcome {
			t.Errorf("task %s: got %v %q; want %v %q", tt.id, got.EndedAt, got.Outcome, tt.ended, tt.outcome)
		}
	}
	for _, tt := range []struct {
		id    string
		ended time.Time
	}{
		{"s1", at(time.Hour)},
		{"s2", at(time.Minute)},
	} {
		got, err := s.Session(ctx, tt.id)
		must(t, err)
		if !got.EndedAt.Equal(tt.ended) {
			t.Errorf("session %s: got ended %v; want %v", tt.id, got.EndedAt, tt.ended)
		}
	}
	n, err = s.CloseOpen(ctx, at(2*time.Hour), "daemon_restarted")
	if err != nil || n != 0 {
		t.Errorf("CloseOpen again: got %d, %v; want 0, nil", n, err)
	}
}

func testTimes(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	// Nanoseconds and a zone go in; UTC milliseconds come out.
	zone := time.FixedZone("CET", 3600)
	in := time.Date(2026, 3, 14, 10, 0, 0, 123_456_789, zone)
	want := time.Date(2026, 3, 14, 9, 0, 0, 123_000_000, time.UTC)
	st := step("p1", "k1", 1)
	st.StartedAt = in
	must(t, s.AddStep(ctx, st))
	_, steps, err := s.Task(ctx, "k1")
	must(t, err)
	if len(steps) != 1 {
		t.Fatalf("steps: got %d; want 1", len(steps))
	}
	got := steps[0].StartedAt
	if !got.Equal(want) || got.Location() != time.UTC {
		t.Errorf("StartedAt: got %v; want %v", got, want)
	}
	if steps[0].Duration != st.Duration {
		t.Errorf("Duration: got %v; want %v (kept to the nanosecond)", steps[0].Duration, st.Duration)
	}
}

func testConcurrentAddStep(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	const agents, steps = 10, 100
	for i := range agents {
		must(t, s.StartTask(ctx, task(fmt.Sprintf("c%d", i), "s1", "a1", "d1", at(time.Duration(i)*time.Second))))
	}
	var wg sync.WaitGroup
	errs := make(chan error, agents*steps+agents)
	for i := range agents {
		wg.Go(func() {
			taskID := fmt.Sprintf("c%d", i)
			for n := 1; n <= steps; n++ {
				if err := s.AddStep(ctx, step(fmt.Sprintf("%s-%d", taskID, n), taskID, n)); err != nil {
					errs <- err
				}
				if n%25 == 0 { // readers alongside the writers
					if _, err := s.Tasks(ctx, history.TaskFilter{Device: "d1"}); err != nil {
						errs <- err
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	n, err := s.CountSteps(ctx, "")
	must(t, err)
	if n != agents*steps {
		t.Errorf("CountSteps: got %d; want %d", n, agents*steps)
	}
	for i := range agents {
		n, err := s.CountSteps(ctx, fmt.Sprintf("c%d", i))
		must(t, err)
		if n != steps {
			t.Errorf("CountSteps(c%d): got %d; want %d", i, n, steps)
		}
	}
}

func testApprovals(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	must(t, s.StartTask(ctx, task("k2", "s1", "a1", "d1", at(time.Minute))))
	must(t, s.AddStep(ctx, step("p1", "k1", 1)))

	none, err := s.Approvals(ctx, "k1")
	must(t, err)
	if len(none) != 0 {
		t.Errorf("Approvals before any: got %d; want 0", len(none))
	}

	// Opened out of order; read back oldest first.
	first := approval("ap1", "k1", "p1")
	second := approval("ap2", "k1", "")
	second.CreatedAt = at(20 * time.Second)
	other := approval("ap3", "k2", "")
	for _, a := range []history.Approval{second, other, first} {
		must(t, s.UpsertApproval(ctx, a))
	}
	got, err := s.Approvals(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff([]history.Approval{first, second}, got); diff != "" {
		t.Errorf("Approvals pending (-want +got):\n%s", diff)
	}

	// The person decides; the opening time is kept even if the update
	// says otherwise, every other field is overwritten.
	allowed := first
	allowed.Status, allowed.DecidedAt, allowed.DecidedBy, allowed.ForTask = history.ApprovalApproved, at(30*time.Second), "person", true
	upd := allowed
	upd.CreatedAt = at(time.Hour)
	must(t, s.UpsertApproval(ctx, upd))
	denied := second
	denied.Status, denied.DecidedAt, denied.DecidedBy, denied.Reason = history.ApprovalDenied, at(40*time.Second), "person", "not to my boss"
	must(t, s.UpsertApproval(ctx, denied))
	got, err = s.Approvals(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff([]history.Approval{allowed, denied}, got); diff != "" {
		t.Errorf("Approvals decided (-want +got):\n%s", diff)
	}

	expired := other
	expired.Status, expired.DecidedAt, expired.DecidedBy = history.ApprovalExpired, at(time.Minute), "expiry"
	must(t, s.UpsertApproval(ctx, expired))
	got, err = s.Approvals(ctx, "k2")
	must(t, err)
	if diff := cmp.Diff([]history.Approval{expired}, got); diff != "" {
		t.Errorf("Approvals expired (-want +got):\n%s", diff)
	}

	// An approval may be recorded without an opening time, and the first
	// update that has one keeps it.
	bare := history.Approval{ID: "ap4", TaskID: "k2", Status: history.ApprovalPending}
	must(t, s.UpsertApproval(ctx, bare))
	bare.CreatedAt = at(2 * time.Minute)
	must(t, s.UpsertApproval(ctx, bare))
	got, err = s.Approvals(ctx, "k2")
	must(t, err)
	if diff := cmp.Diff([]history.Approval{expired, bare}, got); diff != "" {
		t.Errorf("Approvals with a late opening time (-want +got):\n%s", diff)
	}

	// A card's screenshot is the task's media row of its id: the approval
	// names it once it is there, and only then.
	shot := media(history.ApprovalMediaID("ap3"), "k2", "")
	shot.Kind = history.KindApproval
	must(t, s.AddMedia(ctx, shot))
	got, err = s.Approvals(ctx, "k2")
	must(t, err)
	withShot := expired
	withShot.Screenshot = shot.ID
	if diff := cmp.Diff([]history.Approval{withShot, bare}, got); diff != "" {
		t.Errorf("Approvals with a screenshot (-want +got):\n%s", diff)
	}
}

// recording is a recording of a task, begun 1.5 s after t0, with bytes.
func recording(taskID string) history.Recording {
	return history.Recording{
		TaskID: taskID, Path: taskID + ".mp4", Codec: history.CodecH264, Width: 1080, Height: 2400,
		StartedAt: at(1500 * time.Millisecond), Duration: 61234 * time.Millisecond, Bytes: 987654,
		UpdatedAt: at(time.Minute),
	}
}

func testRecordings(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	_, err := s.Recording(ctx, "k1")
	wantErr(t, "Recording before any", err, history.ErrNotFound)
	wantErr(t, "PutRecording of an unknown task", s.PutRecording(ctx, recording("nope")), history.ErrNotFound)
	_, err = s.Recording(ctx, "nope")
	wantErr(t, "Recording of an unknown task", err, history.ErrNotFound)

	r := recording("k1")
	must(t, s.PutRecording(ctx, r))
	got, err := s.Recording(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff(r, got); diff != "" {
		t.Errorf("Recording after insert (-want +got):\n%s", diff)
	}

	// An update overwrites every field; times and the duration keep
	// milliseconds.
	upd := history.Recording{
		TaskID: "k1", Path: "2026/k1.mp4", Codec: history.CodecH265, Width: 720, Height: 1600,
		StartedAt: at(2 * time.Second).Add(999 * time.Microsecond),
		Duration:  90*time.Second + 1500*time.Microsecond, Bytes: 1 << 20,
		UpdatedAt: at(2 * time.Minute).Add(time.Nanosecond),
	}
	must(t, s.PutRecording(ctx, upd))
	want := upd
	want.StartedAt, want.UpdatedAt = at(2*time.Second), at(2*time.Minute)
	want.Duration = 90*time.Second + time.Millisecond
	got, err = s.Recording(ctx, "k1")
	must(t, err)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Recording after update (-want +got):\n%s", diff)
	}
}

func testRecordingInvalid(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	tests := []struct {
		name string
		edit func(r *history.Recording)
	}{
		{"no task", func(r *history.Recording) { r.TaskID = "" }},
		{"no path", func(r *history.Recording) { r.Path = "" }},
		{"absolute path", func(r *history.Recording) { r.Path = "/tmp/k1.mp4" }},
		{"path outside the folder", func(r *history.Recording) { r.Path = "../k1.mp4" }},
		{"backslash", func(r *history.Recording) { r.Path = `a\k1.mp4` }},
		{"unclean path", func(r *history.Recording) { r.Path = "a//k1.mp4" }},
		{"no codec", func(r *history.Recording) { r.Codec = "" }},
		{"unknown codec", func(r *history.Recording) { r.Codec = "vp9" }},
		{"no start", func(r *history.Recording) { r.StartedAt = time.Time{} }},
		{"negative bytes", func(r *history.Recording) { r.Bytes = -1 }},
		{"negative duration", func(r *history.Recording) { r.Duration = -time.Second }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := recording("k1")
			tt.edit(&r)
			wantErr(t, "PutRecording", s.PutRecording(ctx, r), history.ErrInvalid)
		})
	}
	_, err := s.Recording(ctx, "k1")
	wantErr(t, "Recording after refusals", err, history.ErrNotFound)
}

func testVideoAt(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	// Steps at 1 s, 2 s and 3 s; the recording begins at 1.5 s.
	for i := 1; i <= 3; i++ {
		must(t, s.AddStep(ctx, step(fmt.Sprintf("p%d", i), "k1", i)))
	}
	check := func(name string, wantRec bool, want ...time.Duration) {
		t.Helper()
		sum, steps, err := s.Task(ctx, "k1")
		must(t, err)
		if sum.Recording != wantRec {
			t.Errorf("%s: Task summary Recording: got %v; want %v", name, sum.Recording, wantRec)
		}
		list, err := s.Tasks(ctx, history.TaskFilter{})
		must(t, err)
		if len(list) != 1 || list[0].Recording != wantRec {
			t.Errorf("%s: Tasks: got %+v; want k1 with Recording %v", name, list, wantRec)
		}
		var got []time.Duration
		for _, st := range steps {
			got = append(got, st.VideoAt)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: VideoAt (-want +got):\n%s", name, diff)
		}
	}
	check("no recording", false, -1, -1, -1)

	// A recording without bytes yet has nothing to show.
	r := recording("k1")
	r.Bytes, r.Duration = 0, 0
	must(t, s.PutRecording(ctx, r))
	check("empty recording", false, -1, -1, -1)

	// A step before the recording began is at its start.
	r = recording("k1")
	must(t, s.PutRecording(ctx, r))
	check("recording", true, 0, 500*time.Millisecond, 1500*time.Millisecond)

	// VideoAt given to AddStep is ignored.
	late := step("p4", "k1", 4)
	late.VideoAt = time.Hour
	must(t, s.AddStep(ctx, late))
	check("after a step with VideoAt", true, 0, 500*time.Millisecond, 1500*time.Millisecond, 2500*time.Millisecond)

	// A step past the recording's end (the last one of a task may round a
	// millisecond past it) is at its end, where a viewer can seek.
	r.Duration = 2 * time.Second
	must(t, s.PutRecording(ctx, r))
	check("a short recording", true, 0, 500*time.Millisecond, 1500*time.Millisecond, 2*time.Second)
}

// pruneFixture records, with before = at(time.Hour) as the cut:
//
//	old   ended at(10m), with steps, media, an approval and a recording: pruned
//	edge  ended at(1h) exactly: kept (only tasks ended strictly before go)
//	new   ended at(2h): kept
//	run   started at(-24h), still open: kept, whatever its age
//	bare  ended at(20m), nothing but the row: pruned
//
// and sessions: s1 (open, holds run and new), s2 (ended at(30m), holds only
// old: pruned), s3 (ended at(30m), no tasks: pruned), s4 (ended at(30m),
// holds edge: kept), s5 (ended at(2h), no tasks: kept), s6 (open, no
// tasks: kept).
func pruneFixture(t *testing.T, s history.Store) time.Time {
	t.Helper()
	ctx := context.Background()
	must(t, s.UpsertDevice(ctx, device("d1")))
	must(t, s.UpsertAgent(ctx, agent("a1")))
	for _, id := range []string{"s1", "s2", "s3", "s4", "s5", "s6"} {
		must(t, s.StartSession(ctx, session(id, "a1")))
	}
	tasks := []struct {
		id, session string
		start, end  time.Time
	}{
		{"old", "s2", at(0), at(10 * time.Minute)},
		{"edge", "s4", at(0), at(time.Hour)},
		{"new", "s1", at(0), at(2 * time.Hour)},
		{"run", "s1", at(-24 * time.Hour), time.Time{}},
		{"bare", "", at(0), at(20 * time.Minute)},
	}
	for _, k := range tasks {
		must(t, s.StartTask(ctx, task(k.id, k.session, "a1", "d1", k.start)))
		for i := 1; i <= 2; i++ {
			if k.id == "bare" {
				break
			}
			id := fmt.Sprintf("%s-p%d", k.id, i)
			must(t, s.AddStep(ctx, step(id, k.id, i)))
			must(t, s.AddMedia(ctx, media(id+"-after", k.id, id)))
		}
		if k.id != "bare" {
			must(t, s.UpsertApproval(ctx, approval(k.id+"-ap", k.id, k.id+"-p1")))
			must(t, s.PutRecording(ctx, recording(k.id)))
		}
		if !k.end.IsZero() {
			must(t, s.EndTask(ctx, k.id, k.end, "released"))
		}
	}
	for _, id := range []string{"s2", "s3", "s4"} {
		must(t, s.EndSession(ctx, id, at(30*time.Minute)))
	}
	must(t, s.EndSession(ctx, "s5", at(2*time.Hour)))
	return at(time.Hour)
}

func testPrune(t *testing.T, s history.Store) {
	ctx := context.Background()
	before := pruneFixture(t, s)
	_, err := s.Prune(ctx, time.Time{})
	wantErr(t, "Prune at zero", err, history.ErrInvalid)

	got, err := s.Prune(ctx, before)
	must(t, err)
	want := history.Pruned{
		Tasks: 2, Steps: 2, Approvals: 1, Media: 2, Recordings: 1, Sessions: 2,
		Files: history.Files{
			Media:      []string{"old/old-p1-after.jpg", "old/old-p2-after.jpg"},
			Recordings: []string{"old.mp4"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Prune (-want +got):\n%s", diff)
	}

	// What was pruned is gone.
	for _, id := range []string{"old", "bare"} {
		_, _, err := s.Task(ctx, id)
		wantErr(t, "Task "+id, err, history.ErrNotFound)
		_, err = s.Approvals(ctx, id)
		wantErr(t, "Approvals "+id, err, history.ErrNotFound)
		_, err = s.Recording(ctx, id)
		wantErr(t, "Recording "+id, err, history.ErrNotFound)
	}
	_, err = s.Media(ctx, "old-p1-after")
	wantErr(t, "Media of a pruned task", err, history.ErrNotFound)
	for _, id := range []string{"s2", "s3"} {
		_, err := s.Session(ctx, id)
		wantErr(t, "Session "+id, err, history.ErrNotFound)
	}

	// The rest stays whole, the running task first of all.
	for _, id := range []string{"run", "edge", "new"} {
		sum, steps, err := s.Task(ctx, id)
		must(t, err)
		if len(steps) != 2 || !sum.Recording {
			t.Errorf("task %s: got %d steps, recording %v; want 2, true", id, len(steps), sum.Recording)
		}
		aps, err := s.Approvals(ctx, id)
		must(t, err)
		if len(aps) != 1 {
			t.Errorf("task %s: got %d approvals; want 1", id, len(aps))
		}
		_, err = s.Media(ctx, id+"-p2-after")
		must(t, err)
		_, err = s.Recording(ctx, id)
		must(t, err)
	}
	for _, id := range []string{"s1", "s4", "s5", "s6"} {
		_, err := s.Session(ctx, id)
		must(t, err)
	}
	_, err = s.Device(ctx, "d1")
	must(t, err)
	_, err = s.Agent(ctx, "a1")
	must(t, err)
	n, err := s.CountSteps(ctx, "")
	must(t, err)
	if n != 6 {
		t.Errorf("CountSteps after Prune: got %d; want 6", n)
	}

	// Nothing more to prune at the same cut.
	got, err = s.Prune(ctx, before)
	must(t, err)
	if diff := cmp.Diff(history.Pruned{}, got); diff != "" {
		t.Errorf("Prune again (-want +got):\n%s", diff)
	}
	// A later cut takes the rest of the ended tasks, never the running one.
	got, err = s.Prune(ctx, at(1000*time.Hour))
	must(t, err)
	if got.Tasks != 2 || got.Sessions != 2 { // edge and new; s4 and s5
		t.Errorf("Prune later: got %d tasks, %d sessions; want 2, 2", got.Tasks, got.Sessions)
	}
	open, err := s.OpenTasks(ctx)
	must(t, err)
	if len(open) != 1 || open[0].ID != "run" {
		t.Errorf("OpenTasks after Prune: got %+v; want run", open)
	}
}

// A row of a task that stays and names a step of a pruned task does not
// stop retention; it loses the reference.
func testPruneKeepsReferences(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	must(t, s.AddStep(ctx, step("p1", "k1", 1)))
	must(t, s.EndTask(ctx, "k1", at(time.Minute), "released"))
	must(t, s.StartTask(ctx, task("k2", "s1", "a1", "d1", at(time.Minute))))
	ap := approval("ap1", "k2", "p1")
	must(t, s.UpsertApproval(ctx, ap))
	m := media("m1", "k2", "p1")
	must(t, s.AddMedia(ctx, m))

	got, err := s.Prune(ctx, at(time.Hour))
	must(t, err)
	if got.Tasks != 1 || got.Steps != 1 || got.Approvals != 0 || got.Media != 0 {
		t.Errorf("Prune: got %+v; want 1 task, 1 step, no approval, no media", got)
	}
	aps, err := s.Approvals(ctx, "k2")
	must(t, err)
	ap.StepID = ""
	if diff := cmp.Diff([]history.Approval{ap}, aps); diff != "" {
		t.Errorf("Approvals of the task that stays (-want +got):\n%s", diff)
	}
	gotM, err := s.Media(ctx, "m1")
	must(t, err)
	m.StepID = ""
	if diff := cmp.Diff(m, gotM); diff != "" {
		t.Errorf("Media of the task that stays (-want +got):\n%s", diff)
	}
}

func testNamedFiles(t *testing.T, s history.Store) {
	ctx := context.Background()
	seed(t, s)
	must(t, s.StartTask(ctx, task("k2", "s1", "a1", "d1", at(time.Minute))))
	must(t, s.AddMedia(ctx, media("m1", "k1", "")))
	must(t, s.AddMedia(ctx, media("m2", "k2", "")))
	must(t, s.PutRecording(ctx, recording("k1")))

	got, err := s.NamedFiles(ctx, history.Files{})
	must(t, err)
	if diff := cmp.Diff(history.Files{}, got); diff != "" {
		t.Errorf("NamedFiles of none (-want +got):\n%s", diff)
	}
	got, err = s.NamedFiles(ctx, history.Files{
		Media: []string{"k2/m2.jpg", "k1/nope.jpg", "k1/m1.jpg", "k1.mp4"},
		// A media path is not a recording's, and repeats are answered
		// once.
		Recordings: []string{"k2.mp4", "k1.mp4", "k1/m1.jpg", "k1.mp4"},
	})
	must(t, err)
	want := history.Files{Media: []string{"k1/m1.jpg", "k2/m2.jpg"}, Recordings: []string{"k1.mp4"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NamedFiles (-want +got):\n%s", diff)
	}

	// More paths than one query takes.
	var many []string
	for i := range 1500 {
		many = append(many, fmt.Sprintf("k9/%04d.jpg", i))
	}
	many = append(many, "k2/m2.jpg")
	got, err = s.NamedFiles(ctx, history.Files{Media: many})
	must(t, err)
	if diff := cmp.Diff(history.Files{Media: []string{"k2/m2.jpg"}}, got); diff != "" {
		t.Errorf("NamedFiles of many (-want +got):\n%s", diff)
	}
}

// A Faulty store is a store and a way to make its writes fail as they do
// when the history cannot be written (a full disk, say).
type Faulty struct {
	Store history.Store
	// Break makes every write fail until the returned fix is called.
	Break func(t *testing.T) (fix func())
}

// RunFaults runs the tests of a store that cannot be written: writes fail
// with ErrUnwritable and say why, reads go on, Health tells when it began
// and when it ended, and a fixed store writes again. newStore returns a
// new, empty store for each subtest; RunFaults closes it.
func RunFaults(t *testing.T, newStore func(t *testing.T) Faulty) {
	tests := []struct {
		name string
		run  func(t *testing.T, f Faulty)
	}{
		{"WritesFail", testWritesFail},
		{"RefusalsWhileBroken", testRefusalsWhileBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newStore(t)
			t.Cleanup(func() {
				if err := f.Store.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.run(t, f)
		})
	}
}

// writes are one call of each kind of write.
func writes(s history.Store, i int) []struct {
	name string
	call func(ctx context.Context) error
} {
	id := func(p string) string { return fmt.Sprintf("%s-broken-%d", p, i) }
	return []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"UpsertDevice", func(ctx context.Context) error { return s.UpsertDevice(ctx, device(id("d"))) }},
		{"UpsertAgent", func(ctx context.Context) error { return s.UpsertAgent(ctx, agent(id("a"))) }},
		{"StartSession", func(ctx context.Context) error { return s.StartSession(ctx, session(id("s"), "a1")) }},
		{"EndSession", func(ctx context.Context) error { return s.EndSession(ctx, "s1", at(time.Hour)) }},
		{"StartTask", func(ctx context.Context) error { return s.StartTask(ctx, task(id("k"), "s1", "a1", "d1", at(0))) }},
		{"EndTask", func(ctx context.Context) error { return s.EndTask(ctx, "k1", at(time.Hour), "released") }},
		{"CloseOpen", func(ctx context.Context) error {
			_, err := s.CloseOpen(ctx, at(time.Hour), "daemon_restarted")
			return err
		}},
		{"AddStep", func(ctx context.Context) error { return s.AddStep(ctx, step(id("p"), "k1", 100+i)) }},
		{"FinishStep", func(ctx context.Context) error {
			return s.FinishStep(ctx, history.Step{ID: "running", Outcome: "ok"})
		}},
		{"SettleSteps", func(ctx context.Context) error { _, err := s.SettleSteps(ctx, "uncertain", "settled"); return err }},
		{"SetStepMedia", func(ctx context.Context) error { return s.SetStepMedia(ctx, "p1", "m1", "") }},
		{"AddMedia", func(ctx context.Context) error { return s.AddMedia(ctx, media(id("m"), "k1", "p1")) }},
		{"UpsertApproval", func(ctx context.Context) error { return s.UpsertApproval(ctx, approval(id("ap"), "k1", "p1")) }},
		{"PutRecording", func(ctx context.Context) error { return s.PutRecording(ctx, recording("k1")) }},
		{"Prune", func(ctx context.Context) error { _, err := s.Prune(ctx, at(24*time.Hour)); return err }},
	}
}

func testWritesFail(t *testing.T, f Faulty) {
	ctx := context.Background()
	s := f.Store
	seed(t, s)
	must(t, s.AddStep(ctx, step("p1", "k1", 1)))
	running := step("running", "k1", 2)
	running.Outcome = history.StepRunning
	must(t, s.AddStep(ctx, running))
	// A big step, so that a store that writes in pages has to write some.
	big := step("big", "k1", 3)
	big.Diff = strings.Repeat("+ [1] text \"a line of the screen\"\n", 2000)
	must(t, s.AddStep(ctx, big))
	// An ended task, for Prune to delete.
	must(t, s.StartTask(ctx, task("old", "s1", "a1", "d1", at(-time.Hour))))
	must(t, s.EndTask(ctx, "old", at(-time.Minute), "released"))

	before := time.Now()
	fix := f.Break(t)
	for _, w := range writes(s, 1) {
		err := w.call(ctx)
		cause, ok := history.CauseOf(err)
		if !errors.Is(err, history.ErrUnwritable) || !ok || cause == "" {
			t.Errorf("%s with the store broken: got %v; want an ErrUnwritable that says why", w.name, err)
		}
	}
	h := s.Health()
	if !h.Failing || h.Cause == "" || h.Fix == "" || h.Since.Before(before) || h.Last.Before(h.Since) ||
		h.Failures != len(writes(s, 0)) || !h.Recovered.IsZero() {
		t.Errorf("Health while broken: got %+v; want failing since the break, with a cause, a fix and %d failures", h, len(writes(s, 0)))
	}
	// Reads go on, and the failed writes left nothing behind.
	sum, steps, err := s.Task(ctx, "k1")
	if err != nil || len(steps) != 3 || steps[1].Outcome != history.StepRunning || sum.Outcome != "" {
		t.Errorf("Task while broken: got %+v, %d steps, %v; want the open task with its 3 steps, the second running", sum, len(steps), err)
	}
	if n, err := s.CountSteps(ctx, ""); n != 3 || err != nil {
		t.Errorf("CountSteps while broken: got %d, %v; want 3", n, err)
	}
	if list, err := s.Tasks(ctx, history.TaskFilter{}); len(list) != 2 || err != nil {
		t.Errorf("Tasks while broken: got %d tasks, %v; want 2", len(list), err)
	}
	// A write that has nothing to change (no task is older than this) may
	// work or fail, but it does not make the store healthy.
	s.Prune(ctx, at(-24*time.Hour))
	if h := s.Health(); !h.Failing {
		t.Errorf("Health after a write that changed nothing: got %+v; want still failing", h)
	}

	fix()
	fixed := time.Now()
	must(t, s.AddStep(ctx, step("p4", "k1", 4)))
	h = s.Health()
	if h.Failing || h.Recovered.Before(fixed) || h.Since.IsZero() || h.Failures < len(writes(s, 0)) {
		t.Errorf("Health after a write worked again: got %+v; want not failing, recovered after the fix, the failure kept", h)
	}
	// Every kind of write works again.
	for _, w := range writes(s, 2) {
		if err := w.call(ctx); errors.Is(err, history.ErrUnwritable) {
			t.Errorf("%s after the fix: %v", w.name, err)
		}
	}
	if h := s.Health(); h.Failing {
		t.Errorf("Health after the writes: got %+v; want not failing", h)
	}
}

// testRefusalsWhileBroken: a write that is wrong in itself is refused for
// that, broken store or not, and is not counted as a failure to write.
func testRefusalsWhileBroken(t *testing.T, f Faulty) {
	ctx := context.Background()
	s := f.Store
	seed(t, s)
	fix := f.Break(t)
	defer fix()
	wantErr(t, "AddStep without an id", s.AddStep(ctx, history.Step{TaskID: "k1"}), history.ErrInvalid)
	wantErr(t, "FinishStep without an outcome", s.FinishStep(ctx, history.Step{ID: "p1"}), history.ErrInvalid)
	if h := s.Health(); h.Failing || h.Failures != 0 {
		t.Errorf("Health after refusals only: got %+v; want not failing", h)
	}
}
