package ios

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/jpeg"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// The end-to-end tests drive the virtual iPhone exactly as a real one: this
// driver → HTTP → the virtual phone's WebDriverAgent face, and the phone's
// broadcast → TCP → this driver's video receiver.

const phoneID = "ios-sim"

// rig is a virtual iPhone with its WDA face and, optionally, its broadcast.
type rig struct {
	sim    *sim.Driver
	face   *wdad.Server
	src    *video.Source
	start  func() // starts the broadcast (newRig does, unless late)
	stop   func() // ends the broadcast, and waits until its source has stopped
	secret []byte
	path   string // ios.yaml
	phone  config.Phone
	logs   testkit.Buffer // the driver's log
	stock  bool           // the driver leaves WDA's settings alone (Config.StockWDA)
}

type rigOpt struct {
	video     bool
	badSecret bool // the driver's list has another secret than the phone
	late      bool // the broadcast waits for rig.start
	timing    timing.Profile
	stock     bool // Config.StockWDA
}

func newRig(t testing.TB, o rigOpt) *rig {
	t.Helper()
	r := &rig{sim: simtest.New(t), path: filepath.Join(t.TempDir(), config.FileName), stock: o.stock}
	var err error
	r.face, err = wdad.Listen("127.0.0.1:0", wdad.Config{Driver: r.sim, DeviceID: "sim-ios-1", MJPEG: true, Timing: o.timing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.face.Close() })
	r.phone = config.Phone{ID: phoneID, Name: "Virtual iPhone", WDA: "http://" + r.face.Addr().String(), MJPEG: r.face.MJPEGAddr().String(),
		Apps: []config.App{{ID: "com.pinky.sim.shop", Label: "Shop"}}}
	if o.video {
		r.secret, _ = video.NewSecret()
		r.src, r.start, r.stop = r.broadcast(t, wdad.BroadcastConfig{Secret: r.secret, Listen: "127.0.0.1:0"})
		if !o.late {
			r.start()
		}
		secret := r.secret
		if o.badSecret {
			secret, _ = video.NewSecret()
		}
		r.phone.Video = &config.Video{Dial: r.src.Addr().String(), Secret: video.FormatSecret(secret)}
	}
	r.save(t, r.phone)
	return r
}

