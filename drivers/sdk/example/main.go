// Command example is the skeleton of a Pinky driver: copy this folder, rename
// it pinky-driver-NAME, and replace each "unsupported" answer with the real
// thing. As it is, it serves no devices and every device call answers
// UNIMPLEMENTED, which the conformance suite accepts for an empty driver.
//
// Build it, put the binary on PATH or in $PINKY_HOME/drivers, and check it:
//
//	go build -o pinky-driver-example ./drivers/sdk/example
//	pinky driver check ./pinky-driver-example
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// driver implements sdk.Driver. Add optional interfaces (sdk.Waker,
// sdk.Filer, sdk.Streamer…) by adding their methods; the SDK advertises
// each capability you implement.
type driver struct {
	log *slog.Logger
}

var _ sdk.Driver = (*driver)(nil)

func (d *driver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name:        "example",
		Version:     "0.1.0",
		Description: "A skeleton driver that serves no devices.",
		Platforms:   []sdk.Platform{sdk.PlatformOther},
	}, nil
}

// WatchDevices sends the current devices (none), the synced marker, then
// waits: a real driver sends an event whenever a phone comes, goes or changes.
func (d *driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

func (d *driver) Screen(_ context.Context, deviceID string, _ int) (*sdk.Screen, error) {
	return nil, fmt.Errorf("device %q: %w", deviceID, sdk.ErrDeviceNotFound)
}

func (d *driver) Screenshot(_ context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return nil, fmt.Errorf("device %q: %w", req.DeviceID, sdk.ErrDeviceNotFound)
}

func (d *driver) Act(_ context.Context, deviceID string, _ sdk.Action) (sdk.ActResult, error) {
	return sdk.ActResult{}, fmt.Errorf("device %q: %w", deviceID, sdk.ErrDeviceNotFound)
}

func main() {
	// Logs go to stderr (stdout carries the plugin handshake), as JSON lines
	// that the gateway logs again under the driver's name.
	log := sdk.Logger(slog.LevelInfo)
	if err := sdk.Serve(&driver{log: log}); err != nil {
		log.Error(err.Error())
		os.Exit(1)
	}
}
