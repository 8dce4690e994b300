package hostmux

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// fakeSource is a driver host: its devices, drivers and events are set by
// the test. DriverForDevice follows the host's rule: the online entry
// listed first, else the first.
type fakeSource struct {
	mu      sync.Mutex
	devices []driverhost.Device // in listing order
	drivers map[string]*fakeDriver
	status  map[string]driverhost.DriverStatus
	events  chan driverhost.Event
}

func newFakeSource() *fakeSource {
	return &fakeSource{
		drivers: map[string]*fakeDriver{},
		status:  map[string]driverhost.DriverStatus{},
		events:  make(chan driverhost.Event, 16),
	}
}

// addDriver adds a running driver that declares caps.
func (f *fakeSource) addDriver(name string, caps ...sdk.Capability) *fakeDriver {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := &fakeDriver{name: name}
	f.drivers[name] = d
	f.status[name] = driverhost.DriverStatus{Name: name, State: driverhost.StateRunning, Capabilities: caps}
	return d
}

// setState sets a driver's state.
func (f *fakeSource) setState(name string, s driverhost.State) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := f.status[name]
	st.State = s
	f.status[name] = st
}

// set lists dev for driver (replacing its entry of the same id), online
// when its state is.
func (f *fakeSource) set(driver string, dev sdk.Device) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := driverhost.Device{Device: dev, Driver: driver, Online: dev.State == sdk.StateOnline}
	for i, o := range f.devices {
		if o.ID == dev.ID && o.Driver == driver {
			f.devices[i] = e
			return
		}
	}
	f.devices = append(f.devices, e)
}

// remove forgets the driver's entry for id.
func (f *fakeSource) remove(driver, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.devices = slices.DeleteFunc(f.devices, func(d driverhost.Device) bool { return d.ID == id && d.Driver == driver })
}

func (f *fakeSource) Devices() []driverhost.Device {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := slices.Clone(f.devices)
	for i := range out {
		out[i].Duplicate = slices.ContainsFunc(f.devices[:i], func(o driverhost.Device) bool { return o.ID == out[i].ID })
	}
	return out
}

func (f *fakeSource) DriverForDevice(id string) (sdk.Full, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var best *driverhost.Device
	for i := range f.devices {
		d := &f.devices[i]
		if d.ID == id && (best == nil || (d.Online && !best.Online)) {
			best = d
		}
	}
	if best == nil {
		return nil, "", fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
	}
	return f.drivers[best.Driver], best.Driver, nil
}

func (f *fakeSource) Drivers() []driverhost.DriverStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []driverhost.DriverStatus
	for _, s := range f.status {
		out = append(out, s)
	}
	return out
}

func (f *fakeSource) Subscribe() (<-chan driverhost.Event, func()) { return f.events, func() {} }

// fakeDriver records the calls that reach it.
type fakeDriver struct {
	name string

	mu      sync.Mutex
	calls   []string // "method device"
	inputs  []sdk.InputEvent
	streams int
	failIn  error // Input fails with it after its first event
}

func (d *fakeDriver) hit(method, device string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, method+" "+device)
	return nil
}

func (d *fakeDriver) called() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

func (d *fakeDriver) Info(context.Context) (sdk.Info, error) { return sdk.Info{Name: d.name}, nil }
func (d *fakeDriver) WatchDevices(ctx context.Context, _ func(sdk.DeviceEvent) error) error {
	<-ctx.Done()
	return nil
}
func (d *fakeDriver) Screen(_ context.Context, id string, _ int) (*sdk.Screen, error) {
	return &sdk.Screen{}, d.hit("Screen", id)
}
func (d *fakeDriver) Screenshot(_ context.Context, r sdk.ScreenshotRequest) (*sdk.Image, error) {
	return &sdk.Image{}, d.hit("Screenshot", r.DeviceID)
}
func (d *fakeDriver) Act(_ context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	return sdk.ActResult{}, d.hit("Act "+string(a.Kind), id)
}
func (d *fakeDriver) StreamVideo(_ context.Context, r sdk.VideoRequest, _ func(sdk.VideoPacket) error) error {
	return d.hit("StreamVideo", r.DeviceID)
}
func (d *fakeDriver) RequestKeyFrame(_ context.Context, id string, _ int) error {
	return d.hit("RequestKeyFrame", id)
}
func (d *fakeDriver) CaptureFrame(_ context.Context, r sdk.ScreenshotRequest) (*sdk.Image, error) {
	return &sdk.Image{}, d.hit("CaptureFrame", r.DeviceID)
}
func (d *fakeDriver) Wake(_ context.Context, id string) error      { return d.hit("Wake", id) }
func (d *fakeDriver) Unlock(_ context.Context, id, _ string) error { return d.hit("Unlock", id) }
func (d *fakeDriver) WaitIdle(_ context.Context, id string, _ time.Duration) (bool, error) {
	return true, d.hit("WaitIdle", id)
}
func (d *fakeDriver) ListApps(_ context.Context, id string) ([]sdk.App, error) {
	return nil, d.hit("ListApps", id)
}
func (d *fakeDriver) ListFiles(_ context.Context, id, _ string) ([]sdk.FileInfo, error) {
	return nil, d.hit("ListFiles", id)
}
func (d *fakeDriver) PullFile(_ context.Context, id, _ string, _ io.Writer) error {
	return d.hit("PullFile", id)
}
func (d *fakeDriver) PushFile(_ context.Context, id, _ string, _ io.Reader) (int64, error) {
	return 0, d.hit("PushFile", id)
}
func (d *fakeDriver) DeleteFile(_ context.Context, id, _ string, _ bool) error {
	return d.hit("DeleteFile", id)
}
func (d *fakeDriver) ListNotifications(_ context.Context, id string) ([]sdk.Notification, error) {
	return nil, d.hit("ListNotifications", id)
}
func (d *fakeDriver) CreateDisplay(_ context.Context, id string, _, _, _ int) (int, error) {
	return 1, d.hit("CreateDisplay", id)
}
func (d *fakeDriver) RemoveDisplay(_ context.Context, id string, _ int) error {
	return d.hit("RemoveDisplay", id)
}

// Input applies every event until EOF, or fails with failIn after the first.
func (d *fakeDriver) Input(_ context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	d.mu.Lock()
	d.streams++
	d.mu.Unlock()
	var n int64
	for {
		ev, err := next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		d.mu.Lock()
		d.inputs = append(d.inputs, ev)
		fail := d.failIn
		d.mu.Unlock()
		n++
		if fail != nil {
			return n, fail
		}
	}
}

var _ sdk.Full = (*fakeDriver)(nil)

// online is a device of the fake drivers, online.
func online(id string) sdk.Device {
	return sdk.Device{ID: id, Platform: sdk.PlatformAndroid, Connection: sdk.ConnUSB, State: sdk.StateOnline}
}
