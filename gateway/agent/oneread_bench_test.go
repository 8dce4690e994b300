package agent

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android"
	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// BenchmarkOneRead measures issue 17's "one read per action" through the
// gateway's pipeline (this package's Session, in process) and the Android
// driver, on the virtual phone behind a private Debian adb server (as the
// driver's own end-to-end tests run it), on both timing profiles: fast (the
// virtual phone answers at once) and phone (PINKY_SIM_TIMING=phone: a
// uiautomator dump of 1–2 s).
//
// For each profile it times, one by one, after a warm-up:
//   - dump: the driver's Screen, one uiautomator dump and dumpsys;
//   - first: phone_connect's answer, the first read of a task;
//   - tap: phone_tap on Settings' Bluetooth switch (nothing animates). The
//     pipeline reads the screen before an action, to judge and aim it on
//     the screen as it is; tap-answer is the rest (the action, the settle,
//     the read and the diff), the figure issue 17 sets against a dump;
//   - the same tap with the driver's idle signal hidden (the settle then
//     reads until two reads match, as before issue 17): tap-answer-poll.
//
// It reports medians in ms and the ratios first/dump, tap-answer/dump and
// tap-answer-poll/dump (targets: at most 1 and 1.3).
func BenchmarkOneRead(b *testing.B) {
	for _, p := range []timing.Profile{timing.Fast, timing.Phone} {
		b.Run(p.Name, func(b *testing.B) {
			n := 20
			if p.Name == timing.Phone.Name {
				n = 5 // a second or two per dump
			}
			n = max(n, b.N)
			ph := newAndroidPhone(b, p)
			ctx := context.Background()
			dump := timeEach(b, n, func() time.Duration {
				t0 := time.Now()
				if _, err := ph.cold.Screen(ctx, ph.serial, 0); err != nil {
					b.Fatal(err)
				}
				return time.Since(t0)
			})
			results := map[string][]time.Duration{}
			for _, idle := range []bool{true, false} {
				ph.d.idle = idle
				// The task's first read is a dump; without the idle signal
				// every read is one, as before issue 17.
				ph.d.useCold = true
				f := ph.fixture(b)
				s, err := f.m.Open(ctx, Client{Name: "bench", Version: "1"}, "stdio")
				if err != nil {
					b.Fatal(err)
				}
				first := timeEach(b, n, func() time.Duration {
					t0 := time.Now()
					if _, err := s.Connect(ctx, ConnectRequest{Device: ph.serial, Task: "measure"}); err != nil {
						b.Fatal(err)
					}
					took := time.Since(t0)
					if err := s.Release(ctx, ph.serial); err != nil {
						b.Fatal(err)
					}
					return took
				})
				if _, err := s.Connect(ctx, ConnectRequest{Device: ph.serial, Task: "measure"}); err != nil {
					b.Fatal(err)
				}
				ph.d.useCold = !idle
				var before, call []time.Duration
				tap := timeEach(b, n, func() time.Duration {
					ph.d.reset()
					t0 := time.Now()
					if _, err := s.Act(ctx, ph.serial, Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: "Bluetooth"}}, nil); err != nil {
						b.Fatal(err)
					}
					took := time.Since(t0)
					pre := ph.d.firstRead()
					before = append(before, pre)
					call = append(call, took)
					return took - pre
				})
				s.Close()
				name := "tap-answer"
				if !idle {
					name = "tap-answer-poll"
				} else {
					results["first"] = first
					results["read-before-tap"] = sorted(before)
					results["tap-call"] = sorted(call)
				}
				results[name] = tap
			}
			d50 := quantile(dump, 0.5)
			b.ReportMetric(ms(d50), "ms-dump")
			for _, k := range []string{"first", "read-before-tap", "tap-answer", "tap-call", "tap-answer-poll"} {
				b.ReportMetric(ms(quantile(results[k], 0.5)), "ms-"+k)
			}
			b.ReportMetric(float64(quantile(results["first"], 0.5))/float64(d50), "first/dump")
			b.ReportMetric(float64(quantile(results["tap-answer"], 0.5))/float64(d50), "tap-answer/dump")
			b.ReportMetric(float64(quantile(results["tap-call"], 0.5))/float64(d50), "tap-call/dump")
			b.ReportMetric(float64(quantile(results["tap-answer-poll"], 0.5))/float64(d50), "tap-answer-poll/dump")
		})
	}
}

// timeEach runs f twice to warm up, then n times, and returns its
// durations sorted.
func timeEach(b *testing.B, n int, f func() time.Duration) []time.Duration {
	b.Helper()
	f()
	f()
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = f()
	}
	return sorted(ds)
}

func sorted(ds []time.Duration) []time.Duration {
	slices.Sort(ds)
	return ds
}

// quantile returns the q-quantile of sorted durations.
func quantile(s []time.Duration, q float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(float64(len(s))*q))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// androidPhone is the virtual phone's Android face behind a private adb
// server, driven by the Android driver.
type androidPhone struct {
	serial string
	drv    *android.Driver
	cold   *android.Driver // the same phone, never reusing a read
	d      *timedDriver
}

