package cli_test

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// observeSecure checks, through h on dev, that a screenshot of the secure
// Films app (FLAG_SECURE) comes back as the note screen_protected with the
// elements and no picture, that the app still works by its elements, and
// that an app that allows screenshots gets its picture.
func observeSecure(t *testing.T, h *e2e.Host, dev func(kv ...any) map[string]any, films, settings string) {
	t.Helper()
	h.OK("phone_launch", dev("app", films), "The Long Voyage")
	r := h.Call("phone_observe", dev("full", true, "screenshot", true))
	if r.IsError || !strings.Contains(r.Text, "screen_protected: the app in front blocks screenshots") || !strings.Contains(r.Text, `"The Long Voyage"`) {
		t.Errorf("phone_observe with a screenshot of Films: error=%v %q; want the screen_protected note and the elements", r.IsError, r.Text)
	}
	if r.Images != 0 || r.Structured["protected"] != true {
		t.Errorf("phone_observe with a screenshot of Films: %d images, protected %v; want no picture and protected", r.Images, r.Structured["protected"])
	}
	h.OK("phone_tap", dev("text", "The Long Voyage"), "Now playing: The Long Voyage")
	h.OK("phone_launch", dev("app", settings), "Network")
	r = h.Call("phone_observe", dev("screenshot", true))
	if r.IsError || r.Images != 1 || strings.Contains(r.Text, "screen_protected") {
		t.Errorf("phone_observe with a screenshot of Settings: error=%v, %d images, %q; want the picture and no note", r.IsError, r.Images, r.Text)
	}
	h.OK("phone_release", dev(), "")
}

// TestSecureScreenOverStdio: through a real `pinky mcp` and daemon on the
// embedded virtual Android phone.
func TestSecureScreenOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	dev := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", dev("task", "e2e: a film"), "LOCKED")
	e.Unlock("sim-android-1")
	observeSecure(t, h, dev, "Films", "Settings")
}

// TestSecureScreenOnAndroid: through pinky mcp, pinky-driver-android and a
// real adb server, where the driver learns of the secure window from
// dumpsys window when screencap comes back black.
func TestSecureScreenOnAndroid(t *testing.T) {
	_, _, h, dev := androidTask(t, "android: a film")
	observeSecure(t, h, dev, "com.pinky.sim.films", "com.android.settings")
}
