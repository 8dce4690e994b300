package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
)

// newWorldFixture is newFixture over the default world changed by edit.
func newWorldFixture(t *testing.T, cfg Config, edit func(*sim.World)) *fixture {
	t.Helper()
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	edit(w)
	d := sim.New(w)
	t.Cleanup(func() { d.Close() })
	drv := &simDrivers{d: d, online: map[string]bool{"sim-android-1": true, "sim-ios-1": true}, events: make(chan driverhost.Event, 16)}
	f := &fixture{drv: drv, store: history.NewMemory()}
	cfg.Drivers, cfg.Store = f.drv, f.store
	f.m = NewManager(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.m.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// setPIN sets a sim phone's PIN.
func setPIN(device, pin string) func(*sim.World) {
	return func(w *sim.World) {
		for _, p := range w.Phones {
			if p.ID == device {
				p.PIN = pin
			}
		}
	}
}

// counting wraps the sim driver and counts wakes and unlocks. With caps
// set, its Info declares them; with unlockNoop, Unlock answers nil without
// unlocking.
type counting struct {
	*sim.Driver
	wakes, unlocks atomic.Int32
	caps           []sdk.Capability
	unlockNoop     bool
}

func (c *counting) Info(ctx context.Context) (sdk.Info, error) {
	info, err := c.Driver.Info(ctx)
	info.Capabilities = c.caps
	return info, err
}

func (c *counting) Wake(ctx context.Context, id string) error {
	c.wakes.Add(1)
	return c.Driver.Wake(ctx, id)
}

func (c *counting) Unlock(ctx context.Context, id, pin string) error {
	c.unlocks.Add(1)
	if c.unlockNoop {
		return nil
	}
	return c.Driver.Unlock(ctx, id, pin)
}

func (f *fixture) count(caps ...sdk.Capability) *counting {
	c := &counting{Driver: f.drv.d, caps: caps}
	f.drv.wrap = func(sdk.Driver) sdk.Driver { return c }
	return c
}

func power(t *testing.T, f *fixture, device string) {
	t.Helper()
	if _, err := f.drv.d.Act(context.Background(), device, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyPower}); err != nil {
		t.Fatal(err)
	}
}

func screenOn(t *testing.T, f *fixture, device string) bool {
	t.Helper()
	sc, err := f.drv.d.Screen(context.Background(), device, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sc.ScreenOn
}

func TestObserveWakesThePhone(t *testing.T) {
	f := newFixture(t, Config{WakeEvery: time.Nanosecond})
	s := f.session(t, "Claude Code")
	ctx := context.Background()
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "read"}); err != nil {
		t.Fatal(err)
	}
	power(t, f, "sim-android-1")
	if screenOn(t, f, "sim-android-1") {
		t.Fatal("the power key did not turn the screen off")
	}
	obs, err := s.Observe(ctx, "sim-android-1", true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !screenOn(t, f, "sim-android-1") || !obs.Locked || !strings.Contains(obs.Text, `button "OK"`) {
		t.Errorf("observe after the screen went off: got %+v; want the screen on, showing the lock screen", obs)
	}
}

func TestWakeIsRateLimited(t *testing.T) {
	f := newFixture(t, Config{})
	c := f.count(sdk.CapWake, sdk.CapUnlock)
	s := f.session(t, "Claude Code")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "read"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
			t.Fatal(err)
		}
	}
	if got := c.wakes.Load(); got != 1 {
		t.Fatalf("connect and three observes within 5 s: got %d wakes; want 1", got)
	}
	// Five seconds later, the next read wakes it again; so does an action.
	backdate := func() {
		p := f.m.phone("sim-android-1")
		f.m.mu.Lock()
		p.lastWake = p.lastWake.Add(-6 * time.Second)
		f.m.mu.Unlock()
	}
	backdate()
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatal(err)
	}
	if got := c.wakes.Load(); got != 2 {
		t.Fatalf("observe 6 s later: got %d wakes; want 2", got)
	}
	backdate()
	_, err := s.Act(ctx, "sim-android-1", Action{Kind: "key", Key: "back"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.wakes.Load(); got != 3 {
		t.Fatalf("act 6 s later: got %d wakes; want 3", got)
	}
}

// A driver that implements Wake but does not declare CapWake is not woken.
func TestNoWakeWithoutTheCapability(t *testing.T) {
	f := newFixture(t, Config{WakeEvery: time.Nanosecond})
	c := f.count(sdk.CapInput)
	s := f.session(t, "Claude Code")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "read"}); err != nil {
		t.Fatal(err)
	}
	power(t, f, "sim-android-1")
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatal(err)
	}
	if c.wakes.Load() != 0 || screenOn(t, f, "sim-android-1") {
		t.Errorf("got %d wakes, screen on %v; want none, off", c.wakes.Load(), screenOn(t, f, "sim-android-1"))
	}
}

