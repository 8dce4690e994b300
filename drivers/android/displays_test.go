package android

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// The background-display tests go the real way too: this driver → Debian's
// adb server → the virtual phone's adb face, whose scrcpy server makes the
// display on the virtual phone (new_display) and whose uiautomator dumps
// every display's windows (Android 13's --windows).

const simPhone = "sim-android-1"

// packets collects a video stream.
type packets struct {
	mu   sync.Mutex
	list []sdk.VideoPacket
}

func (p *packets) add(pk sdk.VideoPacket) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, pk)
	return nil
}

func (p *packets) snapshot() []sdk.VideoPacket {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sdk.VideoPacket(nil), p.list...)
}

// TestBackgroundDisplay: an agent's task on a background display of the
// phone. The display is made, an app launched onto it, read, tapped and
// typed into while display 0 keeps showing what it showed; its video
// streams at its size; it is removed, from the phone too.
func TestBackgroundDisplay(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := r.sim.Unlock(ctx, simPhone, "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.sim.Act(ctx, simPhone, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		t.Fatal(err)
	}
	id, err := d.CreateDisplay(ctx, r.serial, 720, 1280, 320)
	if err != nil {
		t.Fatalf("CreateDisplay: %v", err)
	}
	if id <= 0 {
		t.Fatalf("CreateDisplay: display %d; want > 0", id)
	}
	// The virtual phone has it, as the scrcpy server made it.
	if sc, err := r.sim.Screen(ctx, simPhone, id); err != nil || sc.Width != 720 || sc.Height != 1280 || sc.DensityDPI != 320 {
		t.Fatalf("the virtual phone's display %d: %+v, %v; want 720x1280/320", id, sc, err)
	}
	read := func(display int) *sdk.Screen {
		t.Helper()
		sc, err := d.Screen(ctx, r.serial, display)
		if err != nil {
			t.Fatalf("Screen(%d): %v", display, err)
		}
		return sc
	}
	mainStill := func() {
		t.Helper()
		if got := read(0).App.ID; got != "com.android.settings" {
			t.Errorf("display 0 shows %q; want com.android.settings, as before the task", got)
		}
	}

	res, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep", DisplayID: id})
	if err != nil {
		t.Fatalf("launch onto display %d: %v", id, err)
	}
	t.Logf("launch: %s", res.Detail)
	testkit.WaitUntil(t, "Notes on the display", func() bool { return read(id).App.ID == "com.google.android.keep" })
	sc := read(id)
	if sc.Width != 720 || sc.Height != 1280 || sc.LockState != sdk.LockUnlocked || !sc.ScreenOn || sc.DensityDPI != 320 {
		t.Errorf("Screen(%d): %dx%d/%d, lock %q, on %v; want 720x1280/320, unlocked and on", id, sc.Width, sc.Height, sc.DensityDPI, sc.LockState, sc.ScreenOn)
	}
	want, _ := r.sim.Screen(ctx, simPhone, id)
	if got, wantN := len(sc.Elements), len(want.Elements); got != wantN {
		t.Errorf("Screen(%d): %d elements; the virtual phone shows %d", id, got, wantN)
	}
	for _, e := range sc.Elements {
		if e.Visible && (e.Bounds.Left < 0 || e.Bounds.Top < 0 || e.Bounds.Right > sc.Width || e.Bounds.Bottom > sc.Height) {
			t.Errorf("Screen(%d): element %q at %v; want it inside 720x1280", id, e.Text, e.Bounds)
		}
	}
	mainStill()

	tap := func(what string) {
		t.Helper()
		e, ok := simtest.Find(read(id), what)
		if !ok {
			t.Fatalf("no %q on display %d", what, id)
		}
		if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: e.Bounds.Center(), DisplayID: id}); err != nil {
			t.Fatalf("tap %q on display %d: %v", what, id, err)
		}
	}
	tap("new_note")
	testkit.WaitUntil(t, "the note field", func() bool { _, ok := simtest.Find(read(id), "edit_note_text"); return ok })
	tap("edit_note_text")
	testkit.WaitUntil(t, "the note field focused", func() bool { e, _ := simtest.Find(read(id), "edit_note_text"); return e.Focused })
	// Not ASCII: typed through the clipboard, on the display.
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActType, Text: "hello wörld ✓", DisplayID: id}); err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "the typed text", func() bool { e, _ := simtest.Find(read(id), "edit_note_text"); return e.Text == "hello wörld ✓" })
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack, DisplayID: id}); err != nil {
		t.Fatal(err)
	}
	mainStill()
	if got, _ := r.sim.Screen(ctx, simPhone, 0); got.App.ID != "com.android.settings" {
		t.Errorf("the virtual phone's own screen shows %q; want com.android.settings", got.App.ID)
	}

	t.Run("refusals", func(t *testing.T) {
		_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.example.nothing", DisplayID: id})
		if !errors.Is(err, sdk.ErrAppNotFound) {
			t.Errorf("launching a missing app onto the display: %v; want ErrAppNotFound", err)
		}
		_, err = d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActOpenURL, URL: "https://example.com", DisplayID: id})
		if !errors.Is(err, sdk.ErrUnsupported) {
			t.Errorf("opening a URL on the display: %v; want ErrUnsupported", err)
		}
		_, err = d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 800, Y: 10}, DisplayID: id})
		if !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("a tap off the 720-pixel display: %v; want ErrInvalidArgument", err)
		}
		for _, bad := range [][3]int{{63, 480, 0}, {640, 4097, 0}, {640, 480, 59}} {
			if _, err := d.CreateDisplay(ctx, r.serial, bad[0], bad[1], bad[2]); !errors.Is(err, sdk.ErrInvalidArgument) {
				t.Errorf("CreateDisplay(%v): %v; want ErrInvalidArgument", bad, err)
			}
		}
	})

	t.Run("video", func(t *testing.T) {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		p := &packets{}
		ended := make(chan error, 1)
		go func() { ended <- d.StreamVideo(sctx, sdk.VideoRequest{DeviceID: r.serial, DisplayID: id}, p.add) }()
		keyFrame := func() bool {
			ps := p.snapshot()
			return len(ps) > 1 && ps[0].Config && anyPacket(ps, func(pk sdk.VideoPacket) bool { return pk.KeyFrame })
		}
		testkit.WaitUntil(t, "a config packet and a key frame", func() bool {
			if !keyFrame() {
				d.RequestKeyFrame(ctx, r.serial, id) //nolint:errcheck // the check is the key frame
			}
			return keyFrame()
		})
		for _, pk := range p.snapshot() {
			if pk.KeyFrame && (pk.Width != 720 || pk.Height != 1280) {
				t.Errorf("key frame of %dx%d; want the display's 720x1280", pk.Width, pk.Height)
			}
		}
		second, cancel2 := context.WithTimeout(ctx, 3*time.Second)
		defer cancel2()
		if err := d.StreamVideo(second, sdk.VideoRequest{DeviceID: r.serial, DisplayID: id}, func(sdk.VideoPacket) error { return nil }); !errors.Is(err, sdk.ErrBusy) {
			t.Errorf("a second stream of the display: %v; want ErrBusy", err)
		}
		cancel()
		if err := <-ended; err != nil {
			t.Errorf("StreamVideo after cancel: %v; want nil", err)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		testdep.Need(t, "ffmpeg")
		img, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: r.serial, DisplayID: id})
		if err != nil {
			t.Fatalf("Screenshot of display %d: %v", id, err)
		}
		if img.Format != sdk.FormatPNG || img.Width != 720 || img.Height != 1280 {
			t.Errorf("Screenshot: %s %dx%d; want a 720x1280 PNG", img.Format, img.Width, img.Height)
		}
		if cfg, err := png.DecodeConfig(bytes.NewReader(img.Data)); err != nil || cfg.Width != 720 || cfg.Height != 1280 {
			t.Errorf("Screenshot data: %+v, %v; want a 720x1280 PNG", cfg, err)
		}
		small, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: r.serial, DisplayID: id, Format: sdk.FormatJPEG, MaxSide: 320})
		if err != nil || small.Format != sdk.FormatJPEG || small.Width != 180 || small.Height != 320 {
			t.Errorf("Screenshot at most 320 pixels: %+v, %v; want a 180x320 JPEG", small, err)
		}
	})

	if err := d.RemoveDisplay(ctx, r.serial, id); err != nil {
		t.Fatalf("RemoveDisplay: %v", err)
	}
	if err := d.RemoveDisplay(ctx, r.serial, id); err != nil {
		t.Errorf("RemoveDisplay again: %v; want success", err)
	}
	if _, err := d.Screen(ctx, r.serial, id); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("Screen of the removed display: %v; want ErrInvalidArgument", err)
	}
	testkit.WaitUntil(t, "the display gone from the virtual phone", func() bool {
		_, err := r.sim.Screen(ctx, simPhone, id)
		return errors.Is(err, sdk.ErrInvalidArgument) && len(r.face.Device().Displays()) == 0
	})
	mainStill()
}

