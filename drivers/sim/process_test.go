package sim_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestKnobsInProcess runs the real pinky-driver-sim with fault knobs in
// its environment, as the host starts it.
func TestKnobsInProcess(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "pinky-driver-sim")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/pinky-driver-sim").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Run("crash_after", func(t *testing.T) { crashAfter(t, bin) })
	t.Run("bad knob", func(t *testing.T) {
		var stderr bytes.Buffer
		_, err := sdk.Start(sdk.StartConfig{Path: bin, Env: []string{"PINKY_SIM_FAULTS=hang=everything"}, Stderr: &stderr, StartTimeout: 5 * time.Second})
		if err == nil || !strings.Contains(stderr.String(), "PINKY_SIM_FAULTS: fault hang=") {
			t.Errorf("got %v, stderr %q; want a refusal that names the knob", err, stderr.String())
		}
	})
}

// crashAfter: with crash_after=3 the fourth call finds the driver gone, as
// the host sees a crashing driver.
func crashAfter(t *testing.T, bin string) {
	p, err := sdk.Start(sdk.StartConfig{Path: bin, Env: []string{"PINKY_SIM_FAULTS=crash_after=3"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Kill()
	ctx := context.Background()
	d := p.Driver()
	for i := range 3 {
		if _, err := d.Screen(ctx, "sim-android-1", 0); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	_, err = d.Screen(ctx, "sim-android-1", 0)
	if !errors.Is(err, sdk.ErrDriverGone) {
		t.Errorf("call 4: got %v; want ErrDriverGone", err)
	}
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Error("the process still runs after its crash")
	}
}
