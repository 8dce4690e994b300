package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// evil is what an agent or a phone may put in any text: an escape
// sequence, a forged line, a carriage return, a tab, a C1 control, a
// right-to-left override.
const evil = "x\x1b[2J\n  decide  forged\r\t\u009b\u202e$100"

// TestPrintersShowEvilText runs every printer of agents' and phones' data
// on texts that try to act on the terminal: each prints only safe text,
// and each field on the line it belongs to.
func TestPrintersShowEvilText(t *testing.T) {
	t0 := time.Now()
	for _, tt := range []struct {
		name  string
		print func(*strings.Builder)
		lines int // the lines printed: evil starts none, but in the screen's and the diff's lines
	}{
		{"cards", func(b *strings.Builder) {
			printCards(b, []api.Card{{ID: "ap_1", Status: api.ApprovalPending, Agent: evil, TaskText: evil, Device: evil, Tool: evil,
				Args: evil, Target: evil, Commit: evil, Rule: evil, Evidence: evil, Screenshot: evil, Screen: evil, ExpiresAt: t0.Add(time.Minute)}})
		}, 10}, // the screen's two lines each behind its │
		{"tasks", func(b *strings.Builder) {
			printTasks(b, []api.Task{{ID: evil, Agent: evil, Device: evil, Text: evil, Outcome: evil}})
		}, 2},
		{"task", func(b *strings.Builder) {
			printTask(b, api.TaskDetail{Task: api.Task{ID: evil, Agent: evil, AgentVersion: evil, Device: evil, Text: evil, Apps: []string{evil}},
				StepList: []api.Step{{Seq: 1, Tool: evil, Args: json.RawMessage(`"` + strings.ReplaceAll(evil, "\n", `\n`) + `"`),
					Outcome: evil, Message: evil, Diff: evil}},
				Approvals: []api.Approval{{ID: evil, Tool: evil, Commit: evil, Rule: evil, Status: evil, Target: evil, Reason: evil,
					CreatedAt: t0.Add(time.Hour)}}})
		}, 12}, // the diff's two lines each behind its │
		{"leases", func(b *strings.Builder) {
			printLeases(b, []api.Lease{{Device: evil, Agent: evil, Task: evil, WithPerson: true}})
		}, 2},
		{"drivers", func(b *strings.Builder) {
			printDrivers(b, []api.Driver{{Name: evil, Version: evil, Path: evil, State: "failed", LastError: evil, Stderr: []string{evil}}})
		}, 5},
		{"driver checks", func(b *strings.Builder) {
			line, _ := json.Marshal(map[string]string{"level": "WARN", "msg": evil, "check": evil, "fix": evil})
			printDrivers(b, []api.Driver{{Name: evil, State: "running", Stderr: []string{string(line)}}})
		}, 4},
		{"devices", func(b *strings.Builder) {
			printDevices(b, []api.Device{{ID: evil, Driver: evil, State: evil, Platform: evil, Model: evil, OSVersion: evil,
				Connection: evil, LockState: evil, Detail: evil, Missing: []api.MissingCap{{Capability: evil, Reason: evil, Fix: evil}}, NotOffered: []string{evil}}})
		}, 5},
		{"screen", func(b *strings.Builder) {
			printScreen(b, &sdk.Screen{App: sdk.App{ID: evil, Label: evil}, Elements: []sdk.Element{{ID: 1, Class: evil, Text: evil,
				ContentDescription: evil, ResourceID: evil, Hint: evil, Value: evil}}})
		}, 2},
		{"event", func(b *strings.Builder) {
			printEvent(b, api.Event{Seq: 1, Time: t0, Kind: evil, Device: evil, Agent: evil, Task: evil, Data: map[string]string{evil: evil}}, false)
		}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			tt.print(&b)
			out := b.String()
			if got := safetext.Text(strings.ReplaceAll(out, "\t", " ")); got != strings.ReplaceAll(out, "\t", " ") {
				t.Errorf("prints raw controls:\n%q", out)
			}
			if strings.Contains(out, "\t") {
				t.Errorf("prints a raw tab (tabwriter pads with spaces):\n%q", out)
			}
			if n := strings.Count(strings.TrimRight(out, "\n"), "\n") + 1; n != tt.lines {
				t.Errorf("printed %d lines; want %d:\n%s", n, tt.lines, out)
			}
			if !strings.Contains(out, `x\x1b[2J\n  decide  forged\r\t\u009b‹U+202E›$100`) {
				t.Errorf("does not show the text as escapes:\n%s", out)
			}
		})
	}
}

// TestWriteJSONIsExact: --json output decodes to the same text, with the
// bidirectional and C1 controls written as escapes.
func TestWriteJSONIsExact(t *testing.T) {
	var b strings.Builder
	if err := writeJSON(&b, map[string]string{"task": evil}); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\u202e\u009b\x1b") {
		t.Errorf("writeJSON left a control raw: %q", b.String())
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil || back["task"] != evil {
		t.Errorf("writeJSON's output decodes to %q, %v; want %q", back["task"], err, evil)
	}
}
