package android

import (
	"context"
	"image"
	"regexp"
	"strconv"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
)

// Secure windows. An app that sets FLAG_SECURE on its window (banks,
// payment and streaming apps) is drawn black by screencap and by scrcpy's
// video (scrcpy's display has not been secure since Android 12, where
// shell permissions can no longer create a secure one: scrcpy's
// ScreenCapture.createDisplay), while the status and navigation bars still
// show and uiautomator dump still reads the window. dumpsys window lists
// the flag as SECURE in the window's fl= line (fl=#… in hexadecimal before
// Android 8), from WindowManager.LayoutParams.toString. A screenshot that
// is mostly black asks dumpsys window for the focused window's flags, so
// that a normal screenshot costs nothing more, and says Blanked when the
// flag is there.

// flagSecure is WindowManager.LayoutParams.FLAG_SECURE.
const flagSecure = 0x2000

// blackShare is the share of a screenshot's pixels that must be black for
// the driver to ask whether the focused window is secure: the bars (and a
// keyboard, up to about half the screen) stay drawn over a secure window.
const blackShare = 0.5

var (
	// mCurrentFocus=Window{4e7d1a9 u0 com.example.bank/com.example.bank.Main}
	focusTokenRE = regexp.MustCompile(`mCurrentFocus=(Window\{[^}]*\})`)
	// fl=LAYOUT_IN_SCREEN SECURE … (Android 8+), fl=#81812100 (before);
	// not pfl= (the private flags).
	windowFlagsRE = regexp.MustCompile(`(?:^|\s)fl=(#[0-9a-fA-F]+|[A-Z0-9_ ]+)`)
)

// SecureFocus reads `dumpsys window windows` output: whether the focused
// window's flags hold FLAG_SECURE. known is false when the output names no
// focused window, or no flags for it.
func SecureFocus(out []byte) (secure, known bool) {
	s := string(out)
	m := focusTokenRE.FindStringSubmatch(s)
	if m == nil {
		return false, false
	}
	at := strings.Index(s, " "+m[1]+":")
	if at < 0 {
		return false, false
	}
	entry := s[at+len(m[1])+2:]
	if end := strings.Index(entry, "\n  Window #"); end >= 0 {
		entry = entry[:end]
	}
	f := windowFlagsRE.FindStringSubmatch(entry)
	if f == nil {
		return false, false
	}
	if hex, ok := strings.CutPrefix(f[1], "#"); ok {
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return false, false
		}
		return v&flagSecure != 0, true
	}
	for _, name := range strings.Fields(f[1]) {
		if name == "SECURE" {
			return true, true
		}
	}
	return false, true
}

// mostlyBlack reports whether at least blackShare of img's pixels, sampled
// on a grid, are black: a picture worth asking about a secure window.
func mostlyBlack(img image.Image) bool {
	b := img.Bounds()
	step := max(1, min(b.Dx(), b.Dy())/120)
	black, all := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			r, g, bl, _ := img.At(x, y).RGBA()
			if max(r, g, bl)>>8 <= 4 {
				black++
			}
			all++
		}
	}
	return all > 0 && float64(black) >= blackShare*float64(all)
}

// secureFocus asks the phone whether its focused window is secure; a
// failed or unreadable dumpsys counts as not secure (the picture is then
// returned as it is).
func (d *Driver) secureFocus(ctx context.Context, dev *adb.Device) bool {
	out, err := shell(ctx, dev, "dumpsys window windows")
	if err != nil {
		d.log.Debug("dumpsys window for a black screenshot", "serial", dev.Serial(), "err", err)
		return false
	}
	secure, known := SecureFocus(out)
	if !known {
		d.log.Debug("dumpsys window names no focused window's flags", "serial", dev.Serial())
	}
	return secure
}
