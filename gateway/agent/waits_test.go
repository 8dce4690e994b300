package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// progressLog records a call's progress reports.
type progressLog struct {
	mu      sync.Mutex
	reports []progressReport
}

type progressReport struct {
	done, total float64
	message     string
}

func (p *progressLog) progress(done, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reports = append(p.reports, progressReport{done, total, message})
}

func (p *progressLog) all() []progressReport {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]progressReport(nil), p.reports...)
}

func (p *progressLog) count() int { return len(p.all()) }

// check fails t unless there was at least one report with message, each
// with total as given and done never going back. Reports of other stages
// (the settling after an approved action) are left out.
func (p *progressLog) check(t *testing.T, total float64, message string) {
	t.Helper()
	var got []progressReport
	for _, r := range p.all() {
		if r.message == message {
			got = append(got, r)
		}
	}
	if len(got) == 0 {
		t.Fatalf("no progress report %q in %+v; want at least one", message, p.all())
	}
	last := 0.0
	for i, r := range got {
		if r.total != total {
			t.Errorf("report %d: got total %v; want %v", i, r.total, total)
		}
		if r.done < last {
			t.Errorf("report %d: done went back from %v to %v", i, last, r.done)
		}
		last = r.done
	}
}

func TestWaitConfig(t *testing.T) {
	tests := []struct {
		name                   string
		in                     Config
		wantWait, wantApproval time.Duration
	}{
		{"defaults", Config{}, MaxWait, MaxApprovalWait},
		{"shorter kept", Config{WaitCap: 2 * time.Second, ApprovalWait: time.Second}, 2 * time.Second, time.Second},
		{"longer capped", Config{WaitCap: 2 * time.Minute, ApprovalWait: 2 * time.Minute}, MaxWait, MaxApprovalWait},
		{"approval under the wait cap", Config{WaitCap: 100 * time.Millisecond, ApprovalWait: 10 * time.Second}, 100 * time.Millisecond, 100 * time.Millisecond},
		{"approval defaults under a short cap", Config{WaitCap: 100 * time.Millisecond}, 100 * time.Millisecond, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.in.withDefaults()
			if got.WaitCap != tt.wantWait || got.ApprovalWait != tt.wantApproval {
				t.Errorf("got WaitCap %s, ApprovalWait %s; want %s, %s", got.WaitCap, got.ApprovalWait, tt.wantWait, tt.wantApproval)
			}
			if got.ProgressEvery != defaultProgressEvery {
				t.Errorf("got ProgressEvery %s; want %s", got.ProgressEvery, defaultProgressEvery)
			}
		})
	}
	// What the hosts cut at, less a margin for the work after the wait.
	if MaxWait >= 55*time.Second || MaxApprovalWait > MaxWait {
		t.Errorf("MaxWait %s, MaxApprovalWait %s; want both under 55 s, the approval's no longer", MaxWait, MaxApprovalWait)
	}
}

// TestAskPersonAnswersAtItsCap: at its cap, phone_ask_person answers (not
// as a failure) that the person still has the phone and how to go on; the
// phone stays with the person, and a second call waits on the same
// hand-off.
func TestAskPersonAnswersAtItsCap(t *testing.T) {
	f := newFixture(t, Config{WaitCap: 50 * time.Millisecond})
	s := f.connected(t)
	ctx := context.Background()
	const dev = "sim-android-1"
	var p progressLog
	obs, err := s.AskPerson(ctx, dev, "please sign in", p.progress)
	if err != nil {
		t.Fatalf("ask at its cap: got %v; want a result", err)
	}
	if !obs.WithPerson || obs.Device != dev {
		t.Errorf("got %+v; want WithPerson on %s", obs, dev)
	}
	for _, want := range []string{"still has " + dev, "phone_ask_person again", "phone_observe"} {
		if !strings.Contains(obs.Text, want) {
			t.Errorf("text %q; want it to contain %q", obs.Text, want)
		}
	}
	p.check(t, 0.05, "waiting for the person to hand the phone back")

	// The step says so; the person still has the phone: actions wait.
	tasks, _ := f.store.Tasks(ctx, history.TaskFilter{})
	_, steps, _ := f.store.Task(ctx, tasks[0].ID)
	last := steps[len(steps)-1]
	if obs.Step == "" || last.ID != obs.Step || last.Tool != ToolAskPerson || last.Outcome != "ok" || !strings.Contains(last.Diff, "still has the phone") {
		t.Errorf("last step %+v; want %s's, ok, saying the person still has the phone (obs step %q)", last, ToolAskPerson, obs.Step)
	}
	_, err = s.Act(ctx, dev, Action{Tool: ToolKey, Kind: "key", Key: "back"}, nil)
	wantCode(t, "an action while the person has the phone", err, CodePersonInControl)
	if ls := f.m.Leases(); len(ls) != 1 || !ls[0].WithPerson {
		t.Errorf("leases %+v; want the phone with the person", ls)
	}

	// Asking again waits on for the same hand-back.
	if obs, err := s.AskPerson(ctx, dev, "please sign in", nil); err != nil || !obs.WithPerson {
		t.Fatalf("second ask: got %+v, %v; want WithPerson again", obs, err)
	}
	if err := f.m.HandBack(dev); err != nil {
		t.Fatalf("hand-back: %v", err)
	}
	if err := f.m.HandBack(dev); err == nil {
		t.Error("a second hand-back succeeded: the second ask handed the phone over again")
	}
	if _, err := s.Act(ctx, dev, Action{Tool: ToolKey, Kind: "key", Key: "back"}, nil); err != nil {
		t.Errorf("an action after the hand-back: %v", err)
	}
}

