package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// A task's approvals are printed between its steps, after the step that
// asked.
func TestPrintTaskApprovals(t *testing.T) {
	t0 := time.Date(2026, 3, 14, 9, 26, 53, 0, time.Local)
	td := api.TaskDetail{
		Task: api.Task{ID: "k1", Text: "text mum", Steps: 2, StartedAt: t0},
		StepList: []api.Step{
			{Seq: 1, Tool: "tap", Args: json.RawMessage(`{"ref":12}`), Outcome: "denied", Message: "the person denied it", StartedAt: t0},
			{Seq: 2, Tool: "tap", Args: json.RawMessage(`{"ref":12}`), Outcome: "ok", StartedAt: t0.Add(time.Minute)},
		},
		Approvals: []api.Approval{
			{ID: "ap_1", Tool: "tap", Commit: "send_message", Rule: "ask-send", Target: `[12] button "Send"`,
				Status: "denied", CreatedAt: t0.Add(time.Second), DecidedAt: t0.Add(5 * time.Second), DecidedBy: "person", Reason: "not now"},
			{ID: "ap_2", Tool: "tap", Commit: "send_message", Status: "pending", CreatedAt: t0.Add(2 * time.Minute)},
		},
	}
	var b strings.Builder
	printTask(&b, td)
	out := b.String()
	for _, want := range []string{
		"approval ap_1 send_message (rule ask-send) → denied by person at 09:26:58\n",
		`   on [12] button "Send"`,
		"   reason: not now\n",
		"approval ap_2 send_message → pending since 09:28:53\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printTask: no %q in\n%s", want, out)
		}
	}
	step1, ap1, step2, ap2 := strings.Index(out, "#1 "), strings.Index(out, "ap_1"), strings.Index(out, "#2 "), strings.Index(out, "ap_2")
	if !(step1 < ap1 && ap1 < step2 && step2 < ap2) {
		t.Errorf("printTask: approvals out of place:\n%s", out)
	}
}