// fakePINs is a PIN source in memory.
type fakePINs struct {
	mu   sync.Mutex
	pins map[string]string
}

func (f *fakePINs) PIN(device string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pins[device]
	return p, ok, nil
}

func (f *fakePINs) set(device, pin string) {
	f.mu.Lock()
	f.pins[device] = pin
	f.mu.Unlock()
}

// syncBuffer is a bytes.Buffer for a logger used from several goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

func captureLog() (*syncBuffer, *slog.Logger) {
	buf := &syncBuffer{}
	return buf, slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// noSecret fails when secret shows in any history row or log line.
func noSecret(t *testing.T, f *fixture, log *syncBuffer, secret string) {
	t.Helper()
	ctx := context.Background()
	tasks, err := f.store.Tasks(ctx, history.TaskFilter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, ts := range tasks {
		sum, steps, err := f.store.Task(ctx, ts.ID)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(struct {
			Sum   history.TaskSummary
			Steps []history.Step
		}{sum, steps})
		if strings.Contains(string(b), secret) {
			t.Errorf("the PIN is in the history: %s", b)
		}
		rows += 1 + len(steps)
	}
	if rows == 0 {
		t.Fatal("no history rows to search")
	}
	if strings.Contains(log.String(), secret) {
		t.Errorf("the PIN is in the log:\n%s", log)
	}
}

func tapMessages(s *Session) (*Observation, error) {
	return s.Act(context.Background(), "sim-android-1", Action{Kind: "tap", Target: Target{Text: "Messages"}}, nil)
}

func TestAutoUnlockOffByDefault(t *testing.T) {
	f := newFixture(t, Config{})
	c := f.count(sdk.CapWake, sdk.CapUnlock)
	s := f.session(t, "Claude Code")
	if _, err := s.Connect(context.Background(), ConnectRequest{Device: "sim-android-1", Task: "read"}); err != nil {
		t.Fatal(err)
	}
	_, err := tapMessages(s)
	wantCode(t, "tap on a locked phone without automatic unlock", err, CodeDeviceLocked)
	if c.unlocks.Load() != 0 {
		t.Errorf("got %d unlocks; want none", c.unlocks.Load())
	}
}

func TestAutoUnlockOncePerLock(t *testing.T) {
	const secret = "482916"
	buf, log := captureLog()
	pins := &fakePINs{pins: map[string]string{"sim-android-1": secret}}
	f := newWorldFixture(t, Config{PINs: pins, Logger: log}, setPIN("sim-android-1", secret))
	c := f.count(sdk.CapWake, sdk.CapUnlock)
	s := f.session(t, "Claude Code")
	ctx := context.Background()
	obs, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "open Messages"})
	if err != nil || !obs.Locked {
		t.Fatalf("connect: got %+v, %v; want the lock screen", obs, err)
	}
	obs, err = tapMessages(s)
	if err != nil || obs.Locked || obs.App != "Messages" {
		t.Fatalf("tap Messages on the locked phone: got %+v, %v; want it unlocked and Messages open", obs, err)
	}
	if got := c.unlocks.Load(); got != 1 {
		t.Fatalf("got %d unlocks; want 1", got)
	}
	// A new lock (the phone was seen unlocked since) is unlocked again.
	power(t, f, "sim-android-1")
	power(t, f, "sim-android-1")
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "key", Key: "home"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatal(err)
	}
	if _, err := tapMessages(s); err != nil {
		t.Fatalf("tap after a new lock: %v", err)
	}
	if got := c.unlocks.Load(); got != 2 {
		t.Fatalf("after a new lock: got %d unlocks; want 2", got)
	}
	if l := buf.String(); strings.Count(l, `msg=unlocked`) != 2 {
		t.Errorf("want two \"unlocked\" log lines; got:\n%s", l)
	}
	noSecret(t, f, buf, secret)
}

// A driver that answered but left the phone locked is not asked again on
// the same lock.
func TestAutoUnlockAtMostOncePerLock(t *testing.T) {
	pins := &fakePINs{pins: map[string]string{"sim-android-1": "1234"}}
	f := newFixture(t, Config{PINs: pins})
	c := f.count(sdk.CapWake, sdk.CapUnlock)
	c.unlockNoop = true
	s := f.session(t, "Claude Code")
	if _, err := s.Connect(context.Background(), ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_, err := tapMessages(s)
		wantCode(t, "tap on a phone that stayed locked", err, CodeDeviceLocked)
		if got := c.unlocks.Load(); got != 1 {
			t.Fatalf("tap %d: got %d unlocks; want 1", i+1, got)
		}
	}
}

