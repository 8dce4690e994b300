package adbd_test

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// A secure app (the world's Films, FLAG_SECURE) through the adb face, as a
// phone shows it: dumpsys window lists SECURE among the focused window's
// flags, screencap and framebuffer: draw its area black under a status bar
// that still shows, and uiautomator dump still reads it.
func TestSecureWindow(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	flags := func() string {
		t.Helper()
		for _, line := range strings.Split(p.run(t, "shell", "dumpsys window"), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "fl=") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	p.run(t, "shell", "am", "start", "-n", "com.pinky.sim.films/.MainActivity")
	if got := p.screen(t).App.ID; got != "com.pinky.sim.films" {
		t.Fatalf("after am start: app %q; want com.pinky.sim.films", got)
	}
	if fl := flags(); !strings.Contains(" "+fl+" ", " SECURE ") {
		t.Errorf("dumpsys window in Films: the focused window's flags are %q; want SECURE among them", fl)
	}
	if out := p.run(t, "exec-out", "uiautomator", "dump", "/dev/tty"); !strings.Contains(out, `text="The Long Voyage"`) {
		t.Errorf("uiautomator dump in Films: got %q; want the film list", out)
	}
	shot := []byte(p.run(t, "exec-out", "screencap -p"))
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screencap -p: %v", err)
	}
	black := func(x, y int) bool { r, g, b, _ := img.At(x, y).RGBA(); return r|g|b == 0 }
	if !black(540, 1200) || !black(100, 2300) {
		t.Error("screencap: the secure app's area is not black")
	}
	bar := 0
	for x := 0; x < 1080; x += 4 {
		if !black(x, 20) {
			bar++
		}
	}
	if bar == 0 {
		t.Error("screencap: the status bar is black too; want it drawn")
	}
	fb := hostService(t, p.serial, "framebuffer:")
	const hdr = 14 * 4 // version 2's header
	at := func(x, y int) []byte { o := hdr + 4*(y*1080+x); return fb[o : o+3] }
	if len(fb) < hdr+1080*2400*4 || !bytes.Equal(at(540, 1200), []byte{0, 0, 0}) {
		t.Error("framebuffer: the secure app's area is not black")
	}

	p.run(t, "shell", "input", "keyevent", "KEYCODE_HOME")
	if fl := flags(); strings.Contains(" "+fl+" ", " SECURE ") {
		t.Errorf("dumpsys window on the launcher: flags %q; want no SECURE", fl)
	}
	shot = []byte(p.run(t, "exec-out", "screencap -p"))
	if img, err = png.Decode(bytes.NewReader(shot)); err != nil {
		t.Fatal(err)
	}
	if black(540, 1200) {
		t.Error("screencap of the launcher: black where the app was")
	}
}
