package sim

import (
	"bytes"
	"context"
	"errors"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"image"
	"image/draw"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// newDisplays returns the default world's driver with a still clock, so
// that reading an unchanged screen twice gives equal replies.
func newDisplays(t *testing.T) *Driver {
	t.Helper()
	d := newDefault(t)
	fixed := time.Date(2024, 5, 6, 7, 8, 0, 0, time.UTC)
	d.now = func() time.Time { return fixed }
	return d
}

func createDisplay(t *testing.T, d *Driver, w, h, dpi int) int {
	t.Helper()
	id, err := d.CreateDisplay(context.Background(), android, w, h, dpi)
	if err != nil {
		t.Fatalf("CreateDisplay(%dx%d@%d): %v", w, h, dpi, err)
	}
	return id
}

func screenOf(t *testing.T, d *Driver, display int) *sdk.Screen {
	t.Helper()
	s, err := d.Screen(context.Background(), android, display)
	if err != nil {
		t.Fatalf("Screen(display %d): %v", display, err)
	}
	checkScreen(t, s)
	return s
}

func actOn(t *testing.T, d *Driver, display int, a sdk.Action) string {
	t.Helper()
	a.DisplayID = display
	return act(t, d, android, a)
}

func tapOnDisplay(t *testing.T, d *Driver, display int, what string) {
	t.Helper()
	e, ok := find(screenOf(t, d, display), what)
	if !ok {
		t.Fatalf("display %d: tap %q: no such element on screen", display, what)
	}
	actOn(t, d, display, sdk.Action{Kind: sdk.ActTap, Point: e.Bounds.Center()})
}

// sameScreen fails unless two readings of a display are equal but for
// element ids and the capture time, as the contract defines a still screen.
func sameScreen(t *testing.T, what string, got, want *sdk.Screen) {
	t.Helper()
	opts := cmp.Options{
		cmpopts.IgnoreFields(sdk.Screen{}, "CapturedAt"),
		cmpopts.IgnoreFields(sdk.Element{}, "ID", "ParentID"),
	}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("%s: changed (-want +got):\n%s", what, diff)
	}
}

func TestDisplayTaskLeavesMainScreen(t *testing.T) {
	d := newDisplays(t)
	unlock(t, d, android)
	tapOn(t, d, android, "Messages")
	tapOn(t, d, android, "Ana Silva")
	main := screenOf(t, d, 0)

	n := createDisplay(t, d, 720, 1280, 320)
	s := screenOf(t, d, n)
	if s.Width != 720 || s.Height != 1280 || s.DensityDPI != 320 || s.Orientation != sdk.OrientationPortrait {
		t.Errorf("new display: %dx%d@%d %s; want 720x1280@320 portrait", s.Width, s.Height, s.DensityDPI, s.Orientation)
	}
	if s.App.ID != "com.google.android.apps.nexuslauncher" {
		t.Errorf("new display: app %q; want the launcher", s.App.ID)
	}

	// A task on display n: write a note.
	actOn(t, d, n, sdk.Action{Kind: sdk.ActLaunch, AppID: "notes"})
	tapOnDisplay(t, d, n, "New note")
	tapOnDisplay(t, d, n, "edit_note_text")
	if !screenOf(t, d, n).KeyboardShown {
		t.Error("display n: keyboard hidden after focusing the note; want shown")
	}
	actOn(t, d, n, sdk.Action{Kind: sdk.ActType, Text: "Call the plumber"})
	s = screenOf(t, d, n)
	if s.App.ID != "com.google.android.keep" {
		t.Errorf("display n: app %q; want com.google.android.keep", s.App.ID)
	}
	if e, _ := find(s, "edit_note_text"); e.Text != "Call the plumber" {
		t.Errorf("display n: note field %q; want %q", e.Text, "Call the plumber")
	}
	actOn(t, d, n, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 360, Y: 5}, To: sdk.Point{X: 360, Y: 900}})
	if _, ok := find(screenOf(t, d, n), "notification_panel"); ok {
		t.Error("display n: a swipe from the top opened the shade; want the shade on display 0 only")
	}
	actOn(t, d, n, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyRecents})
	actOn(t, d, n, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}) // the keyboard
	tapOnDisplay(t, d, n, "Save")
	sameScreen(t, "display 0 during the task on display n", screenOf(t, d, 0), main)

	// App data is shared: display 0 sees the note in Notes.
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "notes"})
	if _, ok := find(screenOf(t, d, 0), "Call the plumber"); !ok {
		t.Error("display 0: the note written on display n is not in Notes; want app data shared")
	}

	// The other way round: the person's use of display 0 leaves display n.
	taskScreen := screenOf(t, d, n)
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	tapOn(t, d, android, "Messages")
	tapOn(t, d, android, "Ana Silva")
	tapOn(t, d, android, "compose_message_text")
	act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "On my way"})
	act(t, d, android, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1200}})
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack})
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyRecents})
	sameScreen(t, "display n while the person uses display 0", screenOf(t, d, n), taskScreen)

	// Keys and input with display n act there only.
	before := screenOf(t, d, 0)
	actOn(t, d, n, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	if s := screenOf(t, d, n); s.App.ID != "com.google.android.apps.nexuslauncher" {
		t.Errorf("display n after home: app %q; want the launcher", s.App.ID)
	}
	icon, _ := find(screenOf(t, d, n), "Notes")
	events := []sdk.InputEvent{
		{DeviceID: android, DisplayID: n, Pointer: &sdk.PointerEvent{Action: sdk.PointerDown, Point: icon.Bounds.Center()}},
		{DeviceID: android, DisplayID: n, Pointer: &sdk.PointerEvent{Action: sdk.PointerUp, Point: icon.Bounds.Center()}},
	}
	if _, err := d.Input(context.Background(), feed(events)); err != nil {
		t.Fatalf("Input on display n: %v", err)
	}
	if s := screenOf(t, d, n); s.App.ID != "com.google.android.keep" {
		t.Errorf("display n after a tap by Input: app %q; want com.google.android.keep", s.App.ID)
	}
	sameScreen(t, "display 0 after keys and input on display n", screenOf(t, d, 0), before)
}

