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
// sdk.ErrDriverGone. Every call but the long-lived ones has a deadline
// (Config.Deadlines); see deadline.go.
type handle struct{ d *driver }

var _ sdk.Full = (*handle)(nil)

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

// call runs f on the current client within o's deadline, names the driver
// in a gone error, and turns a missed deadline into sdk.ErrTimeout (and a
// miss counted against the driver).
func call[T any](h *handle, ctx context.Context, o op, f func(context.Context, *sdk.Client) (T, error)) (T, error) {
	c := h.d.client.Load()
	if c == nil {
		var zero T
		return zero, fmt.Errorf("driver %q: %w", h.d.name, sdk.ErrDriverGone)
	}
	if o.limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, o.limit, errMissed)
		defer cancel()
	}
	v, err := f(ctx, c)
	if err != nil && o.limit > 0 && context.Cause(ctx) == errMissed {
		h.d.missed(c, o)
		return v, h.d.missedError(o)
	}
	if err != nil && errors.Is(err, sdk.ErrDriverGone) {
		err = fmt.Errorf("driver %q: %w", h.d.name, err)
	}
	return v, err
}

func call0(h *handle, ctx context.Context, o op, f func(context.Context, *sdk.Client) error) error {
	_, err := call(h, ctx, o, func(ctx context.Context, c *sdk.Client) (struct{}, error) { return struct{}{}, f(ctx, c) })
	return err
}

// read and act name a call with the read or the action deadline.
func (h *handle) read(name, device string) op {
	return op{name: name, device: device, limit: h.d.h.cfg.Deadlines.Read}
}

func (h *handle) act(name, device string) op {
	return op{name: name, device: device, limit: h.d.h.cfg.Deadlines.Act}
}

func (h *handle) Info(ctx context.Context) (sdk.Info, error) {
	return call(h, ctx, h.read("info", ""), func(ctx context.Context, c *sdk.Client) (sdk.Info, error) { return c.Info(ctx) })
}

// WatchDevices lasts as long as ctx: no deadline.
func (h *handle) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	return call0(h, ctx, op{name: "watch"}, func(ctx context.Context, c *sdk.Client) error { return c.WatchDevices(ctx, send) })
}

func (h *handle) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	deviceID = h.bare(deviceID)
	return call(h, ctx, h.read("screen", deviceID), func(ctx context.Context, c *sdk.Client) (*sdk.Screen, error) {
		return c.Screen(ctx, deviceID, displayID)
	})
}

func (h *handle) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	req.DeviceID = h.bare(req.DeviceID)
	return call(h, ctx, h.read("screenshot", req.DeviceID), func(ctx context.Context, c *sdk.Client) (*sdk.Image, error) {
		return c.Screenshot(ctx, req)
	})
}

func (h *handle) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	deviceID = h.bare(deviceID)
	o := op{name: "act " + string(a.Kind), device: deviceID, limit: h.d.h.cfg.Deadlines.actDeadline(a)}
	return call(h, ctx, o, func(ctx context.Context, c *sdk.Client) (sdk.ActResult, error) { return c.Act(ctx, deviceID, a) })
}

// Input carries the person's mirror for as long as they use it: no deadline.
func (h *handle) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	if h.d.host != "" {
		from := next
		next = func() (sdk.InputEvent, error) {
			ev, err := from()
			ev.DeviceID = h.bare(ev.DeviceID)
			return ev, err
		}
	}
	return call(h, ctx, op{name: "input"}, func(ctx context.Context, c *sdk.Client) (int64, error) { return c.Input(ctx, next) })
}

// StreamVideo lasts as long as ctx: no deadline.
func (h *handle) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	req.DeviceID = h.bare(req.DeviceID)
	return call0(h, ctx, op{name: "video", device: req.DeviceID}, func(ctx context.Context, c *sdk.Client) error {
		return c.StreamVideo(ctx, req, send)
	})
}

func (h *handle) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	deviceID = h.bare(deviceID)
	return call0(h, ctx, h.read("key frame", deviceID), func(ctx context.Context, c *sdk.Client) error {
		return c.RequestKeyFrame(ctx, deviceID, displayID)
	})
}

