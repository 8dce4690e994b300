package cli

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// TestPrintDevicesMissing: under the table, a line per capability a phone
// lacks, with why and how to enable it; then one line per phone for what
// its driver does not offer; none for a phone that lacks nothing.
func TestPrintDevicesMissing(t *testing.T) {
	ds := []api.Device{
		{ID: "pixel", Driver: "android", Online: true, State: "online", Platform: "android", Connection: "usb", Missing: []api.MissingCap{
			{Capability: "video", Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"},
			{Capability: "displays", Reason: "Android 12 has none"},
		}},
		{ID: "iphone", Driver: "ios", Online: true, State: "online", Platform: "ios", Connection: "wifi", Missing: []api.MissingCap{
			{Capability: "frame_capture", Fix: "pinky ios add iphone --video-listen :9100"},
		}, NotOffered: []string{"notifications", "pinch"}},
		{ID: "full", Driver: "sim", Online: true, State: "online", Platform: "android", Connection: "virtual"},
		{ID: "old", Driver: "acme", Online: true, State: "online", Platform: "android", Connection: "usb", NotOffered: []string{"video"}},
	}
	var b strings.Builder
	printDevices(&b, ds)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) < 5 {
		t.Fatalf("got %q; want the table's 5 lines and more", b.String())
	}
	want := []string{
		"pixel lacks video: no scrcpy server found; to enable it: install scrcpy 3.x",
		"pixel lacks displays: Android 12 has none",
		"iphone lacks frame_capture; to enable it: pinky ios add iphone --video-listen :9100",
		"iphone: its driver (ios) does not offer notifications, pinch",
		"old: its driver (acme) does not offer video",
	}
	if d := cmp.Diff(want, lines[5:]); d != "" {
		t.Errorf("lines under the table (-want +got):\n%s", d)
	}
}
