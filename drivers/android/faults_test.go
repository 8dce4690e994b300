package android

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// The fault tests break one thing on the real path (driver → adb server →
// the virtual phone's adb face → its scrcpy server) and check that the
// driver says so in the contract's terms, in time, and recovers.

// watcher runs WatchDevices and keeps its events.
type watcher struct {
	mu     sync.Mutex
	events []sdk.DeviceEvent
	done   chan struct{} // closed when WatchDevices returned err
	err    error
}

func watch(t *testing.T, d *Driver) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(testkit.Context(t))
	w := &watcher{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		w.err = d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
			w.mu.Lock()
			w.events = append(w.events, ev)
			w.mu.Unlock()
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-w.done:
			if w.err != nil {
				t.Errorf("WatchDevices returned %v; want nil at the end of its context", w.err)
			}
		case <-time.After(5 * time.Second):
			t.Error("WatchDevices did not return after the end of its context")
		}
	})
	return w
}

// wait waits for an event after the first `from` that ok accepts, and
// returns its index.
func (w *watcher) wait(t *testing.T, from int, what string, ok func(sdk.DeviceEvent) bool) int {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		w.mu.Lock()
		for i := from; i < len(w.events); i++ {
			if ok(w.events[i]) {
				w.mu.Unlock()
				return i
			}
		}
		evs := append([]sdk.DeviceEvent(nil), w.events...)
		w.mu.Unlock()
		select {
		case <-w.done:
			t.Fatalf("WatchDevices returned %v while waiting for %s; events %+v", w.err, what, evs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event %s; events %+v", what, evs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func online(serial string) func(sdk.DeviceEvent) bool {
	return func(ev sdk.DeviceEvent) bool {
		return ev.Device.ID == serial && ev.Device.State == sdk.StateOnline && (ev.Kind == sdk.DeviceAdded || ev.Kind == sdk.DeviceChanged)
	}
}

func notOnline(serial string) func(sdk.DeviceEvent) bool {
	return func(ev sdk.DeviceEvent) bool {
		return ev.Device.ID == serial && (ev.Kind == sdk.DeviceRemoved || ev.Device.State == sdk.StateOffline)
	}
}

// timed runs f and fails when it takes longer than most.
func timed(t *testing.T, what string, most time.Duration, f func()) {
	t.Helper()
	start := time.Now()
	f()
	most = testkit.Scaled(most)
	if took := time.Since(start); took > most {
		t.Errorf("%s took %v; want at most %v", what, took.Round(time.Millisecond), most)
	}
}

// TestFaultADBServerRestart: the adb server killed and started again on the
// same port. The watch reports the phone offline, keeps trying, and lists
// it again once a server is back and the phone reconnected; calls in
// between say offline at once.
func TestFaultADBServerRestart(t *testing.T) {
	tests := []struct {
		name string
		// driverStarts lets the driver's adb client run adb start-server;
		// otherwise the test starts the server.
		driverStarts bool
	}{
		{name: "started by the person"},
		{name: "started by the driver", driverStarts: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if tt.driverStarts {
				// The driver's adb start-server must find the rig's key.
				t.Setenv("HOME", r.home)
			}
			d := r.driver(t)
			d.adb, _ = adb.New(adb.Options{Addr: d.adb.Addr(), NoStart: !tt.driverStarts})
			w := watch(t, d)
			at := w.wait(t, 0, "online at first", online(r.serial))
			w.wait(t, 0, "synced", func(ev sdk.DeviceEvent) bool { return ev.Kind == sdk.DevicesSynced })

			r.adb(t, "kill-server")
			at = w.wait(t, at+1, "offline or removed after kill-server", notOnline(r.serial))
			if !tt.driverStarts {
				ctx, cancel := context.WithTimeout(testkit.Context(t), 10*time.Second)
				defer cancel()
				timed(t, "a screen read with no adb server", 2*time.Second, func() {
					_, err := d.Screen(ctx, r.serial, 0)
					if !errorsIs(err, sdk.ErrDeviceOffline) {
						t.Errorf("a screen read with no adb server: %v; want ErrDeviceOffline", err)
					}
				})
				timed(t, "an action with no adb server", 2*time.Second, func() {
					_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}})
					if !errorsIs(err, sdk.ErrDeviceOffline) {
						t.Errorf("an action with no adb server: %v; want ErrDeviceOffline", err)
					}
				})
				r.adb(t, "start-server")
			} else {
				// The watch's retry starts it.
				deadline := time.Now().Add(15 * time.Second)
				for {
					if _, err := d.adb.Version(testkit.Context(t)); err == nil {
						break
					}
					if time.Now().After(deadline) {
						t.Fatal("the driver did not start an adb server")
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			r.adb(t, "connect", r.serial)
			w.wait(t, at+1, "online again", online(r.serial))
			if _, err := d.Screen(testkit.Context(t), r.serial, 0); err != nil {
				t.Errorf("a screen read once the phone is back: %v", err)
			}
			if _, err := d.Act(testkit.Context(t), r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
				t.Errorf("an action once the phone is back: %v", err)
			}
		})
	}
}

// TestFaultDeviceDropsMidAction: the phone's adb connection closes while a
// long action runs. The action's error must not say that it did not run
// (the gateway reports such errors as uncertain), it must come soon, and
// later calls say offline or not found.
func TestFaultDeviceDropsMidAction(t *testing.T) {
	tests := []struct {
		name string
		a    sdk.Action
	}{
		{"long press", sdk.Action{Kind: sdk.ActLongPress, Point: sdk.Point{X: 540, Y: 1200}, Duration: 4 * time.Second}},
		{"swipe", sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 1800}, To: sdk.Point{X: 540, Y: 600}, Duration: 4 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			d := r.driver(t)
			ctx := testkit.Context(t)
			// The scrcpy session starts with the first action, not this one.
			if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake}); err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(300 * time.Millisecond)
				r.face.Close()
			}()
			var err error
			timed(t, tt.name+" on a phone that drops", 3*time.Second, func() {
				_, err = d.Act(ctx, r.serial, tt.a)
			})
			if err == nil {
				t.Fatalf("%s on a phone that dropped: no error", tt.name)
			}
			if definite(err) {
				t.Errorf("%s on a phone that dropped: %v; want an error that does not say it did not run", tt.name, err)
			}
			if !errorsIs(err, sdk.ErrDeviceOffline) {
				t.Errorf("%s on a phone that dropped: %v; want ErrDeviceOffline", tt.name, err)
			}
			for _, call := range []struct {
				name string
				f    func() error
			}{
				{"screen", func() error { _, err := d.Screen(ctx, r.serial, 0); return err }},
				{"tap", func() error {
					_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}})
					return err
				}},
			} {
				timed(t, call.name+" after the drop", 2*time.Second, func() {
					err := call.f()
					if !errorsIs(err, sdk.ErrDeviceOffline) && !errorsIs(err, sdk.ErrDeviceNotFound) {
						t.Errorf("%s after the drop: %v; want ErrDeviceOffline or ErrDeviceNotFound", call.name, err)
					}
				})
			}
		})
	}
}