// Without CapUnlock nothing is tried.
func TestAutoUnlockNeedsTheCapability(t *testing.T) {
	pins := &fakePINs{pins: map[string]string{"sim-android-1": "1234"}}
	f := newFixture(t, Config{PINs: pins})
	c := f.count(sdk.CapWake)
	s := f.session(t, "Claude Code")
	if _, err := s.Connect(context.Background(), ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err := tapMessages(s)
	wantCode(t, "tap without CapUnlock", err, CodeDeviceLocked)
	if c.unlocks.Load() != 0 {
		t.Errorf("got %d unlocks; want none", c.unlocks.Load())
	}
}

func TestAutoUnlockWrongPINNotRetried(t *testing.T) {
	const wrong = "97531"
	buf, log := captureLog()
	pins := &fakePINs{pins: map[string]string{"sim-android-1": wrong}}
	f := newFixture(t, Config{PINs: pins, Logger: log})
	c := f.count(sdk.CapWake, sdk.CapUnlock)
	s := f.session(t, "Claude Code")
	ctx := context.Background()
	if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err := tapMessages(s)
	e := wantCode(t, "tap with a wrong saved PIN", err, CodeDeviceLocked)
	if !strings.Contains(e.Error(), "refused") || !strings.Contains(e.Error(), "pinky pin set sim-android-1") {
		t.Errorf("got %q; want it to say the saved PIN was refused and to run pinky pin set", e)
	}
	_, err = tapMessages(s)
	wantCode(t, "tap again", err, CodeDeviceLocked)
	if got := c.unlocks.Load(); got != 1 {
		t.Fatalf("got %d unlocks; want 1: a wrong PIN is never retried", got)
	}
	// Not on a new lock either, while the saved PIN is the same.
	if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Observe(ctx, "sim-android-1", false, false); err != nil {
		t.Fatal(err)
	}
	power(t, f, "sim-android-1")
	power(t, f, "sim-android-1")
	if obs, err := s.Observe(ctx, "sim-android-1", false, false); err != nil || !obs.Locked {
		t.Fatalf("observe the new lock: got %+v, %v", obs, err)
	}
	_, err = tapMessages(s)
	if e := wantCode(t, "tap on a new lock with the refused PIN", err, CodeDeviceLocked); !strings.Contains(e.Error(), "refused") {
		t.Errorf("got %q; want it to say the saved PIN was refused", e)
	}
	if got := c.unlocks.Load(); got != 1 {
		t.Fatalf("new lock: got %d unlocks; want still 1", got)
	}
	// Once the person saves the right PIN, it is used.
	pins.set("sim-android-1", "1234")
	if obs, err := tapMessages(s); err != nil || obs.Locked {
		t.Fatalf("tap after pinky pin set: got %+v, %v; want unlocked", obs, err)
	}
	if got := c.unlocks.Load(); got != 2 {
		t.Fatalf("got %d unlocks; want 2", got)
	}
	l := buf.String()
	if !strings.Contains(l, `msg="unlock failed"`) || !strings.Contains(l, "msg=unlocked") {
		t.Errorf("want an \"unlock failed\" and an \"unlocked\" line; got:\n%s", l)
	}
	noSecret(t, f, buf, wrong)
}

// framer is a driver that declares frame capture: its frames are 90x160
// JPEGs, or fail when broken.
type framer struct {
	sdk.Driver
	broken bool
	calls  *atomic.Int32
}

func (f framer) Info(ctx context.Context) (sdk.Info, error) {
	info, err := f.Driver.Info(ctx)
	info.Capabilities = append(sdk.Capabilities(f.Driver), sdk.CapFrameCapture)
	return info, err
}

func (f framer) CaptureFrame(_ context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	f.calls.Add(1)
	if f.broken {
		return nil, sdk.Errorf(sdk.ErrUnsupported, "no broadcast runs")
	}
	var buf bytes.Buffer
	jpeg.Encode(&buf, image.NewGray(image.Rect(0, 0, 90, 160)), nil)
	return &sdk.Image{Format: sdk.FormatJPEG, Width: 90, Height: 160, Data: buf.Bytes()}, nil
}

func TestStillsPreferFrameCapture(t *testing.T) {
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("broken=%v", broken), func(t *testing.T) {
			f := newFixture(t, Config{})
			var calls atomic.Int32
			f.drv.wrap = func(d sdk.Driver) sdk.Driver { return framer{Driver: d, broken: broken, calls: &calls} }
			s := f.connected(t)
			obs, err := s.Observe(context.Background(), "sim-android-1", false, true)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := jpeg.DecodeConfig(bytes.NewReader(obs.Screenshot))
			if err != nil {
				t.Fatalf("screenshot: %v", err)
			}
			if calls.Load() == 0 {
				t.Error("the driver declares frame capture, but the gateway never asked for a frame")
			}
			fromFrame := cfg.Width == 90 && cfg.Height == 160
			if fromFrame == broken {
				t.Errorf("screenshot %dx%d: from the frame = %v; want %v (frame capture broken: %v)", cfg.Width, cfg.Height, fromFrame, !broken, broken)
			}
		})
	}
}
