package android

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// The benchmarks run on the virtual phone through a private adb server
// (see e2e_test.go), a few seconds each: go test -run '^$' -bench . -benchtime 50x.
//
// What the virtual phone makes cheap or dear, compared to a real one: its
// `input` command runs inside the adb face's process, where a real phone
// starts a JVM (app_process) per `input` call, which costs it 300 ms to a
// second; its adb face is on loopback TCP, not USB or Wi-Fi; its scrcpy
// server applies a touch straight to the sim, not through Android's input
// dispatcher; and its uiautomator dump and dumpsys are built from the sim's
// tree in memory, not by walking an app's accessibility nodes. So the
// tap ratio here is a floor (a real phone widens it a lot), and the read
// time is the driver's and adb's share of a read, not a phone's.

// BenchmarkTap taps the Settings app's Bluetooth switch through the
// driver (scrcpy's control socket) and with `adb shell input tap` through
// the same adb server, alternately, each timed from the call to its return
// and to the moment the virtual phone's screen shows the switch flipped
// (polled in process). It reports the medians in µs and the ratios
// shell/scrcpy; ns/op is one tap of each kind.
func BenchmarkTap(b *testing.B) {
	r := newRig(b)
	d := r.driver(b)
	ctx := context.Background()
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		b.Fatal(err)
	}
	waitApp(b, r.sim, "com.android.settings")
	sw := func() bool {
		sc, err := r.sim.Screen(ctx, "sim-android-1", 0)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range sc.Elements {
			if e.Text == "Bluetooth" && e.Checkable {
				return e.Checked
			}
		}
		b.Fatal("no Bluetooth switch on the virtual phone's screen")
		return false
	}
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		b.Fatal(err)
	}
	pt := simtest.Center(b, sc, "Bluetooth")
	dev := d.adb.Device(r.serial)
	kinds := []struct {
		name string
		tap  func() error
	}{
		{"scrcpy", func() error {
			_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: pt})
			return err
		}},
		{"shell", func() error {
			_, err := shell(ctx, dev, fmt.Sprintf("input tap %d %d", pt.X, pt.Y))
			return err
		}},
	}
	// The scrcpy session starts on the first action: not timed.
	for _, k := range kinds {
		if err := k.tap(); err != nil {
			b.Fatal(err)
		}
	}
	ret := make([][]time.Duration, len(kinds))
	seen := make([][]time.Duration, len(kinds))
	for b.Loop() {
		for i, k := range kinds {
			was := sw()
			start := time.Now()
			if err := k.tap(); err != nil {
				b.Fatalf("%s tap: %v", k.name, err)
			}
			ret[i] = append(ret[i], time.Since(start))
			// The poll sleeps between reads: a busy poll takes a core of
			// two from the path it measures (it made scrcpy's ten times slower).
			for deadline := start.Add(5 * time.Second); sw() == was; time.Sleep(50 * time.Microsecond) {
				if time.Now().After(deadline) {
					b.Fatalf("%s tap: the switch did not flip", k.name)
				}
			}
			seen[i] = append(seen[i], time.Since(start))
		}
	}
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	for i, k := range kinds {
		b.ReportMetric(us(median(ret[i])), k.name+"-return-µs")
		b.ReportMetric(us(median(seen[i])), k.name+"-screen-µs")
	}
	b.ReportMetric(float64(median(ret[1]))/float64(median(ret[0])), "shell/scrcpy-return")
	b.ReportMetric(float64(median(seen[1]))/float64(median(seen[0])), "shell/scrcpy-screen")
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkReadScreen reads the Settings screen through the driver: uiautomator
// dump, dumpsys window and power, and the parsing.
func BenchmarkReadScreen(b *testing.B) {
	r := newRig(b)
	d := r.driver(b)
	ctx := context.Background()
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		b.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		b.Fatal(err)
	}
	waitApp(b, r.sim, "com.android.settings")
	var n int
	for b.Loop() {
		sc, err := d.Screen(ctx, r.serial, 0)
		if err != nil {
			b.Fatal(err)
		}
		n = len(sc.Elements)
	}
	b.ReportMetric(float64(n), "elements")
}

// BenchmarkReadDump parses the largest captured dump, as
// `uiautomator dump /dev/tty` prints it.
func BenchmarkReadDump(b *testing.B) {
	files := capturedDumps(b)
	var name string
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil && fi.Size() > size {
			name, size = f, fi.Size()
		}
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		b.Fatal(err)
	}
	out := append(raw, "UI hierchary dumped to: /dev/tty\n"...)
	b.SetBytes(int64(len(out)))
	var n int
	for b.Loop() {
		sc, err := readDump(out)
		if err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		n = len(sc.Elements)
	}
	b.ReportMetric(float64(n), "elements")
}

// BenchmarkPhoneProfile is a screen read and a tap (scrcpy's control
// socket) through the driver with the virtual phone answering at once
// (fast) and taking a real phone's time (phone, PINKY_SIM_TIMING=phone):
// a read is a uiautomator dump and then some, a tap a few milliseconds
// before the driver settles.
func BenchmarkPhoneProfile(b *testing.B) {
	for _, p := range []timing.Profile{timing.Fast, timing.Phone} {
		setup := func(b *testing.B) (*rig, *Driver) {
			r := newRig(b, func(c *adbd.Config) { c.Timing = p })
			d := r.driver(b)
			if err := d.Unlock(context.Background(), r.serial, "1234"); err != nil {
				b.Fatal(err)
			}
			return r, d
		}
		b.Run(p.Name+"/observe", func(b *testing.B) {
			r, d := setup(b)
			for b.Loop() {
				if _, err := d.Screen(context.Background(), r.serial, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(p.Name+"/tap", func(b *testing.B) {
			r, d := setup(b)
			a := sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 540, Y: 1900}}
			for b.Loop() {
				if _, err := d.Act(context.Background(), r.serial, a); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
