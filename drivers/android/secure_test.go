package android

import (
	"bytes"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestSecureFocus(t *testing.T) {
	new14, old7 := string(testdata(t, "dumpsys-window-secure-14.txt")), string(testdata(t, "dumpsys-window-secure-7.txt"))
	launcher := "Window{1c8f2d0 u0 com.google.android.apps.nexuslauncher/com.google.android.apps.nexuslauncher.NexusLauncherActivity}"
	for _, tt := range []struct {
		name          string
		out           string
		secure, known bool
	}{
		{"Android 14, a secure app in front", new14, true, true},
		{"Android 7, flags in hexadecimal", old7, true, true},
		{"Android 14, the flag taken away", strings.Replace(new14, " SECURE ", " ", 1), false, true},
		{"Android 14, the launcher in front", strings.Replace(new14, "mCurrentFocus=Window{4e7d1a9 u0 com.example.bank/com.example.bank.MainActivity}", "mCurrentFocus="+launcher, 1), false, true},
		{"Android 7, settings in front", strings.Replace(old7, "mCurrentFocus=Window{a3e1f20 u0 com.example.bank/com.example.bank.MainActivity}", "mCurrentFocus=Window{6c0b9d4 u0 com.android.settings/com.android.settings.Settings}", 1), false, true},
		{"no window list", string(testdata(t, "dumpsys-window-settings-14.txt")), false, false},
		{"no focus", "WINDOW MANAGER WINDOWS (dumpsys window windows)\n  mCurrentFocus=null\n", false, false},
		{"empty", "", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secure, known := SecureFocus([]byte(tt.out))
			if secure != tt.secure || known != tt.known {
				t.Errorf("got secure %v known %v; want %v %v", secure, known, tt.secure, tt.known)
			}
		})
	}
}

func TestMostlyBlack(t *testing.T) {
	paint := func(c color.RGBA, barRows int) image.Image {
		img := image.NewRGBA(image.Rect(0, 0, 108, 240))
		for y := 0; y < 240; y++ {
			for x := 0; x < 108; x++ {
				img.Set(x, y, c)
				if y < barRows {
					img.Set(x, y, color.RGBA{R: 200, G: 200, B: 200, A: 255})
				}
			}
		}
		return img
	}
	for _, tt := range []struct {
		name string
		img  image.Image
		want bool
	}{
		{"a secure window under its bars", paint(color.RGBA{A: 255}, 20), true},
		{"a secure window under a keyboard", paint(color.RGBA{A: 255}, 110), true},
		{"a white app", paint(color.RGBA{R: 255, G: 255, B: 255, A: 255}, 20), false},
		{"a dark grey app", paint(color.RGBA{R: 30, G: 30, B: 30, A: 255}, 20), false},
		{"mostly the keyboard", paint(color.RGBA{A: 255}, 160), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := mostlyBlack(tt.img); got != tt.want {
				t.Errorf("got %v; want %v", got, tt.want)
			}
		})
	}
}

// TestSecureScreenshot: through the real adb server, a screenshot of the
// virtual phone's secure Films app comes back black and says Blanked (the
// driver read the focused window's SECURE flag from dumpsys window), while
// its screen still reads; the launcher's screenshot does not.
func TestSecureScreenshot(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	shot := func() *sdk.Image {
		t.Helper()
		img, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: r.serial, Format: sdk.FormatJPEG, MaxSide: 640})
		if err != nil {
			t.Fatal(err)
		}
		return img
	}
	if img := shot(); img.Blanked {
		t.Error("the launcher's screenshot says Blanked")
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.films"}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.pinky.sim.films")
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range sc.Elements {
		found = found || e.Text == "The Long Voyage"
	}
	if sc.App.ID != "com.pinky.sim.films" || !found {
		t.Errorf("the secure app's screen: app %q, film listed %v; want it read as usual", sc.App.ID, found)
	}
	img := shot()
	if !img.Blanked {
		t.Error("the secure app's screenshot does not say Blanked")
	}
	if img.Format != sdk.FormatJPEG || img.Width != 288 || img.Height != 640 || !bytes.HasPrefix(img.Data, []byte{0xff, 0xd8}) {
		t.Errorf("the secure app's screenshot: %s %dx%d; want the black JPEG all the same", img.Format, img.Width, img.Height)
	}
}
