package adbd_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// TestRotation turns the phone through Debian's adb the ways tools do, and
// reads the rotation back the ways drivers do; table by way and rotation.
func TestRotation(t *testing.T) {
	tests := []struct {
		name     string
		turn     string // shell command that turns the phone
		rot      string
		w, h     int
		wantOrie sdk.Orientation
	}{
		{"settings put user_rotation 1", "settings put system accelerometer_rotation 0; settings put system user_rotation 1", "1", 2400, 1080, sdk.OrientationLandscape},
		{"settings put user_rotation 3", "settings put system accelerometer_rotation 0; settings put system user_rotation 3", "3", 2400, 1080, sdk.OrientationLandscapeRight},
		{"settings put user_rotation 2", "settings put system accelerometer_rotation 0; settings put system user_rotation 2", "2", 1080, 2400, sdk.OrientationPortraitUpsideDown},
		{"content insert", "content insert --uri content://settings/system --bind name:s:accelerometer_rotation --bind value:i:0; " +
			"content insert --uri content://settings/system --bind name:s:user_rotation --bind value:i:1", "1", 2400, 1080, sdk.OrientationLandscape},
		{"auto-rotate on keeps it upright", "settings put system user_rotation 1", "0", 1080, 2400, sdk.OrientationPortrait},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPhone(t, adbd.Config{})
			p.unlock(t)
			p.run(t, "shell", tt.turn)
			if s := p.screen(t); s.Orientation != tt.wantOrie || s.Width != tt.w || s.Height != tt.h {
				t.Fatalf("screen: got %s %dx%d; want %s %dx%d", s.Orientation, s.Width, s.Height, tt.wantOrie, tt.w, tt.h)
			}
			if out := p.run(t, "shell", "wm size"); out != "Physical size: 1080x2400\n" {
				t.Errorf("wm size: got %q; want the natural size", out)
			}
			if out := p.run(t, "shell", "dumpsys input | grep SurfaceOrientation"); strings.TrimSpace(out) != "SurfaceOrientation: "+tt.rot {
				t.Errorf("dumpsys input: got %q; want SurfaceOrientation: %s", out, tt.rot)
			}
			if out := p.run(t, "shell", "dumpsys display | grep mCurrentOrientation"); strings.TrimSpace(out) != "mCurrentOrientation="+tt.rot {
				t.Errorf("dumpsys display: got %q; want mCurrentOrientation=%s", out, tt.rot)
			}
			dump := p.run(t, "exec-out", "uiautomator dump /dev/tty")
			if !strings.Contains(dump, `<hierarchy rotation="`+tt.rot+`">`) {
				t.Errorf("uiautomator dump: want rotation %s in %.200q", tt.rot, dump)
			}
		})
	}
}

// TestVideoFullScreen taps the video player's Full screen through input tap
// and finds the dump landscape, with the exit control beyond the portrait
// width; input tap in landscape coordinates leaves it.
func TestVideoFullScreen(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	p.run(t, "shell", "am start -n com.pinky.sim.video/.MainActivity")
	tap := func(what string) {
		t.Helper()
		for _, e := range p.screen(t).Elements {
			if e.Text == what {
				c := e.Bounds.Center()
				p.run(t, "shell", fmt.Sprintf("input tap %d %d", c.X, c.Y))
				return
			}
		}
		t.Fatalf("no %q on screen", what)
	}
	tap("Full screen")
	dump := p.run(t, "exec-out", "uiautomator dump /dev/tty")
	if !strings.Contains(dump, `<hierarchy rotation="1">`) || !strings.Contains(dump, `text="Exit full screen"`) {
		t.Fatalf("full screen dump: want rotation 1 and Exit full screen in %.300q", dump)
	}
	if out := p.run(t, "shell", "dumpsys window | grep mCurrentRotation"); strings.TrimSpace(out) != "mCurrentRotation=ROTATION_90" {
		t.Errorf("dumpsys window: got %q; want ROTATION_90", out)
	}
	tap("Exit full screen")
	if s := p.screen(t); s.Orientation != sdk.OrientationPortrait || s.Width != 1080 {
		t.Errorf("after Exit full screen: got %s %dx%d; want portrait 1080x2400", s.Orientation, s.Width, s.Height)
	}
}
