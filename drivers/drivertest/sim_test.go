package drivertest

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestRunSim(t *testing.T) {
	Run(t, Config{Driver: simtest.New(t), Options: Options{PIN: simtest.PIN, SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// noFailures fails the test for every case that failed.
func noFailures(t *testing.T, sum Summary) {
	t.Helper()
	for _, r := range sum.Results {
		if r.Status == Fail {
			t.Errorf("case %s: FAIL %q", r.Name, r.Messages)
		}
	}
}

func TestCheckBinarySim(t *testing.T) {
	bin := buildDriver(t, "github.com/pinky-gateway/pinky/drivers/sim/cmd/pinky-driver-sim")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, dev := range []string{"sim-android-1", "sim-ios-1"} {
		var out bytes.Buffer
		sum, err := CheckBinary(ctx, bin, BinaryOptions{Options: Options{DeviceID: dev, PIN: simtest.PIN, SyncTimeout: 5 * time.Second}}, &out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s report:\n%s", dev, out.String())
		noFailures(t, sum)
	}
}

// TestCheckBinaryLeavesNoSocket: a driver that crashes in the middle of the
// check (the sim's crash_after fault, as kill -9 would) leaves its socket
// behind; the check gives it a folder of its own and removes it, so the
// temporary folder is as it was.
func TestCheckBinaryLeavesNoSocket(t *testing.T) {
	bin := buildDriver(t, "github.com/pinky-gateway/pinky/drivers/sim/cmd/pinky-driver-sim")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out bytes.Buffer
	opts := BinaryOptions{Options: Options{DeviceID: "sim-android-1", PIN: simtest.PIN, SyncTimeout: 5 * time.Second}, Env: []string{"PINKY_SIM_FAULTS=crash_after=5"}}
	CheckBinary(ctx, bin, opts, &out) //nolint:errcheck // the crash fails cases; what is left behind is the question
	if !strings.Contains(out.String(), "exited") && !strings.Contains(out.String(), "FAIL") {
		t.Fatalf("the driver did not crash during the check:\n%s", out.String())
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left in the temporary folder: %s", e.Name())
	}
}
