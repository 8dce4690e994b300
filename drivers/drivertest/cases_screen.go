package drivertest

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // screenshots may be JPEG
	_ "image/png"  // or PNG
	"slices"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Cases about reading the screen: the element tree and still images.

var screenCases = []Case{
	{Name: "screen-wellformed", NeedsDevice: true, Doc: "GetScreen: size > 0, lock state and orientation set, ids positive and unique, parents earlier, bounds sane", run: checkScreenWellformed},
	{Name: "screen-unknown-display", NeedsDevice: true, Doc: "GetScreen and Screenshot of a display that was never created answer INVALID_ARGUMENT", run: checkUnknownDisplay},
	{Name: "screen-stable", NeedsDevice: true, Doc: "two reads of a still screen are equal, ignoring element ids and capture time", run: checkScreenStable},
	{Name: "screenshot-png", NeedsDevice: true, Doc: "Screenshot as PNG (and by default) decodes to the declared size, the screen's size", run: checkScreenshotPNG},
	{Name: "screenshot-jpeg", NeedsDevice: true, Doc: "Screenshot as JPEG decodes to the declared size", run: checkScreenshotJPEG},
	{Name: "screenshot-bad-args", NeedsDevice: true, Doc: "Screenshot with max_side < 0 or quality outside 0..100 answers INVALID_ARGUMENT", run: checkScreenshotBadArgs},
	{Name: "screenshot-max-side", NeedsDevice: true, Doc: "Screenshot honours max_side and keeps the aspect ratio", run: checkScreenshotMaxSide},
	{Name: "frame-capture", Capability: sdk.CapFrameCapture, NeedsDevice: true, Doc: "CaptureFrame (JPEG by default, PNG on request) decodes to the declared size", run: checkFrameCapture},
}

var knownOrientations = []sdk.Orientation{
	sdk.OrientationPortrait, sdk.OrientationLandscape, sdk.OrientationPortraitUpsideDown, sdk.OrientationLandscapeRight,
}

// elementName names an element in a message, by id and what identifies it.
func elementName(e sdk.Element) string {
	s := fmt.Sprintf("element %d", e.ID)
	switch {
	case e.ResourceID != "":
		s += fmt.Sprintf(" (%s)", e.ResourceID)
	case e.Text != "" && len(e.Text) <= 40:
		s += fmt.Sprintf(" %q", e.Text)
	case e.Class != "":
		s += fmt.Sprintf(" (%s)", e.Class)
	}
	return s
}

// screenProblems lists what in sc breaks the contract.
func screenProblems(sc *sdk.Screen) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if sc.Width <= 0 || sc.Height <= 0 {
		add("size: got %dx%d; want both > 0", sc.Width, sc.Height)
	}
	if sc.LockState != sdk.LockLocked && sc.LockState != sdk.LockUnlocked {
		add("lock state: got %q; want %q or %q", sc.LockState, sdk.LockLocked, sdk.LockUnlocked)
	}
	if !slices.Contains(knownOrientations, sc.Orientation) {
		add("orientation: got %q; want one of %v", sc.Orientation, knownOrientations)
	}
	if sc.DensityDPI < 0 {
		add("density: got %d; want >= 0", sc.DensityDPI)
	}
	seen := map[int]bool{}
	for i, e := range sc.Elements {
		name := fmt.Sprintf("elements[%d], %s", i, elementName(e))
		if e.ID <= 0 {
			add("%s: id %d; want > 0", name, e.ID)
		}
		if seen[e.ID] {
			add("%s: id %d appears twice; want ids unique within a screen", name, e.ID)
		}
		if e.ParentID < 0 {
			add("%s: parent id %d; want 0 (root) or an element's id", name, e.ParentID)
		} else if e.ParentID != 0 && !seen[e.ParentID] {
			if slices.ContainsFunc(sc.Elements[i:], func(x sdk.Element) bool { return x.ID == e.ParentID }) {
				add("%s: parent %d comes after it; want pre-order, parents first", name, e.ParentID)
			} else {
				add("%s: parent %d is not in the screen", name, e.ParentID)
			}
		}
		if e.ParentID == e.ID && e.ID != 0 {
			add("%s: is its own parent", name)
		}
		seen[e.ID] = true
		b := e.Bounds
		if b.Right < b.Left || b.Bottom < b.Top {
			add("%s: bounds %v have a negative size; want right >= left and bottom >= top", name, b)
		} else if e.Visible && !b.Empty() && (b.Left < 0 || b.Top < 0 || b.Right > sc.Width || b.Bottom > sc.Height) {
			add("%s: visible, bounds %v; want them inside the %dx%d screen", name, b, sc.Width, sc.Height)
		}
		for field, v := range map[string]string{"text": e.Text, "content description": e.ContentDescription,
			"resource id": e.ResourceID, "hint": e.Hint, "value": e.Value, "class": e.Class} {
			if !utf8.ValidString(v) {
				add("%s: %s is not valid UTF-8", name, field)
			}
		}
		if len(e.Text) > 64<<10 {
			add("%s: text of %d bytes; want at most 64 KiB", name, len(e.Text))
		}
	}
	return out
}

