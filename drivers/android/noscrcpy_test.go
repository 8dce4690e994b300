package android

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// What the driver does without a scrcpy server, or once it lost the one it
// had: scrolls and keys through adb, a refusal for text only scrcpy types,
// and the phones' capabilities following the server's file.

// TestServerFileGone: the driver notices that its scrcpy server's file is
// gone, looks again at once (FindScrcpy, when set), and takes another
// server or says why there is none; a file that stays is kept.
func TestServerFileGone(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other-scrcpy-server")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		remove   bool
		find     func() (ScrcpyServer, error)
		wantPath string // "" is none
		wantWhy  string // words of why there is none
	}{
		{name: "a file that stays", remove: false, wantPath: "kept"},
		{name: "gone, no FindScrcpy", remove: true, wantWhy: "where it was, is gone"},
		{name: "gone, FindScrcpy finds none", remove: true,
			find:    func() (ScrcpyServer, error) { return FindScrcpyServer(filepath.Join(dir, "none"), "3.3.4") },
			wantWhy: "SCRCPY_SERVER_PATH is " + filepath.Join(dir, "none") + ", where there is none"},
		{name: "gone, FindScrcpy finds another", remove: true,
			find:     func() (ScrcpyServer, error) { return ScrcpyServer{Path: other, Version: "3.3.4"}, nil },
			wantPath: other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "scrcpy-server")
			if err := os.WriteFile(path, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			d := &Driver{cfg: Config{FindScrcpy: tt.find}, log: slog.New(slog.NewTextHandler(io.Discard, nil)), scrcpy: &ScrcpyServer{Path: path, Version: "3.3.4"}}
			if tt.remove {
				if err := os.Remove(path); err != nil {
					t.Fatal(err)
				}
			}
			s, why := d.server()
			want := tt.wantPath
			if want == "kept" {
				want = path
			}
			switch {
			case want != "" && (s == nil || s.Path != want):
				t.Errorf("server() = %+v, %v; want the server at %s", s, why, want)
			case want == "" && (s != nil || !errors.Is(why, ErrNoScrcpyServer) || !strings.Contains(why.Error(), tt.wantWhy)):
				t.Errorf("server() = %+v, %v; want none, ErrNoScrcpyServer saying %q", s, why, tt.wantWhy)
			}
		})
	}
}

// TestScrcpyServerRemoved: the phone loses video, pinch and displays when
// the scrcpy server's file is removed while the driver runs (a CHANGED
// event, the same reason and fix as a driver started without one), a new
// video stream is refused with that reason, and the file put back is found
// again.
func TestScrcpyServerRemoved(t *testing.T) {
	r := newRig(t)
	jar, content := r.scrcpy.Path, []byte("not a real jar: the virtual phone serves scrcpy itself")
	r.find = func() (ScrcpyServer, error) { return FindScrcpyServer(jar, "3.3.4") }
	d := r.driver(t)
	ctx := testkit.Context(t)
	devs := watchCaps(t, d, r.serial)
	wantDevice(t, devs, "video", func(dev sdk.Device) bool { return serves(dev, sdk.CapVideo) })

	if err := os.Remove(jar); err != nil {
		t.Fatal(err)
	}
	dev := wantDevice(t, devs, "no video once the server's file is gone", func(dev sdk.Device) bool { return dev.Caps != nil && !serves(dev, sdk.CapVideo) })
	_, atStart := FindScrcpyServer(jar, "3.3.4")
	wantReason, wantFix := scrcpyMissing(atStart)
	for _, c := range needsScrcpy {
		m, ok := dev.Missing(c)
		if serves(dev, c) || !ok || m.Reason != wantReason || m.Fix != wantFix {
			t.Errorf("%s with the server's file gone: served %v, missing %+v; want missing with %q, fix %q", c, serves(dev, c), m, wantReason, wantFix)
		}
	}
	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: r.serial}, func(sdk.VideoPacket) error { return nil })
	if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), wantReason) {
		t.Errorf("StreamVideo with the server's file gone: %v; want ErrUnsupported with %q", err, wantReason)
	}
	// Input goes on through adb.
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	res, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	if err != nil || res.Detail != "adb shell input" {
		t.Errorf("a key with the server's file gone: %+v, %v; want it through adb shell input", res, err)
	}

	if err := os.WriteFile(jar, content, 0o644); err != nil {
		t.Fatal(err)
	}
	dev = wantDevice(t, devs, "video once the file is back", func(dev sdk.Device) bool { return serves(dev, sdk.CapVideo) })
	if len(dev.Caps.Missing) != 0 {
		t.Errorf("with the file back: %+v; want nothing missing", dev.Caps)
	}
}

