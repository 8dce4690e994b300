package drivertest

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sim"
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

// TestCheckSimLacks runs the suite on a world whose Android phone lacks
// video and displays (testdata/lacks.yaml in drivers/sim): the phone says
// so in its capabilities, answers UNSUPPORTED for them, and passes; its
// video and displays cases skip with the phone's reason, and the iPhone,
// which serves them, runs them.
func TestCheckSimLacks(t *testing.T) {
	w, err := sim.Load("../sim/testdata/lacks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		dev      string
		wantSkip bool
	}{{"sim-android-lacks", true}, {"sim-ios-full", false}} {
		t.Run(tt.dev, func(t *testing.T) {
			d := sim.New(w)
			t.Cleanup(func() { d.Close() })
			var out bytes.Buffer
			sum, err := Check(context.Background(), d, Options{DeviceID: tt.dev, PIN: simtest.PIN, SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}, &out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("report:\n%s", out.String())
			noFailures(t, sum)
			if r := resultOf(t, sum, "device-capabilities"); r.Status != Pass {
				t.Errorf("device-capabilities: got %s; want PASS", r.Status)
			}
			for _, name := range []string{"video-stream", "displays"} {
				r := resultOf(t, sum, name)
				if got := r.Status == Skip; got != tt.wantSkip {
					t.Errorf("%s: got %s %q; want skipped %v", name, r.Status, r.Messages, tt.wantSkip)
				}
				if tt.wantSkip && !strings.Contains(strings.Join(r.Messages, " "), "install scrcpy 3.x") {
					t.Errorf("%s: skip reason %q; want the phone's fix", name, r.Messages)
				}
			}
		})
	}
}

// TestCheckSimEachDevice: without a device in the options, a case of a
// capability runs on each online phone that serves it, one line per phone,
// and not on a phone that lacks it.
func TestCheckSimEachDevice(t *testing.T) {
	lacks, err := sim.Load("../sim/testdata/lacks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		world *sim.World
		want  []string // the devices video-stream ran on
	}{
		{"default", def, []string{"sim-android-1", "sim-ios-1"}},
		{"lacks", lacks, []string{"sim-ios-full"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sim.New(tt.world)
			t.Cleanup(func() { d.Close() })
			var out bytes.Buffer
			sum, err := Check(context.Background(), d, Options{Run: "^(video-stream|displays|info)$", PIN: simtest.PIN, SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}, &out)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("report:\n%s", out.String())
			noFailures(t, sum)
			var ran []string
			for _, r := range sum.Results {
				if r.Name == "video-stream" {
					if r.Status != Pass {
						t.Errorf("video-stream on %q: got %s %q; want PASS", r.Device, r.Status, r.Messages)
					}
					ran = append(ran, r.Device)
				}
			}
			if !slices.Equal(ran, tt.want) {
				t.Errorf("video-stream ran on %q; want %q", ran, tt.want)
			}
			for _, dev := range tt.want {
				if line := "PASS video-stream on " + dev + " ("; !strings.Contains(out.String(), line) {
					t.Errorf("report: no line %q", line)
				}
			}
		})
	}
}