// anyPacket reports whether any packet satisfies ok.
func anyPacket(ps []sdk.VideoPacket, ok func(sdk.VideoPacket) bool) bool {
	for _, p := range ps {
		if ok(p) {
			return true
		}
	}
	return false
}

// TestBackgroundDisplayOldAndroid: before Android 13, uiautomator cannot
// read other displays: CreateDisplay says so and leaves no display behind.
func TestBackgroundDisplayOldAndroid(t *testing.T) {
	r := newRig(t, func(cfg *adbd.Config) { cfg.SDKLevel = 30 })
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := r.sim.Unlock(ctx, simPhone, "1234"); err != nil {
		t.Fatal(err)
	}
	_, err := d.CreateDisplay(ctx, r.serial, 720, 1280, 0)
	if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "need Android 13 or later") || !strings.Contains(err.Error(), "Android 11") {
		t.Fatalf("CreateDisplay on Android 11: %v; want ErrUnsupported saying background displays need Android 13 or later", err)
	}
	testkit.WaitUntil(t, "no display left on the virtual phone", func() bool {
		_, err := r.sim.Screen(ctx, simPhone, 1)
		return errors.Is(err, sdk.ErrInvalidArgument) && len(r.face.Device().Displays()) == 0
	})
	if _, err := d.Screen(ctx, r.serial, 1); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("Screen(1) after the refusal: %v; want ErrInvalidArgument", err)
	}
	if sc, err := d.Screen(ctx, r.serial, 0); err != nil || len(sc.Elements) == 0 {
		t.Errorf("Screen(0) after the refusal: %v; want the phone's own screen", err)
	}
}

