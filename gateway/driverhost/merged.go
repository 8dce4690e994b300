package driverhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Merged returns the host's drivers as one driver, for a phone host to
// serve over its link (`pinky host`): its devices are every driver's (an
// id two drivers list is sent once, the one DriverForDevice picks), each
// call goes to its device's driver, and Info declares the union of the
// running drivers' capabilities; a call for a device whose own driver does
// not declare the capability answers sdk.ErrUnsupported naming the driver.
func (h *Host) Merged(version string) sdk.Full { return &merged{h: h, version: version} }

type merged struct {
	h       *Host
	version string
}

var _ sdk.Narrower = (*merged)(nil)

// NarrowCapabilities is what the running drivers serve, for the SDK's
// server adapter, which would otherwise declare every interface merged
// implements.
func (m *merged) NarrowCapabilities() []sdk.Capability {
	info, _ := m.Info(context.Background())
	return info.Capabilities
}

func (m *merged) Info(context.Context) (sdk.Info, error) {
	info := sdk.Info{Name: "host", Version: m.version, Description: "the phone drivers of a Pinky phone host"}
	for _, d := range m.h.Drivers() {
		if d.State != StateRunning && d.State != StateAttached {
			continue
		}
		for _, c := range d.Capabilities {
			if !slices.Contains(info.Capabilities, c) {
				info.Capabilities = append(info.Capabilities, c)
			}
		}
		for _, p := range d.Platforms {
			if !slices.Contains(info.Platforms, p) {
				info.Platforms = append(info.Platforms, p)
			}
		}
	}
	slices.Sort(info.Capabilities)
	slices.Sort(info.Platforms)
	return info, nil
}

// device returns the driver of id, checking that it serves c ("" for the
// calls every driver serves).
func (m *merged) device(id string, c sdk.Capability) (sdk.Full, error) {
	if c != "" {
		// What no driver serves is unsupported whatever the device, as
		// for a single driver that does not declare it.
		if info, _ := m.Info(context.Background()); !slices.Contains(info.Capabilities, c) {
			return nil, sdk.Errorf(sdk.ErrUnsupported, "no driver of this phone host serves %s", c)
		}
	}
	d, name, err := m.h.DriverForDevice(id)
	if err != nil {
		return nil, err
	}
	if c != "" && !m.h.Serves(id, c) {
		return nil, sdk.Errorf(sdk.ErrUnsupported, "the %s driver of %s does not serve %s", name, id, c)
	}
	return d, nil
}

// wire is the device as the merged driver sends it: offline while its
// driver is down.
func wire(d Device) sdk.Device {
	dev := d.Device
	if !d.Online && dev.State == sdk.StateOnline {
		dev.State = sdk.StateOffline
		dev.StateDetail = "its driver on the phone host is restarting"
	}
	return dev
}

func (m *merged) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	events, stop := m.h.Subscribe()
	defer stop()
	sent := map[string]sdk.Device{}
	// list sends the devices listed now, as added or changed, and removes
	// those gone since the last list.
	list := func() error {
		now := map[string]bool{}
		for _, d := range m.h.Devices() {
			if d.Duplicate {
				continue
			}
			now[d.ID] = true
			kind := sdk.DeviceChanged
			if _, ok := sent[d.ID]; !ok {
				kind = sdk.DeviceAdded
			}
			dev := wire(d)
			sent[d.ID] = dev
			if err := send(sdk.DeviceEvent{Kind: kind, Device: dev}); err != nil {
				return err
			}
		}
		for id := range sent {
			if !now[id] {
				delete(sent, id)
				if err := send(sdk.DeviceEvent{Kind: sdk.DeviceRemoved, Device: sdk.Device{ID: id}}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := list(); err != nil {
		return err
	}
	if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return nil // the host stopped
			}
			// Every event is read again from the list: an id two drivers
			// list, and the one that wins, follow the host's own rule.
			_ = ev
			if err := list(); err != nil {
				return err
			}
		}
	}
}

func (m *merged) Screen(ctx context.Context, id string, display int) (*sdk.Screen, error) {
	d, err := m.device(id, "")
	if err != nil {
		return nil, err
	}
	return d.Screen(ctx, id, display)
}

func (m *merged) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	d, err := m.device(req.DeviceID, "")
	if err != nil {
		return nil, err
	}
	return d.Screenshot(ctx, req)
}

func (m *merged) Act(ctx context.Context, id string, a sdk.Action) (sdk.ActResult, error) {
	d, err := m.device(id, "")
	if err != nil {
		return sdk.ActResult{}, err
	}
	if a.Kind == sdk.ActPinch && !m.h.Serves(id, sdk.CapPinch) {
		return sdk.ActResult{}, sdk.Errorf(sdk.ErrUnsupported, "the driver of %s cannot pinch", id)
	}
	return d.Act(ctx, id, a)
}

