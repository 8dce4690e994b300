package daemon

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// TestApprovalsInHistory opens and decides approvals on a book wired as New
// wires it, and reads them back from the history and from tasks.show.
func TestApprovalsInHistory(t *testing.T) {
	ctx := context.Background()
	store, err := history.Open(filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	if err := store.StartTask(ctx, history.Task{ID: "k1", Text: "text mum", StartedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	book := approval.NewBook(approval.DefaultTTL)
	var logged []approval.Status // the handler already set keeps running
	book.OnChange = func(c approval.Card) { logged = append(logged, c.Status) }
	recordApprovals(book, store, log)

	card := func(commit string) approval.Card {
		return approval.Card{
			Agent: "claude-code", TaskID: "k1", Device: "sim-android-1", Tool: "tap",
			Args: `{"ref":12,"text":"code 123456"}`, Commit: commit, Rule: "ask-" + commit,
			Target: `[12] button "Send"`, TargetKey: "send",
		}
	}
	bind := func(commit string) approval.Binding {
		return approval.Binding{Session: "s1", Device: "sim-android-1", Task: "k1", Tool: "tap", Args: commit}
	}
	allow := book.Open(card("send_message"), bind("send_message"))
	deny := book.Open(card("pay"), bind("pay"))

	rows, err := store.Approvals(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Status != history.ApprovalPending || rows[1].Status != history.ApprovalPending {
		t.Fatalf("after opening: got %+v; want two pending approvals", rows)
	}

	if _, err := book.Decide(allow.ID, true, true, ""); err != nil {
		t.Fatal(err)
	}
	decided, err := book.Decide(deny.ID, false, false, "not now")
	if err != nil {
		t.Fatal(err)
	}

	rows, err = store.Approvals(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()).UTC() }
	want := []history.Approval{
		{ID: allow.ID, TaskID: "k1", Tool: "tap", Commit: "send_message", Rule: "ask-send_message",
			Target: `[12] button "Send"`, Status: history.ApprovalApproved, CreatedAt: ms(allow.OpenedAt),
			DecidedBy: "person", ForTask: true},
		{ID: deny.ID, TaskID: "k1", Tool: "tap", Commit: "pay", Rule: "ask-pay",
			Target: `[12] button "Send"`, Status: history.ApprovalDenied, CreatedAt: ms(deny.OpenedAt),
			DecidedAt: ms(decided.DecidedAt), DecidedBy: "person", Reason: "not now"},
	}
	// Opened in the same millisecond, they are ordered by id.
	if rows[0].ID != want[0].ID && rows[0].CreatedAt.Equal(rows[1].CreatedAt) {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, rows, cmpopts.IgnoreFields(history.Approval{}, "Args", "DecidedAt")); diff != "" {
		t.Errorf("after deciding (-want +got):\n%s", diff)
	}
	for _, r := range rows {
		if r.DecidedAt.IsZero() {
			t.Errorf("%s: no decision time", r.ID)
		}
		if strings.Contains(r.Args, "123456") {
			t.Errorf("%s: the history holds the code: %s", r.ID, r.Args)
		}
	}
	if diff := cmp.Diff([]approval.Status{approval.Pending, approval.Pending, approval.Approved, approval.Denied}, logged); diff != "" {
		t.Errorf("the earlier handler saw (-want +got):\n%s", diff)
	}

	// An approval nobody answers expires, by expiry.
	short := approval.NewBook(20 * time.Millisecond)
	recordApprovals(short, store, log)
	late := short.Open(card("call"), bind("call"))
	if c, _ := short.Wait(ctx, late.ID, time.Second); c.Status != approval.Expired {
		t.Fatalf("Wait: got %s; want expired", c.Status)
	}
	rows, err = store.Approvals(ctx, "k1")
	if err != nil {
		t.Fatal(err)
	}
	got := rows[len(rows)-1]
	if got.ID != late.ID || got.Status != history.ApprovalExpired || got.DecidedBy != "expiry" || got.DecidedAt.IsZero() {
		t.Errorf("expired approval: got %+v", got)
	}

	// An approval of a task the history does not know is logged, and the
	// approval goes on.
	if c := short.Open(approval.Card{TaskID: "nope", Tool: "tap"}, approval.Binding{Task: "nope"}); c.Status != approval.Pending {
		t.Errorf("an unrecorded approval: got %s; want pending", c.Status)
	}

	// tasks.show returns them.
	dir, err := os.MkdirTemp("", "pk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	g := &Gateway{log: log, api: api.NewServer(log), store: store, approvals: book}
	g.registerAPI()
	sock := filepath.Join(dir, "s")
	if err := g.api.Listen(sock); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.api.Close() })
	c, err := api.Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	var detail api.TaskDetail
	if err := c.Call(ctx, api.MethodTask, api.TaskID{ID: "k1"}, &detail); err != nil {
		t.Fatal(err)
	}
	if len(detail.Approvals) != 3 {
		t.Fatalf("tasks.show: got %d approvals; want 3", len(detail.Approvals))
	}
	var statuses []string
	for _, a := range detail.Approvals {
		statuses = append(statuses, a.Status)
		if len(a.Args) == 0 || a.CreatedAt.IsZero() {
			t.Errorf("tasks.show %s: no args or opening time: %+v", a.ID, a)
		}
	}
	if !cmp.Equal(statuses[2], "expired") || detail.Approvals[2].DecidedBy != "expiry" {
		t.Errorf("tasks.show: got %v; want the expired one last", statuses)
	}
}
