// Package android is the driver of real Android phones: pinky-driver-android.
// It reaches phones through the person's own adb server (package adb: one
// socket per request, no adb process per action), reads screens with
// `uiautomator dump` and dumpsys, and streams video and injects input
// through scrcpy's server (package scrcpy), which it pushes and starts on the
// phone when first needed. Nothing is installed on the phone by hand.
//
// # Reading
//
// Screen runs `uiautomator dump /dev/tty` through exec: (it needs a tty) and
// `dumpsys window` and `dumpsys power` in one shell call, and parses them
// with the parsers every driver shares (drivers/dump) and ParseFocus and
// ParseLock. A screen that never idles ("could not get idle state") is read
// again twice, then reported. The read is one function (readScreen) so that
// a faster on-phone reader can replace the dump later.
//
// # Input and video
//
// Taps, presses, swipes, keys and text go through scrcpy's control socket
// (milliseconds rather than the half second of `adb shell input`). Text
// that scrcpy cannot inject (anything but ASCII) is pasted through the
// clipboard, which is restored afterwards. When no scrcpy server can be
// started (none found on this computer), input falls back to `adb shell
// input`, and the driver declares no video.
//
// The scrcpy server is found at $SCRCPY_SERVER_PATH, then where the scrcpy
// package installs it on Linux and macOS; its exact version is
// $SCRCPY_SERVER_VERSION, else what `scrcpy --version` says. Each phone has
// one control session, started on the first action and kept; a session
// that died is started again once before an action fails. Video runs a
// session of its own per stream.
package android

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Version is the driver's version.
var Version = "0.1.0"

// Config configures a Driver.
type Config struct {
	// ADB says how to reach the adb server; zero is the environment's
	// (ANDROID_ADB_SERVER_PORT, ADB_SERVER_SOCKET) or 127.0.0.1:5037.
	ADB adb.Options
	// Scrcpy is the scrcpy server to push to phones; zero finds it (see
	// FindScrcpyServer).
	Scrcpy ScrcpyServer
	Logger *slog.Logger
}

// Driver drives the Android phones an adb server knows.
type Driver struct {
	cfg Config
	log *slog.Logger
	adb *adb.Client

	mu      sync.Mutex
	phones  map[string]*phone // by serial
	scrcpy  *ScrcpyServer     // nil when none was found
	scrErr  error             // why none was found
	started bool
}

// phone is what the driver keeps of one device.
type phone struct {
	serial string
	info   adb.DeviceInfo

	ctlMu  sync.Mutex // serializes the control session's start and use
	ctl    *session   // the control session, nil until the first action
	pushed bool       // the scrcpy server is on the phone
}

// New returns a driver; it reaches the adb server on first use.
func New(cfg Config) (*Driver, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	c, err := adb.New(cfg.ADB)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, log: log, adb: c, phones: map[string]*phone{}}
	if cfg.Scrcpy.Path != "" {
		s := cfg.Scrcpy
		d.scrcpy = &s
	} else if s, err := FindScrcpyServer(); err == nil {
		d.scrcpy = &s
	} else {
		d.scrErr = err
		log.Warn("no scrcpy server: input goes through adb shell input and there is no video", "err", err)
	}
	return d, nil
}

// Close ends every scrcpy session.
func (d *Driver) Close() {
	d.mu.Lock()
	phones := d.phones
	d.mu.Unlock()
	for _, p := range phones {
		p.ctlMu.Lock()
		if p.ctl != nil {
			p.ctl.close()
			p.ctl = nil
		}
		p.ctlMu.Unlock()
	}
}

// Info implements sdk.Driver.
func (d *Driver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name: "android", Version: Version,
		Description: "Android phones over adb (USB or Wi-Fi), with scrcpy for video and input",
		Platforms:   []sdk.Platform{sdk.PlatformAndroid},
	}, nil
}

