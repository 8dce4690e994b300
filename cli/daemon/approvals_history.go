package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// approvalWriteTimeout bounds one approval's write to the history; a
// SQLite upsert takes about 100 µs, so this only matters when the database
// is stuck.
const approvalWriteTimeout = 2 * time.Second

// recordApprovals keeps the book's approvals in the history: each opening
// and each decision (or expiry) is upserted, after the handlers already
// set, which keep running first. The write happens in the caller of
// OnChange (Open, Decide, Wait), which it delays by one upsert; a failure
// is logged, never returned: the approval itself goes on.
func recordApprovals(book *approval.Book, store history.Store, log *slog.Logger) {
	prev := book.OnChange
	book.OnChange = func(c approval.Card) {
		if prev != nil {
			prev(c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), approvalWriteTimeout)
		defer cancel()
		if err := store.UpsertApproval(ctx, historyApproval(c)); err != nil {
			log.Error("recording an approval in the history", "approval", c.ID, "task", c.TaskID, "status", c.Status, "err", err)
		}
	}
}

// historyApproval is an approval as the history keeps it. The arguments
// are scrubbed as a step's are: nothing secret in the history.
func historyApproval(c approval.Card) history.Approval {
	a := history.Approval{
		ID: c.ID, TaskID: c.TaskID, Tool: c.Tool, Args: secrets.Scrub(c.Args),
		Commit: c.Commit, Rule: c.Rule, Target: c.Target, Status: string(c.Status),
		CreatedAt: c.OpenedAt, Reason: c.Reason, ForTask: c.ForTask,
		Summary: secrets.Scrub(c.Summary), Counterpart: secrets.Scrub(c.Counterpart),
	}
	switch c.Status {
	case approval.Approved, approval.Denied:
		a.DecidedAt, a.DecidedBy = c.DecidedAt, "person"
	case approval.Expired:
		a.DecidedAt, a.DecidedBy = c.DecidedAt, "expiry"
	}
	return a
}

// apiApproval is a recorded approval as tasks.show returns it.
func apiApproval(a history.Approval) api.Approval {
	out := api.Approval{
		ID: a.ID, Step: a.StepID, Tool: a.Tool, Commit: a.Commit, Rule: a.Rule, Target: a.Target,
		Status: a.Status, CreatedAt: a.CreatedAt, DecidedAt: a.DecidedAt, DecidedBy: a.DecidedBy,
		Reason: a.Reason, ForTask: a.ForTask, Summary: a.Summary, Counterpart: a.Counterpart, Screenshot: a.Screenshot,
	}
	if json.Valid([]byte(a.Args)) {
		out.Args = json.RawMessage(a.Args)
	}
	return out
}