// definite is the gateway's list of driver errors that say an action did
// not run (gateway/agent: definite).
func definite(err error) bool {
	for _, e := range []error{sdk.ErrInvalidArgument, sdk.ErrDeviceNotFound, sdk.ErrUnsupported, sdk.ErrLocked, sdk.ErrScreenOff, sdk.ErrAppNotFound, sdk.ErrWrongPIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// killable wraps the adb face's app_process so that a test can end the
// scrcpy servers it runs, as if they crashed.
type killable struct {
	mu     sync.Mutex
	starts int
	runs   map[*int]func() // the running servers' cancel and wait
}

func (k *killable) option() func(*adbd.Config) {
	return func(cfg *adbd.Config) {
		inner := cfg.AppProcess
		k.runs = map[*int]func(){}
		cfg.AppProcess = func(ctx context.Context, args []string, stdout, stderr io.Writer, dev *adbd.Device) error {
			ctx, cancel := context.WithCancel(ctx)
			ended := make(chan struct{})
			key := new(int)
			k.mu.Lock()
			k.starts++
			k.runs[key] = func() { cancel(); <-ended }
			k.mu.Unlock()
			defer func() {
				k.mu.Lock()
				delete(k.runs, key)
				k.mu.Unlock()
				close(ended)
			}()
			return inner(ctx, args, stdout, stderr, dev)
		}
	}
}

// kill ends every running server and waits for them.
func (k *killable) kill() int {
	k.mu.Lock()
	var runs []func()
	for _, f := range k.runs {
		runs = append(runs, f)
	}
	k.mu.Unlock()
	for _, f := range runs {
		f()
	}
	return len(runs)
}

func (k *killable) started() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.starts
}

// TestFaultScrcpyServerDies: the scrcpy server on the phone ends between
// two actions; the next action starts it again and lands. A stream running
// when it ends returns an error of the contract.
func TestFaultScrcpyServerDies(t *testing.T) {
	k := &killable{}
	r := newRig(t, k.option())
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Fatal(err)
	}
	if k.started() != 1 {
		t.Fatalf("%d scrcpy servers started; want 1", k.started())
	}
	if n := k.kill(); n != 1 {
		t.Fatalf("killed %d scrcpy servers; want 1", n)
	}
	// A write to a socket whose peer closed succeeds once: a tap sent in
	// the moment before adb tells the driver would be lost without an
	// error, which no client of a write-only control socket can see. The
	// phone side's kill has returned; give adb that moment.
	waitDead(t, d, r.serial)
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "Settings")}); err != nil {
		t.Fatalf("a tap after the scrcpy server died: %v; want it started again", err)
	}
	waitApp(t, r.sim, "com.android.settings")
	if k.started() != 2 {
		t.Errorf("%d scrcpy servers started; want 2", k.started())
	}

	// A stream, and the server dying under it.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got := make(chan struct{}, 1)
	ended := make(chan error, 1)
	go func() {
		ended <- d.StreamVideo(sctx, sdk.VideoRequest{DeviceID: r.serial, MaxSide: 640}, func(sdk.VideoPacket) error {
			select {
			case got <- struct{}{}:
			default:
			}
			return nil
		})
	}()
	select {
	case <-got:
	case err := <-ended:
		t.Fatalf("the stream ended before its first packet: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no video packet")
	}
	k.kill()
	select {
	case err := <-ended:
		if !errorsIs(err, sdk.ErrDeviceOffline) || !strings.Contains(err.Error(), "scrcpy") {
			t.Errorf("a stream whose server died: %v; want ErrDeviceOffline naming scrcpy", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end when its scrcpy server died")
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Errorf("an action after the stream's server died: %v", err)
	}
}

// waitDead waits until the driver sees the phone's scrcpy session ended.
func waitDead(t *testing.T, d *Driver, serial string) {
	t.Helper()
	p, _ := d.known(serial)
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.ctlMu.Lock()
		dead := p.ctl == nil || !p.ctl.alive()
		p.ctlMu.Unlock()
		if dead {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the driver does not see the scrcpy server dead")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFaultGarbage: the phone's commands answer what the driver cannot
// read. Each call fails with a clear error, or reads what it can, in time.
func TestFaultGarbage(t *testing.T) {
	garbage := func(out string) func(context.Context, []string, io.Reader, io.Writer, io.Writer) int {
		return func(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) int {
			io.WriteString(stdout, out)
			return 0
		}
	}
	cut := func(out string) func(context.Context, []string, io.Reader, io.Writer, io.Writer) int {
		return func(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) int {
			io.WriteString(stdout, out)
			return adbd.CutStream
		}
	}
	tests := []struct {
		name     string
		commands map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int
		call     func(ctx context.Context, d *Driver, serial string) error
		want     *sdk.Error // nil: no error
		says     string     // in the error
	}{
		{
			name:     "dump not XML",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"uiautomator": garbage("\x00\x17garbage <<<\nnot a dump at all\n")},
			call:     screenCall,
			want:     sdk.ErrInternal, says: "uiautomator",
		},
		{
			name:     "dump cut in the middle",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"uiautomator": garbage(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" bounds="[0,0][1080,2400]"><node`)},
			call:     screenCall,
			want:     sdk.ErrInternal,
		},
		{
			name:     "dumpsys says nothing",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"dumpsys": garbage("Can't find service: window\n")},
			call: func(ctx context.Context, d *Driver, serial string) error {
				sc, err := d.Screen(ctx, serial, 0)
				if err == nil && (sc.LockState != sdk.LockUnknown || sc.App.ID != "") {
					return errors.New("dumpsys said nothing, yet the screen has a lock state or an app")
				}
				return err
			},
		},
		{
			name:     "dumpsys says nothing to unlock",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"dumpsys": garbage("Can't find service: window\n")},
			call:     func(ctx context.Context, d *Driver, serial string) error { return d.Unlock(ctx, serial, "1234") },
			want:     sdk.ErrInternal, says: "dumpsys",
		},
		{
			name:     "wm size says nothing",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"wm": garbage("size: unknown\n")},
			call:     tapCall,
			want:     sdk.ErrInternal, says: "wm size",
		},
		{
			name:     "shell stream cut short",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"dumpsys": cut("WINDOW MANAGER WIN")},
			call:     screenCall,
			want:     sdk.ErrInternal,
		},
		{
			name:     "dump stream cut short",
			commands: map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"uiautomator": cut(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node`)},
			call:     screenCall,
			want:     sdk.ErrInternal,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(cfg *adbd.Config) { cfg.Commands = tt.commands })
			d := r.driver(t)
			var err error
			timed(t, tt.name, 5*time.Second, func() { err = tt.call(testkit.Context(t), d, r.serial) })
			switch {
			case tt.want == nil && err != nil:
				t.Errorf("got %v; want no error", err)
			case tt.want != nil && !errorsIs(err, tt.want):
				t.Errorf("got %v; want %v", err, tt.want)
			case tt.want != nil && !strings.Contains(err.Error(), tt.says):
				t.Errorf("got %v; want it to say %q", err, tt.says)
			}
		})
	}
}

func screenCall(ctx context.Context, d *Driver, serial string) error {
	_, err := d.Screen(ctx, serial, 0)
	return err
}

func tapCall(ctx context.Context, d *Driver, serial string) error {
	_, err := d.Act(ctx, serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}})
	return err
}

// TestFaultUnauthorized: a phone that has not accepted this computer's key
// is listed as unauthorized, and calls tell the person what to do.
func TestFaultUnauthorized(t *testing.T) {
	r := newRig(t, func(cfg *adbd.Config) { cfg.Unauthorized = true })
	d, err := New(Config{ADB: adb.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.adbPort), NoStart: true}, Scrcpy: r.scrcpy})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	w := watch(t, d)
	w.wait(t, 0, "unauthorized", func(ev sdk.DeviceEvent) bool {
		return ev.Device.ID == r.serial && ev.Device.State == sdk.StateUnauthorized && strings.Contains(ev.Device.StateDetail, "Allow USB debugging")
	})
	ctx := testkit.Context(t)
	for _, call := range []struct {
		name string
		f    func() error
	}{
		{"screen", func() error { _, err := d.Screen(ctx, r.serial, 0); return err }},
		{"tap", func() error {
			_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}})
			return err
		}},
		{"unlock", func() error { return d.Unlock(ctx, r.serial, "1234") }},
	} {
		err := call.f()
		if !errorsIs(err, sdk.ErrDeviceUnauthorized) || !strings.Contains(err.Error(), "accept") || !strings.Contains(err.Error(), "on the phone") {
			t.Errorf("%s on an unauthorized phone: %v; want ErrDeviceUnauthorized telling to accept the prompt on the phone", call.name, err)
		}
	}
}
