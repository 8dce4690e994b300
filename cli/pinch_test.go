package cli_test

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestPinchOverStdio: phone_pinch through a real `pinky mcp` and daemon on
// both virtual phones zooms the Shop's product photo in and out, and a
// centre off the screen or a scale of 100 % is refused.
func TestPinchOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	for _, dev := range []string{"sim-android-1", "sim-ios-1"} {
		with := e2e.OnDevice(dev)
		h.OK("phone_connect", with("task", "e2e: zoom the photo"), "LOCKED")
		e.Unlock(dev)
		h.OK("phone_launch", with("app", "Shop"), "Zoom 100%")
		h.OK("phone_pinch", with("text", "Wireless headphones photo", "scale_percent", 200), "Zoom 200%")
		h.OK("phone_pinch", with("text", "Wireless headphones photo", "scale_percent", 300, "duration_ms", 500), "Zoom 500%")
		h.OK("phone_pinch", with("text", "Wireless headphones photo", "scale_percent", 20), "Zoom 100%")
		h.Fails("phone_pinch", with("x", 100000, "y", 10, "scale_percent", 200), "invalid_argument")
		h.Fails("phone_pinch", with("text", "Wireless headphones photo", "scale_percent", 100), "invalid_argument")
		h.OK("phone_release", with(), "")
	}
}

// pinchShop zooms the Shop's photo on dev through h: twice its size (about:
// the real drivers place the fingers in pixels and send them in points or
// video pixels), then back.
func pinchShop(t *testing.T, h *e2e.Host, dev func(kv ...any) map[string]any, app string) {
	t.Helper()
	h.OK("phone_launch", dev("app", app), "Zoom 100%")
	h.OK("phone_pinch", dev("text", "Wireless headphones photo", "scale_percent", 200), "Zoom ")
	if text := h.OK("phone_observe", dev("full", true), "Zoom "); strings.Contains(text, "Zoom 100%") {
		t.Errorf("after a pinch of 200%%: %q; want the photo zoomed in", text)
	}
	h.OK("phone_pinch", dev("text", "Wireless headphones photo", "scale_percent", 10), "Zoom 100%")
	h.Fails("phone_pinch", dev("x", 100000, "y", 10, "scale_percent", 200), "invalid_argument")
	h.OK("phone_release", dev(), "")
}

// TestPinchOnAndroid: phone_pinch through pinky mcp, pinky-driver-android,
// a real adb server and the virtual phone's scrcpy server.
func TestPinchOnAndroid(t *testing.T) {
	_, _, h, dev := androidTask(t, "android: zoom the photo")
	pinchShop(t, h, dev, "com.pinky.sim.shop")
}

// TestPinchOnIPhone: phone_pinch through pinky mcp, pinky-driver-ios and
// the virtual iPhone's WebDriverAgent face (two W3C touch pointers).
func TestPinchOnIPhone(t *testing.T) {
	_, _, h, dev := iPhoneTask(t, "ios: zoom the photo")
	pinchShop(t, h, dev, "Shop")
}
