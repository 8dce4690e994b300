package agent

import (
	"bytes"
	"context"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
)

// askOnSend asks about taps on "Send" and denies launching the Bank.
type askOnSend struct{}

func (askOnSend) Check(c Check) Verdict {
	if c.Target != nil && c.Target.Label == "Send" {
		return Verdict{Decision: Ask, Commit: "send_message", Rule: "test: ask sends", Reason: "sending asks"}
	}
	if c.Action.Kind == "launch" && c.Action.App == "com.pinky.sim.bank" {
		return Verdict{Decision: Deny, Code: CodeBlockedApp, Reason: "the Bank is blocked"}
	}
	return Verdict{Decision: Allow}
}

func (askOnSend) Blocked(app string) bool { return app == "com.pinky.sim.bank" }

// inThread leads s to Ben's conversation with a reply typed.
func inThread(t *testing.T, f *fixture, s *Session) {
	t.Helper()
	ctx := context.Background()
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "reply to Ben"}); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Action{
		{Kind: "launch", App: "Messages"},
		{Kind: "tap", Target: Target{Text: "Ben Okafor"}},
		{Kind: "type", Target: Target{Text: "Text message"}, Text: "On my way"},
	} {
		if _, err := s.Act(ctx, "sim-android-1", a, nil); err != nil {
			t.Fatalf("%s: %v", a.Kind, err)
		}
	}
}