// TestScrollWithoutScrcpy: a scroll moves the virtual phone's list the same
// way and as far through adb shell input as through scrcpy.
func TestScrollWithoutScrcpy(t *testing.T) {
	for _, tt := range []struct {
		name   string
		scrcpy bool
		detail string
	}{
		{"scrcpy", true, ""},
		{"adb shell input", false, "adb shell input"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t)
			if !tt.scrcpy {
				r.scrcpy = ScrcpyServer{}
			}
			d := r.driver(t)
			ctx := testkit.Context(t)
			if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
				t.Fatal(err)
			}
			top := func() (int, int) {
				t.Helper()
				var sc *sdk.Screen
				testkit.WaitUntil(t, "the settings list", func() bool {
					var err error
					sc, err = d.Screen(ctx, r.serial, 0)
					_, ok := simtest.Find(sc, "Battery")
					return err == nil && ok
				})
				e, _ := simtest.Find(sc, "Battery")
				return e.Bounds.Top, sc.Height
			}
			before, h := top()
			want := h * 100 / 1000
			for _, step := range []struct {
				dir   sdk.ScrollDirection
				moved int // how far the item moves down
			}{
				{sdk.ScrollDown, -want}, // what is further down comes up
				{sdk.ScrollUp, 0},
			} {
				res, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActScroll, Direction: step.dir, Amount: 100})
				if err != nil || res.Detail != tt.detail {
					t.Fatalf("scroll %s: %+v, %v; want detail %q", step.dir, res, err, tt.detail)
				}
				if got, _ := top(); got-before < step.moved-4 || got-before > step.moved+4 {
					t.Errorf("after scroll %s the item's top is %d, from %d; want it moved by %d (a tenth of %d)", step.dir, got, before, step.moved, h)
				}
			}
		})
	}
}

// TestTypeWithoutScrcpy: without a scrcpy server, ASCII is typed through
// adb; text with other characters is refused whole (no part typed, no
// replace done) with what enables it, and keys and long presses work.
func TestTypeWithoutScrcpy(t *testing.T) {
	r := newRig(t)
	r.scrcpy = ScrcpyServer{}
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"}); err != nil {
		t.Fatal(err)
	}
	read := func() *sdk.Screen {
		t.Helper()
		sc, err := d.Screen(ctx, r.serial, 0)
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	tap := func(what string) {
		t.Helper()
		var e sdk.Element
		testkit.WaitUntil(t, what, func() bool { var ok bool; e, ok = simtest.Find(read(), what); return ok })
		if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: e.Bounds.Center()}); err != nil {
			t.Fatalf("tap %q: %v", what, err)
		}
	}
	field := func() sdk.Element {
		t.Helper()
		e, _ := simtest.Find(read(), "edit_note_text")
		return e
	}
	tap("new_note")
	tap("edit_note_text")
	testkit.WaitUntil(t, "the note field focused", func() bool { return field().Focused })
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActType, Text: "plain ascii"}); err != nil {
		t.Fatal(err)
	}
	if got := field().Text; got != "plain ascii" {
		t.Fatalf("typed through adb: %q; want %q", got, "plain ascii")
	}
	for _, a := range []sdk.Action{
		{Kind: sdk.ActType, Text: "more ascii, then שלום"},
		{Kind: sdk.ActType, Text: "héllo", Replace: true, Submit: true},
		{Kind: sdk.ActType, Text: "100%s sure"},
	} {
		_, err := d.Act(ctx, r.serial, a)
		if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), scrcpyFix) || !strings.Contains(err.Error(), "no scrcpy server was found") {
			t.Errorf("type %q without scrcpy: %v; want ErrUnsupported saying why and %q", a.Text, err, scrcpyFix)
		}
		if err != nil && strings.Contains(err.Error(), a.Text) {
			t.Errorf("the refusal %q says the text", err)
		}
		if got := field().Text; got != "plain ascii" {
			t.Errorf("after the refused %+v the field holds %q; want it untouched", a, got)
		}
	}
	for _, a := range []sdk.Action{
		{Kind: sdk.ActKey, Key: sdk.KeyBack},
		{Kind: sdk.ActLongPress, Point: sdk.Point{X: 100, Y: 600}},
	} {
		if res, err := d.Act(ctx, r.serial, a); err != nil || res.Detail != "adb shell input" {
			t.Errorf("%s without scrcpy: %+v, %v; want it done through adb shell input", a.Kind, res, err)
		}
	}
}

