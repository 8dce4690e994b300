package hostmux

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// twoDrivers is a source with driver "full" (every capability, device
// a-1) and driver "bare" (none, device b-1).
func twoDrivers() (*fakeSource, *fakeDriver, *fakeDriver) {
	src := newFakeSource()
	full := src.addDriver("full", sdk.AllCapabilities...)
	bare := src.addDriver("bare")
	src.set("full", online("a-1"))
	src.set("bare", online("b-1"))
	return src, full, bare
}

// ofBare is d as the link sends a device of driver "bare" beside driver
// "full": serving nothing optional, each capability of "full" missing.
func ofBare(d sdk.Device) sdk.Device {
	d.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{}}
	for _, c := range sdk.AllCapabilities {
		d.Caps.Missing = append(d.Caps.Missing, sdk.MissingCap{Cap: c, Reason: "the bare driver on this phone host, which serves this phone, does not serve it"})
	}
	slices.SortFunc(d.Caps.Missing, func(a, b sdk.MissingCap) int { return strings.Compare(string(a.Cap), string(b.Cap)) })
	return d
}

func TestInfo(t *testing.T) {
	src := newFakeSource()
	src.addDriver("android", sdk.CapVideo, sdk.CapInput)
	src.addDriver("ios", sdk.CapWake, sdk.CapInput)
	src.addDriver("broken", sdk.CapFiles)
	src.setState("broken", driverhost.StateFailed)
	info, err := New(src, "1.2.3", nil).Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := sdk.Info{
		Name: "host", Version: "1.2.3", Description: "the phone drivers of a Pinky phone host",
		Capabilities: []sdk.Capability{sdk.CapInput, sdk.CapVideo, sdk.CapWake},
	}
	if diff := cmp.Diff(want, info); diff != "" {
		t.Errorf("Info (-want +got):\n%s", diff)
	}
	if got := New(src, "1.2.3", nil).NarrowCapabilities(); !slices.Equal(got, want.Capabilities) {
		t.Errorf("NarrowCapabilities = %v; want %v", got, want.Capabilities)
	}
}

// calls is every per-device call, with the capability it needs.
var calls = []struct {
	name string
	cap  sdk.Capability
	call func(m *Mux, id string) error
}{
	{"Screen", "", func(m *Mux, id string) error { _, err := m.Screen(context.Background(), id, 0); return err }},
	{"Screenshot", "", func(m *Mux, id string) error {
		_, err := m.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: id})
		return err
	}},
	{"Act tap", "", func(m *Mux, id string) error {
		_, err := m.Act(context.Background(), id, sdk.Action{Kind: sdk.ActTap})
		return err
	}},
	{"Act pinch", sdk.CapPinch, func(m *Mux, id string) error {
		_, err := m.Act(context.Background(), id, sdk.Action{Kind: sdk.ActPinch})
		return err
	}},
	{"StreamVideo", sdk.CapVideo, func(m *Mux, id string) error {
		return m.StreamVideo(context.Background(), sdk.VideoRequest{DeviceID: id}, nil)
	}},
	{"RequestKeyFrame", sdk.CapVideo, func(m *Mux, id string) error { return m.RequestKeyFrame(context.Background(), id, 0) }},
	{"CaptureFrame", sdk.CapFrameCapture, func(m *Mux, id string) error {
		_, err := m.CaptureFrame(context.Background(), sdk.ScreenshotRequest{DeviceID: id})
		return err
	}},
	{"Wake", sdk.CapWake, func(m *Mux, id string) error { return m.Wake(context.Background(), id) }},
	{"Unlock", sdk.CapUnlock, func(m *Mux, id string) error { return m.Unlock(context.Background(), id, "1234") }},
	{"WaitIdle", sdk.CapWaitIdle, func(m *Mux, id string) error {
		_, err := m.WaitIdle(context.Background(), id, time.Second)
		return err
	}},
	{"ListApps", sdk.CapApps, func(m *Mux, id string) error { _, err := m.ListApps(context.Background(), id); return err }},
	{"ListFiles", sdk.CapFiles, func(m *Mux, id string) error { _, err := m.ListFiles(context.Background(), id, ""); return err }},
	{"PullFile", sdk.CapFiles, func(m *Mux, id string) error { return m.PullFile(context.Background(), id, "f", io.Discard) }},
	{"PushFile", sdk.CapFiles, func(m *Mux, id string) error {
		_, err := m.PushFile(context.Background(), id, "f", strings.NewReader("x"))
		return err
	}},
	{"DeleteFile", sdk.CapFiles, func(m *Mux, id string) error { return m.DeleteFile(context.Background(), id, "f", false) }},
	{"ListNotifications", sdk.CapNotifications, func(m *Mux, id string) error {
		_, err := m.ListNotifications(context.Background(), id)
		return err
	}},
	{"CreateDisplay", sdk.CapDisplays, func(m *Mux, id string) error {
		_, err := m.CreateDisplay(context.Background(), id, 100, 200, 160)
		return err
	}},
	{"RemoveDisplay", sdk.CapDisplays, func(m *Mux, id string) error { return m.RemoveDisplay(context.Background(), id, 1) }},
}

