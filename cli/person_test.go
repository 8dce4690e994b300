package cli_test

import (
	"strings"
	"testing"
)

// TestPersonControlsWhileAnAgentWorks: take over, hand back and stop all,
// from the CLI, while an agent holds a phone over MCP.
func TestPersonControlsWhileAnAgentWorks(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	dev := map[string]any{"device": "sim-android-1"}
	tapNotes := map[string]any{"device": "sim-android-1", "text": "Notes"}
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "write a note"}, "Pixel Launcher")

	if out, errs, code := e.Run("takeover", "sim-android-1"); code != 0 || !strings.Contains(out, "handback") {
		t.Fatalf("pinky takeover: %s%s", out, errs)
	}
	h.Fails("phone_tap", tapNotes, "person_in_control")
	h.OK("phone_observe", dev, "") // reads go on
	out, _, _ := e.Run("status")
	if !strings.Contains(out, "waiting for you") {
		t.Errorf("status while the person has the phone:\n%s", out)
	}
	if _, errs, code := e.Run("handback", "sim-android-1"); code != 0 {
		t.Fatalf("pinky handback: %s", errs)
	}
	h.OK("phone_tap", tapNotes, "Notes")

	if out, errs, code := e.Run("stop", "--all"); code != 0 || !strings.Contains(out, "stopped 1") {
		t.Fatalf("pinky stop --all: %s%s", out, errs)
	}
	h.Fails("phone_observe", dev, "stopped")
	h.Fails("phone_connect", map[string]any{"device": "sim-android-1", "task": "write a note"}, "stopped")
	// Another task is the agent's to ask for.
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "something else"}, "")
}
