package sim

import (
	"context"
	"image/color"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Secure windows. An Android app can mark its windows with FLAG_SECURE
// (banks and streaming apps do); a world's app does it with secure: true.
// On a phone, screencap and any mirror whose display is not secure draw
// such a window black and keep the status and navigation bars: scrcpy's
// own display has not been secure since Android 12, where shell
// permissions can no longer create one (scrcpy's ScreenCapture.java,
// createDisplay). uiautomator dump still reads the window, since
// accessibility is not blocked, and dumpsys window lists SECURE among its
// flags (fl=, from WindowManager.LayoutParams.toString). So here: the
// tree is read as on any screen, the picture draws a secure layer as one
// black rectangle (boxes), a screenshot says Blanked, and the adb face's
// dumpsys window asks SecureWindow. iOS has no FLAG_SECURE for an app's
// whole screen, so an iPhone draws every app.

// secure reports whether app a's windows are drawn black on this phone.
func (ds *display) secure(a *AppSpec) bool {
	return a != nil && a.Secure && ds.spec.Platform == sdk.PlatformAndroid
}

// blanked reports whether a picture of v shows a secure window black: a
// secure layer is drawn and no shade or recents panel covers the screen
// (their window has the focus then, as on a phone).
func (ds *display) blanked(v *view) bool {
	if ds.shade || ds.recents {
		return false
	}
	for _, l := range v.layers {
		if l.secure {
			return true
		}
	}
	return false
}

// secureFill is what a secure window shows in a picture: pure black, as
// SurfaceFlinger draws it.
var secureFill = color.RGBA{A: 255}

// SecureWindow reports whether the focused window of the phone's main
// display is a secure one (an app with secure: true on an Android phone,
// in front and not under the lock screen, the shade or recents), for the
// adb face's dumpsys window.
func (d *Driver) SecureWindow(ctx context.Context, deviceID string) (bool, error) {
	var secure bool
	err := d.with(ctx, "screen", deviceID, "", func(p *phone) error {
		ds := p.main()
		if !ds.lit() || ds.keyguard() || ds.shade || ds.recents {
			return nil
		}
		if e := ds.top(); e != nil {
			secure = ds.secure(e.app)
		}
		return nil
	})
	return secure, err
}
