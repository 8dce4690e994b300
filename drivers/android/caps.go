package android

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// What each phone can do now (sdk.Device.Caps, SPEC.md section 4). The
// driver declares every capability it has code for; a phone serves those
// that this computer and the phone itself allow:
//
//   - video, pinch and displays need the scrcpy server on this computer
//     (video is its H.264, a pinch is two of its fingers, a background
//     display is a server of its own). Without one, input goes through adb
//     shell input (one finger) and there is no video;
//   - displays also need Android 13 or later on the phone (its uiautomator
//     reads other displays' windows), which the driver learns from getprop
//     when the phone comes online;
//   - wake, unlock, lock events, wait idle, apps and files need only adb.
//
// A phone that lacks a capability is listed with the reason and the fix,
// and that capability's calls answer sdk.ErrUnsupported with the same
// reason. When the driver finds a scrcpy server later (Config.FindScrcpy,
// looked for again at most every scrcpyLookEvery), loses the one it had
// (its file gone: a stat as often), or learns a phone's version,
// WatchDevices sends the phone CHANGED with its new set.

// needsScrcpy are the capabilities only the scrcpy server serves.
var needsScrcpy = []sdk.Capability{sdk.CapVideo, sdk.CapPinch, sdk.CapDisplays}

// scrcpyLookEvery is how often, at most, the driver looks again for a
// scrcpy server while it has none, or whether the one it has is still
// there (the person may install or remove scrcpy while the driver runs).
const scrcpyLookEvery = 10 * time.Second

// androidRelease is a phone's Android version, from getprop.
type androidRelease struct {
	level   int    // the API level, e.g. 33
	release string // the release, e.g. "13"
}

// scrcpyMissing is why the phones lack what needs the scrcpy server, for a
// person, given why none was found, and what to do.
func scrcpyMissing(why error) (reason, fix string) {
	if errors.Is(why, ErrNoScrcpyServer) {
		// FindScrcpyServer's own words, without where it looked (too long
		// for a reason; the log has it).
		reason, _, _ = strings.Cut(why.Error(), " (looked in ")
		return reason, scrcpyFix
	}
	return "the scrcpy server on this computer cannot be used: " + why.Error(), scrcpyFix
}

// android13Reason is why a phone before Android 13 has no background
// displays; release is its Android release, "" when unknown.
func android13Reason(release string) string {
	runs := "an older Android"
	if release != "" {
		runs = "Android " + release
	}
	return "background displays need Android 13 or later, whose uiautomator reads the windows of other displays than the phone's own; this phone runs " + runs
}

// unknownVersionReason is why a phone whose version could not be read yet
// has no background displays.
const unknownVersionReason = "the phone's Android version could not be read yet (getprop), and background displays need Android 13 or later"

// capsFor is what a phone serves now of declared (the driver's
// capabilities): noScrcpy is why this computer has no scrcpy server (nil:
// it has one), v the phone's version when known.
func capsFor(declared []sdk.Capability, noScrcpy error, v androidRelease, known bool) *sdk.DeviceCaps {
	c := &sdk.DeviceCaps{Served: []sdk.Capability{}}
	for _, x := range declared {
		reason, fix := "", ""
		switch {
		case x == sdk.CapDisplays && known && v.level < windowsLevel:
			// Installing scrcpy would not help: the phone's version says why.
			reason = android13Reason(v.release)
		case noScrcpy != nil && slices.Contains(needsScrcpy, x):
			reason, fix = scrcpyMissing(noScrcpy)
		case x == sdk.CapDisplays && !known:
			reason = unknownVersionReason
		}
		if reason == "" {
			c.Served = append(c.Served, x)
		} else {
			c.Missing = append(c.Missing, sdk.MissingCap{Cap: x, Reason: reason, Fix: fix})
		}
	}
	return c
}

// caps is what the phone with serial serves now.
func (d *Driver) caps(serial string) *sdk.DeviceCaps {
	_, noScrcpy := d.server()
	v, known := d.versionOf(serial)
	return capsFor(d.declared, noScrcpy, v, known)
}

// lacks returns the error a call of capability c answers on the phone with
// serial when the phone does not serve it now (sdk.ErrUnsupported, with the
// reason and the fix its Caps give), or nil when it does.
func (d *Driver) lacks(serial string, c sdk.Capability) error {
	for _, m := range d.caps(serial).Missing {
		if m.Cap == c {
			return unsupported(serial, m)
		}
	}
	return nil
}

// unsupported is the error of a call of a capability a phone lacks.
func unsupported(serial string, m sdk.MissingCap) error {
	if m.Fix == "" {
		return sdk.Errorf(sdk.ErrUnsupported, "%s: %s", serial, m.Reason)
	}
	return sdk.Errorf(sdk.ErrUnsupported, "%s: %s; to enable %s: %s", serial, m.Reason, m.Cap, m.Fix)
}