func decideWhenAsked(t *testing.T, book *approval.Book, allow bool) {
	go func() {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if l := book.List(true); len(l) == 1 {
				book.Decide(l[0].ID, allow, false, "not now")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
}

func approvalFixture(t *testing.T, wait time.Duration) (*fixture, *approval.Book) {
	book := approval.NewBook(time.Minute)
	return newFixture(t, Config{Guard: askOnSend{}, Approvals: book, ApprovalWait: wait}), book
}

var send = Action{Kind: "tap", Target: Target{Text: "Send"}}

func TestApproveWhileTheCallWaits(t *testing.T) {
	f, book := approvalFixture(t, 5*time.Second)
	s := f.session(t, "agent")
	inThread(t, f, s)
	decideWhenAsked(t, book, true)
	obs, err := s.Act(context.Background(), "sim-android-1", send, nil)
	if err != nil || !strings.Contains(obs.Text, "Me: On my way") {
		t.Fatalf("approved send: %v, %+v", err, obs)
	}
	cards := book.List(false)
	if len(cards) != 1 || cards[0].Commit != "send_message" || !strings.Contains(cards[0].Target, `"Send"`) || cards[0].TaskText != "reply to Ben" {
		t.Errorf("card: %+v", cards)
	}
}

func TestDenyWhileTheCallWaits(t *testing.T) {
	f, book := approvalFixture(t, 5*time.Second)
	s := f.session(t, "agent")
	inThread(t, f, s)
	decideWhenAsked(t, book, false)
	_, err := s.Act(context.Background(), "sim-android-1", send, nil)
	e := wantCode(t, "denied send", err, CodeDenied)
	if !strings.Contains(e.Message, "not now") {
		t.Errorf("the person's reason is missing: %q", e.Message)
	}
	obs, _ := s.Observe(context.Background(), "sim-android-1", true, false)
	if strings.Contains(obs.Text, "Me: On my way") {
		t.Error("the denied message was sent")
	}
}

func TestApprovalPendingAndRetry(t *testing.T) {
	f, book := approvalFixture(t, 100*time.Millisecond)
	s := f.session(t, "agent")
	inThread(t, f, s)
	ctx := context.Background()
	_, err := s.Act(ctx, "sim-android-1", send, nil)
	e := wantCode(t, "unanswered", err, CodeApprovalPending)
	id := book.List(true)[0].ID
	if !strings.Contains(e.Message, id) {
		t.Fatalf("approval_pending must carry the id %s: %q", id, e.Message)
	}
	// Other actions wait while it is open; reads still work.
	_, err = s.Act(ctx, "sim-android-1", Action{Kind: "key", Key: "back"}, nil)
	wantCode(t, "another action while open", err, CodeApprovalPending)
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Errorf("a read while open: %v", err)
	}
	// An altered call and another session cannot use the id.
	altered := send
	altered.Target = Target{Text: "Back"}
	altered.ApprovalID = id
	book.Decide(id, true, false, "")
	_, err = s.Act(ctx, "sim-android-1", altered, nil)
	wantCode(t, "altered arguments", err, CodeInvalidArgument)
	other := f.session(t, "agent")
	retry := send
	retry.ApprovalID = id
	_, err = other.Act(ctx, "sim-ios-1", retry, nil)
	wantCode(t, "another session", err, CodeNotLeased)
	if _, err := other.Approval(ctx, id, nil); err == nil {
		t.Error("another session waited on the approval")
	}
	// The same call with the id runs, once.
	obs, err := s.Act(ctx, "sim-android-1", retry, nil)
	if err != nil || !strings.Contains(obs.Text, "Me: On my way") {
		t.Fatalf("retry with the id: %v, %+v", err, obs)
	}
	_, err = s.Act(ctx, "sim-android-1", retry, nil)
	wantCode(t, "reused id", err, CodeInvalidArgument)
}

func TestPhoneApprovalRunsTheAction(t *testing.T) {
	f, book := approvalFixture(t, 100*time.Millisecond)
	s := f.session(t, "agent")
	inThread(t, f, s)
	ctx := context.Background()
	_, err := s.Act(ctx, "sim-android-1", send, nil)
	wantCode(t, "unanswered", err, CodeApprovalPending)
	id := book.List(true)[0].ID
	decideWhenAsked(t, book, true)
	// Each call waits at most ApprovalWait; the agent calls again while the
	// answer is approval_pending.
	obs, err := s.Approval(ctx, id, nil)
	for i := 0; i < 100; i++ {
		if e, ok := AsError(err); !ok || e.Code != CodeApprovalPending {
			break
		}
		obs, err = s.Approval(ctx, id, nil)
	}
	if err != nil || !strings.Contains(obs.Text, "Me: On my way") {
		t.Fatalf("phone_approval: %v, %+v", err, obs)
	}
}

func TestStaleAfterApproval(t *testing.T) {
	f, book := approvalFixture(t, 100*time.Millisecond)
	s := f.session(t, "agent")
	inThread(t, f, s)
	ctx := context.Background()
	_, err := s.Act(ctx, "sim-android-1", send, nil)
	wantCode(t, "unanswered", err, CodeApprovalPending)
	id := book.List(true)[0].ID
	// The screen changes under the target (the person goes back).
	f.drv.d.Act(ctx, "sim-android-1", keyAction("back"))
	f.drv.d.Act(ctx, "sim-android-1", keyAction("back"))
	book.Decide(id, true, false, "")
	retry := send
	retry.ApprovalID = id
	_, err = s.Act(ctx, "sim-android-1", retry, nil)
	if e, ok := AsError(err); !ok || (e.Code != CodeStale && e.Code != CodeNotFound) {
		t.Errorf("approved action on a changed screen: got %v; want stale (or not_found when the target is gone)", err)
	}
}

func TestDeniedByGuard(t *testing.T) {
	f, _ := approvalFixture(t, time.Second)
	s := f.connected(t)
	ctx := context.Background()
	_, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Bank"}, nil)
	wantCode(t, "launch a blocked app", err, CodeBlockedApp)
}

func keyAction(k string) sdk.Action { return sdk.Action{Kind: sdk.ActKey, Key: sdk.Key(k)} }

func TestCardScreenshotFramesTheTarget(t *testing.T) {
	book := approval.NewBook(time.Minute)
	dir := t.TempDir()
	f := newFixture(t, Config{Guard: askOnSend{}, Approvals: book, ApprovalWait: 50 * time.Millisecond, MediaDir: dir})
	s := f.session(t, "agent")
	inThread(t, f, s)
	_, err := s.Act(context.Background(), "sim-android-1", send, nil)
	wantCode(t, "unanswered", err, CodeApprovalPending)
	var card approval.Card
	waitUntil(t, func() bool { card = book.List(true)[0]; return card.Screenshot != "" })
	// The card names a media row of its task, as a step's screenshot does.
	media, err := f.store.Media(context.Background(), card.Screenshot)
	if err != nil || media.TaskID != card.TaskID || media.Kind != "approval" {
		t.Fatalf("the card's screenshot %q is not a media row of its task: %+v, %v", card.Screenshot, media, err)
	}
	data, err := os.ReadFile(filepath.Join(dir, media.Path))
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the card's screenshot does not decode: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, media.Path)); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %o; want 600", fi.Mode().Perm())
	}
	red := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 200 && g>>8 < 80 && bl>>8 < 80 {
				red++
			}
		}
	}
	if red < 50 {
		t.Errorf("found %d red pixels; want the target framed in red", red)
	}
}
