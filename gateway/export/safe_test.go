package export_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/export"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// TestWriteShowsControlsAsEscapes exports a task whose agent, task,
// typed text, screen and approval carry escape sequences, carriage
// returns and a right-to-left override: index.html holds none of them raw,
// and shows each as its visible escape.
func TestWriteShowsControlsAsEscapes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	s := history.NewMemory()
	src := export.Source{Store: s, MediaDir: filepath.Join(home, "media"), RecordingsDir: filepath.Join(home, "recordings")}
	must(t, s.UpsertDevice(ctx, history.Device{ID: "d1", Name: "Phone\u202eenohp", Platform: "android"}))
	must(t, s.UpsertAgent(ctx, history.Agent{ID: "a1", Name: "evil\x1b[2J\nfake card line", Version: "1\r"}))
	must(t, s.StartTask(ctx, history.Task{ID: "k1", AgentID: "a1", DeviceID: "d1", Text: "pay \u202e001$\x1b]0;x\x07", StartedAt: t0}))
	must(t, s.AddStep(ctx, history.Step{ID: "p1", TaskID: "k1", Seq: 1, Tool: "phone_type",
		Args: "{\"text\":\"\u202e001$\\r\"}", Outcome: "ok", Message: "typed\x1b[31m red", Diff: "~ [3] \"\u2066$100\u2069\"\r\n+ [4] x\x9b2J \u009b3J",
		StartedAt: t0.Add(time.Second)}))
	must(t, s.UpsertApproval(ctx, history.Approval{ID: "ap1", TaskID: "k1", StepID: "p1", Tool: "phone_tap",
		Target: "[5] button \"Pay \u202e001$\"", Status: history.ApprovalApproved, CreatedAt: t0, Reason: "ok\u200f"}))
	dir := filepath.Join(home, "export")
	must(t, export.Write(ctx, src, []string{"k1"}, dir))
	b, err := os.ReadFile(filepath.Join(dir, "index.html"))
	must(t, err)
	html := string(b)
	if got := safetext.Text(html); got != html {
		i := 0
		for i < len(got) && i < len(html) && got[i] == html[i] {
			i++
		}
		t.Errorf("index.html holds a raw control or bidirectional control near %q", html[max(0, i-40):min(len(html), i+40)])
	}
	// A newline stays a newline on the page, where it starts no line of
	// its own but in a <pre>.
	for _, want := range []string{"evil\\x1b[2J\nfake card line", `pay ‹U+202E›001$\x1b]0;x\x07`, `Phone‹U+202E›enohp`,
		`typed\x1b[31m red`, `‹U+2066›$100‹U+2069›&#34;\r`, `x\x9b2J \u009b3J`, `Pay ‹U+202E›001$`, `ok‹U+200F›`} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html does not show %s", want)
		}
	}
}
