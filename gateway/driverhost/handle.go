package driverhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// handle is the stable sdk.Driver of one driver name: each call goes to the
// process running now; with none running it fails at once with
// sdk.ErrDriverGone.
type handle struct{ d *driver }

var (
	_ sdk.Driver        = (*handle)(nil)
	_ sdk.Inputter      = (*handle)(nil)
	_ sdk.Streamer      = (*handle)(nil)
	_ sdk.FrameCapturer = (*handle)(nil)
	_ sdk.Waker         = (*handle)(nil)
	_ sdk.Unlocker      = (*handle)(nil)
	_ sdk.IdleWaiter    = (*handle)(nil)
	_ sdk.AppLister     = (*handle)(nil)
	_ sdk.Filer         = (*handle)(nil)
	_ sdk.Displayer     = (*handle)(nil)

	_ sdk.NotificationLister = (*handle)(nil)
)

// call runs f on the current client and names the driver in a gone error.
func call[T any](h *handle, f func(*sdk.Client) (T, error)) (T, error) {
	c := h.d.client.Load()
	if c == nil {
		var zero T
		return zero, fmt.Errorf("driver %q: %w", h.d.name, sdk.ErrDriverGone)
	}
	v, err := f(c)
	if err != nil && errors.Is(err, sdk.ErrDriverGone) {
		err = fmt.Errorf("driver %q: %w", h.d.name, err)
	}
	return v, err
}

func call0(h *handle, f func(*sdk.Client) error) error {
	_, err := call(h, func(c *sdk.Client) (struct{}, error) { return struct{}{}, f(c) })
	return err
}

func (h *handle) Info(ctx context.Context) (sdk.Info, error) {
	return call(h, func(c *sdk.Client) (sdk.Info, error) { return c.Info(ctx) })
}

func (h *handle) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	return call0(h, func(c *sdk.Client) error { return c.WatchDevices(ctx, send) })
}

func (h *handle) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	return call(h, func(c *sdk.Client) (*sdk.Screen, error) { return c.Screen(ctx, deviceID, displayID) })
}

func (h *handle) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return call(h, func(c *sdk.Client) (*sdk.Image, error) { return c.Screenshot(ctx, req) })
}

func (h *handle) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	return call(h, func(c *sdk.Client) (sdk.ActResult, error) { return c.Act(ctx, deviceID, a) })
}

func (h *handle) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	return call(h, func(c *sdk.Client) (int64, error) { return c.Input(ctx, next) })
}

func (h *handle) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	return call0(h, func(c *sdk.Client) error { return c.StreamVideo(ctx, req, send) })
}

func (h *handle) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	return call0(h, func(c *sdk.Client) error { return c.RequestKeyFrame(ctx, deviceID, displayID) })
}

func (h *handle) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return call(h, func(c *sdk.Client) (*sdk.Image, error) { return c.CaptureFrame(ctx, req) })
}

func (h *handle) Wake(ctx context.Context, deviceID string) error {
	return call0(h, func(c *sdk.Client) error { return c.Wake(ctx, deviceID) })
}

func (h *handle) Unlock(ctx context.Context, deviceID, pin string) error {
	return call0(h, func(c *sdk.Client) error { return c.Unlock(ctx, deviceID, pin) })
}

func (h *handle) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	return call(h, func(c *sdk.Client) (bool, error) { return c.WaitIdle(ctx, deviceID, timeout) })
}

func (h *handle) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	return call(h, func(c *sdk.Client) ([]sdk.App, error) { return c.ListApps(ctx, deviceID) })
}

func (h *handle) ListFiles(ctx context.Context, deviceID, path string) ([]sdk.FileInfo, error) {
	return call(h, func(c *sdk.Client) ([]sdk.FileInfo, error) { return c.ListFiles(ctx, deviceID, path) })
}

func (h *handle) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	return call0(h, func(c *sdk.Client) error { return c.PullFile(ctx, deviceID, path, w) })
}

func (h *handle) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	return call(h, func(c *sdk.Client) (int64, error) { return c.PushFile(ctx, deviceID, path, r) })
}

func (h *handle) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	return call0(h, func(c *sdk.Client) error { return c.DeleteFile(ctx, deviceID, path, recursive) })
}

func (h *handle) ListNotifications(ctx context.Context, deviceID string) ([]sdk.Notification, error) {
	return call(h, func(c *sdk.Client) ([]sdk.Notification, error) { return c.ListNotifications(ctx, deviceID) })
}

func (h *handle) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	return call(h, func(c *sdk.Client) (int, error) { return c.CreateDisplay(ctx, deviceID, width, height, densityDPI) })
}

func (h *handle) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	return call0(h, func(c *sdk.Client) error { return c.RemoveDisplay(ctx, deviceID, displayID) })
}
