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

// TestUnknownPhone: a phone no driver lists is not found, for the person
// and for an agent, and the console hears of no take-over of it.
func TestUnknownPhone(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim")
	w := e.watch("--json")
	for _, cmd := range []string{"takeover", "handback"} {
		if out, errs, code := e.Run(cmd, "nope-1"); code != 1 || !strings.Contains(errs, "nope-1: not found") {
			t.Errorf("pinky %s nope-1: exit %d, %q %q; want exit 1 and not found", cmd, code, out, errs)
		}
	}
	// A take-over of a real phone after them: its event comes after any
	// they would have caused.
	if _, errs, code := e.Run("takeover", "sim-android-1"); code != 0 {
		t.Fatalf("pinky takeover sim-android-1: %s", errs)
	}
	w.until("the real take-over's event", func(l string) bool { return strings.Contains(l, "sim-android-1") })
	for _, l := range w.output() {
		if strings.Contains(l, "nope-1") {
			t.Errorf("an event names the unknown phone: %s", l)
		}
	}
	e.Run("handback", "sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	for _, tool := range []string{"phone_apps", "phone_observe", "phone_release"} {
		h.Fails(tool, map[string]any{"device": "nope-1"}, "not_found")
	}
	// A phone that exists, but that the agent does not hold.
	h.Fails("phone_apps", map[string]any{"device": "sim-android-1"}, "not_leased")
}