func checkScreenWellformed(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.screen(t, ctx)
	for _, p := range screenProblems(sc) {
		t.Errorf("screen of device %q: %s", dev, p)
	}
	t.Logf("device %q: %dx%d, %s, %d elements, app %q", dev, sc.Width, sc.Height, sc.LockState, len(sc.Elements), sc.App.ID)
	if len(sc.Elements) > 0 {
		return
	}
	// A locked or dark screen has no elements: check an unlocked one too.
	sc, why := s.tryReady(t, ctx)
	if why != "" {
		t.Logf("no elements to check: %s", why)
		return
	}
	for _, p := range screenProblems(sc) {
		t.Errorf("unlocked screen of device %q: %s", dev, p)
	}
	t.Logf("device %q unlocked: %d elements, app %q", dev, len(sc.Elements), sc.App.ID)
}

// shape is a screen without what may change between two reads of a still
// screen: element ids become positions in the list.
type shape struct {
	App           sdk.App
	LockState     sdk.LockState
	ScreenOn      bool
	Width, Height int
	Orientation   sdk.Orientation
	KeyboardShown bool
	Elements      []sdk.Element
}

func shapeOf(sc *sdk.Screen) shape {
	sh := shape{App: sc.App, LockState: sc.LockState, ScreenOn: sc.ScreenOn, Width: sc.Width, Height: sc.Height,
		Orientation: sc.Orientation, KeyboardShown: sc.KeyboardShown}
	pos := map[int]int{}
	for i, e := range sc.Elements {
		pos[e.ID] = i + 1
		if p, ok := pos[e.ParentID]; ok {
			e.ParentID = p
		} else if e.ParentID != 0 {
			e.ParentID = -1
		}
		e.ID = i + 1
		sh.Elements = append(sh.Elements, e)
	}
	return sh
}

func checkScreenStable(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	s.settle(t, ctx)
	a := shapeOf(s.screen(t, ctx))
	b := shapeOf(s.screen(t, ctx))
	if cmp.Equal(a, b) {
		return
	}
	// Something moved (a clock, a cursor): give it one more chance.
	s.settle(t, ctx)
	c := shapeOf(s.screen(t, ctx))
	if diff := cmp.Diff(b, c); diff != "" {
		t.Errorf("device %q: two reads of a settled screen differ, ignoring element ids (-first +second):\n%s", dev, diff)
	}
}

// checkImage decodes img and compares it with what it declares.
func checkImage(t T, what string, img *sdk.Image, want sdk.ImageFormat) (w, h int, ok bool) {
	t.Helper()
	if img == nil {
		t.Errorf("%s: the reply has no image", what)
		return 0, 0, false
	}
	if img.Format != want {
		t.Errorf("%s: declared format %q; want %q", what, img.Format, want)
	}
	if n := len(img.Data); n == 0 || n > 16<<20 {
		t.Errorf("%s: %d bytes of image data; want 1 to 16 MiB", what, n)
		return 0, 0, false
	}
	m, format, err := image.Decode(bytes.NewReader(img.Data))
	if err != nil {
		t.Errorf("%s: the image does not decode: %v", what, err)
		return 0, 0, false
	}
	if format != string(want) {
		t.Errorf("%s: the data is %s; want %s", what, format, want)
	}
	size := m.Bounds().Size()
	if size.X != img.Width || size.Y != img.Height {
		t.Errorf("%s: decoded size %dx%d; want the declared %dx%d", what, size.X, size.Y, img.Width, img.Height)
	}
	return size.X, size.Y, true
}

func (s *suite) screenshot(t T, req sdk.ScreenshotRequest, want sdk.ImageFormat) (w, h int, ok bool) {
	t.Helper()
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	req.DeviceID = dev
	what := fmt.Sprintf("Screenshot of device %q (format %q, max side %d)", dev, req.Format, req.MaxSide)
	img, err := s.drv.Screenshot(ctx, req)
	if err != nil {
		t.Errorf("%s: %s", what, errText(err))
		return 0, 0, false
	}
	return checkImage(t, what, img, want)
}

