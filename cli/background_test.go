package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
)

// TestBackgroundTask: an agent's task on a background display of the
// virtual phone, through pinky mcp. The phone stays locked and untouched
// (the gateway neither wakes nor unlocks it for the task), the agent works
// on its own display, the person sees the lease's display in the status,
// and the task is recorded from that display.
func TestBackgroundTask(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim", "--console", "127.0.0.1:0")
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice("sim-android-1")
	text := h.OK("phone_connect", dev("task", "background: write a note", "background", true), "")
	if strings.Contains(text, "LOCKED") || strings.Contains(text, "Enter PIN") {
		t.Errorf("the background display shows the lock screen:\n%s", text)
	}
	h.OK("phone_launch", dev("app", "Notes"), "Groceries")
	h.OK("phone_tap", dev("text", "Groceries: eggs, milk, basil"), "")
	var st api.Status
	e.JSON(&st, "status")
	if len(st.Leases) != 1 || st.Leases[0].Display <= 0 || st.Console == "" {
		t.Fatalf("status while the task runs on a background display: %+v, console %q", st.Leases, st.Console)
	}
	if out, _, _ := e.Run("status"); !strings.Contains(out, "background display") || !strings.Contains(out, "console: http://") {
		t.Errorf("pinky status shows neither the background display nor the console:\n%s", out)
	}
	// The person watches the background display in the console, beside the
	// phone's own screen.
	if _, err := exec.LookPath("chromium"); err == nil || os.Getenv("CI") == "true" {
		ctx := e2e.Chromium(t)
		link, _, _ := e.Run("open", "--no-browser")
		e2e.Do(t, ctx, chromedp.Navigate(strings.TrimSpace(link)))
		canvas := fmt.Sprintf("mirror-sim-android-1~d%d", st.Leases[0].Display)
		e2e.WaitJS(t, ctx, "the background display's mirror shows frames",
			fmt.Sprintf(`+(document.getElementById(%q) || {dataset: {}}).dataset.frames > 0`, canvas))
	}
	// The phone's own screen: still locked, never woken into Notes.
	var own sdk.Screen
	e.JSON(&own, "driver", "screen", "sim-android-1")
	if own.LockState != sdk.LockLocked || own.App.ID == "com.google.android.keep" {
		t.Errorf("the phone's own screen during the background task: lock %q, app %q; want it locked and untouched", own.LockState, own.App.ID)
	}
	h.OK("phone_release", dev(), "")
	e.Eventually("the background task's recording", func() bool { return e.lastTask(t).Recording })
	e.JSON(&st, "status")
	if len(st.Leases) != 0 {
		t.Errorf("leases after the release: %+v", st.Leases)
	}
}