// feed returns the events one by one, then io.EOF as Input expects.
func feed(events []sdk.InputEvent) func() (sdk.InputEvent, error) {
	return func() (sdk.InputEvent, error) {
		if len(events) == 0 {
			return sdk.InputEvent{}, io.EOF
		}
		ev := events[0]
		events = events[1:]
		return ev, nil
	}
}

func TestDisplayWhileLocked(t *testing.T) {
	d := newDisplays(t)
	n := createDisplay(t, d, 1080, 1920, 0)
	if s := screenOf(t, d, 0); s.LockState != sdk.LockLocked {
		t.Fatalf("display 0: %s; want locked", s.LockState)
	}
	s := screenOf(t, d, n)
	if s.LockState != sdk.LockUnlocked || !s.ScreenOn || s.DensityDPI != 420 {
		t.Errorf("display n of a locked phone: %s, on %v, %d dpi; want unlocked, on, the phone's 420 dpi", s.LockState, s.ScreenOn, s.DensityDPI)
	}
	actOn(t, d, n, sdk.Action{Kind: sdk.ActLaunch, AppID: "shop"})
	tapOnDisplay(t, d, n, "Add to cart")
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeySleep})
	tapOnDisplay(t, d, n, "Place order")
	if _, ok := find(screenOf(t, d, n), "Pay $59.99 with Visa •••• 4242?"); !ok {
		t.Error("display n with the phone's screen off: the order dialog is not shown")
	}
	if s := screenOf(t, d, 0); s.ScreenOn || s.LockState != sdk.LockLocked || len(s.Elements) != 0 {
		t.Errorf("display 0: on %v, %s, %d elements; want off, locked, empty", s.ScreenOn, s.LockState, len(s.Elements))
	}
	// The animation runs on display n; WaitIdle waits for it.
	tapOnDisplay(t, d, n, "Pay")
	if _, ok := find(screenOf(t, d, n), "progress"); !ok {
		t.Error("display n: no progress while paying")
	}
	idle, err := d.WaitIdle(context.Background(), android, 3*time.Second)
	if err != nil || !idle {
		t.Fatalf("WaitIdle: %v, %v; want true, nil", idle, err)
	}
	if _, ok := find(screenOf(t, d, n), "Order placed"); !ok {
		t.Error("display n: the order was not placed after the animation")
	}
}

