package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/still"
)

// stateSep separates dumpsys window's output from dumpsys power's in one
// shell call.
const stateSep = "\n__PINKY_POWER__\n"

// notIdleRetries is how many more times a dump that found the screen never
// idle is tried.
const notIdleRetries = 2

// errTaken is uiautomator's "UiAutomationService … already registered":
// another tool (Appium, a test runner) holds the phone's UiAutomation, and
// Android allows one.
var errTaken = errors.New("another UiAutomation client holds the phone")

// retryDump runs dump again, 300 ms apart and at most notIdleRetries more
// times, while it fails with ErrNotIdle, errTaken or a retryable error;
// what still fails then is BUSY for the first two, INTERNAL for the rest.
// Other errors are returned as they are.
func retryDump[T any](ctx context.Context, serial string, dump func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		v, err := dump()
		if !errors.Is(err, ErrNotIdle) && !errors.Is(err, errTaken) && !errors.As(err, new(retryable)) {
			return v, err
		}
		var zero T
		if try == notIdleRetries {
			switch {
			case errors.Is(err, errTaken):
				return zero, sdk.Errorf(sdk.ErrBusy, "%s: another tool is using UI Automator on the phone (Appium, a test runner?); stop it, then read again", serial)
			case errors.Is(err, ErrNotIdle):
				return zero, sdk.Errorf(sdk.ErrBusy, "%s: %v; try again when it settles", serial, err)
			}
			return zero, sdk.Errorf(sdk.ErrInternal, "%s: %v", serial, err)
		}
		select {
		case <-ctx.Done():
			return zero, mapErr(ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// retryable is a dump failure worth another try.
type retryable struct{ error }

// Screen implements sdk.Driver.
func (d *Driver) Screen(ctx context.Context, serial string, display int) (*sdk.Screen, error) {
	p, dev, err := d.phone(ctx, serial)
	if err != nil {
		return nil, err
	}
	if display != 0 {
		ds, err := d.display(p, display)
		if err != nil {
			return nil, err
		}
		return d.displayScreen(ctx, p, dev, ds)
	}
	p.readMu.Lock()
	defer p.readMu.Unlock()
	return d.readScreen(ctx, p, dev)
}

// readScreen reads a phone's screen: the dump, then the app in front and
// the lock and screen state. A dump the video says is still the screen is
// reused (reuse.go). A faster reader would replace dumpScreen.
func (d *Driver) readScreen(ctx context.Context, p *phone, dev *adb.Device) (*sdk.Screen, error) {
	begun := time.Now()
	if kept := d.unchanged(p, begun); kept != nil {
		sc := kept.copy()
		err := screenState(ctx, dev, sc)
		if err == nil && kept.sameState(sc) {
			return sc, nil
		}
		// The screen went off, locked or changed app without a frame (a
		// dark screen sends none): read it whole.
		p.kept = nil
	}
	s := d.videoSession(p)
	sc, err := dumpScreen(ctx, p, dev)
	if err != nil {
		return nil, err
	}
	if err := screenState(ctx, dev, sc); err != nil {
		return nil, err
	}
	d.keep(p, s, sc, begun)
	return sc, nil
}

// dumpScreen is the dump: the active window's elements, a system dialog's
// window over the app merged in (dialog.go).
func dumpScreen(ctx context.Context, p *phone, dev *adb.Device) (*sdk.Screen, error) {
	p.dumps.Add(1)
	sc, err := retryDump(ctx, dev.Serial(), func() (*sdk.Screen, error) {
		out, err := dev.ExecOutput(ctx, "uiautomator dump /dev/tty")
		if err != nil {
			return nil, mapErr(err)
		}
		sc, err := readDump(out)
		switch {
		case err != nil && bytes.Contains(out, []byte("already registered")):
			return nil, errTaken
		case err != nil && !errors.Is(err, ErrNotIdle):
			// uiautomator finds no window on a screen that is off.
			if l, lerr := lockState(ctx, dev); lerr == nil && !l.ScreenOn {
				return nil, sdk.Errorf(sdk.ErrScreenOff, "%s: the screen is off: wake it first", dev.Serial())
			}
			return nil, sdk.Errorf(sdk.ErrInternal, "%s: %v", dev.Serial(), err)
		}
		return sc, err
	})
	if err != nil {
		return nil, err
	}
	if floating(sc) {
		sc = overDialog(ctx, p, dev, sc)
	}
	return sc, nil
}

// screenState sets the app in front and the lock and screen state of sc,
// read from dumpsys, and its time.
func screenState(ctx context.Context, dev *adb.Device, sc *sdk.Screen) error {
	state, err := shell(ctx, dev, "dumpsys window; echo; echo __PINKY_POWER__; dumpsys power")
	if err != nil {
		return mapErr(err)
	}
	window, power, _ := bytes.Cut(state, []byte(stateSep))
	if f, err := ParseFocus(window); err == nil {
		sc.App.ID = f.Package
	}
	if l := ParseLock(window, power); l.Known {
		sc.LockState = sdk.LockUnlocked
		if l.Locked {
			sc.LockState = sdk.LockLocked
		}
		sc.ScreenOn = l.ScreenOn
	}
	sc.CapturedAt = time.Now()
	return nil
}

// Screenshot implements sdk.Driver with screencap's PNG, scaled and
// re-encoded when asked. A background display, which screencap cannot
// capture, gives a key frame of its video (see displayShot).
func (d *Driver) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	p, dev, err := d.phone(ctx, req.DeviceID)
	if err != nil {
		return nil, err
	}
	var ds *display
	if req.DisplayID != 0 {
		if ds, err = d.display(p, req.DisplayID); err != nil {
			return nil, err
		}
	}
	if req.MaxSide < 0 || req.Quality < 0 || req.Quality > 100 {
		return nil, sdk.Invalid("max side %d, quality %d", req.MaxSide, req.Quality)
	}
	if ds != nil {
		return d.displayShot(ctx, p, ds, req)
	}
	out, err := dev.ExecOutput(ctx, "screencap -p")
	if err != nil {
		return nil, mapErr(err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: screencap gave no PNG: %v", req.DeviceID, err)
	}
	// A black picture may be a secure window's (secure.go).
	blanked := mostlyBlack(img) && d.secureFocus(ctx, dev)
	shot, err := still.Encode(img, req)
	if err != nil {
		return nil, err
	}
	shot.Blanked = blanked
	return shot, nil
}

// screenSize is the phone's screen size in its current orientation, from
// `wm size` (the override when there is one).
func screenSize(ctx context.Context, dev *adb.Device) (int, int, error) {
	out, err := shell(ctx, dev, "wm size")
	if err != nil {
		return 0, 0, err
	}
	return parseWmSize(out)
}

// parseWmSize reads `wm size`: the override when there is one, else the
// physical size.
func parseWmSize(out []byte) (int, int, error) {
	var w, h int
	for _, line := range bytes.Split(out, []byte("\n")) {
		var a, b int
		if _, err := fmt.Sscanf(string(bytes.TrimSpace(line)), "Override size: %dx%d", &a, &b); err == nil {
			w, h = a, b
			break
		}
		if _, err := fmt.Sscanf(string(bytes.TrimSpace(line)), "Physical size: %dx%d", &a, &b); err == nil {
			w, h = a, b
		}
	}
	if w <= 0 || h <= 0 {
		return 0, 0, fmt.Errorf("wm size gave no size: %q", out)
	}
	return w, h, nil
}
