package android

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"image/png"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/still"
)

// Background displays (sdk.Displayer). A background display is a virtual
// display that a scrcpy server makes with new_display=WxH/DPI: an agent's
// task runs there while the person keeps using the phone's own screen. Its
// server is the display's session: its video is the display's, its control
// socket's input goes to the display, and START_APP launches onto it. The
// display lives as long as the server (vd_destroy_content: the apps'
// windows on it go with it), so RemoveDisplay ends the server, and a phone
// that goes away ends its displays.
//
// The display is read with Android 13's `uiautomator dump --windows FILE`
// (every display's windows; it writes to a file only), one dump at a time
// per phone like the reads of display 0.

var _ sdk.Displayer = (*Driver)(nil)

// Limits of background displays.
const (
	maxDisplays    = 4    // background displays per phone
	minDisplaySide = 64   // pixels, as the contract asks
	maxDisplaySide = 4096 // pixels, as the contract asks
	minDensity     = 60
	maxDensity     = 1000

	// displayIDWait bounds the wait for the server's "New display" line.
	displayIDWait = 10 * time.Second
	// probeWait bounds the window dump that CreateDisplay reads to check
	// that the phone can read the display.
	probeWait = 8 * time.Second
	// launchWait bounds the wait for what START_APP did.
	launchWait = 5 * time.Second
	// keyFrameWait bounds the wait for the key frame of a screenshot.
	keyFrameWait = 10 * time.Second
)

// display is a background display of a phone and the scrcpy session that
// holds it.
type display struct {
	id            int
	width, height int // as made (portrait or landscape as asked)
	dpi           int
	s             *session
	busy          chan struct{} // full while an action runs on the display
}

// lock waits for the display's actions before, or for ctx.
func (ds *display) lock(ctx context.Context) error {
	select {
	case ds.busy <- struct{}{}:
		return nil
	case <-ctx.Done():
		return mapErr(ctx.Err())
	}
}

func (ds *display) unlock() { <-ds.busy }

// newDisplayLine is what the scrcpy server logs once it made the display
// (NewDisplayCapture: Ln.i("New display: " + w + "x" + h + "/" + dpi + " (id=" + id + ")")).
var newDisplayLine = regexp.MustCompile(`^\[server\] INFO: New display: (\d+)x(\d+)/(\d+) \(id=(\d+)\)`)

// CreateDisplay implements sdk.Displayer: it starts a scrcpy server with
// new_display=WxH/DPI (the phone's density scaled to the size when
// densityDPI is 0), takes the display's id from the server's log, and
// checks that the phone can read it (Android 13 or later).
func (d *Driver) CreateDisplay(ctx context.Context, serial string, width, height, densityDPI int) (int, error) {
	p, dev, err := d.phone(ctx, serial)
	if err != nil {
		return 0, err
	}
	if err := d.lacksDisplays(ctx, dev); err != nil {
		return 0, err
	}
	switch {
	case width < minDisplaySide || width > maxDisplaySide || height < minDisplaySide || height > maxDisplaySide:
		return 0, sdk.Invalid("display size %dx%d: want each side %d to %d pixels", width, height, minDisplaySide, maxDisplaySide)
	case densityDPI != 0 && (densityDPI < minDensity || densityDPI > maxDensity):
		return 0, sdk.Invalid("display density %d: want 0 (the phone's) or %d to %d dpi", densityDPI, minDensity, maxDensity)
	}
	p.creating.Lock()
	defer p.creating.Unlock()
	if n := p.liveDisplays(); n >= maxDisplays {
		return 0, sdk.Errorf(sdk.ErrBusy, "%s already has %d background displays, the most this driver makes; remove one first", serial, n)
	}
	o := scrcpy.DefaultOptions()
	o.NewDisplay = fmt.Sprintf("%dx%d", width, height)
	if densityDPI != 0 {
		o.NewDisplay += "/" + strconv.Itoa(densityDPI)
	}
	o.MaxSize = 0 // the video is the display's own size
	o.ClipboardAutosync = false
	// Never wake the phone for a background display: the person may have
	// put it down.
	o.PowerOn = false
	s, err := d.startSession(ctx, p, dev, o)
	if err != nil {
		return 0, d.noDisplay(ctx, dev, err)
	}
	ds, err := d.newDisplay(ctx, s)
	if err != nil {
		s.close()
		return 0, d.noDisplay(ctx, dev, err)
	}
	// Reading the display needs Android 13's uiautomator: find out now,
	// and leave nothing behind when the phone cannot.
	if err := d.probeWindows(ctx, p, dev, ds); err != nil {
		s.close()
		return 0, err
	}
	p.dispMu.Lock()
	p.displays[ds.id] = ds
	p.dispMu.Unlock()
	d.log.Info("background display", "serial", serial, "display", ds.id, "size", fmt.Sprintf("%dx%d/%d", ds.width, ds.height, ds.dpi))
	return ds.id, nil
}