// newAndroidPhone starts a private adb server, the virtual phone's adb face
// with profile p (unlocked, on Settings) and the Android driver.
func newAndroidPhone(b *testing.B, p timing.Profile) *androidPhone {
	b.Helper()
	adbPath := testdep.Need(b, "adb")
	s := simtest.New(b, simtest.Unlocked("sim-android-1"))
	if _, err := s.Act(context.Background(), "sim-android-1", sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		b.Fatal(err)
	}
	face, err := adbd.Listen("127.0.0.1:0", adbd.Config{Driver: s, DeviceID: "sim-android-1", AppProcess: scrcpyd.AppProcessVersion(s, "3.3.4"), Timing: p})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { face.Close() })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	env := append(os.Environ(), "HOME="+b.TempDir(), "ANDROID_ADB_SERVER_PORT="+port)
	run := func(args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, adbPath, append([]string{"-P", port}, args...)...)
		c.Env = env
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("adb %v: %v\n%s", args, err, out)
		}
	}
	run("start-server")
	b.Cleanup(func() { run("kill-server") })
	serial := face.Addr().String()
	run("connect", serial)
	jar := filepath.Join(b.TempDir(), "scrcpy-server")
	if err := os.WriteFile(jar, []byte("the virtual phone serves scrcpy itself"), 0o644); err != nil {
		b.Fatal(err)
	}
	drv, err := android.New(android.Config{ADB: adb.Options{Addr: "127.0.0.1:" + port, NoStart: true}, Scrcpy: android.ScrcpyServer{Path: jar, Version: "3.3.4"}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(drv.Close)
	// cold never reuses a read: the dump and the old settle are measured
	// with it.
	cold, err := android.New(android.Config{ADB: adb.Options{Addr: "127.0.0.1:" + port, NoStart: true}, ReuseFor: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(cold.Close)
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := drv.Screen(context.Background(), serial, 0); err == nil {
			break
		} else if time.Now().After(deadline) {
			b.Fatalf("the driver cannot read %s: %v", serial, err)
		}
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := cold.Screen(context.Background(), serial, 0); err == nil {
			break
		} else if time.Now().After(deadline) {
			b.Fatalf("the cold driver cannot read %s: %v", serial, err)
		}
	}
	return &androidPhone{serial: serial, drv: drv, cold: cold, d: &timedDriver{Full: sdk.Complete(drv), cold: cold, idle: true}}
}

// fixture is a Manager whose one phone is this one.
func (ph *androidPhone) fixture(b *testing.B) *fixture {
	b.Helper()
	f := &fixture{store: history.NewMemory()}
	m := NewManager(Config{Drivers: &oneDriver{serial: ph.serial, d: ph.d}, Store: f.store, SettleCap: 3 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { m.Run(ctx); close(done) }()
	b.Cleanup(func() { cancel(); <-done })
	f.m = m
	return f
}

// timedDriver is a driver that times its reads and, without idle, hides its
// idle signal.
type timedDriver struct {
	sdk.Full
	idle bool
	// cold reads the screen instead of Full when useCold is set: every
	// read a dump, as before reads were reused.
	cold    *android.Driver
	useCold bool

	mu    sync.Mutex
	reads []time.Duration
}

func (t *timedDriver) Info(ctx context.Context) (sdk.Info, error) {
	info, err := t.Full.Info(ctx)
	if !t.idle {
		info.Capabilities = slices.DeleteFunc(slices.Clone(info.Capabilities), func(c sdk.Capability) bool { return c == sdk.CapWaitIdle })
	}
	return info, err
}

func (t *timedDriver) Screen(ctx context.Context, id string, display int) (*sdk.Screen, error) {
	t0 := time.Now()
	var sc *sdk.Screen
	var err error
	if t.useCold {
		sc, err = t.cold.Screen(ctx, id, display)
	} else {
		sc, err = t.Full.Screen(ctx, id, display)
	}
	t.mu.Lock()
	t.reads = append(t.reads, time.Since(t0))
	t.mu.Unlock()
	return sc, err
}

func (t *timedDriver) reset() {
	t.mu.Lock()
	t.reads = nil
	t.mu.Unlock()
}

// firstRead is how long the first read since reset took.
func (t *timedDriver) firstRead() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.reads) == 0 {
		return 0
	}
	return t.reads[0]
}

// oneDriver is the driver host of one phone.
type oneDriver struct {
	serial string
	d      sdk.Full
}

func (o *oneDriver) Devices() []driverhost.Device {
	return []driverhost.Device{{Device: sdk.Device{ID: o.serial, Name: "virtual Pixel", Platform: sdk.PlatformAndroid, State: sdk.StateOnline}, Driver: "android", Online: true}}
}

func (o *oneDriver) Drivers() []driverhost.DriverStatus {
	return []driverhost.DriverStatus{{Name: "android", State: driverhost.StateRunning}}
}

func (o *oneDriver) DriverForDevice(string) (sdk.Full, string, error) { return o.d, "android", nil }

func (o *oneDriver) Serves(_ string, c sdk.Capability) bool {
	info, err := o.d.Info(context.Background())
	return err == nil && slices.Contains(info.Capabilities, c)
}

func (o *oneDriver) Missing(string, sdk.Capability) (sdk.MissingCap, bool) {
	return sdk.MissingCap{}, false
}

func (o *oneDriver) Subscribe() (<-chan driverhost.Event, func()) {
	return make(chan driverhost.Event), func() {}
}