// broadcast makes the virtual iPhone's broadcast for the phone (bc's
// DeviceID is the rig's). start runs it; stop ends it and waits until its
// stream has ended (the virtual phone streams a display once at a time, so
// a next broadcast must wait); the test's end stops it too.
func (r *rig) broadcast(t testing.TB, bc wdad.BroadcastConfig) (src *video.Source, start, stop func()) {
	t.Helper()
	bc.DeviceID = phoneID
	src, err := wdad.Broadcast(r.sim, "sim-ios-1", bc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var started sync.Once
	start = func() { started.Do(func() { go func() { src.Run(ctx); close(done) }() }) }
	stop = func() {
		cancel()
		started.Do(func() { close(done) }) // never started: nothing to wait for
		<-done
	}
	t.Cleanup(stop)
	return src, start, stop
}

// unlocked returns a driver of the rig's list, with the phone unlocked.
func (r *rig) unlocked(t testing.TB) *Driver {
	t.Helper()
	d := r.driver(t)
	if err := d.Unlock(context.Background(), phoneID, "1234"); err != nil {
		t.Fatal(err)
	}
	return d
}

// save writes the phone list.
func (r *rig) save(t testing.TB, phones ...config.Phone) {
	t.Helper()
	if err := config.Save(r.path, &config.File{Phones: phones}); err != nil {
		t.Fatal(err)
	}
}

// driver returns a driver of the rig's list, once it lists the phone online.
func (r *rig) driver(t testing.TB) *Driver {
	t.Helper()
	// Short deadlines so a fault shows quickly, longer under the race
	// detector: the virtual phone's screenshot (a PNG of 1170x2532) is
	// slow to encode there, and the conformance suite reads it from
	// several calls at once.
	d, err := New(Config{Path: r.path, Poll: 100 * time.Millisecond, Timeout: testkit.Scaled(3 * time.Second), SlowTimeout: testkit.Scaled(3 * time.Second),
		StockWDA: r.stock, Logger: r.logs.Logger()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	testkit.WaitUntil(t, "the driver lists the phone online", func() bool {
		_, err := d.phone(phoneID)
		return err == nil
	})
	return d
}

// TestConformance runs the driver conformance suite on the virtual iPhone
// through its WDA face and broadcast. TestConformanceWithoutBroadcast
// (caps_test.go) runs it on a phone without one.
func TestConformance(t *testing.T) {
	r := newRig(t, rigOpt{video: true})
	d := r.driver(t)
	// Frame capture is the phone's once its broadcast connects: the suite
	// checks every capability it serves.
	testkit.WaitUntil(t, "the phone serves frame capture", func() bool {
		p, err := d.phone(phoneID)
		return err == nil && p.device().Serves(sdk.CapFrameCapture, d.caps)
	})
	drivertest.Run(t, drivertest.Config{Driver: d, Options: drivertest.Options{DeviceID: phoneID, PIN: "1234", SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

func waitApp(t testing.TB, s *sim.Driver, app string) {
	t.Helper()
	testkit.WaitUntil(t, "the virtual iPhone shows "+app, func() bool {
		sc, err := s.Screen(context.Background(), "sim-ios-1", 0)
		return err == nil && sc.App.ID == app
	})
}

// TestReadUnlockTapType: the screen in pixels with its app and lock state,
// the passcode pad, taps, typing any text, swipes, keys and apps.
func TestReadUnlockTapType(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.driver(t)
	ctx := context.Background()
	sc, err := d.Screen(ctx, phoneID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if sc.LockState != sdk.LockLocked {
		t.Errorf("the virtual iPhone starts locked; the driver says %q", sc.LockState)
	}
	if err := d.Unlock(ctx, phoneID, "0000"); sdk.Category(err) != sdk.ErrWrongPIN {
		t.Errorf("a wrong PIN: %v; want ErrWrongPIN", err)
	}
	if err := d.Unlock(ctx, phoneID, "1234"); err != nil {
		t.Fatalf("unlock: %v", err)
	}
	sc, err = d.Screen(ctx, phoneID, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := r.sim.Screen(ctx, "sim-ios-1", 0)
	if sc.LockState != sdk.LockUnlocked || sc.Width != want.Width || sc.Height != want.Height {
		t.Errorf("read: lock %q, %dx%d; want unlocked %dx%d (pixels)", sc.LockState, sc.Width, sc.Height, want.Width, want.Height)
	}
	for _, e := range sc.Elements {
		b := e.Bounds
		if b.Left < 0 || b.Top < 0 || b.Right > sc.Width || b.Bottom > sc.Height {
			t.Errorf("element %q at %+v is off the %dx%d screen", e.Text, b, sc.Width, sc.Height)
		}
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "Messages")}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.apple.MobileSMS")
	sc, _ = d.Screen(ctx, phoneID, 0)
	if sc.App.ID != "com.apple.MobileSMS" {
		t.Errorf("app in front %q; want com.apple.MobileSMS", sc.App.ID)
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "Ben Okafor")}); err != nil {
		t.Fatal(err)
	}
	sc, _ = d.Screen(ctx, phoneID, 0)
	var field sdk.Point
	for _, e := range sc.Elements {
		if e.Editable {
			field = sdk.Point{X: (e.Bounds.Left + e.Bounds.Right) / 2, Y: (e.Bounds.Top + e.Bounds.Bottom) / 2}
		}
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActTap, Point: field}); err != nil {
		t.Fatal(err)
	}
	const typed = "Grüße aus Köln 🙂 日本"
	for _, replace := range []bool{false, true} { // typed twice: replace must not double it
		if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActType, Text: typed, Replace: replace}); err != nil {
			t.Fatal(err)
		}
	}
	sc, _ = d.Screen(ctx, phoneID, 0)
	var got string
	for _, e := range sc.Elements {
		if e.Editable && e.Focused {
			got = e.Text
		}
	}
	if got != typed {
		t.Errorf("the field holds %q; want %q", got, typed)
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}); sdk.Category(err) != sdk.ErrUnsupported {
		t.Errorf("back key: %v; want ErrUnsupported (an iPhone has none)", err)
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.pinky.sim.shop")
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.example.none"}); sdk.Category(err) != sdk.ErrAppNotFound {
		t.Errorf("launch of an app that is not installed: %v; want ErrAppNotFound", err)
	}
	apps, err := d.ListApps(ctx, phoneID)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{}
	for _, a := range apps {
		labels[a.ID] = a.Label
	}
	if labels["com.pinky.sim.shop"] != "Shop" || labels["com.apple.MobileSMS"] != "Messages" {
		t.Errorf("apps: %v; want the listed Shop and the built-in Messages", labels)
	}
}

// TestSwipeScrolls: a swipe through W3C actions scrolls a long list.
func TestSwipeScrolls(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.unlocked(t)
	ctx := context.Background()
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.apple.Preferences"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.apple.Preferences")
	before, _ := d.Screen(ctx, phoneID, 0)
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown}); err != nil {
		t.Fatal(err)
	}
	after, _ := d.Screen(ctx, phoneID, 0)
	if texts(before) == texts(after) {
		t.Errorf("a scroll down changed nothing:\n%s", texts(after))
	}
}