// TestRouting: each call for a device reaches its own driver only; an
// unknown device is not found; a device whose driver lacks the call's
// capability is unsupported, with a sentence naming that driver.
func TestRouting(t *testing.T) {
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			src, full, bare := twoDrivers()
			m := New(src, "test", nil)
			if err := c.call(m, "a-1"); err != nil {
				t.Fatalf("a-1: got %v; want it served", err)
			}
			want := []string{c.name + " a-1"}
			if got := full.called(); !slices.Equal(got, want) {
				t.Errorf("full driver's calls: got %q; want %q", got, want)
			}
			if err := c.call(m, "nobody"); !errors.Is(err, sdk.ErrDeviceNotFound) {
				t.Errorf("unknown device: got %v; want ErrDeviceNotFound", err)
			}
			err := c.call(m, "b-1")
			switch {
			case c.cap == "" && err != nil:
				t.Errorf("b-1: got %v; want it served", err)
			case c.cap == "" && !slices.Equal(bare.called(), []string{c.name + " b-1"}):
				t.Errorf("bare driver's calls: got %q; want %q", bare.called(), c.name+" b-1")
			case c.cap != "" && (!errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "bare driver")):
				t.Errorf("b-1: got %v; want ErrUnsupported naming the bare driver", err)
			case c.cap != "" && len(bare.called()) != 0:
				t.Errorf("bare driver's calls: got %q; want none", bare.called())
			}
			if got := full.called(); !slices.Equal(got, want) {
				t.Errorf("full driver's calls after the others: got %q; want %q", got, want)
			}
		})
	}
}

// TestNoDriverServes: a capability no running driver serves is
// unsupported even for an unknown device, as the conformance suite wants
// of an undeclared capability.
func TestNoDriverServes(t *testing.T) {
	src := newFakeSource()
	src.addDriver("bare")
	src.set("bare", online("b-1"))
	m := New(src, "test", nil)
	for _, c := range calls {
		if c.cap == "" {
			continue
		}
		if err := c.call(m, "nobody"); !errors.Is(err, sdk.ErrUnsupported) {
			t.Errorf("%s: got %v; want ErrUnsupported", c.name, err)
		}
	}
	if _, err := m.Input(context.Background(), inputs()); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("Input: got %v; want ErrUnsupported", err)
	}
}

// watcher runs WatchDevices and hands over its events one at a time.
type watcher struct {
	t      *testing.T
	events chan sdk.DeviceEvent
	cancel context.CancelFunc
	done   chan error
}

func watch(t *testing.T, m *Mux) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{t: t, events: make(chan sdk.DeviceEvent), cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- m.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
			select {
			case w.events <- ev:
			case <-ctx.Done():
			}
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; err != nil {
			t.Errorf("WatchDevices: got %v; want nil once canceled", err)
		}
	})
	return w
}

