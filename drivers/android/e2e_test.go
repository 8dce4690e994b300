package android

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
)

// The end-to-end tests go the whole real way: this driver → Debian's adb
// server (a private one on a free port, never the person's) → the virtual
// phone's adb face, whose app_process runs a scrcpy server.

// rig is one adb server with one virtual phone attached.
type rig struct {
	adbPort int
	serial  string
	sim     *sim.Driver
	face    *adbd.Server
	env     []string // the adb command's environment
	home    string   // the adb command's $HOME (its key)
	scrcpy  ScrcpyServer
	quiet   time.Duration // the driver's Config.IdleQuiet; zero is its default
	// find is the driver's Config.FindScrcpy; nil is none. With it the
	// driver looks again at every call that asks (lookEvery zero).
	find func() (ScrcpyServer, error)
}

// newRig starts a private adb server and a virtual phone's adb face, and
// connects them.
func newRig(t testing.TB, opts ...func(*adbd.Config)) *rig {
	t.Helper()
	return newRigOn(t, simtest.New(t), opts...)
}

// newRigOn is newRig with the virtual phones of s.
func newRigOn(t testing.TB, s *sim.Driver, opts ...func(*adbd.Config)) *rig {
	t.Helper()
	adbPath := testdep.Need(t, "adb")
	r := &rig{adbPort: testkit.FreePort(t), sim: s}
	home := t.TempDir() // adb keeps its key in $HOME/.android
	r.home = home
	r.env = append(os.Environ(), "HOME="+home, "ANDROID_ADB_SERVER_PORT="+strconv.Itoa(r.adbPort))
	cfg := adbd.Config{Driver: r.sim, DeviceID: "sim-android-1", AppProcess: scrcpyd.AppProcessVersion(r.sim, "3.3.4")}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	r.face, err = adbd.Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.face.Close() })
	r.adb(t, "start-server")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		exec.CommandContext(ctx, adbPath, "-P", strconv.Itoa(r.adbPort), "kill-server").Run() //nolint:errcheck // the rig's server may be gone already
	})
	r.serial = r.face.Addr().String()
	r.adb(t, "connect", r.serial)
	// A scrcpy server file to push: the virtual phone runs its own server
	// of version 3.3.4 whatever the bytes, once they are pushed.
	jar := filepath.Join(t.TempDir(), "scrcpy-server")
	if err := os.WriteFile(jar, []byte("not a real jar: the virtual phone serves scrcpy itself"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.scrcpy = ScrcpyServer{Path: jar, Version: "3.3.4"}
	return r
}

// adb runs the adb command against the rig's server.
func (r *rig) adb(t testing.TB, args ...string) string {
	t.Helper()
	// The real adb client waits as long as its server makes it: bounded,
	// so that a stuck server fails this test rather than the package's run.
	c := exec.CommandContext(testkit.Context(t), "adb", append([]string{"-P", strconv.Itoa(r.adbPort)}, args...)...)
	c.WaitDelay = 5 * time.Second
	c.Env = r.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("adb %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// driver returns the Android driver on the rig's adb server.
func (r *rig) driver(t testing.TB) *Driver {
	t.Helper()
	d, err := New(Config{ADB: adb.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.adbPort), NoStart: true}, Scrcpy: r.scrcpy, IdleQuiet: r.quiet, FindScrcpy: r.find})
	if err != nil {
		t.Fatal(err)
	}
	if r.find != nil {
		d.lookEvery = 0
	}
	t.Cleanup(d.Close)
	// Wait until adb has the phone online.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, _, err := d.phone(testkit.Context(t), r.serial); err == nil {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("adb did not list %s as a device", r.serial)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestConformance runs the driver conformance suite through the real adb
// server on the virtual phone.
func TestConformance(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	drivertest.Run(t, drivertest.Config{Driver: d, Options: drivertest.Options{DeviceID: r.serial, PIN: "1234", SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestReadAndTap: a read through adb gives the virtual phone's screen with
// its app and lock state, and a tap through scrcpy opens an app.
func TestReadAndTap(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sc.LockState != sdk.LockLocked {
		t.Errorf("the virtual phone starts locked; the driver says %q", sc.LockState)
	}
	if err := d.Unlock(ctx, r.serial, "0000"); !errorsIs(err, sdk.ErrWrongPIN) {
		t.Errorf("a wrong PIN: %v, want ErrWrongPIN", err)
	}
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	sc, err = d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.sim.Screen(ctx, "sim-android-1", 0)
	if sc.App.ID != want.App.ID || sc.LockState != sdk.LockUnlocked || len(sc.Elements) == 0 {
		t.Errorf("read through adb: app %q lock %q, %d elements; the sim shows %q", sc.App.ID, sc.LockState, len(sc.Elements), want.App.ID)
	}
	settings := simtest.Center(t, sc, "Settings")
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: settings}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.android.settings")
}

// waitApp waits for the virtual phone to show app.
func waitApp(t testing.TB, s *sim.Driver, app string) {
	t.Helper()
	var shown string
	if !testkit.Poll(5*time.Second, func() bool {
		sc, err := s.Screen(testkit.Context(t), simPhone, 0)
		if err == nil {
			shown = sc.App.ID
		}
		return err == nil && sc.App.ID == app
	}) {
		t.Fatalf("the virtual phone shows %q, want %q", shown, app)
	}
}

func errorsIs(err error, target error) bool {
	return err != nil && sdk.Category(err) == sdk.Category(target)
}

// TestLockEvents: WatchDevices lists the phone with its lock state, and
// sends a change when the phone is unlocked or turned off.
func TestLockEvents(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	events := make(chan sdk.DeviceEvent, 64)
	go d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
		select {
		case events <- ev:
		case <-ctx.Done():
		}
		return nil
	})
	want := func(what string, ok func(sdk.Device) bool) {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if ev.Device.ID == r.serial && ok(ev.Device) {
					return
				}
			case <-deadline:
				t.Fatalf("no device event with %s", what)
			}
		}
	}
	want("the phone locked at first", func(dev sdk.Device) bool { return dev.LockState == sdk.LockLocked })
	if err := r.sim.Unlock(testkit.Context(t), "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	want("the phone unlocked", func(dev sdk.Device) bool { return dev.LockState == sdk.LockUnlocked && dev.ScreenOn })
	r.adb(t, "-s", r.serial, "shell", "input", "keyevent", "26")
	want("the screen off", func(dev sdk.Device) bool { return !dev.ScreenOn })
}

// TestConcurrentReads: reads of one phone from several callers at once (an
// agent's and the recorder's) all succeed: the driver runs one dump at a
// time, as Android allows one UiAutomation client.
func TestConcurrentReads(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			_, err := d.Screen(testkit.Context(t), r.serial, 0)
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Errorf("a read beside others: %v", err)
		}
	}
}
