package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/settings"
)

// TestSettingsAndReadOnly: the settings change from the CLI, survive a
// restart, refuse bad values, and read-only mode stops an agent's actions
// but not its reads.
func TestSettingsAndReadOnly(t *testing.T) {
	e := newEnv(t)
	e.daemon("--sim", "--console", "off")
	var s settings.Settings
	e.json(&s, "settings")
	if s != settings.Defaults() {
		t.Errorf("a new data folder's settings: %+v, want %+v", s, settings.Defaults())
	}
	if _, errs, code := e.run("settings", "--retention-days", "-2"); code == 0 || !strings.Contains(errs, "retention_days") {
		t.Errorf("a negative retention: exit %d, %q; want an error naming retention_days", code, errs)
	}
	if _, errs, code := e.run("settings", "--recording", "maybe"); code == 0 || !strings.Contains(errs, "on or off") {
		t.Errorf("--recording maybe: exit %d, %q; want on or off", code, errs)
	}
	out, errs, code := e.run("settings", "--read-only", "on", "--retention-days", "7")
	if code != 0 || !strings.Contains(out, "read-only  on") || !strings.Contains(out, "7 days") {
		t.Fatalf("pinky settings --read-only on --retention-days 7: exit %d\n%s%s", code, out, errs)
	}
	b, err := os.ReadFile(filepath.Join(e.home, "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var saved settings.Settings
	if err := json.Unmarshal(b, &saved); err != nil || !saved.ReadOnly || saved.RetentionDays != 7 || !saved.Recording {
		t.Errorf("settings.json after the change: %s (%v)", b, err)
	}

	e.unlock("sim-android-1")
	h := e.stdioHost()
	h.initialize()
	h.ok("phone_connect", map[string]any{"device": "sim-android-1", "task": "look around"}, "Pixel Launcher")
	h.ok("phone_observe", map[string]any{"device": "sim-android-1"}, "")
	text, isErr := h.tool("phone_tap", map[string]any{"device": "sim-android-1", "text": "Notes"})
	if !isErr || !strings.HasPrefix(text, "scope_denied:") || !strings.Contains(text, "read-only") {
		t.Errorf("a tap in read-only mode: error=%v %q; want scope_denied naming read-only", isErr, text)
	}
	e.run("settings", "--read-only", "off")
	h.ok("phone_tap", map[string]any{"device": "sim-android-1", "text": "Notes"}, "Notes")
}
