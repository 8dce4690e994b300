package driverhost

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestServesFollowsDeviceCaps: the host reads each device's own
// capabilities, through a real pinky-driver-sim child on a world whose
// Android phone lacks video and displays: Serves says no for those on that
// phone only, and Missing gives the phone's reason and fix.
func TestServesFollowsDeviceCaps(t *testing.T) {
	if bin.sim == "" {
		t.Fatal("pinky-driver-sim was not built")
	}
	world, err := filepath.Abs("../../drivers/sim/testdata/lacks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(bin.sim, filepath.Join(dir, Prefix+"sim")); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(dir)
	cfg.Env = map[string][]string{"sim": {"PINKY_SIM_WORLD=" + world}}
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "both phones online", func() bool {
		return slices.Equal(onlineDevices(h, "sim"), []string{"sim-android-lacks", "sim-ios-full"})
	})
	tests := []struct {
		dev     string
		c       sdk.Capability
		serves  bool
		wantFix string
	}{
		{"sim-android-lacks", sdk.CapVideo, false, "install scrcpy 3.x"},
		{"sim-android-lacks", sdk.CapDisplays, false, "install scrcpy 3.x"},
		{"sim-android-lacks", sdk.CapFiles, true, ""},
		{"sim-android-lacks", sdk.CapFrameCapture, false, ""}, // the sim serves it for no phone
		{"sim-ios-full", sdk.CapVideo, true, ""},
		{"sim-ios-full", sdk.CapDisplays, true, ""},
		{"no-such-phone", sdk.CapFiles, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.dev+"/"+string(tt.c), func(t *testing.T) {
			if got := h.Serves(tt.dev, tt.c); got != tt.serves {
				t.Errorf("Serves: got %v; want %v", got, tt.serves)
			}
			m, ok := h.Missing(tt.dev, tt.c)
			if ok != (tt.wantFix != "") || m.Fix != tt.wantFix {
				t.Errorf("Missing: got %+v, %v; want fix %q", m, ok, tt.wantFix)
			}
			if ok && m.Reason == "" {
				t.Errorf("Missing: got %+v; want a reason", m)
			}
		})
	}
}