// lacksDisplays is the error of a phone that lacks displays (no scrcpy
// server on this computer, or before Android 13), saying why as its Caps
// do; nil when it has them. A version not read yet is read now.
func (d *Driver) lacksDisplays(ctx context.Context, dev *adb.Device) error {
	serial := dev.Serial()
	if _, known := d.versionOf(serial); !known {
		if level, rel, err := androidVersion(ctx, dev); err == nil {
			d.setVersion(serial, androidRelease{level: level, release: rel})
		}
	}
	return d.lacks(serial, sdk.CapDisplays)
}

// newDisplay waits for the server's "New display" line and returns the
// display it names, its session pumping the video.
func (d *Driver) newDisplay(ctx context.Context, s *session) (*display, error) {
	wctx, cancel := context.WithTimeout(ctx, displayIDWait)
	defer cancel()
	line, err := s.log.wait(wctx, 0, s.done, func(l logLine) bool { return newDisplayLine.MatchString(l.text) })
	switch {
	case errors.Is(err, errLogEnded):
		return nil, fmt.Errorf("the scrcpy server exited without making a display (it said: %s)", s.lastWords())
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("the scrcpy server made no display within %v (it said: %s)", displayIDWait, s.lastWords())
	}
	m := newDisplayLine.FindStringSubmatch(line.text)
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	dpi, _ := strconv.Atoi(m[3])
	id, _ := strconv.Atoi(m[4])
	if id <= 0 || w <= 0 || h <= 0 {
		return nil, fmt.Errorf("the scrcpy server logged %q: not a background display", line.text)
	}
	s.sw, s.sh, s.maxSize = w, h, 0
	s.pumped = make(chan struct{})
	go s.pump()
	return &display{id: id, width: w, height: h, dpi: dpi, s: s, busy: make(chan struct{}, 1)}, nil
}

// noDisplay is the error of a display that could not be made: on a phone
// older than Android 13 the contract's unsupported, else err as it is.
func (d *Driver) noDisplay(ctx context.Context, dev *adb.Device, err error) error {
	if ctx.Err() != nil {
		return mapErr(ctx.Err())
	}
	if level, rel, lerr := androidVersion(ctx, dev); lerr == nil && level < windowsLevel {
		return needAndroid13(dev.Serial(), rel)
	}
	if errors.As(err, new(*sdk.Error)) { // already one of the contract's errors
		return err
	}
	return sdk.Errorf(sdk.ErrInternal, "%s: making a background display: %v", dev.Serial(), err)
}

// windowsLevel is the API level of Android 13, whose uiautomator dumps the
// windows of every display.
const windowsLevel = 33

// needAndroid13 is the error of a phone that cannot have background displays.
func needAndroid13(serial, release string) error {
	return sdk.Errorf(sdk.ErrUnsupported, "%s: %s", serial, android13Reason(release))
}

// androidVersion is the phone's API level and release.
func androidVersion(ctx context.Context, dev *adb.Device) (int, string, error) {
	out, err := shell(ctx, dev, "getprop ro.build.version.sdk; getprop ro.build.version.release")
	if err != nil {
		return 0, "", err
	}
	f := strings.Fields(string(out))
	if len(f) < 1 {
		return 0, "", fmt.Errorf("getprop gave no API level")
	}
	level, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, "", fmt.Errorf("getprop gave API level %q", f[0])
	}
	rel := ""
	if len(f) > 1 {
		rel = f[1]
	}
	return level, rel, nil
}

