package peers

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// yumeDevice is a device as @yume-chan/adb's AdbServerClient lists it.
type yumeDevice struct{ Serial, State, Model, Product, Device string }

// yumeResult is what testdata/node/yumechan.mjs prints.
type yumeResult struct {
	Devices  []yumeDevice
	Features []string
	Model    string
	Device   string
	Shell    struct {
		Stdout, Stderr string
		ExitCode       int
	}
	Dump        string
	Framebuffer struct {
		Error                    string
		Width, Height, Bpp, Size int
	}
	Pulled    string
	Stat      int
	Readdir   []string
	AfterHome string
	Scrcpy    struct {
		Codec                  int
		Width, Height          int
		Config, Frame, Touched bool
	}
}

// TestYumeChanADB: @yume-chan/adb through the adb server lists the phone
// with its features, reads properties, runs a shell v2 command with its
// exit code, dumps the UI, takes a PNG and the frame buffer, writes,
// reads, stats and lists a file by sync, and presses home.
func TestYumeChanADB(t *testing.T) {
	needNode(t)
	r := newRig(t)
	dir := t.TempDir()
	var got yumeResult
	if out := r.node(t, nil, "yumechan.mjs", fmt.Sprint(r.port), r.serial, dir); json.Unmarshal(out, &got) != nil {
		t.Fatalf("yumechan.mjs printed %q", out)
	}
	want := yumeDevice{Serial: r.serial, State: "device", Model: "Pixel_8", Product: "shiba", Device: "shiba"}
	if !slices.Contains(got.Devices, want) {
		t.Errorf("getDevices: got %+v; want %+v", got.Devices, want)
	}
	if !slices.Contains(got.Features, "shell_v2") || got.Model != "Pixel 8" || got.Device != "shiba" {
		t.Errorf("features, getProp: got %v, %q, %q; want shell_v2 among them, Pixel 8, shiba", got.Features, got.Model, got.Device)
	}
	if sh := got.Shell; sh.Stdout != "out\n" || sh.Stderr != "err\n" || sh.ExitCode != 3 {
		t.Errorf("shell v2: got %+v; want out, err and exit code 3 apart", sh)
	}
	if s, err := dump.ParseUIAutomator(strings.NewReader(got.Dump)); err != nil || len(s.Elements) == 0 {
		t.Errorf("uiautomator dump /dev/tty: got %q (%v); want a UI dump", got.Dump, err)
	}
	f, err := os.Open(filepath.Join(dir, "screencap.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil {
		t.Errorf("screencap -p: not a PNG: %v", err)
	} else if b := img.Bounds(); b.Dx() != 1080 || b.Dy() != 2400 {
		t.Errorf("screencap -p: got %dx%d; want 1080x2400", b.Dx(), b.Dy())
	}
	if fb := got.Framebuffer; fb.Error != "" || fb.Width != 1080 || fb.Height != 2400 || fb.Bpp != 32 || fb.Size != 1080*2400*4 {
		t.Errorf("framebuffer: got %+v; want 1080x2400 at 32 bits per pixel, %d bytes", fb, 1080*2400*4)
	}
	const pushed = "hello from yume-chan\n"
	// A real adbd lists "." and ".." too; @yume-chan/adb passes them on.
	if got.Pulled != pushed || got.Stat != len(pushed) || !slices.Equal(got.Readdir, []string{".", "..", "yume.txt"}) {
		t.Errorf("sync write, then read, stat, readdir: got %q, %d, %v; want the written %q and [. .. yume.txt]", got.Pulled, got.Stat, got.Readdir, pushed)
	}
	if !strings.Contains(got.AfterHome, "com.google.android.apps.nexuslauncher/") {
		t.Errorf("input keyevent 3: focus %q; want the launcher", got.AfterHome)
	}
}

// TestYumeChanScrcpy: @yume-chan/adb-scrcpy pushes a server, starts it as
// app_process does on a phone, receives the video's configuration and a
// frame, and a touch on the Messages icon opens Messages. @yume-chan/scrcpy
// 2.3 knows scrcpy up to 3.3.3 and the real server refuses any client
// version but its own, so the face here runs a 3.3.3 server (the binary's
// is 4.1).
func TestYumeChanScrcpy(t *testing.T) {
	needNode(t)
	drv := simtest.New(t)
	r := newRigFace(t, adbd.Config{Driver: drv, DeviceID: "sim-android-1", AppProcess: scrcpyd.AppProcessVersion(drv, "3.3.3")})
	var icon *sdk.Element
	home := r.screen(t)
	for i, e := range home.Elements {
		if e.Text == "Messages" || e.ContentDescription == "Messages" {
			icon = &home.Elements[i]
			break
		}
	}
	if icon == nil {
		t.Fatal("the home screen shows no Messages icon")
	}
	x, y := center(icon)
	jar := filepath.Join(t.TempDir(), "scrcpy-server.jar")
	if err := os.WriteFile(jar, []byte("not a real jar: the virtual phone serves scrcpy itself"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The video is scaled to 800 pixels high: the touch is in its pixels.
	touch := fmt.Sprintf("TOUCH=%d,%d", x*800/2400, y*800/2400)
	// Through a forward tunnel, then the library's default: adb reverse,
	// the server dialling back through the adb server.
	for _, tunnel := range []string{"forward", "reverse"} {
		t.Run(tunnel, func(t *testing.T) {
			r.shell(t, "input keyevent KEYCODE_HOME")
			testkit.WaitUntil(t, "the home screen", func() bool { return r.screen(t).App.ID != "com.google.android.apps.messaging" })
			var got yumeResult
			if out := r.node(t, []string{touch, "WAIT_APP=com.google.android.apps.messaging", "TUNNEL=" + tunnel}, "yumechan.mjs", fmt.Sprint(r.port), r.serial, t.TempDir(), jar, "3.3.3"); json.Unmarshal(out, &got) != nil {
				t.Fatalf("yumechan.mjs printed %q", out)
			}
			if s := got.Scrcpy; s.Width != 360 || s.Height != 800 || !s.Config || !s.Frame || !s.Touched {
				t.Errorf("scrcpy session: got %+v; want 360x800 video with its configuration and a frame, and the touch sent", s)
			}
			testkit.WaitUntil(t, "the touch opens Messages", func() bool {
				return r.screen(t).App.ID == "com.google.android.apps.messaging"
			})
		})
	}
}
