package driverhost

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// mergedHost starts a host with the real pinky-driver-sim and, when fake,
// the fake driver beside it.
func mergedHost(t *testing.T, fake bool) *Host {
	t.Helper()
	dir := t.TempDir()
	if fake {
		dir = driverDir(t, "fake")
	}
	if err := os.Symlink(bin.sim, dir+"/"+Prefix+"sim"); err != nil {
		t.Fatal(err)
	}
	h := New(testConfig(dir))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	waitFor(t, 10*time.Second, "the drivers running", func() bool {
		return status(h, "sim").State == StateRunning && (!fake || status(h, "fake").State == StateRunning)
	})
	return h
}

// TestMergedConformance: the host's drivers as one driver, as `pinky host`
// serves them over its link, pass the driver contract's suite on the real
// pinky-driver-sim.
func TestMergedConformance(t *testing.T) {
	m := mergedHost(t, false).Merged("test")
	info, err := m.Info(context.Background())
	if err != nil || info.Version != "test" || !slices.Contains(info.Capabilities, sdk.CapFiles) {
		t.Fatalf("Info = %+v, %v; want the version given and the sim's capabilities", info, err)
	}
	drivertest.Run(t, drivertest.Config{Driver: m, Options: drivertest.Options{PIN: simtest.PIN, SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestMergedRouting: with two drivers, each device's calls reach its own
// driver; a capability the union declares but the device's driver lacks
// is UNSUPPORTED naming that driver, and an unknown device is not found.
// (A driver whose devices differ in what they serve cannot pass the suite
// until capabilities are per device: issue 20.)
func TestMergedRouting(t *testing.T) {
	h := mergedHost(t, true)
	m := h.Merged("test")
	ctx := context.Background()
	if _, err := m.ListFiles(ctx, "sim-android-1", ""); err != nil {
		t.Fatalf("files of the sim's phone: %v", err)
	}
	if _, err := m.ListFiles(ctx, "fake-1", ""); !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "fake driver") {
		t.Fatalf("files of the fake driver's device: %v; want UNSUPPORTED naming the fake driver", err)
	}
	if _, err := m.Screen(ctx, "fake-1", 0); err != nil {
		t.Fatalf("screen of the fake driver's device: %v", err)
	}
	if _, err := m.Screen(ctx, "nobody", 0); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Fatalf("screen of an unknown device: %v; want DEVICE_NOT_FOUND", err)
	}
	ids := map[string]bool{}
	wctx, cancel := context.WithCancel(ctx)
	err := m.WatchDevices(wctx, func(ev sdk.DeviceEvent) error {
		if ev.Kind == sdk.DevicesSynced {
			cancel()
			return nil
		}
		ids[ev.Device.ID] = true
		return nil
	})
	if err != nil || !ids["fake-1"] || !ids["sim-android-1"] {
		t.Fatalf("watch: %v, listed %v; want both drivers' devices before the sync", err, ids)
	}
}