// TestScrollSwipe: a scroll's swipe goes against the direction, across
// the point, Amount thousandths of the screen (600 when zero), inside it.
func TestScrollSwipe(t *testing.T) {
	at := sdk.Point{X: 500, Y: 1000}
	tests := []struct {
		name     string
		a        sdk.Action
		at       sdk.Point
		from, to sdk.Point
		wantErr  bool
	}{
		{"down, default amount", sdk.Action{Direction: sdk.ScrollDown}, at, sdk.Point{X: 500, Y: 1600}, sdk.Point{X: 500, Y: 400}, false},
		{"up by a tenth", sdk.Action{Direction: sdk.ScrollUp, Amount: 100}, at, sdk.Point{X: 500, Y: 900}, sdk.Point{X: 500, Y: 1100}, false},
		{"right", sdk.Action{Direction: sdk.ScrollRight, Amount: 500}, at, sdk.Point{X: 750, Y: 1000}, sdk.Point{X: 250, Y: 1000}, false},
		{"left", sdk.Action{Direction: sdk.ScrollLeft, Amount: 500}, at, sdk.Point{X: 250, Y: 1000}, sdk.Point{X: 750, Y: 1000}, false},
		{"kept inside near an edge", sdk.Action{Direction: sdk.ScrollDown, Amount: 1000}, sdk.Point{X: 500, Y: 100}, sdk.Point{X: 500, Y: 1100}, sdk.Point{X: 500, Y: 1}, false},
		{"no direction", sdk.Action{}, at, sdk.Point{}, sdk.Point{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			from, to, err := scrollSwipe(tt.a, tt.at, 1000, 2000)
			if (err != nil) != tt.wantErr {
				t.Fatalf("scrollSwipe: %v; want an error: %v", err, tt.wantErr)
			}
			if from != tt.from || to != tt.to {
				t.Errorf("scrollSwipe = %v → %v; want %v → %v", from, to, tt.from, tt.to)
			}
		})
	}
}

// TestShellCommand: what adb shell input is asked to do; text it cannot
// type is refused before any of the command is made.
func TestShellCommand(t *testing.T) {
	tests := []struct {
		name    string
		a       sdk.Action
		want    string
		wantErr error
	}{
		{"scroll at the centre", sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown}, "input swipe 540 1920 540 480 300", nil},
		{"scroll at a point", sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollLeft, Amount: 200, HasPoint: true, Point: sdk.Point{X: 300, Y: 500}}, "input swipe 192 500 408 500 300", nil},
		{"a key", sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack}, "input keyevent 4", nil},
		{"a long press", sdk.Action{Kind: sdk.ActLongPress, Point: sdk.Point{X: 10, Y: 20}}, "input swipe 10 20 10 20 800", nil},
		{"ASCII with submit", sdk.Action{Kind: sdk.ActType, Text: "a b", Submit: true}, "input text a%sb; input keyevent 66", nil},
		{"not ASCII, with replace", sdk.Action{Kind: sdk.ActType, Text: "ä", Replace: true}, "", errNotTypable},
		{"a literal %s", sdk.Action{Kind: sdk.ActType, Text: "%s"}, "", errNotTypable},
		{"a newline", sdk.Action{Kind: sdk.ActType, Text: "a\nb"}, "", errNotTypable},
		{"a pinch", sdk.Action{Kind: sdk.ActPinch}, "", sdk.ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := shellCommand(tt.a, 1080, 2400)
			if got != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("shellCommand = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// The refusal's words come from caps.go's: the same fix as the phones'
// missing capabilities.
func TestNotTypable(t *testing.T) {
	d := &Driver{log: slog.New(slog.NewTextHandler(io.Discard, nil)), scrErr: ErrNoScrcpyServer}
	err := d.notTypable("phone-1")
	reason, fix := scrcpyMissing(ErrNoScrcpyServer)
	if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), "to enable it: "+fix) {
		t.Errorf("notTypable: %v; want ErrUnsupported with %q and %q", err, reason, fix)
	}
}

// TestServerFileUpgraded: a scrcpy server file changed in place (the
// package upgraded) is looked for again, so that the driver starts it with
// its new version; an unchanged one is not.
func TestServerFileUpgraded(t *testing.T) {
	for _, upgrade := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "scrcpy-server")
		if err := os.WriteFile(path, []byte("scrcpy 3.3.4"), 0o644); err != nil {
			t.Fatal(err)
		}
		finds := 0
		find := func() (ScrcpyServer, error) { finds++; return ScrcpyServer{Path: path, Version: "3.4.0"}, nil }
		d := &Driver{cfg: Config{FindScrcpy: find}, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
			scrcpy: &ScrcpyServer{Path: path, Version: "3.3.4"}, scrFile: fileID(path)}
		want := "3.3.4"
		if upgrade {
			if err := os.WriteFile(path, []byte("scrcpy 3.4.0, a longer file"), 0o644); err != nil {
				t.Fatal(err)
			}
			want = "3.4.0"
		}
		s, why := d.server()
		if s == nil || s.Version != want {
			t.Errorf("upgraded %v: server() = %+v, %v; want version %s", upgrade, s, why, want)
		}
		if upgrade != (finds == 1) {
			t.Errorf("upgraded %v: looked for the server %d times", upgrade, finds)
		}
	}
}