func texts(sc *sdk.Screen) string {
	var b strings.Builder
	for _, e := range sc.Elements {
		if e.Text != "" {
			b.WriteString(e.Text + "|")
		}
	}
	return b.String()
}

// TestVideoAndStills: the broadcast's H.264 reaches StreamVideo with a
// config first, and screenshots come from its stills; once the person stops
// the broadcast, screenshots come from WDA again.
func TestVideoAndStills(t *testing.T) {
	r := newRig(t, rigOpt{video: true})
	d := r.driver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, _ := d.phone(phoneID)
	testkit.WaitUntil(t, "the broadcast is live", p.rx.Live)
	var mu sync.Mutex
	var got []sdk.VideoPacket
	done := make(chan error, 1)
	go func() {
		done <- d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: phoneID}, func(pk sdk.VideoPacket) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, pk)
			return nil
		})
	}()
	testkit.WaitUntil(t, "a config and a key frame arrive", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= 2 && got[0].Config && got[1].KeyFrame
	})
	mu.Lock()
	if got[0].Codec != sdk.CodecH264 || got[0].Width == 0 {
		t.Errorf("config: %+v; want h264 with a size", got[0])
	}
	mu.Unlock()
	img, err := d.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: phoneID, MaxSide: 400})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := jpeg.DecodeConfig(bytes.NewReader(img.Data)); err != nil || max(c.Width, c.Height) != 400 {
		t.Errorf("frame: %v %+v; want a JPEG 400 px on its longer side", err, c)
	}
	r.src.Stop("the person stopped the broadcast")
	testkit.WaitUntil(t, "the broadcast ends", func() bool { return !p.rx.Live() })
	if _, err := d.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: phoneID}); sdk.Category(err) != sdk.ErrUnsupported {
		t.Errorf("frame capture without a broadcast: %v; want ErrUnsupported", err)
	}
	shot, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: phoneID, Format: sdk.FormatJPEG})
	if err != nil {
		t.Fatalf("screenshot without a broadcast (from WDA's MJPEG): %v", err)
	}
	want, _ := r.sim.Screen(ctx, "sim-ios-1", 0)
	if shot.Width != want.Width || shot.Height != want.Height {
		t.Errorf("screenshot %dx%d; want the phone's %dx%d", shot.Width, shot.Height, want.Width, want.Height)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("StreamVideo: %v; want nil once its context ends", err)
	}
}

// TestWrongPairingSecret: a broadcast with another secret never reaches
// the video, and the phone works without it.
func TestWrongPairingSecret(t *testing.T) {
	r := newRig(t, rigOpt{video: true, badSecret: true})
	d := r.driver(t)
	p, _ := d.phone(phoneID)
	testkit.WaitUntil(t, "the receiver refuses the broadcast", func() bool { return p.rx.Stats().AuthFailures > 0 })
	if p.rx.Live() {
		t.Error("a broadcast with a wrong secret is live")
	}
	if _, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: phoneID}); err != nil {
		t.Errorf("screenshot without video: %v", err)
	}
}

