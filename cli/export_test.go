package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testdep"
)

// TestExport: pinky export writes a folder with the task's report and its
// recording, refuses a folder with something in it, and names an unknown
// task.
func TestExport(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	e.Daemon("--sim", "--console", "off")
	h := e.agentTask(t)
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	task := e.lastTask(t)
	e.Eventually("the recording's row", func() bool { return e.lastTask(t).Recording })

	dir := filepath.Join(t.TempDir(), "report")
	out, errs, code := e.Run("export", task.ID, dir)
	if code != 0 || !strings.Contains(out, filepath.Join(dir, "index.html")) {
		t.Fatalf("pinky export: exit %d\n%s%s", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"write a note", "phone_tap", "phone_key", `id="recording"`, `class="step-mark`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if _, _, _, frames := ffprobeFrames(t, filepath.Join(dir, task.ID+".mp4")); frames < 2 {
		t.Errorf("the exported recording has %d frames", frames)
	}

	if _, errs, code := e.Run("export", task.ID, dir); code == 0 || !strings.Contains(errs, "empty") {
		t.Errorf("export into a folder with a report in it: exit %d, %q; want a refusal", code, errs)
	}
	if _, errs, code := e.Run("export", "no-such-task", filepath.Join(t.TempDir(), "x")); code == 0 || !strings.Contains(errs, "no-such-task") {
		t.Errorf("export of an unknown task: exit %d, %q; want an error naming it", code, errs)
	}
}
