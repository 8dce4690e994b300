package android

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestCapsFor: what a phone serves, by what this computer has (a scrcpy
// server or not) and the phone's Android version.
func TestCapsFor(t *testing.T) {
	declared := []sdk.Capability{sdk.CapVideo, sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle, sdk.CapDisplays, sdk.CapPinch}
	notFound := fmt.Errorf("%w: SCRCPY_SERVER_PATH is not set (looked in /usr/share/scrcpy/scrcpy-server)", ErrNoScrcpyServer)
	noVersion := errors.New("the version of /x/scrcpy-server is unknown: set SCRCPY_SERVER_VERSION")
	v15, v11 := androidRelease{level: 35, release: "15"}, androidRelease{level: 30, release: "11"}
	for _, tt := range []struct {
		name     string
		noScrcpy error
		v        androidRelease
		known    bool
		served   []sdk.Capability
		missing  map[sdk.Capability]string // words of each reason
	}{
		{"everything", nil, v15, true, declared, nil},
		{"no scrcpy server", notFound, v15, true, []sdk.Capability{sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle},
			map[sdk.Capability]string{sdk.CapVideo: "no scrcpy server was found", sdk.CapDisplays: "no scrcpy server was found", sdk.CapPinch: "no scrcpy server was found"}},
		{"an unusable scrcpy server", noVersion, v15, true, []sdk.Capability{sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle},
			map[sdk.Capability]string{sdk.CapVideo: "SCRCPY_SERVER_VERSION", sdk.CapDisplays: "cannot be used", sdk.CapPinch: "cannot be used"}},
		{"Android 11", nil, v11, true, []sdk.Capability{sdk.CapVideo, sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle, sdk.CapPinch},
			map[sdk.Capability]string{sdk.CapDisplays: "this phone runs Android 11"}},
		{"Android 11 without scrcpy: the version says why", notFound, v11, true, []sdk.Capability{sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle},
			map[sdk.Capability]string{sdk.CapVideo: "no scrcpy server", sdk.CapDisplays: "Android 13 or later", sdk.CapPinch: "no scrcpy server"}},
		{"a version not read yet", nil, androidRelease{}, false, []sdk.Capability{sdk.CapVideo, sdk.CapWake, sdk.CapUnlock, sdk.CapWaitIdle, sdk.CapPinch},
			map[sdk.Capability]string{sdk.CapDisplays: "could not be read yet"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := capsFor(declared, tt.noScrcpy, tt.v, tt.known)
			if !slices.Equal(c.Served, tt.served) {
				t.Errorf("served %v; want %v", c.Served, tt.served)
			}
			if len(c.Missing) != len(tt.missing) {
				t.Errorf("missing %+v; want %d entries", c.Missing, len(tt.missing))
			}
			for _, m := range c.Missing {
				word, ok := tt.missing[m.Cap]
				if !ok || !strings.Contains(m.Reason, word) {
					t.Errorf("missing %s: %q; want a reason with %q", m.Cap, m.Reason, word)
				}
				if strings.Contains(m.Reason, "looked in") {
					t.Errorf("missing %s: %q; want the reason without where the driver looked", m.Cap, m.Reason)
				}
				if len(m.Reason) > sdk.MaxStateDetail || len(m.Fix) > sdk.MaxStateDetail {
					t.Errorf("missing %s: a reason or fix over %d bytes: %q, %q", m.Cap, sdk.MaxStateDetail, m.Reason, m.Fix)
				}
				// What scrcpy lacks the person can install; the phone's
				// version they cannot change.
				if wantFix := strings.Contains(m.Reason, "scrcpy"); (m.Fix != "") != wantFix {
					t.Errorf("missing %s: fix %q; want one: %v", m.Cap, m.Fix, wantFix)
				}
			}
		})
	}
}

// watchCaps runs d's WatchDevices until the test ends and returns its
// events of serial.
func watchCaps(t *testing.T, d *Driver, serial string) <-chan sdk.Device {
	t.Helper()
	ctx, cancel := context.WithCancel(testkit.Context(t))
	t.Cleanup(cancel)
	devs := make(chan sdk.Device, 64)
	go d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
		if ev.Device.ID != serial {
			return nil
		}
		select {
		case devs <- ev.Device:
		case <-ctx.Done():
		}
		return nil
	})
	return devs
}