// TestWDARestart: WDA forgetting its sessions costs the driver nothing: the
// session is made again and the call goes through.
func TestWDARestart(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.unlocked(t)
	ctx := context.Background()
	sc, _ := d.Screen(ctx, phoneID, 0)
	r.face.Restart()
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, sc, "Mail")}); err != nil {
		t.Fatalf("tap after WDA restarted: %v", err)
	}
	waitApp(t, r.sim, "com.apple.mobilemail")
}

// TestHangingSource: a /source that never answers fails with ErrTimeout
// in time, and does not hold up another phone.
func TestHangingSource(t *testing.T) {
	r := newRig(t, rigOpt{})
	other, err := wdad.Listen("127.0.0.1:0", wdad.Config{Driver: r.sim, DeviceID: "sim-ios-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	second := config.Phone{ID: "ios-other", Name: "Other", WDA: "http://" + other.Addr().String(), MJPEG: "off"}
	r.save(t, r.phone, second)
	d, err := New(Config{Path: r.path, Poll: 100 * time.Millisecond, Timeout: time.Second, SlowTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	testkit.WaitUntil(t, "both phones online", func() bool {
		_, e1 := d.phone(phoneID)
		_, e2 := d.phone("ios-other")
		return e1 == nil && e2 == nil
	})
	r.face.HangSource(true)
	defer r.face.HangSource(false)
	ctx := context.Background()
	hung := make(chan error, 1)
	go func() { _, err := d.Screen(ctx, phoneID, 0); hung <- err }()
	if _, err := d.Screen(ctx, "ios-other", 0); err != nil {
		t.Errorf("the other phone's read while the first one hangs: %v", err)
	}
	if err := <-hung; sdk.Category(err) != sdk.ErrTimeout {
		t.Errorf("the hung read: %v; want ErrTimeout", err)
	}
}

// TestDevices: the list is watched: a phone added while the driver runs is
// listed, its WDA going away makes it offline and coming back online under
// the same id, and a phone removed from the list is removed.
func TestDevices(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.driver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan sdk.DeviceEvent, 64)
	go d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error { events <- ev; return nil })
	next := func(what string, match func(sdk.DeviceEvent) bool) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev := <-events:
				if match(ev) {
					return
				}
			case <-timeout:
				t.Fatalf("no event: %s", what)
			}
		}
	}
	next("the phone listed", func(ev sdk.DeviceEvent) bool { return ev.Kind == sdk.DeviceAdded && ev.Device.ID == phoneID })
	next("synced", func(ev sdk.DeviceEvent) bool { return ev.Kind == sdk.DevicesSynced })

	addr := r.face.Addr().String()
	r.face.Close()
	next("offline, saying why", func(ev sdk.DeviceEvent) bool {
		return ev.Device.ID == phoneID && ev.Device.State == sdk.StateOffline &&
			strings.Contains(ev.Device.StateDetail, "WebDriverAgent is not answering at "+r.phone.WDA)
	})
	if _, err := d.Screen(context.Background(), phoneID, 0); sdk.Category(err) != sdk.ErrDeviceOffline {
		t.Errorf("read while WDA is gone: %v; want ErrDeviceOffline", err)
	}
	face, err := wdad.Listen(addr, wdad.Config{Driver: r.sim, DeviceID: "sim-ios-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	next("online again, same id", func(ev sdk.DeviceEvent) bool {
		return ev.Device.ID == phoneID && ev.Device.State == sdk.StateOnline && ev.Device.StateDetail == ""
	})
	// pinky doctor reads both from the driver's log (SPEC.md §1.9).
	testkit.WaitUntil(t, "the WDA check passing again in the log", func() bool {
		return strings.Contains(r.logs.String(), `level=INFO msg="WebDriverAgent answers again" device=`+phoneID+` check="wda `+phoneID+`"`)
	})
	if logs := r.logs.String(); !strings.Contains(logs, `level=WARN msg="WebDriverAgent not answering`) || !strings.Contains(logs, `check="wda `+phoneID+`" fix="start WebDriverAgent`) {
		t.Errorf("no failing WDA check, with its fix, in the log:\n%s", logs)
	}

	other := config.Phone{ID: "ios-other", Name: "Other", WDA: "http://" + addr, MJPEG: "off"}
	r.save(t, r.phone, other)
	next("a phone added to the list", func(ev sdk.DeviceEvent) bool { return ev.Kind == sdk.DeviceAdded && ev.Device.ID == "ios-other" })
	r.save(t, other)
	next("a phone removed from the list", func(ev sdk.DeviceEvent) bool { return ev.Kind == sdk.DeviceRemoved && ev.Device.ID == phoneID })
	if _, err := d.Screen(context.Background(), phoneID, 0); sdk.Category(err) != sdk.ErrDeviceNotFound {
		t.Errorf("read of a removed phone: %v; want ErrDeviceNotFound", err)
	}
}