// probeWindows reads the phone's window dump once: a phone whose
// uiautomator ignores --windows (before Android 13) writes the
// single-display document, and cannot read the display. Any other failure
// is left for the reads to report.
func (d *Driver) probeWindows(ctx context.Context, p *phone, dev *adb.Device, ds *display) error {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	pctx, cancel := context.WithTimeout(ctx, probeWait)
	defer cancel()
	doc, err := readWindows(pctx, dev)
	if err == nil {
		_, err = dump.ParseUIAutomatorWindows(bytes.NewReader(doc), ds.id)
	}
	switch {
	case errors.Is(err, dump.ErrSingleDisplay):
		_, rel, _ := androidVersion(ctx, dev)
		return needAndroid13(dev.Serial(), rel)
	case ctx.Err() != nil:
		return mapErr(ctx.Err())
	case err != nil && !errors.Is(err, dump.ErrNoDisplay):
		d.log.Debug("could not check the display's window dump; reads will tell", "serial", dev.Serial(), "display", ds.id, "err", err)
	}
	return nil
}

// RemoveDisplay implements sdk.Displayer: it ends the display's scrcpy
// server, and the display with it. An unknown display is already removed.
func (d *Driver) RemoveDisplay(ctx context.Context, serial string, displayID int) error {
	if displayID <= 0 {
		return sdk.Invalid("display %d: only background displays (id > 0) can be removed", displayID)
	}
	p, _ := d.known(serial)
	if p == nil {
		// Not known: DEVICE_NOT_FOUND, unless the adb server lists it now.
		var err error
		if p, _, err = d.phone(ctx, serial); err != nil {
			return err
		}
	}
	// A phone that is offline keeps no display: removing it succeeds.
	if ds := p.takeDisplay(displayID); ds != nil {
		ds.s.close()
		d.log.Info("background display removed", "serial", serial, "display", displayID)
		return nil
	}
	// A phone that lacks displays has none to remove, and says why.
	return d.lacksDisplays(ctx, d.adb.Device(serial))
}

// liveDisplays is how many background displays the phone has.
func (p *phone) liveDisplays() int {
	p.dispMu.Lock()
	defer p.dispMu.Unlock()
	n := 0
	for _, ds := range p.displays {
		if ds.s.alive() {
			n++
		}
	}
	return n
}

// takeDisplay removes a display from the phone's and returns it, or nil.
func (p *phone) takeDisplay(id int) *display {
	p.dispMu.Lock()
	defer p.dispMu.Unlock()
	ds := p.displays[id]
	delete(p.displays, id)
	return ds
}

// endDisplays ends every background display of the phone.
func (p *phone) endDisplays() {
	p.dispMu.Lock()
	all := p.displays
	p.displays = map[int]*display{}
	p.dispMu.Unlock()
	for _, ds := range all {
		ds.s.close()
	}
}

// display returns a background display of the phone. An unknown one is
// INVALID_ARGUMENT, as the contract asks; so is one whose server ended
// (the display went with it), with what it said.
func (d *Driver) display(p *phone, id int) (*display, error) {
	p.dispMu.Lock()
	ds := p.displays[id]
	p.dispMu.Unlock()
	if ds == nil {
		return nil, sdk.Invalid("%s has no display %d", p.serial, id)
	}
	if !ds.s.alive() {
		said := ds.s.lastWords()
		if p.takeDisplay(id) != nil {
			d.log.Warn("a background display ended with its scrcpy server", "serial", p.serial, "display", id, "said", said)
		}
		ds.s.close()
		return nil, sdk.Invalid("display %d of %s ended with its scrcpy server (%s): create another", id, p.serial, said)
	}
	return ds, nil
}