// WatchDevices implements sdk.Driver from the adb server's device tracking.
func (d *Driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	var prev []adb.DeviceInfo
	synced := false
	for list, err := range d.adb.TrackDevices(ctx) {
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		d.remember(list)
		for _, ev := range adb.Diff(prev, list) {
			kind := map[adb.EventKind]sdk.DeviceEventKind{adb.DeviceAdded: sdk.DeviceAdded, adb.DeviceRemoved: sdk.DeviceRemoved, adb.DeviceChanged: sdk.DeviceChanged}[ev.Kind]
			if ev.Device.State == adb.StateUnauthorized && ev.Kind != adb.DeviceRemoved {
				d.log.Warn("a phone has not authorized this computer: accept the \"Allow USB debugging?\" prompt on the phone", "serial", ev.Device.Serial)
			}
			if err := send(sdk.DeviceEvent{Kind: kind, Device: device(ev.Device)}); err != nil {
				return err
			}
		}
		prev = list
		if !synced {
			synced = true
			if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// remember keeps the device list for the phones' details.
func (d *Driver) remember(list []adb.DeviceInfo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, info := range list {
		if p := d.phones[info.Serial]; p != nil {
			p.info = info
		} else {
			d.phones[info.Serial] = &phone{serial: info.Serial, info: info}
		}
	}
}

// device is the contract's view of an adb device.
func device(info adb.DeviceInfo) sdk.Device {
	dev := sdk.Device{
		ID: info.Serial, Name: strings.ReplaceAll(info.Model, "_", " "), Model: strings.ReplaceAll(info.Model, "_", " "),
		Platform: sdk.PlatformAndroid, Connection: sdk.ConnUSB,
	}
	if strings.Contains(info.Serial, ":") || strings.HasPrefix(info.Serial, "adb-") {
		dev.Connection = sdk.ConnWiFi // host:port, or an mDNS name
	}
	if dev.Name == "" {
		dev.Name = info.Serial
	}
	switch info.State {
	case adb.StateDevice:
		dev.State = sdk.StateOnline
	case adb.StateUnauthorized, adb.StateAuthorizing:
		dev.State = sdk.StateUnauthorized
	case adb.StateOffline, adb.StateConnecting, adb.StateNoPermissions:
		dev.State = sdk.StateOffline
	default:
		dev.State = sdk.StateBooting
	}
	return dev
}

// phone returns the phone with serial, ready for services, or the error
// the contract wants: not found, unauthorized (with what to do), offline.
func (d *Driver) phone(ctx context.Context, serial string) (*phone, *adb.Device, error) {
	if serial == "" {
		return nil, nil, sdk.Invalid("device id is empty")
	}
	d.mu.Lock()
	p := d.phones[serial]
	d.mu.Unlock()
	if p == nil {
		list, err := d.adb.Devices(ctx)
		if err != nil {
			return nil, nil, mapErr(err)
		}
		d.remember(list)
		d.mu.Lock()
		p = d.phones[serial]
		d.mu.Unlock()
		if p == nil {
			return nil, nil, sdk.Errorf(sdk.ErrDeviceNotFound, "no Android device %q on the adb server", serial)
		}
	}
	switch p.info.State {
	case adb.StateDevice:
	case adb.StateUnauthorized:
		return nil, nil, sdk.Errorf(sdk.ErrDeviceUnauthorized, "%s has not authorized this computer: accept the \"Allow USB debugging?\" prompt on the phone", serial)
	default:
		return nil, nil, sdk.Errorf(sdk.ErrDeviceOffline, "%s is %s", serial, p.info.State)
	}
	return p, d.adb.Device(serial), nil
}

// mapErr keeps the contract's categories that adb errors carry, and makes
// anything else an internal error with its text.
func mapErr(err error) error {
	if err == nil || sdk.Category(err) != nil {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return sdk.Errorf(sdk.ErrTimeout, "%v", err)
	case errors.Is(err, adb.ErrADBNotInstalled), errors.Is(err, adb.ErrServerNotRunning):
		return sdk.Errorf(sdk.ErrInternal, "%v", err)
	}
	return sdk.Errorf(sdk.ErrInternal, "%v", err)
}

// shell runs a command and returns its stdout, or an error with its stderr
// when it exits non-zero.
func shell(ctx context.Context, dev *adb.Device, cmd string) ([]byte, error) {
	r, err := dev.Shell(ctx, cmd)
	if err != nil {
		return nil, mapErr(err)
	}
	if r.Exit != 0 {
		msg := strings.TrimSpace(string(r.Stderr))
		if msg == "" {
			msg = strings.TrimSpace(string(r.Stdout))
		}
		return r.Stdout, fmt.Errorf("%s: exit %d: %s", firstWord(cmd), r.Exit, msg)
	}
	return r.Stdout, nil
}

func firstWord(s string) string {
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i]
	}
	return s
}