// TestMirrorInput: the person's finger on the mirror becomes a tap.
func TestMirrorInput(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.unlocked(t)
	ctx := context.Background()
	sc, _ := d.Screen(ctx, phoneID, 0)
	at := simtest.Center(t, sc, "Mail")
	evs := []sdk.InputEvent{
		{DeviceID: phoneID, Pointer: &sdk.PointerEvent{Action: sdk.PointerDown, Point: at}},
		{DeviceID: phoneID, Pointer: &sdk.PointerEvent{Action: sdk.PointerUp, Point: at}},
	}
	n, err := d.Input(ctx, func() (sdk.InputEvent, error) {
		if len(evs) == 0 {
			return sdk.InputEvent{}, io.EOF
		}
		ev := evs[0]
		evs = evs[1:]
		return ev, nil
	})
	if err != nil || n != 2 {
		t.Fatalf("input: %d, %v", n, err)
	}
	waitApp(t, r.sim, "com.apple.mobilemail")
}

// TestVideoReconnect: the broadcast's connection drops (the phone's
// extension restarts) and comes back on the same address: a running
// StreamVideo goes on, with a new config and a key frame.
func TestVideoReconnect(t *testing.T) {
	r := newRig(t, rigOpt{video: true})
	d := r.driver(t)
	p, _ := d.phone(phoneID)
	testkit.WaitUntil(t, "the broadcast is live", p.rx.Live)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	configs, keys := 0, 0
	go d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: phoneID}, func(pk sdk.VideoPacket) error {
		mu.Lock()
		defer mu.Unlock()
		if pk.Config {
			configs, keys = configs+1, 0 // keys counts the key frames since the last config
		} else if pk.KeyFrame && configs > 0 {
			keys++
		}
		return nil
	})
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return configs, keys }
	testkit.WaitUntil(t, "a config and a key frame", func() bool { c, k := counts(); return c >= 1 && k >= 1 })

	addr := r.src.Addr().String()
	r.stop() // the extension goes away
	testkit.WaitUntil(t, "the broadcast ends", func() bool { return !p.rx.Live() })
	c0, _ := counts()
	_, start, _ := r.broadcast(t, wdad.BroadcastConfig{Secret: r.secret, Listen: addr})
	start()
	testkit.WaitUntil(t, "the stream goes on with a new config and a key frame", func() bool {
		c, k := counts()
		return c > c0 && k >= 1
	})
}

// TestListReadableByOthers: a phone list with pairing secrets that others
// may read is not used (whoever read a secret can watch the phone's
// screen); once the person makes it private with chmod, the driver picks
// the phones up without another edit.
func TestListReadableByOthers(t *testing.T) {
	r := newRig(t, rigOpt{video: true})
	if err := os.Chmod(r.path, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Path: r.path, Poll: 50 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	time.Sleep(300 * time.Millisecond) // several polls
	if _, err := d.phone(phoneID); err == nil {
		t.Fatal("the driver uses a list of secrets that anyone may read")
	}
	if err := os.Chmod(r.path, 0o600); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the driver lists the phone after chmod 600", func() bool {
		_, err := d.phone(phoneID)
		return err == nil
	})
}