// displayScreen reads a background display from the phone's window dump.
func (d *Driver) displayScreen(ctx context.Context, p *phone, dev *adb.Device, ds *display) (*sdk.Screen, error) {
	p.readMu.Lock()
	defer p.readMu.Unlock()
	doc, err := readWindows(ctx, dev)
	if err != nil {
		return nil, err
	}
	sc, err := dump.ParseUIAutomatorWindows(bytes.NewReader(doc), ds.id)
	switch {
	case errors.Is(err, dump.ErrSingleDisplay):
		// The phone cannot read the display: it is of no use.
		if ds := p.takeDisplay(ds.id); ds != nil {
			ds.s.close()
		}
		_, rel, _ := androidVersion(ctx, dev)
		return nil, needAndroid13(dev.Serial(), rel)
	case errors.Is(err, dump.ErrNoDisplay):
		// uiautomator leaves out a display without windows: it shows nothing.
		sc = &sdk.Screen{}
	case err != nil:
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: display %d: %v", dev.Serial(), ds.id, err)
	}
	fit(sc, ds)
	sc.CapturedAt = time.Now()
	return sc, nil
}

// fit gives a background display's screen its size (the display's, turned
// when its content turned it), state and density. A background display has
// no lock screen and stays on while the phone's own screen is off.
func fit(sc *sdk.Screen, ds *display) {
	w, h := ds.width, ds.height
	if sc.Width > 0 && sc.Height > 0 && (sc.Width > sc.Height) != (w > h) {
		w, h = h, w
	}
	if sc.Width == 0 {
		sc.Orientation = sdk.OrientationPortrait
		if w > h {
			sc.Orientation = sdk.OrientationLandscape
		}
	}
	sc.Width, sc.Height, sc.DensityDPI = w, h, ds.dpi
	sc.LockState, sc.ScreenOn = sdk.LockUnlocked, true
	r := sdk.Rect{Right: w, Bottom: h}
	for i := range sc.Elements {
		b := &sc.Elements[i].Bounds
		b.Left, b.Top = min(max(b.Left, 0), r.Right), min(max(b.Top, 0), r.Bottom)
		b.Right, b.Bottom = min(max(b.Right, b.Left), r.Right), min(max(b.Bottom, b.Top), r.Bottom)
	}
}

// windowsDir is where the window dumps go on the phone, each under a name
// of its own, deleted once read.
const windowsDir = "/data/local/tmp"

// readWindows runs Android 13's `uiautomator dump --windows FILE` (it
// writes to a file only) and returns the file's bytes; the file is deleted
// in the same shell call. A busy screen, another UiAutomation client, or a
// dump that came out empty (the window list can be empty just after
// uiautomator asks for it) are tried again, as reads of display 0 are.
func readWindows(ctx context.Context, dev *adb.Device) ([]byte, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	file := windowsDir + "/pinky-windows-" + hex.EncodeToString(b[:]) + ".xml"
	cmd := "uiautomator dump --windows " + file + " >&2; cat " + file + " 2>/dev/null; rm -f " + file
	return retryDump(ctx, dev.Serial(), func() ([]byte, error) {
		r, err := dev.Shell(ctx, cmd)
		if err != nil {
			return nil, mapErr(err)
		}
		said := strings.TrimSpace(string(r.Stderr))
		switch {
		case strings.Contains(said, "already registered"):
			return nil, errTaken
		case strings.Contains(said, "could not get idle state"):
			return nil, ErrNotIdle
		case len(bytes.TrimSpace(r.Stdout)) == 0:
			return nil, retryable{fmt.Errorf("uiautomator wrote no window dump (it said: %q)", said)}
		}
		return r.Stdout, nil
	})
}

// actOnDisplay performs an action on a background display, through its
// scrcpy session: input goes to the display, and an app is launched onto
// it with START_APP (`am start --display` is refused to the shell for other
// displays than the phone's own on recent Android).
func (d *Driver) actOnDisplay(ctx context.Context, p *phone, dev *adb.Device, ds *display, a sdk.Action) (sdk.ActResult, error) {
	switch a.Kind {
	case sdk.ActStop:
		// Stopping an app stops it on every display.
		if err := checkPackage(a.AppID); err != nil {
			return sdk.ActResult{}, err
		}
		_, err := shell(ctx, dev, "am force-stop "+a.AppID)
		return sdk.ActResult{}, err
	case sdk.ActOpenURL:
		return sdk.ActResult{}, sdk.Errorf(sdk.ErrUnsupported,
			"%s: opening a URL on a background display is not supported (Android refuses `am start --display` to the shell): launch the app on the display, then use it", p.serial)
	}
	if err := ds.lock(ctx); err != nil {
		return sdk.ActResult{}, err
	}
	defer ds.unlock()
	s := ds.s
	sent := s.c.Sent()
	var res sdk.ActResult
	var err error
	if a.Kind == sdk.ActLaunch {
		res, err = d.startApp(ctx, p, ds, a.AppID)
	} else {
		err = d.inject(ctx, s, a)
	}
	if s.alive() {
		return res, err
	}
	if s.c.Sent() == sent && ctx.Err() == nil {
		// Nothing reached the phone, and the display is gone with its server.
		_, err := d.display(p, ds.id)
		return sdk.ActResult{}, err
	}
	return sdk.ActResult{}, d.lost(ctx, p, s, err)
}