// Input routes each event to its device's driver, one stream per driver
// for the call's life.
func (m *merged) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type stream struct {
		ch   chan sdk.InputEvent
		done chan struct{}
		n    int64
		err  error
	}
	streams := map[sdk.Full]*stream{}
	var wg sync.WaitGroup
	finish := func() (int64, error) {
		for _, s := range streams {
			close(s.ch)
		}
		wg.Wait()
		var total int64
		var first error
		for _, s := range streams {
			total += s.n
			if first == nil && s.err != nil && !errors.Is(s.err, io.EOF) {
				first = s.err
			}
		}
		return total, first
	}
	for {
		ev, err := next()
		if errors.Is(err, io.EOF) {
			return finish()
		}
		if err != nil {
			cancel()
			n, _ := finish()
			return n, err
		}
		d, derr := m.device(ev.DeviceID, sdk.CapInput)
		if derr != nil {
			cancel()
			n, _ := finish()
			return n, derr
		}
		s := streams[d]
		if s == nil {
			s = &stream{ch: make(chan sdk.InputEvent, 64), done: make(chan struct{})}
			streams[d] = s
			wg.Go(func() {
				defer close(s.done)
				s.n, s.err = d.Input(ctx, func() (sdk.InputEvent, error) {
					e, ok := <-s.ch
					if !ok {
						return sdk.InputEvent{}, io.EOF
					}
					return e, nil
				})
			})
		}
		select {
		case s.ch <- ev:
		case <-s.done:
			cancel()
			n, ferr := finish()
			if ferr == nil {
				ferr = fmt.Errorf("the input stream of %s ended early", ev.DeviceID)
			}
			return n, ferr
		}
	}
}

func (m *merged) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	d, err := m.device(req.DeviceID, sdk.CapVideo)
	if err != nil {
		return err
	}
	return d.StreamVideo(ctx, req, send)
}

func (m *merged) RequestKeyFrame(ctx context.Context, id string, display int) error {
	d, err := m.device(id, sdk.CapVideo)
	if err != nil {
		return err
	}
	return d.RequestKeyFrame(ctx, id, display)
}

func (m *merged) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	d, err := m.device(req.DeviceID, sdk.CapFrameCapture)
	if err != nil {
		return nil, err
	}
	return d.CaptureFrame(ctx, req)
}

func (m *merged) Wake(ctx context.Context, id string) error {
	d, err := m.device(id, sdk.CapWake)
	if err != nil {
		return err
	}
	return d.Wake(ctx, id)
}

func (m *merged) Unlock(ctx context.Context, id, pin string) error {
	d, err := m.device(id, sdk.CapUnlock)
	if err != nil {
		return err
	}
	return d.Unlock(ctx, id, pin)
}

func (m *merged) WaitIdle(ctx context.Context, id string, timeout time.Duration) (bool, error) {
	d, err := m.device(id, sdk.CapWaitIdle)
	if err != nil {
		return false, err
	}
	return d.WaitIdle(ctx, id, timeout)
}

func (m *merged) ListApps(ctx context.Context, id string) ([]sdk.App, error) {
	d, err := m.device(id, sdk.CapApps)
	if err != nil {
		return nil, err
	}
	return d.ListApps(ctx, id)
}

func (m *merged) ListFiles(ctx context.Context, id, path string) ([]sdk.FileInfo, error) {
	d, err := m.device(id, sdk.CapFiles)
	if err != nil {
		return nil, err
	}
	return d.ListFiles(ctx, id, path)
}

func (m *merged) PullFile(ctx context.Context, id, path string, w io.Writer) error {
	d, err := m.device(id, sdk.CapFiles)
	if err != nil {
		return err
	}
	return d.PullFile(ctx, id, path, w)
}

func (m *merged) PushFile(ctx context.Context, id, path string, r io.Reader) (int64, error) {
	d, err := m.device(id, sdk.CapFiles)
	if err != nil {
		return 0, err
	}
	return d.PushFile(ctx, id, path, r)
}

func (m *merged) DeleteFile(ctx context.Context, id, path string, recursive bool) error {
	d, err := m.device(id, sdk.CapFiles)
	if err != nil {
		return err
	}
	return d.DeleteFile(ctx, id, path, recursive)
}

func (m *merged) ListNotifications(ctx context.Context, id string) ([]sdk.Notification, error) {
	d, err := m.device(id, sdk.CapNotifications)
	if err != nil {
		return nil, err
	}
	return d.ListNotifications(ctx, id)
}

func (m *merged) CreateDisplay(ctx context.Context, id string, width, height, dpi int) (int, error) {
	d, err := m.device(id, sdk.CapDisplays)
	if err != nil {
		return 0, err
	}
	return d.CreateDisplay(ctx, id, width, height, dpi)
}

func (m *merged) RemoveDisplay(ctx context.Context, id string, display int) error {
	d, err := m.device(id, sdk.CapDisplays)
	if err != nil {
		return err
	}
	return d.RemoveDisplay(ctx, id, display)
}