// next returns the next event; the limit only keeps a broken watch from
// hanging the test.
func (w *watcher) next() sdk.DeviceEvent {
	w.t.Helper()
	select {
	case ev := <-w.events:
		return ev
	case <-time.After(10 * time.Second):
		w.t.Fatal("no event from WatchDevices")
		return sdk.DeviceEvent{}
	}
}

// expect reads len(want) events and compares them.
func (w *watcher) expect(what string, want ...sdk.DeviceEvent) {
	w.t.Helper()
	var got []sdk.DeviceEvent
	for range want {
		got = append(got, w.next())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		w.t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func ev(kind sdk.DeviceEventKind, d sdk.Device) sdk.DeviceEvent {
	return sdk.DeviceEvent{Kind: kind, Device: d}
}

// TestWatch: the devices listed now, then SYNCED, then each change as a
// difference (an event that changes nothing sends nothing), and after a
// resync every difference at once.
func TestWatch(t *testing.T) {
	src, _, _ := twoDrivers()
	w := watch(t, New(src, "test", nil))
	w.expect("first list", ev(sdk.DeviceAdded, online("a-1")), ev(sdk.DeviceAdded, ofBare(online("b-1"))), sdk.DeviceEvent{Kind: sdk.DevicesSynced})

	// Each change is read back before the next one: the mux reads the
	// source as it is when the event arrives.
	locked := online("a-1")
	locked.LockState = sdk.LockLocked
	src.set("full", locked)
	src.events <- driverhost.Event{Kind: driverhost.EventChanged, Device: driverhost.Device{Device: locked, Driver: "full"}}
	w.expect("a change", ev(sdk.DeviceChanged, locked))
	src.events <- driverhost.Event{Kind: driverhost.EventChanged, Device: driverhost.Device{Device: locked, Driver: "full"}} // nothing new
	src.set("full", online("a-2"))
	src.events <- driverhost.Event{Kind: driverhost.EventAdded, Device: driverhost.Device{Device: online("a-2"), Driver: "full"}}
	w.expect("nothing for an event that changes nothing, then an addition", ev(sdk.DeviceAdded, online("a-2")))
	gone := online("b-1")
	gone.State, gone.StateDetail = sdk.StateOffline, "unplugged"
	src.set("bare", gone)
	src.events <- driverhost.Event{Kind: driverhost.EventOffline, Device: driverhost.Device{Device: gone, Driver: "bare"}}
	w.expect("offline", ev(sdk.DeviceChanged, ofBare(gone)))
	src.remove("full", "a-2")
	src.events <- driverhost.Event{Kind: driverhost.EventRemoved, Device: driverhost.Device{Device: online("a-2"), Driver: "full"}}
	w.expect("a removal", ev(sdk.DeviceRemoved, sdk.Device{ID: "a-2"}))

	// Changes whose events were lost: a resync sends all of them.
	src.remove("full", "a-1")
	src.set("bare", online("b-1"))
	src.set("full", online("c-1"))
	src.events <- driverhost.Event{Kind: driverhost.EventResync}
	w.expect("after a resync", ev(sdk.DeviceChanged, ofBare(online("b-1"))), ev(sdk.DeviceAdded, online("c-1")),
		ev(sdk.DeviceRemoved, sdk.Device{ID: "a-1"}))
}

// TestWatchDuplicate: an id two drivers list is sent once, as the entry
// DriverForDevice picks, and becomes the other entry when that one goes.
func TestWatchDuplicate(t *testing.T) {
	src := newFakeSource()
	src.addDriver("first")
	src.addDriver("second")
	asFirst := online("dup")
	asFirst.State, asFirst.StateDetail, asFirst.Name = sdk.StateOffline, "unplugged", "first's"
	asSecond := online("dup")
	asSecond.Name = "second's"
	src.set("first", asFirst)
	src.set("second", asSecond) // online: DriverForDevice picks it
	w := watch(t, New(src, "test", nil))
	w.expect("first list", ev(sdk.DeviceAdded, asSecond), sdk.DeviceEvent{Kind: sdk.DevicesSynced})

	src.remove("second", "dup")
	src.events <- driverhost.Event{Kind: driverhost.EventRemoved, Device: driverhost.Device{Device: asSecond, Driver: "second"}}
	w.expect("the picked entry removed", ev(sdk.DeviceChanged, asFirst))
}

// TestWatchDriverDown: a device whose driver is not running is sent
// offline with a sentence naming the driver.
func TestWatchDriverDown(t *testing.T) {
	src, _, _ := twoDrivers()
	src.setState("bare", driverhost.StateRestarting)
	w := watch(t, New(src, "test", nil))
	first := w.next()
	second := w.next()
	if first.Device.State != sdk.StateOnline {
		t.Errorf("a-1: state %q; want online", first.Device.State)
	}
	if second.Device.ID != "b-1" || second.Device.State != sdk.StateOffline || !strings.Contains(second.Device.StateDetail, "bare driver") {
		t.Errorf("b-1: got %+v; want it offline, its detail naming the bare driver", second.Device)
	}
	if got := w.next(); got.Kind != sdk.DevicesSynced {
		t.Errorf("third event: got %q; want %q", got.Kind, sdk.DevicesSynced)
	}
}

// TestWatchSendFails: the error of send ends the watch.
func TestWatchSendFails(t *testing.T) {
	src, _, _ := twoDrivers()
	errStop := errors.New("stop")
	err := New(src, "test", nil).WatchDevices(context.Background(), func(sdk.DeviceEvent) error { return errStop })
	if !errors.Is(err, errStop) {
		t.Errorf("got %v; want the error of send", err)
	}
}

// inputs returns a next function over evs, then io.EOF.
func inputs(evs ...sdk.InputEvent) func() (sdk.InputEvent, error) {
	return func() (sdk.InputEvent, error) {
		if len(evs) == 0 {
			return sdk.InputEvent{}, io.EOF
		}
		e := evs[0]
		evs = evs[1:]
		return e, nil
	}
}

func key(id string) sdk.InputEvent {
	return sdk.InputEvent{DeviceID: id, Key: &sdk.KeyEvent{Action: sdk.KeyDown, Key: sdk.KeyVolumeDown}}
}

// TestInput: events reach their devices' drivers, one stream each, and the
// total is what all applied; a driver's failure, an unknown device and a
// driver without input end the call.
func TestInput(t *testing.T) {
	fail := errors.New("driver failed")
	tests := []struct {
		name      string
		events    []sdk.InputEvent
		failA     error
		noInputB  bool
		wantN     int64
		wantErr   error
		wantTo    map[string][]string // driver → devices of the events it got
		wantOpens map[string]int
	}{
		{name: "two drivers", events: []sdk.InputEvent{key("a-1"), key("b-1"), key("a-1"), key("b-1"), key("a-1")},
			wantN:  5,
			wantTo: map[string][]string{"one": {"a-1", "a-1", "a-1"}, "two": {"b-1", "b-1"}}, wantOpens: map[string]int{"one": 1, "two": 1}},
		{name: "none", wantTo: map[string][]string{}, wantOpens: map[string]int{}},
		{name: "a driver fails", events: []sdk.InputEvent{key("b-1"), key("a-1")}, failA: fail,
			wantN: 2, wantErr: fail,
			wantTo: map[string][]string{"one": {"a-1"}, "two": {"b-1"}}, wantOpens: map[string]int{"one": 1, "two": 1}},
		{name: "unknown device", events: []sdk.InputEvent{key("a-1"), key("nobody"), key("a-1")},
			wantN: 1, wantErr: sdk.ErrDeviceNotFound,
			wantTo: map[string][]string{"one": {"a-1"}}, wantOpens: map[string]int{"one": 1}},
		{name: "a driver without input", events: []sdk.InputEvent{key("a-1"), key("b-1")}, noInputB: true,
			wantN: 1, wantErr: sdk.ErrUnsupported,
			wantTo: map[string][]string{"one": {"a-1"}}, wantOpens: map[string]int{"one": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := newFakeSource()
			drivers := map[string]*fakeDriver{"one": src.addDriver("one", sdk.CapInput)}
			if tt.noInputB {
				drivers["two"] = src.addDriver("two")
			} else {
				drivers["two"] = src.addDriver("two", sdk.CapInput)
			}
			drivers["one"].failIn = tt.failA
			src.set("one", online("a-1"))
			src.set("two", online("b-1"))
			n, err := New(src, "test", nil).Input(context.Background(), inputs(tt.events...))
			if n != tt.wantN || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("Input = %d, %v; want %d, %v", n, err, tt.wantN, tt.wantErr)
			}
			to := map[string][]string{}
			opens := map[string]int{}
			for name, d := range drivers {
				for _, e := range d.inputs {
					to[name] = append(to[name], e.DeviceID)
				}
				if d.streams > 0 {
					opens[name] = d.streams
				}
			}
			if diff := cmp.Diff(tt.wantTo, to); diff != "" {
				t.Errorf("events per driver (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantOpens, opens); diff != "" {
				t.Errorf("streams per driver (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWatchSourceStops: when the source closes its events, the watch ends
// with an error wrapping driverhost.ErrStopped after the first list.
func TestWatchSourceStops(t *testing.T) {
	src, _, _ := twoDrivers()
	close(src.events)
	var kinds []sdk.DeviceEventKind
	err := New(src, "test", nil).WatchDevices(context.Background(), func(e sdk.DeviceEvent) error {
		kinds = append(kinds, e.Kind)
		return nil
	})
	if !errors.Is(err, driverhost.ErrStopped) {
		t.Errorf("got %v; want an error wrapping driverhost.ErrStopped", err)
	}
	if want := []sdk.DeviceEventKind{sdk.DeviceAdded, sdk.DeviceAdded, sdk.DevicesSynced}; !slices.Equal(kinds, want) {
		t.Errorf("events: got %v; want %v", kinds, want)
	}
}

// TestWatchDeviceCaps: a device's own capabilities go over the link as it
// said them, its own reasons kept, with what another driver of the host
// serves added as missing; a device whose driver serves all the link
// declares and that says nothing sends no Caps (as before them).
func TestWatchDeviceCaps(t *testing.T) {
	src := newFakeSource()
	src.addDriver("full", sdk.CapVideo, sdk.CapInput)
	src.addDriver("bare", sdk.CapInput)
	own := online("b-1")
	own.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{}, Missing: []sdk.MissingCap{{Cap: sdk.CapInput, Reason: "no scrcpy server", Fix: "install scrcpy"}}}
	src.set("full", online("a-1"))
	src.set("bare", own)
	w := watch(t, New(src, "test", nil))
	want := own
	want.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{}, Missing: []sdk.MissingCap{
		{Cap: sdk.CapInput, Reason: "no scrcpy server", Fix: "install scrcpy"},
		{Cap: sdk.CapVideo, Reason: "the bare driver on this phone host, which serves this phone, does not serve it"},
	}}
	w.expect("first list", ev(sdk.DeviceAdded, online("a-1")), ev(sdk.DeviceAdded, want), sdk.DeviceEvent{Kind: sdk.DevicesSynced})
	// The same Caps in a new value is no change.
	again := own
	again.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{}, Missing: slices.Clone(own.Caps.Missing)}
	src.set("bare", again)
	src.events <- driverhost.Event{Kind: driverhost.EventChanged, Device: driverhost.Device{Device: again, Driver: "bare"}}
	served := own
	served.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapInput}}
	src.set("bare", served)
	src.events <- driverhost.Event{Kind: driverhost.EventChanged, Device: driverhost.Device{Device: served, Driver: "bare"}}
	wantServed := served
	wantServed.Caps = &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapInput}, Missing: []sdk.MissingCap{
		{Cap: sdk.CapVideo, Reason: "the bare driver on this phone host, which serves this phone, does not serve it"},
	}}
	w.expect("only the real change", ev(sdk.DeviceChanged, wantServed))
}
