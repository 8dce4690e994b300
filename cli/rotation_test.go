package cli_test

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// turnVideo plays the video player's full screen on a phone through h:
// Full screen turns the screen landscape (its size swapped), a control of
// the landscape layout answers a tap by text and, beyond the portrait
// width, one by coordinates, and leaving full screen turns it back. app
// is what phone_launch opens the player by; empty taps its icon.
func turnVideo(t *testing.T, h *e2e.Host, dev func(kv ...any) map[string]any, app, portrait, landscape string, exitX, exitY int) {
	t.Helper()
	if app != "" {
		h.OK("phone_launch", dev("app", app), "Full screen")
	} else {
		// An iPhone lists only the apps the person declared: open the
		// player from its Home Screen icon, as a person would.
		h.OK("phone_tap", dev("text", "Video"), "Full screen")
	}
	if text := h.OK("phone_observe", dev("full", true), portrait); strings.Contains(text, "landscape") {
		t.Errorf("the player: %q; want it portrait", text)
	}
	h.OK("phone_tap", dev("text", "Full screen"), landscape)
	h.OK("phone_observe", dev("full", true), landscape)
	h.OK("phone_tap", dev("text", "Resume"), "Playing")
	// Exit full screen sits in the right-hand third of the landscape
	// screen: x is beyond the portrait width, so only coordinates in the
	// current orientation reach it.
	h.OK("phone_tap", dev("x", exitX, "y", exitY), "Full screen")
	if text := h.OK("phone_observe", dev("full", true), portrait); strings.Contains(text, "landscape") {
		t.Errorf("after Exit full screen: %q; want portrait again", text)
	}
	h.OK("phone_release", dev(), "")
}

// TestRotationOverStdio: the video player turns both virtual phones
// landscape and back through a real `pinky mcp` and daemon.
func TestRotationOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	for _, tt := range []struct {
		dev, portrait, landscape string
		exitX, exitY             int
	}{
		{"sim-android-1", "1080x2400", "2400x1080 landscape", 2000, 995},
		{"sim-ios-1", "1179x2556", "2556x1179 landscape", 2130, 1086},
	} {
		dev := e2e.OnDevice(tt.dev)
		h.OK("phone_connect", dev("task", "e2e: watch the video full screen"), "LOCKED")
		e.Unlock(tt.dev)
		turnVideo(t, h, dev, "Video", tt.portrait, tt.landscape, tt.exitX, tt.exitY)
	}
}

// TestRotationOnAndroid: the same through pinky-driver-android, Debian's
// adb and the virtual phone's scrcpy server, whose video restarts at the
// turned size; taps go in as the new video's pixels.
func TestRotationOnAndroid(t *testing.T) {
	_, _, h, dev := androidTask(t, "android: watch the video full screen")
	turnVideo(t, h, dev, "com.pinky.sim.video", "1080x2400", "2400x1080 landscape", 2000, 995)
}

// TestRotationOnIPhone: the same through pinky-driver-ios and the virtual
// iPhone's WebDriverAgent face, which speaks points of the current
// orientation.
func TestRotationOnIPhone(t *testing.T) {
	_, _, h, dev := iPhoneTask(t, "ios: watch the video full screen")
	turnVideo(t, h, dev, "", "1179x2556", "2556x1179 landscape", 2130, 1086)
}