func (h *handle) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	req.DeviceID = h.bare(req.DeviceID)
	return call(h, ctx, h.read("capture frame", req.DeviceID), func(ctx context.Context, c *sdk.Client) (*sdk.Image, error) {
		return c.CaptureFrame(ctx, req)
	})
}

func (h *handle) Wake(ctx context.Context, deviceID string) error {
	deviceID = h.bare(deviceID)
	return call0(h, ctx, h.act("wake", deviceID), func(ctx context.Context, c *sdk.Client) error { return c.Wake(ctx, deviceID) })
}

func (h *handle) Unlock(ctx context.Context, deviceID, pin string) error {
	deviceID = h.bare(deviceID)
	return call0(h, ctx, h.act("unlock", deviceID), func(ctx context.Context, c *sdk.Client) error { return c.Unlock(ctx, deviceID, pin) })
}

// WaitIdle has its own timeout; the deadline is that plus IdleMargin.
func (h *handle) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	deviceID = h.bare(deviceID)
	o := op{name: "wait idle", device: deviceID, limit: max(timeout, 0) + h.d.h.cfg.Deadlines.IdleMargin}
	return call(h, ctx, o, func(ctx context.Context, c *sdk.Client) (bool, error) { return c.WaitIdle(ctx, deviceID, timeout) })
}

func (h *handle) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	deviceID = h.bare(deviceID)
	return call(h, ctx, h.read("list apps", deviceID), func(ctx context.Context, c *sdk.Client) ([]sdk.App, error) {
		return c.ListApps(ctx, deviceID)
	})
}

func (h *handle) ListFiles(ctx context.Context, deviceID, path string) ([]sdk.FileInfo, error) {
	deviceID = h.bare(deviceID)
	return call(h, ctx, h.read("list files", deviceID), func(ctx context.Context, c *sdk.Client) ([]sdk.FileInfo, error) {
		return c.ListFiles(ctx, deviceID, path)
	})
}

// PullFile is bounded by its progress (Deadlines.Stall), not by the file's size.
func (h *handle) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	deviceID = h.bare(deviceID)
	_, err := transfer(h, ctx, "pull file", deviceID, func(ctx context.Context, c *sdk.Client, tick func()) (struct{}, error) {
		return struct{}{}, c.PullFile(ctx, deviceID, path, &progress{w: w, tick: tick})
	})
	return err
}

// PushFile is bounded by its progress (Deadlines.Stall), not by the file's size.
func (h *handle) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	deviceID = h.bare(deviceID)
	return transfer(h, ctx, "push file", deviceID, func(ctx context.Context, c *sdk.Client, tick func()) (int64, error) {
		var pr io.Reader = &progress{r: r, tick: tick}
		if l, ok := r.(interface{ Len() int }); ok {
			pr = sizedProgress{progress: pr.(*progress), len: l.Len} // the client sends the size ahead
		}
		return c.PushFile(ctx, deviceID, path, pr)
	})
}

func (h *handle) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	deviceID = h.bare(deviceID)
	return call0(h, ctx, h.act("delete file", deviceID), func(ctx context.Context, c *sdk.Client) error {
		return c.DeleteFile(ctx, deviceID, path, recursive)
	})
}

func (h *handle) ListNotifications(ctx context.Context, deviceID string) ([]sdk.Notification, error) {
	deviceID = h.bare(deviceID)
	return call(h, ctx, h.read("list notifications", deviceID), func(ctx context.Context, c *sdk.Client) ([]sdk.Notification, error) {
		return c.ListNotifications(ctx, deviceID)
	})
}

func (h *handle) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	deviceID = h.bare(deviceID)
	o := h.act("create display", deviceID)
	o.limit *= 2
	return call(h, ctx, o, func(ctx context.Context, c *sdk.Client) (int, error) {
		return c.CreateDisplay(ctx, deviceID, width, height, densityDPI)
	})
}

func (h *handle) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	deviceID = h.bare(deviceID)
	return call0(h, ctx, h.act("remove display", deviceID), func(ctx context.Context, c *sdk.Client) error {
		return c.RemoveDisplay(ctx, deviceID, displayID)
	})
}
