package drivertest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Cases about the driver as a whole: its info, capabilities and devices.

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9-]{1,32}$`)
	deviceIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
)

var driverCases = []Case{
	{Name: "info", Doc: "GetInfo: name [a-z0-9-]{1,32}, version set, known platforms, no duplicate capabilities", run: checkInfo},
	{Name: "capabilities", Doc: "every RPC of a declared capability is served; every RPC of an undeclared one answers UNIMPLEMENTED", run: checkCapabilities},
	{Name: "device-capabilities", NeedsDevice: true, Doc: "each online device's own capabilities: served ones are the driver's and are not answered UNSUPPORTED; every other capability of the driver has a missing entry with a reason and answers UNSUPPORTED", run: checkDeviceCapabilities},
	{Name: "devices-sync", Doc: "WatchDevices sends ADDED for the current devices, then SYNCED, then stays open until canceled", run: checkDevicesSync},
	{Name: "devices-two-watchers", Doc: "two watchers get the same initial devices", run: checkTwoWatchers},
	{Name: "unknown-device", Doc: "every RPC on an unknown device answers NOT_FOUND (DEVICE_NOT_FOUND), whatever its display, with an error detail that parses", run: checkUnknownDevice},
	{Name: "concurrent-reads", NeedsDevice: true, Doc: "eight concurrent GetScreen and Screenshot calls all succeed", run: checkConcurrentReads},
	{Name: "lock-events", Capability: sdk.CapLockEvents, NeedsDevice: true, Doc: "with lock events, devices carry their lock state", run: checkLockEvents},
}

var knownPlatforms = []sdk.Platform{sdk.PlatformAndroid, sdk.PlatformIOS, sdk.PlatformOther}

var knownConnections = []sdk.Connection{sdk.ConnUSB, sdk.ConnWiFi, sdk.ConnVirtual, sdk.ConnNetwork}

var knownStates = []sdk.DeviceState{sdk.StateOnline, sdk.StateOffline, sdk.StateUnauthorized, sdk.StateBooting}

func checkInfo(t T, s *suite) {
	ctx := s.ctx(t)
	start := time.Now()
	if _, err := s.drv.Info(ctx); err != nil {
		t.Fatalf("GetInfo: got %s; want it to always succeed", errText(err))
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("GetInfo took %v; want at most 1s", d.Round(time.Millisecond))
	}
	info := s.getInfo(t)
	if !nameRE.MatchString(info.Name) {
		t.Errorf("name: got %q; want 1 to 32 of [a-z0-9-]", info.Name)
	}
	if info.Version == "" {
		t.Errorf("version: got none; want the driver's version, e.g. \"1.4.2\"")
	}
	if n := len(info.Description); n > 200 {
		t.Errorf("description: got %d bytes; want at most 200", n)
	}
	if len(info.Platforms) == 0 {
		t.Errorf("platforms: got none; want at least one of %v", knownPlatforms)
	}
	for i, p := range info.Platforms {
		if !slices.Contains(knownPlatforms, p) {
			t.Errorf("platforms[%d]: got %q; want one of %v", i, p, knownPlatforms)
		}
	}
	seen := map[sdk.Capability]bool{}
	for _, c := range info.Capabilities {
		if seen[c] {
			t.Errorf("capabilities: %q is listed twice; want no duplicates", c)
		}
		seen[c] = true
	}
}

func checkCapabilities(t T, s *suite) {
	info := s.getInfo(t)
	ctx := s.ctx(t)
	for _, p := range probes {
		// An unknown device keeps the calls free of side effects. A served
		// RPC answers DEVICE_NOT_FOUND (checked by unknown-device); here
		// only UNIMPLEMENTED matters.
		err := p.call(ctx, s.drv, unknownDevice)
		switch declared := info.Has(p.cap); {
		case declared && errors.Is(err, sdk.ErrUnsupported):
			t.Errorf("%s: the driver declares %q, but the call answers %s; want it served", p.name, p.cap, errText(err))
		case !declared && !errors.Is(err, sdk.ErrUnsupported):
			t.Errorf("%s: the driver does not declare %q, but the call answers %s; want UNSUPPORTED (gRPC UNIMPLEMENTED)", p.name, p.cap, errText(err))
		}
	}
}

// checkDeviceCapabilities checks each online device against what it
// declares (SPEC.md section 4). The Unlock probe is left out for a device
// that serves unlock: a wrong PIN on a real phone counts toward its
// lockout, and the unlock cases check that RPC.
func checkDeviceCapabilities(t T, s *suite) {
	info := s.getInfo(t)
	ctx := s.ctx(t)
	for _, d := range s.online(t) {
		if d.Caps == nil {
			t.Logf("device %q sends no capabilities of its own: it serves the driver's", d.ID)
			continue
		}
		served := map[sdk.Capability]bool{}
		for _, c := range d.Caps.Served {
			served[c] = true
			if !info.Has(c) {
				t.Errorf("device %q serves %q, which the driver does not declare in GetInfo; want only the driver's capabilities", d.ID, c)
			}
		}
		missing := map[sdk.Capability]bool{}
		for i, m := range d.Caps.Missing {
			switch {
			case served[m.Cap]:
				t.Errorf("device %q: missing[%d] names %q, which the device also serves; want each capability either served or missing", d.ID, i, m.Cap)
			case !info.Has(m.Cap):
				t.Errorf("device %q: missing[%d] names %q, which the driver does not declare in GetInfo; want only the driver's capabilities the device lacks", d.ID, i, m.Cap)
			case missing[m.Cap]:
				t.Errorf("device %q: missing[%d] names %q a second time; want one entry per capability", d.ID, i, m.Cap)
			}
			if strings.TrimSpace(m.Reason) == "" {
				t.Errorf("device %q: missing %q has no reason; want one sentence saying why, for the person", d.ID, m.Cap)
			}
			missing[m.Cap] = true
		}
		for _, c := range info.Capabilities {
			if !served[c] && !missing[c] {
				t.Errorf("device %q neither serves %q nor lists it as missing; want a missing entry with the reason and, when there is one, the fix", d.ID, c)
			}
		}
		for _, p := range probes {
			if !info.Has(p.cap) {
				continue // the capabilities case checks what the driver does not declare
			}
			if served[p.cap] {
				if p.cap == sdk.CapUnlock {
					continue
				}
				if err := p.call(ctx, s.drv, d.ID); errors.Is(err, sdk.ErrUnsupported) {
					t.Errorf("device %q declares %q, but %s answers %s; a device MUST NOT declare what it cannot serve now (SPEC.md section 4)", d.ID, p.cap, p.name, errText(err))
				}
				continue
			}
			err := p.call(ctx, s.drv, d.ID)
			wantErr(t, fmt.Sprintf("%s on device %q, which does not serve %q", p.name, d.ID, p.cap), err, sdk.ErrUnsupported)
		}
		t.Logf("device %q serves %v; lacks %v", d.ID, d.Caps.Served, slices.Sorted(maps.Keys(missing)))
	}
}

func checkDevicesSync(t T, s *suite) {
	info := s.getInfo(t)
	ctx := s.ctx(t)
	w := watchInitial(ctx, s.drv, s.opts.syncTimeout())
	if w.err != nil {
		t.Fatalf("%v; want ADDED for each current device, then SYNCED", w.err)
	}
	ids := map[string]bool{}
	for i, e := range w.events {
		d := e.Device
		if e.Kind != sdk.DeviceAdded {
			t.Errorf("event %d before SYNCED: got kind %q for device %q; want %q", i, e.Kind, d.ID, sdk.DeviceAdded)
			continue
		}
		if !deviceIDRE.MatchString(d.ID) {
			t.Errorf("event %d: device id %q; want 1 to 128 bytes of [A-Za-z0-9._:-]", i, d.ID)
		}
		if ids[d.ID] {
			t.Errorf("event %d: device %q was added twice before SYNCED; want unique ids", i, d.ID)
		}
		ids[d.ID] = true
		if !slices.Contains(knownStates, d.State) {
			t.Errorf("device %q: state %q; want one of %v", d.ID, d.State, knownStates)
		}
		if !slices.Contains(knownPlatforms, d.Platform) {
			t.Errorf("device %q: platform %q; want one of %v", d.ID, d.Platform, knownPlatforms)
		}
		if !slices.Contains(knownConnections, d.Connection) {
			t.Errorf("device %q: connection %q; want one of %v", d.ID, d.Connection, knownConnections)
		}
		for field, v := range map[string]string{"name": d.Name, "model": d.Model, "manufacturer": d.Manufacturer, "os version": d.OSVersion} {
			if len(v) > 200 {
				t.Errorf("device %q: %s of %d bytes; want at most 200", d.ID, field, len(v))
			}
		}
		if !d.Serves(sdk.CapLockEvents, info.Capabilities) && d.LockState != sdk.LockUnknown {
			t.Errorf("device %q: lock state %q without capability %q; want it unset", d.ID, d.LockState, sdk.CapLockEvents)
		}
	}
	t.Logf("%d device(s) before SYNCED", len(w.events))
	// The stream stays open after SYNCED to carry changes.
	select {
	case <-w.ended:
		t.Errorf("WatchDevices ended right after SYNCED; want it open until canceled, to send changes")
	case <-time.After(200 * time.Millisecond):
	}
	start := time.Now()
	if err := w.stop(); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("WatchDevices after cancel: got %s; want it to return without error", errText(err))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("WatchDevices took %v to return after cancel; want at most 2s", d.Round(time.Millisecond))
	}
}

func checkTwoWatchers(t T, s *suite) {
	ctx := s.ctx(t)
	ch := make(chan initialWatch, 2)
	for range 2 {
		go func() { ch <- watchInitial(ctx, s.drv, s.opts.syncTimeout()) }()
	}
	a, b := <-ch, <-ch
	defer a.stop() //nolint:errcheck // checked by devices-sync
	defer b.stop() //nolint:errcheck
	if a.err != nil || b.err != nil {
		t.Fatalf("watchers: %v; %v", a.err, b.err)
	}
	key := func(ds []sdk.Device) []sdk.Device {
		ds = slices.Clone(ds)
		slices.SortFunc(ds, func(x, y sdk.Device) int {
			if x.ID < y.ID {
				return -1
			}
			if x.ID > y.ID {
				return 1
			}
			return 0
		})
		return ds
	}
	// Lock state and screen power may change between the two reads; the
	// set of devices and what they are should not.
	opt := cmp.Transformer("identity", func(d sdk.Device) [4]string {
		return [4]string{d.ID, string(d.Platform), string(d.Connection), d.Model}
	})
	if diff := cmp.Diff(key(a.devices), key(b.devices), opt); diff != "" {
		t.Errorf("two watchers got different initial devices (-first +second):\n%s", diff)
	}
}

// unknownActions are one action of each kind, valid on any screen.
var unknownActions = []sdk.Action{
	{Kind: sdk.ActTap, Point: sdk.Point{X: 1, Y: 1}},
	{Kind: sdk.ActDoubleTap, Point: sdk.Point{X: 1, Y: 1}},
	{Kind: sdk.ActLongPress, Point: sdk.Point{X: 1, Y: 1}},
	{Kind: sdk.ActSwipe, Point: sdk.Point{X: 1, Y: 1}, To: sdk.Point{X: 2, Y: 2}},
	{Kind: sdk.ActScroll, Direction: sdk.ScrollDown},
	{Kind: sdk.ActType, Text: "a"},
	{Kind: sdk.ActKey, Key: sdk.KeyBack},
	{Kind: sdk.ActLaunch, AppID: "com.example.drivertest"},
	{Kind: sdk.ActStop, AppID: "com.example.drivertest"},
	{Kind: sdk.ActOpenURL, URL: "https://example.com/"},
}

func checkUnknownDevice(t T, s *suite) {
	info := s.getInfo(t)
	ctx := s.ctx(t)
	_, err := s.drv.Screen(ctx, unknownDevice, 0)
	wantErr(t, "GetScreen on an unknown device", err, sdk.ErrDeviceNotFound)
	_, err = s.drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: unknownDevice})
	wantErr(t, "Screenshot on an unknown device", err, sdk.ErrDeviceNotFound)
	// The device is checked before the display: an unknown device with an
	// unknown display is still DEVICE_NOT_FOUND (SPEC.md section 3).
	_, err = s.drv.Screen(ctx, unknownDevice, neverDisplay)
	wantErr(t, fmt.Sprintf("GetScreen of display %d on an unknown device", neverDisplay), err, sdk.ErrDeviceNotFound)
	_, err = s.drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: unknownDevice, DisplayID: neverDisplay})
	wantErr(t, fmt.Sprintf("Screenshot of display %d on an unknown device", neverDisplay), err, sdk.ErrDeviceNotFound)
	for _, a := range unknownActions {
		_, err := s.drv.Act(ctx, unknownDevice, a)
		wantErr(t, "Act("+string(a.Kind)+") on an unknown device", err, sdk.ErrDeviceNotFound)
	}
	for _, p := range probes {
		if !info.Has(p.cap) {
			continue
		}
		err := p.call(ctx, s.drv, unknownDevice)
		wantErr(t, p.name+" on an unknown device", err, sdk.ErrDeviceNotFound)
	}
}

func checkLockEvents(t T, s *suite) {
	dev := s.deviceID(t)
	if ls := s.device.LockState; ls != sdk.LockLocked && ls != sdk.LockUnlocked {
		t.Errorf("device %q in WatchDevices: lock state %q; want %q or %q with capability %q",
			dev, ls, sdk.LockLocked, sdk.LockUnlocked, sdk.CapLockEvents)
	}
}

func checkConcurrentReads(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = s.drv.Screen(ctx, dev, 0)
			} else {
				_, err = s.drv.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: dev, MaxSide: 256})
			}
			if err != nil {
				errs <- fmt.Errorf("call %d: %s", i, errText(err))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent reads of device %q: %v", dev, err)
	}
}