func checkScreenshotPNG(t T, s *suite) {
	ctx := s.ctx(t)
	sc := s.screen(t, ctx)
	for _, f := range []sdk.ImageFormat{sdk.FormatPNG, ""} {
		w, h, ok := s.screenshot(t, sdk.ScreenshotRequest{Format: f}, sdk.FormatPNG)
		if ok && (w != sc.Width || h != sc.Height) {
			t.Errorf("Screenshot of device %q (format %q): %dx%d; want the screen's %dx%d", s.device.ID, f, w, h, sc.Width, sc.Height)
		}
	}
}

func checkScreenshotJPEG(t T, s *suite) {
	s.screenshot(t, sdk.ScreenshotRequest{Format: sdk.FormatJPEG, Quality: 80}, sdk.FormatJPEG)
}

// checkScaled checks that a w×h image is the screen scaled to max side m.
func checkScaled(t T, what string, w, h, sw, sh, m int) {
	t.Helper()
	long, short, slong, sshort := max(w, h), min(w, h), max(sw, sh), min(sw, sh)
	if long > m {
		t.Errorf("%s: %dx%d; want the longer side at most %d", what, w, h, m)
	}
	if (w >= h) != (sw >= sh) && w != h && sw != sh {
		t.Errorf("%s: %dx%d; want the orientation of the %dx%d screen", what, w, h, sw, sh)
	}
	// short/long should be sshort/slong, within a pixel of rounding.
	wantShort := float64(sshort) * float64(long) / float64(slong)
	if d := float64(short) - wantShort; d > 1 || d < -1 {
		t.Errorf("%s: %dx%d; want the %dx%d screen's aspect ratio (short side %.1f±1)", what, w, h, sw, sh, wantShort)
	}
}

func checkScreenshotMaxSide(t T, s *suite) {
	ctx := s.ctx(t)
	sc := s.screen(t, ctx)
	m := min(320, max(sc.Width, sc.Height)/2)
	if m < 1 {
		t.Fatalf("screen of device %q is %dx%d; cannot scale it down", s.device.ID, sc.Width, sc.Height)
	}
	for _, f := range []sdk.ImageFormat{sdk.FormatPNG, sdk.FormatJPEG} {
		w, h, ok := s.screenshot(t, sdk.ScreenshotRequest{Format: f, MaxSide: m}, f)
		if ok {
			checkScaled(t, fmt.Sprintf("Screenshot of device %q (format %q, max side %d)", s.device.ID, f, m), w, h, sc.Width, sc.Height, m)
		}
	}
}

func checkFrameCapture(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.screen(t, ctx)
	for _, f := range []sdk.ImageFormat{"", sdk.FormatPNG} {
		want := f
		if want == "" {
			want = sdk.FormatJPEG
		}
		what := fmt.Sprintf("CaptureFrame of device %q (format %q)", dev, f)
		img, err := s.drv.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: dev, Format: f})
		if err != nil {
			t.Errorf("%s: %s", what, errText(err))
			continue
		}
		checkImage(t, what, img, want)
	}
	m := min(320, max(sc.Width, sc.Height)/2)
	what := fmt.Sprintf("CaptureFrame of device %q (max side %d)", dev, m)
	img, err := s.drv.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: dev, MaxSide: m})
	if err != nil {
		t.Errorf("%s: %s", what, errText(err))
		return
	}
	if w, h, ok := checkImage(t, what, img, sdk.FormatJPEG); ok {
		checkScaled(t, what, w, h, sc.Width, sc.Height, m)
	}
}

// neverDisplay is a display id no test creates.
const neverDisplay = 9999

func checkUnknownDisplay(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	_, err := s.drv.Screen(ctx, dev, neverDisplay)
	wantErr(t, fmt.Sprintf("GetScreen of display %d of device %q", neverDisplay, dev), err, sdk.ErrInvalidArgument)
	_, err = s.drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: dev, DisplayID: neverDisplay})
	wantErr(t, fmt.Sprintf("Screenshot of display %d of device %q", neverDisplay, dev), err, sdk.ErrInvalidArgument)
}

func checkScreenshotBadArgs(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	for _, req := range []sdk.ScreenshotRequest{
		{Format: sdk.FormatPNG, MaxSide: -1},
		{Format: sdk.FormatJPEG, Quality: 101},
		{Format: sdk.FormatJPEG, Quality: -1},
	} {
		req.DeviceID = dev
		_, err := s.drv.Screenshot(ctx, req)
		wantErr(t, fmt.Sprintf("Screenshot of device %q with max side %d, quality %d", dev, req.MaxSide, req.Quality), err, sdk.ErrInvalidArgument)
	}
}