func TestDisplayErrors(t *testing.T) {
	d := newDisplays(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name          string
		device        string
		w, h, density int
		want          error
	}{
		{"too narrow", android, 63, 480, 0, sdk.ErrInvalidArgument},
		{"too tall", android, 640, 4097, 0, sdk.ErrInvalidArgument},
		{"zero", android, 0, 0, 0, sdk.ErrInvalidArgument},
		{"negative", android, -640, 480, 0, sdk.ErrInvalidArgument},
		{"density too low", android, 640, 480, 59, sdk.ErrInvalidArgument},
		{"density too high", android, 640, 480, 1001, sdk.ErrInvalidArgument},
		{"negative density", android, 640, 480, -1, sdk.ErrInvalidArgument},
		{"unknown device", "nope", 640, 480, 0, sdk.ErrDeviceNotFound},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := d.CreateDisplay(ctx, tt.device, tt.w, tt.h, tt.density); !errors.Is(err, tt.want) {
				t.Errorf("CreateDisplay(%q, %dx%d@%d): got %v; want %v", tt.device, tt.w, tt.h, tt.density, err, tt.want)
			}
		})
	}

	// Ids start above 0, grow and are never reused; the smallest and
	// largest sizes are accepted.
	a := createDisplay(t, d, 64, 64, 60)
	b := createDisplay(t, d, 4096, 4096, 1000)
	if a <= 0 || b <= a {
		t.Errorf("ids: %d then %d; want positive and growing", a, b)
	}
	for i := range 2 {
		if err := d.RemoveDisplay(ctx, android, a); err != nil {
			t.Errorf("RemoveDisplay(%d) #%d: %v; want success", a, i+1, err)
		}
	}
	if err := d.RemoveDisplay(ctx, android, 99); err != nil {
		t.Errorf("RemoveDisplay of an unknown id: %v; want success", err)
	}
	for _, id := range []int{0, -1} {
		if err := d.RemoveDisplay(ctx, android, id); !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("RemoveDisplay(%d): got %v; want INVALID_ARGUMENT", id, err)
		}
	}
	if c := createDisplay(t, d, 640, 480, 0); c <= b {
		t.Errorf("id after removing %d: %d; want above %d", a, c, b)
	}

	// Every call on a removed or unknown display is INVALID_ARGUMENT.
	nop := func(sdk.VideoPacket) error { return nil }
	for _, id := range []int{a, 99, -1} {
		calls := map[string]error{}
		_, calls["Screen"] = d.Screen(ctx, android, id)
		_, calls["Screenshot"] = d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: android, DisplayID: id})
		_, calls["Act"] = d.Act(ctx, android, sdk.Action{DisplayID: id, Kind: sdk.ActKey, Key: sdk.KeyHome})
		calls["StreamVideo"] = d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android, DisplayID: id}, nop)
		calls["RequestKeyFrame"] = d.RequestKeyFrame(ctx, android, id)
		_, calls["Input"] = d.Input(ctx, feed([]sdk.InputEvent{{DeviceID: android, DisplayID: id, Key: &sdk.KeyEvent{Action: sdk.KeyUp, Key: sdk.KeyHome}}}))
		for call, err := range calls {
			if !errors.Is(err, sdk.ErrInvalidArgument) {
				t.Errorf("%s on display %d: got %v; want INVALID_ARGUMENT", call, id, err)
			}
		}
	}
}

func TestDisplayCap(t *testing.T) {
	d := newDisplays(t)
	ctx := context.Background()
	var ids []int
	for range maxDisplays {
		ids = append(ids, createDisplay(t, d, 640, 480, 0))
	}
	_, err := d.CreateDisplay(ctx, android, 640, 480, 0)
	if !errors.Is(err, sdk.ErrBusy) {
		t.Fatalf("display %d: got %v; want BUSY", maxDisplays+1, err)
	}
	t.Logf("the cap: %v", err)
	// The cap is per phone.
	if _, err := d.CreateDisplay(ctx, "sim-ios-1", 640, 480, 0); err != nil {
		t.Errorf("a display on another phone: %v", err)
	}
	if err := d.RemoveDisplay(ctx, android, ids[0]); err != nil {
		t.Fatal(err)
	}
	createDisplay(t, d, 640, 480, 0)
}

func TestDisplaySizes(t *testing.T) {
	d := newDisplays(t)
	for _, sz := range [][3]int{{64, 64, 1000}, {64, 64, 60}, {4096, 64, 160}, {64, 4096, 420}, {640, 480, 0}, {641, 479, 213}} {
		n := createDisplay(t, d, sz[0], sz[1], sz[2])
		for _, app := range []string{"", "mail", "settings"} {
			if app != "" {
				actOn(t, d, n, sdk.Action{Kind: sdk.ActLaunch, AppID: app})
			}
			s := screenOf(t, d, n)
			if s.Width != sz[0] || s.Height != sz[1] {
				t.Errorf("display %v with %q: %dx%d", sz, app, s.Width, s.Height)
			}
			if got := shotOf(t, d, n, 0).Rect.Size(); got != image.Pt(sz[0], sz[1]) {
				t.Errorf("screenshot of display %v: %v", sz, got)
			}
		}
		if err := d.RemoveDisplay(context.Background(), android, n); err != nil {
			t.Fatal(err)
		}
	}
}

