// Package fakedriver is a tiny sdk.Driver for the driver host's tests and
// benchmarks: a few fixed devices, a small screen, and knobs to make calls
// slow or hang.
package fakedriver

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// InflightDevice is a device id whose Screen reports, in Screen.Width, how
// many calls are hanging now (the tests use it to know calls are in flight).
const InflightDevice = "inflight"

// Driver is the fake driver.
type Driver struct {
	Name    string
	Devices []string
	// Hang names calls that block until their context ends: "screen", "act".
	Hang map[string]bool
	// Slow delays every Screen and Act.
	Slow time.Duration

	hanging atomic.Int64
}

var _ sdk.Driver = (*Driver)(nil)

// FromEnv configures a driver from FAKE_DEVICES (comma list; default
// NAME-1,NAME-2), FAKE_HANG (comma list of calls) and FAKE_SLOW (a duration).
func FromEnv(name string) *Driver {
	d := &Driver{Name: name, Hang: map[string]bool{}}
	if v, ok := os.LookupEnv("FAKE_DEVICES"); ok {
		for _, id := range strings.Split(v, ",") {
			if id != "" {
				d.Devices = append(d.Devices, id)
			}
		}
	} else {
		d.Devices = []string{name + "-1", name + "-2"}
	}
	for _, c := range strings.Split(os.Getenv("FAKE_HANG"), ",") {
		if c != "" {
			d.Hang[c] = true
		}
	}
	d.Slow, _ = time.ParseDuration(os.Getenv("FAKE_SLOW"))
	return d
}

func (d *Driver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{Name: d.Name, Version: "0.0.1-test", Platforms: []sdk.Platform{sdk.PlatformOther}}, nil
}

func (d *Driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	for _, id := range d.Devices {
		dev := sdk.Device{ID: id, Name: "Fake " + id, Model: "fake", Platform: sdk.PlatformOther,
			Connection: sdk.ConnVirtual, State: sdk.StateOnline, ScreenOn: true}
		if err := send(sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: dev}); err != nil {
			return err
		}
	}
	if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (d *Driver) known(id string) error {
	for _, x := range d.Devices {
		if x == id {
			return nil
		}
	}
	return fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
}

func (d *Driver) wait(ctx context.Context, call string) error {
	if d.Hang[call] {
		d.hanging.Add(1)
		defer d.hanging.Add(-1)
		<-ctx.Done()
		return ctx.Err()
	}
	if d.Slow > 0 {
		select {
		case <-time.After(d.Slow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (d *Driver) Screen(ctx context.Context, deviceID string, _ int) (*sdk.Screen, error) {
	if deviceID == InflightDevice {
		return &sdk.Screen{Width: int(d.hanging.Load())}, nil
	}
	if err := d.known(deviceID); err != nil {
		return nil, err
	}
	if err := d.wait(ctx, "screen"); err != nil {
		return nil, err
	}
	s := &sdk.Screen{
		App: sdk.App{ID: "com.example.fake", Label: "Fake"}, LockState: sdk.LockUnlocked, ScreenOn: true,
		Width: 1080, Height: 2400, DensityDPI: 420, Orientation: sdk.OrientationPortrait,
		CapturedAt: time.Now(),
	}
	for i := 1; i <= 20; i++ {
		s.Elements = append(s.Elements, sdk.Element{
			ID: i, ParentID: min(i-1, 1) * 1, Class: "android.widget.TextView",
			Text: fmt.Sprintf("Item %d", i), ResourceID: fmt.Sprintf("com.example.fake:id/item%d", i),
			Bounds:  sdk.Rect{Left: 0, Top: i * 100, Right: 1080, Bottom: i*100 + 90},
			Enabled: true, Visible: true, Clickable: i > 1,
		})
	}
	s.Elements[0].ParentID = 0
	return s, nil
}

func (d *Driver) Screenshot(_ context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return nil, fmt.Errorf("screenshot: %w", sdk.ErrUnsupported)
}

func (d *Driver) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	if err := d.known(deviceID); err != nil {
		return sdk.ActResult{}, err
	}
	if err := d.wait(ctx, "act"); err != nil {
		return sdk.ActResult{}, err
	}
	return sdk.ActResult{Detail: string(a.Kind)}, nil
}