// TestListEditKeepsVideo: renaming a phone whose driver listens for its
// broadcast starts it again under the same id on the same address, and the
// phone's broadcast comes back to it.
func TestListEditKeepsVideo(t *testing.T) {
	r := newRig(t, rigOpt{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	secret, _ := video.NewSecret()
	r.phone.Video = &config.Video{Listen: addr, Secret: video.FormatSecret(secret)}
	r.save(t, r.phone)
	d := r.driver(t)
	_, start, _ := r.broadcast(t, wdad.BroadcastConfig{Secret: secret, Dial: addr})
	start()
	live := func() bool {
		p, err := d.phone(phoneID)
		return err == nil && p.rx.Live()
	}
	testkit.WaitUntil(t, "the broadcast reaches the driver", live)
	r.phone.Name = "Renamed iPhone"
	r.save(t, r.phone)
	testkit.WaitUntil(t, "the renamed phone's broadcast is back", func() bool {
		p, err := d.phone(phoneID)
		return err == nil && p.device().Name == "Renamed iPhone" && p.rx.Live()
	})
}

// TestVideoComesWithBroadcast: before the person starts the broadcast the
// phone does not serve video (a stream asked for answers UNSUPPORTED with
// the reason, and its device lists video missing); the broadcast's
// connection is a CHANGED event that adds video, and a stream asked for
// then gets a config and a key frame.
func TestVideoComesWithBroadcast(t *testing.T) {
	r := newRig(t, rigOpt{video: true, late: true})
	d := r.driver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	serves := func() bool {
		p, err := d.phone(phoneID)
		return err == nil && slices.Contains(p.device().Caps.Served, sdk.CapVideo)
	}
	if serves() {
		t.Fatal("the phone serves video before its broadcast connected")
	}
	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: phoneID}, func(sdk.VideoPacket) error { return nil })
	if sdk.Category(err) != sdk.ErrUnsupported || !strings.Contains(err.Error(), reasonNotConnected) {
		t.Fatalf("a stream before the broadcast: %v; want UNSUPPORTED saying %q", err, reasonNotConnected)
	}
	r.start()
	testkit.WaitUntil(t, "the phone serves video once its broadcast connects", serves)
	got := make(chan sdk.VideoPacket, 64)
	go d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: phoneID}, func(pk sdk.VideoPacket) error {
		select {
		case got <- pk:
		default:
		}
		return nil
	})
	timeout := time.After(10 * time.Second)
	var first []sdk.VideoPacket
	for len(first) < 2 {
		select {
		case pk := <-got:
			first = append(first, pk)
		case <-timeout:
			t.Fatalf("the broadcast runs, and the stream got %d packets", len(first))
		}
	}
	if !first[0].Config || !first[1].KeyFrame {
		t.Errorf("first packets: config %v, key frame %v; want a config, then a key frame", first[0].Config, first[1].KeyFrame)
	}
}

// TestPinchZooms: a pinch through WebDriverAgent's W3C actions, two
// touch pointers at once, zooms the Shop's photo on the virtual iPhone; a
// centre off the screen is refused before WDA sees it.
func TestPinchZooms(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.unlocked(t)
	ctx := context.Background()
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.pinky.sim.shop")
	sc, err := d.Screen(ctx, phoneID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var photo sdk.Element
	for _, e := range sc.Elements {
		if e.ContentDescription == "Wireless headphones photo" || e.Text == "Wireless headphones photo" {
			photo = e
		}
	}
	if photo.Bounds.Empty() {
		t.Fatalf("no photo on the Shop's screen:\n%s", texts(sc))
	}
	// The fingers are placed in pixels and sent in points, so the scale
	// the phone sees is within a few percent of the one asked for.
	for _, step := range []struct{ scale, want int }{{2000, 200}, {1500, 300}, {250, 100}} {
		if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActPinch, Point: photo.Bounds.Center(), Scale: step.scale, Duration: 200 * time.Millisecond}); err != nil {
			t.Fatalf("pinch %d‰: %v", step.scale, err)
		}
		after, err := d.Screen(ctx, phoneID, 0)
		if err != nil {
			t.Fatal(err)
		}
		var zoom int
		for _, e := range after.Elements {
			fmt.Sscanf(e.Text, "Zoom %d%%", &zoom)
		}
		if zoom < step.want*97/100 || zoom > step.want*103/100 {
			t.Errorf("after a pinch of %d‰: got zoom %d%% (%s); want about %d%%", step.scale, zoom, texts(after), step.want)
		}
	}
	if _, err := d.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: sc.Width, Y: 10}, Scale: 2000}); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("pinch off the screen: got %v; want ErrInvalidArgument", err)
	}
}
