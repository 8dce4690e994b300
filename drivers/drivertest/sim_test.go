package drivertest

import (
	"bytes"
	"context"
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