// TestBackgroundDisplayServerDies: a display's scrcpy server ends (a crash,
// the phone's own doing): the display went with it, and calls on it say so
// in the contract's terms.
func TestBackgroundDisplayServerDies(t *testing.T) {
	k := &killable{}
	r := newRig(t, k.option())
	d := r.driver(t)
	ctx := testkit.Context(t)
	id, err := d.CreateDisplay(ctx, r.serial, 640, 480, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := k.kill(); n != 1 {
		t.Fatalf("killed %d scrcpy servers; want the display's one", n)
	}
	testkit.WaitUntil(t, "the display gone from the virtual phone", func() bool {
		_, err := r.sim.Screen(ctx, simPhone, id)
		return errors.Is(err, sdk.ErrInvalidArgument)
	})
	testkit.WaitUntil(t, "the driver to see the server gone", func() bool {
		_, err := d.Screen(ctx, r.serial, id)
		return errors.Is(err, sdk.ErrInvalidArgument) && strings.Contains(err.Error(), "ended with its scrcpy server")
	})
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 10, Y: 10}, DisplayID: id}); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("a tap on the ended display: %v; want ErrInvalidArgument", err)
	}
	if err := d.RemoveDisplay(ctx, r.serial, id); err != nil {
		t.Errorf("RemoveDisplay of the ended display: %v; want success", err)
	}
	// Display 0 is not affected.
	if _, err := d.Screen(ctx, r.serial, 0); err != nil {
		t.Errorf("Screen(0): %v", err)
	}
}

// TestBackgroundDisplayPhoneGoesAway: a phone that goes away ends its
// display sessions.
func TestBackgroundDisplayPhoneGoesAway(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	w := watch(t, d) // as the gateway does: the device list comes from it
	ctx := testkit.Context(t)
	id, err := d.CreateDisplay(ctx, r.serial, 640, 480, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := d.known(r.serial)
	r.adb(t, "disconnect", r.serial)
	w.wait(t, 0, "the phone removed", func(ev sdk.DeviceEvent) bool {
		return ev.Kind == sdk.DeviceRemoved && ev.Device.ID == r.serial
	})
	testkit.WaitUntil(t, "its display sessions ended", func() bool {
		p.dispMu.Lock()
		defer p.dispMu.Unlock()
		return len(p.displays) == 0
	})
	testkit.WaitUntil(t, "the display gone from the virtual phone", func() bool {
		_, err := r.sim.Screen(ctx, simPhone, id)
		return errors.Is(err, sdk.ErrInvalidArgument)
	})
}

// TestBackgroundDisplayReadFaults: a window dump that fails says so in the
// contract's terms, after the retries a dump of display 0 gets.
func TestBackgroundDisplayReadFaults(t *testing.T) {
	// uiautomator replaced: it prints to stderr and writes no file.
	says := func(msg string) func(context.Context, []string, io.Reader, io.Writer, io.Writer) int {
		return func(_ context.Context, _ []string, _ io.Reader, _, stderr io.Writer) int {
			io.WriteString(stderr, msg)
			return 0
		}
	}
	tests := []struct {
		name  string
		cmd   func(context.Context, []string, io.Reader, io.Writer, io.Writer) int
		want  error
		words string
	}{
		{"never idle", says("ERROR: could not get idle state.\n"), sdk.ErrBusy, "settles"},
		{"another UiAutomation", says("java.lang.IllegalStateException: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@1 already registered!\n"), sdk.ErrBusy, "another tool"},
		{"no file", says("UI hierchary dumped to: /data/local/tmp/x.xml\n"), sdk.ErrInternal, "wrote no window dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			cmd := func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
				calls.Add(1)
				return tt.cmd(ctx, args, stdin, stdout, stderr)
			}
			r := newRig(t, func(cfg *adbd.Config) {
				cfg.Commands = map[string]func(context.Context, []string, io.Reader, io.Writer, io.Writer) int{"uiautomator": cmd}
			})
			d := r.driver(t)
			ctx := testkit.Context(t)
			// The check at creation lets reads tell what fails.
			id, err := d.CreateDisplay(ctx, r.serial, 640, 480, 0)
			if err != nil {
				t.Fatalf("CreateDisplay: %v", err)
			}
			before := calls.Load()
			_, err = d.Screen(ctx, r.serial, id)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.words) {
				t.Errorf("Screen(%d): %v; want %v saying %q", id, err, tt.want, tt.words)
			}
			if n := calls.Load() - before; n != notIdleRetries+1 {
				t.Errorf("uiautomator ran %d times; want %d (tried again %d times)", n, notIdleRetries+1, notIdleRetries)
			}
		})
	}
}