// noScrcpyErr is the error of a call that needs the scrcpy server when this
// computer has none.
func noScrcpyErr(serial string, why error) error {
	reason, fix := scrcpyMissing(why)
	return unsupported(serial, sdk.MissingCap{Cap: sdk.CapVideo, Reason: reason, Fix: fix})
}

// server returns the scrcpy server, or why there is none. At most every
// lookEvery it looks again: while there is none, with Config.FindScrcpy;
// while there is one, whether its file is still there (a stat), since the
// person may uninstall scrcpy or delete SCRCPY_SERVER_PATH's file while
// the driver runs.
func (d *Driver) server() (*ScrcpyServer, error) {
	d.scrMu.Lock()
	defer d.scrMu.Unlock()
	if time.Since(d.looked) >= d.lookEvery {
		switch {
		case d.scrcpy != nil:
			d.looked = time.Now()
			d.checkServer()
		case d.cfg.FindScrcpy != nil:
			d.looked = time.Now()
			d.findServer()
		}
	}
	if d.scrcpy == nil {
		return nil, d.scrErr
	}
	s := *d.scrcpy
	return &s, nil
}

// findServer looks for a scrcpy server with Config.FindScrcpy, and keeps
// it or why there is none (logged when it changes). d.scrMu is held.
func (d *Driver) findServer() {
	s, err := d.cfg.FindScrcpy()
	switch {
	case err == nil && s.Path != "":
		d.scrcpy, d.scrErr = &s, nil
		d.scrFile = fileID(s.Path)
		d.log.Info("scrcpy server found", "check", CheckScrcpy, "path", s.Path, "version", s.Version)
	case err == nil:
		err = ErrNoScrcpyServer
		fallthrough
	default:
		if d.scrErr == nil || err.Error() != d.scrErr.Error() {
			d.log.Warn(scrcpyProblem, "check", CheckScrcpy, "fix", scrcpyFix, "err", err)
		}
		d.scrErr = err
	}
}

// checkServer forgets the scrcpy server when its file is gone, and looks
// for one again at once (another path may have one), so that the phones
// lack what needs it with the same reason and fix as when the driver
// started without one. A file changed in place (scrcpy upgraded) is looked
// for again too, so that its new version is the one the driver starts it
// with: a scrcpy server refuses a client of another version. d.scrMu is
// held.
//
// What already runs on the phones goes on until it ends: a scrcpy server
// that runs on a phone no longer needs the file (it was pushed), so a
// running control session, video stream or background display keeps
// working, while a new session cannot start (startSession) and a new video
// stream or display answers sdk.ErrUnsupported (lacks). Ending them would
// cut the person's mirror for a file that the next install brings back.
func (d *Driver) checkServer() {
	path := d.scrcpy.Path
	fi, err := os.Stat(path)
	if err == nil {
		now := pushedID(path, fi)
		if d.scrFile == "" || now == d.scrFile || d.cfg.FindScrcpy == nil {
			d.scrFile = now
			return
		}
		d.log.Info("the scrcpy server's file changed: reading its version again", "path", path, "version", d.scrcpy.Version)
		d.scrcpy, d.scrErr = nil, nil
		d.findServer()
		return
	}
	d.scrcpy = nil
	// The check's WARN line follows, with what to do.
	d.log.Info("the scrcpy server's file is gone", "path", path, "err", err)
	if d.cfg.FindScrcpy != nil {
		d.scrErr = nil
		d.findServer()
		return
	}
	d.scrErr = fmt.Errorf("%w (%s, where it was, is gone)", ErrNoScrcpyServer, path)
	d.log.Warn(scrcpyProblem, "check", CheckScrcpy, "fix", scrcpyFix, "err", d.scrErr)
}

// fileID names a scrcpy server file as it is now (pushedID), or "" when
// it cannot be read.
func fileID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	return pushedID(path, fi)
}

// versionOf is the phone's Android version, when the driver read it.
func (d *Driver) versionOf(serial string) (androidRelease, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.versions[serial]
	return v, ok
}

// setVersion keeps the phone's Android version.
func (d *Driver) setVersion(serial string, v androidRelease) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.versions[serial] = v
}

// forgetVersion forgets the version of a phone the adb server no longer
// lists: another phone may come with its serial.
func (d *Driver) forgetVersion(serial string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.versions, serial)
}

// sameCaps reports whether two sets of capabilities say the same.
func sameCaps(a, b *sdk.DeviceCaps) bool {
	if a == nil || b == nil {
		return a == b
	}
	return slices.Equal(a.Served, b.Served) && slices.Equal(a.Missing, b.Missing)
}