// wantDevice waits for an event of the phone for which ok holds.
func wantDevice(t *testing.T, devs <-chan sdk.Device, what string, ok func(sdk.Device) bool) sdk.Device {
	t.Helper()
	deadline := time.After(15 * time.Second)
	var last sdk.Device
	for {
		select {
		case dev := <-devs:
			if ok(dev) {
				return dev
			}
			last = dev
		case <-deadline:
			t.Fatalf("no device event with %s; the last: %+v (caps %+v)", what, last, last.Caps)
		}
	}
}

func serves(dev sdk.Device, c sdk.Capability) bool {
	return dev.Caps != nil && slices.Contains(dev.Caps.Served, c)
}

// TestNoScrcpyServer: on a computer without a scrcpy server the phone is
// listed without video, pinch and displays, each with why and how to get
// it; their calls answer unsupported with the same reason; everything else
// works (a screenshot is screencap's), and the conformance suite passes for
// what the phone declares.
func TestNoScrcpyServer(t *testing.T) {
	r := newRig(t)
	r.scrcpy = ScrcpyServer{}
	d := r.driver(t)
	ctx := testkit.Context(t)
	dev := wantDevice(t, watchCaps(t, d, r.serial), "capabilities", func(dev sdk.Device) bool { return dev.Caps != nil })
	for _, c := range []sdk.Capability{sdk.CapWake, sdk.CapUnlock, sdk.CapLockEvents, sdk.CapWaitIdle, sdk.CapApps, sdk.CapFiles} {
		if !serves(dev, c) {
			t.Errorf("without scrcpy the phone still serves %s; its caps: %+v", c, dev.Caps)
		}
	}
	reason := map[sdk.Capability]string{}
	for _, c := range []sdk.Capability{sdk.CapVideo, sdk.CapPinch, sdk.CapDisplays} {
		m, ok := dev.Missing(c)
		if serves(dev, c) || !ok || !strings.Contains(m.Reason, "no scrcpy server was found") || !strings.Contains(m.Fix, "apt install scrcpy") || !strings.Contains(m.Fix, "SCRCPY_SERVER_PATH") {
			t.Errorf("without scrcpy, %s: served %v, missing %+v; want missing, saying why and how to install scrcpy", c, serves(dev, c), m)
		}
		reason[c] = m.Reason
	}
	unsupported := func(c sdk.Capability, what string, err error) {
		t.Helper()
		if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), reason[c]) {
			t.Errorf("%s without scrcpy: %v; want ErrUnsupported with the reason %q", what, err, reason[c])
		}
	}
	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: r.serial}, func(sdk.VideoPacket) error { return nil })
	unsupported(sdk.CapVideo, "StreamVideo", err)
	unsupported(sdk.CapVideo, "RequestKeyFrame", d.RequestKeyFrame(ctx, r.serial, 0))
	_, err = d.CreateDisplay(ctx, r.serial, 720, 1280, 0)
	unsupported(sdk.CapDisplays, "CreateDisplay", err)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	_, err = d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: 540, Y: 1000}, Scale: 2000})
	unsupported(sdk.CapPinch, "a pinch", err)
	img, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: r.serial, Format: sdk.FormatPNG})
	if err != nil || len(img.Data) == 0 {
		t.Errorf("a screenshot without scrcpy (screencap): %v", err)
	}

	drivertest.Run(t, drivertest.Config{Driver: d, Options: drivertest.Options{DeviceID: r.serial, PIN: "1234", SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestCapsOldAndroid: a phone before Android 13 is listed without
// displays, saying why (no fix: it is the phone's), and keeps the rest.
func TestCapsOldAndroid(t *testing.T) {
	r := newRig(t, func(cfg *adbd.Config) { cfg.SDKLevel = 30 })
	d := r.driver(t)
	dev := wantDevice(t, watchCaps(t, d, r.serial), "capabilities", func(dev sdk.Device) bool { return dev.Caps != nil })
	m, ok := dev.Missing(sdk.CapDisplays)
	if serves(dev, sdk.CapDisplays) || !ok || !strings.Contains(m.Reason, "Android 13 or later") || !strings.Contains(m.Reason, "Android 11") {
		t.Errorf("Android 11: displays served %v, missing %+v; want missing, saying it needs Android 13", serves(dev, sdk.CapDisplays), m)
	}
	if !serves(dev, sdk.CapVideo) || !serves(dev, sdk.CapPinch) {
		t.Errorf("Android 11 with a scrcpy server: %+v; want video and pinch served", dev.Caps)
	}
	if _, err := d.CreateDisplay(testkit.Context(t), r.serial, 720, 1280, 0); !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), m.Reason) {
		t.Errorf("CreateDisplay on Android 11: %v; want ErrUnsupported with %q", err, m.Reason)
	}
}

// TestScrcpyFoundLater: a scrcpy server installed while the driver runs is
// found, and the phone is sent CHANGED with video, pinch and displays.
func TestScrcpyFoundLater(t *testing.T) {
	r := newRig(t)
	srv := r.scrcpy
	r.scrcpy = ScrcpyServer{}
	var installed atomic.Bool
	r.find = func() (ScrcpyServer, error) {
		if !installed.Load() {
			return ScrcpyServer{}, ErrNoScrcpyServer
		}
		return srv, nil
	}
	d := r.driver(t)
	devs := watchCaps(t, d, r.serial)
	wantDevice(t, devs, "no video", func(dev sdk.Device) bool { return dev.Caps != nil && !serves(dev, sdk.CapVideo) })
	installed.Store(true)
	dev := wantDevice(t, devs, "video once scrcpy is installed", func(dev sdk.Device) bool { return serves(dev, sdk.CapVideo) })
	if !serves(dev, sdk.CapPinch) || !serves(dev, sdk.CapDisplays) || len(dev.Caps.Missing) != 0 {
		t.Errorf("with scrcpy found: %+v; want pinch and displays too, nothing missing", dev.Caps)
	}
	ctx, cancel := context.WithCancel(testkit.Context(t))
	defer cancel()
	got := make(chan sdk.VideoPacket, 1)
	go d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: r.serial}, func(pk sdk.VideoPacket) error {
		select {
		case got <- pk:
		default:
		}
		return nil
	})
	select {
	case pk := <-got:
		if !pk.Config {
			t.Errorf("the stream's first packet is not a config packet: %+v", pk)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no video from the scrcpy server found later")
	}
}

// TestFindScrcpyServerMissing: a SCRCPY_SERVER_PATH that names nothing is
// no scrcpy server, and the phones' reason says so.
func TestFindScrcpyServerMissing(t *testing.T) {
	path := t.TempDir() + "/scrcpy-server"
	_, err := FindScrcpyServer(path, "3.3.4")
	if !errors.Is(err, ErrNoScrcpyServer) {
		t.Fatalf("FindScrcpyServer(%s): %v; want ErrNoScrcpyServer", path, err)
	}
	if reason, fix := scrcpyMissing(err); !strings.Contains(reason, "SCRCPY_SERVER_PATH is "+path) || !strings.Contains(fix, "apt install scrcpy") {
		t.Errorf("the reason %q, fix %q; want them to name SCRCPY_SERVER_PATH and how to install scrcpy", reason, fix)
	}
}