// startApp launches an app onto the display with scrcpy's START_APP, and
// reads what the server did from its log.
func (d *Driver) startApp(ctx context.Context, p *phone, ds *display, pkg string) (sdk.ActResult, error) {
	if err := checkPackage(pkg); err != nil {
		return sdk.ActResult{}, err
	}
	if len(pkg) > scrcpy.MaxAppName {
		return sdk.ActResult{}, sdk.Invalid("app id %q: longer than %d bytes", pkg, scrcpy.MaxAppName)
	}
	s := ds.s
	mark := s.log.mark()
	if err := s.c.Send(scrcpy.StartApp{Name: pkg}); err != nil {
		return sdk.ActResult{}, err
	}
	notFound := `No app found for package "` + pkg + `"`
	wctx, cancel := context.WithTimeout(ctx, launchWait)
	defer cancel()
	line, err := s.log.wait(wctx, mark, s.done, func(l logLine) bool {
		return strings.Contains(l.text, notFound) || strings.Contains(l.text, "No known display id to start app") ||
			strings.Contains(l.text, "Starting app ") && strings.Contains(l.text, "["+pkg+"]")
	})
	switch {
	case ctx.Err() != nil:
		return sdk.ActResult{}, mapErr(ctx.Err())
	case err != nil:
		// The server says nothing at a log level above info: it was sent.
		return sdk.ActResult{Detail: "START_APP sent; the scrcpy server did not say what it did"}, nil
	case strings.Contains(line.text, notFound):
		return sdk.ActResult{}, sdk.Errorf(sdk.ErrAppNotFound, "no launchable app %q on %s", pkg, p.serial)
	case strings.Contains(line.text, "No known display id"):
		return sdk.ActResult{}, sdk.Errorf(sdk.ErrInternal, "%s: the scrcpy server does not know display %d yet: %s", p.serial, ds.id, line.text)
	}
	return sdk.ActResult{Detail: fmt.Sprintf("started on display %d with scrcpy's START_APP", ds.id)}, nil
}

// displayShot is a screenshot of a background display: screencap cannot
// capture a virtual display, so it is a key frame of the display's video,
// decoded by ffmpeg when this computer has it.
func (d *Driver) displayShot(ctx context.Context, p *phone, ds *display, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	ffmpeg, err := exec.LookPath("ffmpeg")
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrUnsupported,
			"%s: a screenshot of background display %d is a frame of its video, which needs ffmpeg on this computer (screencap cannot capture a virtual display): install ffmpeg (Debian: apt install ffmpeg), or read the display's screen without a screenshot",
			p.serial, ds.id)
	}
	kctx, cancel := context.WithTimeout(ctx, keyFrameWait)
	defer cancel()
	config, key, err := ds.s.keyFrame(kctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, mapErr(ctx.Err())
		}
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: display %d: %v", p.serial, ds.id, err)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, "-hide_banner", "-loglevel", "error", "-f", "h264", "-i", "pipe:0",
		"-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "pipe:1")
	cmd.Stdin = bytes.NewReader(append(append([]byte(nil), config.Data...), key.Data...))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: display %d: ffmpeg could not decode a key frame: %v: %s", p.serial, ds.id, err, strings.TrimSpace(stderr.String()))
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: display %d: ffmpeg gave no PNG: %v", p.serial, ds.id, err)
	}
	return still.Encode(img, req)
}