// shotOf is a PNG screenshot of a display, decoded.
func shotOf(t *testing.T, d *Driver, display, maxSide int) *image.RGBA {
	t.Helper()
	im, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: android, DisplayID: display, MaxSide: maxSide})
	if err != nil {
		t.Fatal(err)
	}
	src, err := png.Decode(bytes.NewReader(im.Data))
	if err != nil {
		t.Fatal(err)
	}
	if im.Width != src.Bounds().Dx() || im.Height != src.Bounds().Dy() {
		t.Errorf("screenshot of display %d: declared %dx%d, image %v", display, im.Width, im.Height, src.Bounds().Size())
	}
	out := image.NewRGBA(src.Bounds())
	draw.Draw(out, out.Rect, src, image.Point{}, draw.Src)
	return out
}

func TestDisplayScreenshotAndVideo(t *testing.T) {
	d := newDefault(t)
	unlock(t, d, android)
	n := createDisplay(t, d, 720, 1280, 320)
	actOn(t, d, n, sdk.Action{Kind: sdk.ActLaunch, AppID: "notes"})
	if got := shotOf(t, d, n, 0).Rect.Size(); got != image.Pt(720, 1280) {
		t.Errorf("screenshot of display n: %v; want 720x1280", got)
	}

	// Display 0 and display n stream at once; a second stream of n is BUSY.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	main, bg := &videoRecorder{}, &videoRecorder{}
	mainEnded, bgEnded := make(chan error, 1), make(chan error, 1)
	go func() { mainEnded <- d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android}, main.add) }()
	go func() {
		bgEnded <- d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android, DisplayID: n, MaxSide: 640}, bg.add)
	}()
	main.waitFor(t, "a frame of display 0", func(f, _ int) bool { return f >= 1 })
	bg.waitFor(t, "a frame of display n", func(f, _ int) bool { return f >= 1 })
	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android, DisplayID: n}, func(sdk.VideoPacket) error { return errors.New("unexpected packet") })
	if !errors.Is(err, sdk.ErrBusy) {
		t.Errorf("second stream of display n: %v; want BUSY", err)
	}
	time.Sleep(300 * time.Millisecond) // the launch has been sent
	want := shotOf(t, d, n, 640)
	frames, keys := bg.counts()
	if err := d.RequestKeyFrame(ctx, android, n); err != nil {
		t.Fatal(err)
	}
	bg.waitFor(t, "a requested key frame of display n", func(_, k int) bool { return k > keys })

	// Removing the display ends its stream, not display 0's.
	if err := d.RemoveDisplay(context.Background(), android, n); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bgEnded:
		if !errors.Is(err, sdk.ErrInvalidArgument) {
			t.Errorf("stream of the removed display ended with %v; want INVALID_ARGUMENT", err)
		}
	case <-time.After(time.Second):
		t.Fatal("stream of the removed display still running 1s after RemoveDisplay")
	}
	select {
	case err := <-mainEnded:
		t.Fatalf("stream of display 0 ended with %v when display n was removed", err)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	if err := <-mainEnded; err != nil {
		t.Errorf("stream of display 0 after cancel: %v; want nil", err)
	}

	var stream []byte
	for i, p := range bg.snapshot() {
		if p.Width != 360 || p.Height != 640 {
			t.Errorf("display n packet %d: %dx%d; want 360x640", i, p.Width, p.Height)
		}
		stream = append(stream, p.Data...)
	}
	for i, p := range main.snapshot() {
		if p.Width != 1080 || p.Height != 2400 {
			t.Errorf("display 0 packet %d: %dx%d; want 1080x2400", i, p.Width, p.Height)
		}
	}

	ffmpeg := testdep.Need(t, "ffmpeg")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.h264"), filepath.Join(dir, "out.rgb")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(ffmpeg, "-v", "error", "-xerror", "-f", "h264", "-i", in, "-f", "rawvideo", "-pix_fmt", "rgb24", out).CombinedOutput(); err != nil || len(msg) > 0 {
		t.Fatalf("ffmpeg: %v: %s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	const size = 360 * 640 * 3
	if total, _ := bg.counts(); len(raw) != total*size {
		t.Fatalf("decoded %d bytes: want %d frames of 360x640", len(raw), total)
	}
	got := raw[(frames-1)*size : frames*size]
	if e := meanAbs(want, got); e > 3 {
		t.Errorf("display n: decoded frame %d differs from the screenshot: mean abs error %.2f; want ≤ 3", frames-1, e)
	}
}
