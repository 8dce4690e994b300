package cli_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
)

// call calls the daemon's local API as the person's clients do.
func (e *env) call(method string, params, out any) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := api.Dial(ctx, filepath.Join(e.Home, "pinky.sock"))
	if err != nil {
		e.T.Fatal(err)
	}
	defer c.Close()
	if err := c.Call(ctx, method, params, out); err != nil {
		e.T.Fatalf("%s: %v", method, err)
	}
}

// decodeFrames decodes a video file into RGB frames of its own size.
func decodeFrames(t *testing.T, path string) (w, h int, frames [][]byte) {
	t.Helper()
	_, w, h, _ = ffprobeFrames(t, path)
	out, err := exec.Command(testdep.Need(t, "ffmpeg"), "-v", "error", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg decoding %s: %v", path, err)
	}
	size := w * h * 3
	for len(out) >= size {
		frames = append(frames, out[:size])
		out = out[size:]
	}
	return w, h, frames
}

// TestRecordingPrivacy: the person's use of the phone and a blocked app on
// screen stay out of the task's recording, which goes on once an agent's
// read shows a screen that may be kept. The decoded file is checked pixel
// by pixel where the blocked app's login screen has its blue button.
func TestRecordingPrivacy(t *testing.T) {
	testdep.Need(t, "ffmpeg")
	e := newEnv(t)
	e.Daemon("--sim", "--console", "off")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", dev("task", "privacy"), "Pixel Launcher")
	var home sdk.Screen
	e.JSON(&home, "driver", "screen", "sim-android-1")
	time.Sleep(time.Second)
	h.OK("phone_observe", dev(), "") // vouches for the home screen's frames, which came after the connect's read

	// The person opens the bank (a blocked app) in hand, and hands the phone back with it open.
	e.call(api.MethodTakeOver, api.DeviceParams{Device: "sim-android-1"}, nil)
	bankIcon := center(t, home, "Bank")
	e.call(api.MethodInput, api.InputParams{Device: "sim-android-1", Kind: "tap", X: bankIcon.X, Y: bankIcon.Y}, nil)
	var bank sdk.Screen
	e.Eventually("the bank is open", func() bool {
		e.JSON(&bank, "driver", "screen", "sim-android-1")
		return bank.App.ID == "com.pinky.sim.bank"
	})
	signIn := center(t, bank, "Sign in")
	time.Sleep(1500 * time.Millisecond)
	e.call(api.MethodHandBack, api.DeviceParams{Device: "sim-android-1"}, nil)
	h.Fails("phone_observe", dev(), "blocked_app")
	time.Sleep(4 * time.Second) // held packets wait, the recorder reads for itself: still the bank
	h.OK("phone_key", dev("key", "home"), "")
	time.Sleep(1500 * time.Millisecond)
	h.OK("phone_observe", dev(), "Pixel Launcher")
	h.OK("phone_release", dev(), "")

	task := e.lastTask(t)
	e.Eventually("the recording's row", func() bool { return e.lastTask(t).Recording })
	w, hh, frames := decodeFrames(t, filepath.Join(e.Home, "recordings", task.ID+".mp4"))
	blue := func(f []byte, p sdk.Point) bool { // #0b5394, the bank's colour
		x, y := p.X*w/home.Width, p.Y*hh/home.Height
		i := (y*w + x) * 3
		return near(f[i], 0x0b) && near(f[i+1], 0x53) && near(f[i+2], 0x94)
	}
	homeFrames, bankFrames := 0, 0
	for _, f := range frames {
		if blue(f, bankIcon) {
			homeFrames++ // the launcher's Bank icon: a screen that may be kept
		}
		if blue(f, signIn) && !blue(f, bankIcon) {
			bankFrames++
		}
	}
	if bankFrames > 0 {
		t.Errorf("the recording holds %d frames of the blocked bank app (of %d)", bankFrames, len(frames))
	}
	// The check sees the launcher's blue icon, so it would see the bank's button.
	if homeFrames < 2 {
		t.Errorf("the recording has %d launcher frames of %d; want the frames before and after the bank", homeFrames, len(frames))
	}
}

func near(a, b byte) bool { return a-b < 24 || b-a < 24 }

// center is the centre of the element with text on a screen.
func center(t *testing.T, sc sdk.Screen, text string) sdk.Point {
	t.Helper()
	for _, el := range sc.Elements {
		if el.Text == text || el.ContentDescription == text {
			b := el.Bounds
			return sdk.Point{X: (b.Left + b.Right) / 2, Y: (b.Top + b.Bottom) / 2}
		}
	}
	t.Fatalf("no %q on the screen of %s", text, sc.App.ID)
	return sdk.Point{}
}
