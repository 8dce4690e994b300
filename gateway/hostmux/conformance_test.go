package hostmux

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// simBin is the pinky-driver-sim that TestMain builds.
var simBin string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "hostmux-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	simBin = filepath.Join(dir, driverhost.Prefix+"sim")
	cmd := exec.Command("go", "build", "-o", simBin, "../../drivers/sim/cmd/pinky-driver-sim")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "building pinky-driver-sim: %v\n", err)
		return 1
	}
	return m.Run()
}

// simHost starts a driver host whose only driver is the real
// pinky-driver-sim, and stops it when the test ends.
func simHost(t *testing.T) *driverhost.Host {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(simBin, filepath.Join(dir, driverhost.Prefix+"sim")); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("HOSTMUX_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	h := driverhost.New(driverhost.Config{ExeDir: dir, StartTimeout: testkit.Scaled(10 * time.Second), Logger: log})
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Stop)
	testkit.WaitWithin(t, testkit.Scaled(20*time.Second), "the sim driver running with its phones", func() bool {
		ds := h.Drivers()
		return len(ds) == 1 && ds[0].State == driverhost.StateRunning && len(h.Devices()) > 0
	})
	return h
}

// TestConformance: a Mux over a real driver host running the real
// pinky-driver-sim passes the driver contract's suite, as a single driver
// does; the suite serves it through sdk.NewServer, as remote.Serve does.
func TestConformance(t *testing.T) {
	m := New(simHost(t), "test", nil)
	info, err := m.Info(context.Background())
	if err != nil || info.Version != "test" || !slices.Contains(info.Capabilities, sdk.CapFiles) {
		t.Fatalf("Info = %+v, %v; want the version given and the sim's capabilities", info, err)
	}
	drivertest.Run(t, drivertest.Config{Driver: m, Options: drivertest.Options{
		PIN: simtest.PIN, SyncTimeout: testkit.Scaled(5 * time.Second), Slack: testkit.Slack(),
	}})
}