// TestAskPersonWaitsOnAfterACut: a wait cut short (the host gave up on the
// call) leaves the phone with the person, and the next call gets the
// screen when they hand it back, with progress meanwhile.
func TestAskPersonWaitsOnAfterACut(t *testing.T) {
	f := newFixture(t, Config{ProgressEvery: 10 * time.Millisecond})
	s := f.connected(t)
	const dev = "sim-android-1"
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.AskPerson(cctx, dev, "please sign in", nil)
	e := wantCode(t, "a cut wait", err, CodeTimeout)
	if !strings.Contains(e.Message, "still have "+dev) || !strings.Contains(e.Message, "phone_ask_person again") {
		t.Errorf("message %q; want it to say the person still has the phone and how to wait on", e.Message)
	}
	if !f.m.WithPerson(dev) {
		t.Fatal("the phone went back to the agent when its wait was cut")
	}

	var p progressLog
	type answer struct {
		obs *Observation
		err error
	}
	done := make(chan answer, 1)
	go func() {
		obs, err := s.AskPerson(context.Background(), dev, "please sign in", p.progress)
		done <- answer{obs, err}
	}()
	// Several reports arrive while the person has the phone (every
	// ProgressEvery), long before the cap (MaxWait).
	waitUntil(t, func() bool { return p.count() >= 3 })
	if err := f.m.HandBack(dev); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-done:
		if a.err != nil || a.obs.WithPerson || !a.obs.Full {
			t.Fatalf("after the hand-back: got %+v, %v; want the whole screen", a.obs, a.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the ask did not return after the hand-back")
	}
	p.check(t, MaxWait.Seconds(), "waiting for the person to hand the phone back")
}

// TestTaskEndTakesThePhoneBack: a hand-off that phone_ask_person made
// ends with the task, so no phone stays with the person for nobody.
func TestTaskEndTakesThePhoneBack(t *testing.T) {
	f := newFixture(t, Config{WaitCap: 20 * time.Millisecond})
	s := f.connected(t)
	ctx := context.Background()
	const dev = "sim-android-1"
	if obs, err := s.AskPerson(ctx, dev, "please sign in", nil); err != nil || !obs.WithPerson {
		t.Fatalf("ask: got %+v, %v; want WithPerson", obs, err)
	}
	if err := s.Release(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if f.m.WithPerson(dev) {
		t.Error("the phone stayed with the person after the task ended")
	}
	// A take-over is the person's own: a task's end leaves it.
	if _, err := s.Connect(ctx, ConnectRequest{Device: dev, Task: "t2"}); err != nil {
		t.Fatal(err)
	}
	if err := f.m.TakeOver(dev); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, dev); err != nil {
		t.Fatal(err)
	}
	if !f.m.WithPerson(dev) {
		t.Error("the task's end ended the person's take-over")
	}
}

// TestWaitForCappedAtWaitCap: a wait asked for longer than the cap answers
// timeout at the cap, saying how to go on, with progress meanwhile.
func TestWaitForCappedAtWaitCap(t *testing.T) {
	f := newFixture(t, Config{WaitCap: 100 * time.Millisecond})
	s := f.connected(t)
	var p progressLog
	_, err := s.WaitFor(context.Background(), "sim-android-1", WaitRequest{Text: "Nothing like this", Timeout: time.Hour}, p.progress)
	e := wantCode(t, "a wait past the cap", err, CodeTimeout)
	for _, want := range []string{"within 100ms", "observe", "wait again"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q; want it to contain %q", e.Message, want)
		}
	}
	p.check(t, 0.1, "waiting")
}

// TestApprovalWaitProgress: an acting call waiting for the person's
// approval reports progress every ProgressEvery, with the wait's length
// as the total.
func TestApprovalWaitProgress(t *testing.T) {
	book := approval.NewBook(time.Minute)
	f := newFixture(t, Config{Guard: askOnSend{}, Approvals: book, ProgressEvery: 10 * time.Millisecond})
	s := f.session(t, "agent")
	inThread(t, f, s)
	var p progressLog
	done := make(chan error, 1)
	go func() {
		_, err := s.Act(context.Background(), "sim-android-1", send, p.progress)
		done <- err
	}()
	waitUntil(t, func() bool { return p.count() >= 3 })
	cards := book.List(true)
	if len(cards) != 1 {
		t.Fatalf("pending cards: %+v", cards)
	}
	book.Decide(cards[0].ID, true, false, "")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("approved send: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the send did not return after the approval")
	}
	p.check(t, MaxApprovalWait.Seconds(), "waiting for the person to approve")
}

// TestPhoneApprovalAnswersAtItsCap: phone_approval waits as long as the
// action did, then answers approval_pending again, saying to call it
// again; the card stays open, and a later call runs the action.
func TestPhoneApprovalAnswersAtItsCap(t *testing.T) {
	f, book := approvalFixture(t, 50*time.Millisecond)
	s := f.session(t, "agent")
	inThread(t, f, s)
	ctx := context.Background()
	_, err := s.Act(ctx, "sim-android-1", send, nil)
	wantCode(t, "unanswered", err, CodeApprovalPending)
	id := book.List(true)[0].ID
	_, err = s.Approval(ctx, id, nil)
	e := wantCode(t, "phone_approval with nobody answering", err, CodeApprovalPending)
	for _, want := range []string{id, "phone_approval", "again", "within 50ms"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message %q; want it to contain %q", e.Message, want)
		}
	}
	if open := book.List(true); len(open) != 1 || open[0].ID != id {
		t.Fatalf("open cards after the capped wait: %+v; want %s still open", open, id)
	}
	book.Decide(id, true, false, "")
	obs, err := s.Approval(ctx, id, nil)
	if err != nil || !strings.Contains(obs.Text, "Me: On my way") {
		t.Fatalf("phone_approval once approved: %v, %+v", err, obs)
	}
}
