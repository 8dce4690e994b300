package cli_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testdep"

	_ "github.com/mattn/go-sqlite3" // to age a task in the history
	"github.com/pinky-gateway/pinky/gateway/settings"
)

// TestSettingsAndReadOnly: the settings change from the CLI, survive a
// restart, refuse bad values, and read-only mode stops an agent's actions
// but not its reads.
func TestSettingsAndReadOnly(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim", "--console", "off")
	var s settings.Settings
	e.JSON(&s, "settings")
	if s != settings.Defaults() {
		t.Errorf("a new data folder's settings: %+v, want %+v", s, settings.Defaults())
	}
	if _, errs, code := e.Run("settings", "--retention-days", "-2"); code == 0 || !strings.Contains(errs, "retention_days") {
		t.Errorf("a negative retention: exit %d, %q; want an error naming retention_days", code, errs)
	}
	if _, errs, code := e.Run("settings", "--recording", "maybe"); code == 0 || !strings.Contains(errs, "on or off") {
		t.Errorf("--recording maybe: exit %d, %q; want on or off", code, errs)
	}
	out, errs, code := e.Run("settings", "--read-only", "on", "--retention-days", "7")
	if code != 0 || !strings.Contains(out, "read-only  on") || !strings.Contains(out, "7 days") {
		t.Fatalf("pinky settings --read-only on --retention-days 7: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(e.Home, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved settings.Settings
	if err := json.Unmarshal(b, &saved); err != nil || !saved.ReadOnly || saved.RetentionDays != 7 || !saved.Recording {
		t.Errorf("settings.json after the change: %s (%v)", b, err)
	}

	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "look around"}, "Pixel Launcher")
	h.OK("phone_observe", map[string]any{"device": "sim-android-1"}, "")
	text, isErr := h.Tool("phone_tap", map[string]any{"device": "sim-android-1", "text": "Notes"})
	if !isErr || !strings.HasPrefix(text, "scope_denied:") || !strings.Contains(text, "read-only") {
		t.Errorf("a tap in read-only mode: error=%v %q; want scope_denied naming read-only", isErr, text)
	}
	e.Run("settings", "--read-only", "off")
	h.OK("phone_tap", map[string]any{"device": "sim-android-1", "text": "Notes"}, "Notes")
}

// TestRetentionAtStart: a daemon that starts deletes the tasks that ended
// longer ago than the retention setting, with their recordings and
// screenshots; a recent task stays.
func TestRetentionAtStart(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	d := e.Daemon("--sim", "--console", "off")
	h := e.agentTask(t)
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	old := e.lastTask(t)
	e.Eventually("the recording's row", func() bool { return e.lastTask(t).Recording })
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "a recent task"}, "")
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	e.Run("stop-daemon")
	d.Wait()

	// The first task ended 40 days ago, as far as the history knows.
	db, err := sql.Open("sqlite3", filepath.Join(e.Home, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	forty := (40 * 24 * time.Hour).Milliseconds()
	if _, err := db.Exec(`UPDATE tasks SET started_at = started_at - ?, ended_at = ended_at - ? WHERE id = ?`, forty, forty, old.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()
	video := filepath.Join(e.Home, "recordings", old.ID+".mp4")
	if _, err := os.Stat(video); err != nil {
		t.Fatalf("the old task's recording before the restart: %v", err)
	}

	e.Daemon("--sim", "--console", "off")
	e.Eventually("the old task is deleted", func() bool {
		_, _, code := e.Run("history", "show", old.ID)
		return code != 0
	})
	if _, err := os.Stat(video); !os.IsNotExist(err) {
		t.Errorf("the old task's recording after retention: %v, want it deleted", err)
	}
	if got := e.lastTask(t); got.Text != "a recent task" {
		t.Errorf("the newest task after retention is %q, want the recent one kept", got.Text)
	}
}

// TestRecordingOff: with recording off, an agent's task leaves no video.
func TestRecordingOff(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim", "--console", "off")
	if out, errs, code := e.Run("settings", "--recording", "off"); code != 0 || !strings.Contains(out, "recording  off") {
		t.Fatalf("pinky settings --recording off: exit %d\n%s%s", code, out, errs)
	}
	h := e.agentTask(t)
	h.OK("phone_release", map[string]any{"device": "sim-android-1"}, "")
	time.Sleep(500 * time.Millisecond) // a recording would have its first fragment by now
	if e.lastTask(t).Recording {
		t.Error("the history has a recording of a task run with recording off")
	}
	if files, _ := filepath.Glob(filepath.Join(e.Home, "recordings", "*")); len(files) > 0 {
		t.Errorf("files in the recordings folder with recording off: %v", files)
	}
}
