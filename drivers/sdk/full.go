package sdk

import (
	"context"
	"io"
	"time"
)

// Full is a Driver with the method of every optional capability: what a
// host holds of a driver, whatever the driver implements. The Client (a
// plugin's host side) is one; Complete makes one of an in-process Driver.
// Which methods work is what Info's Capabilities declare — a host reads
// them, never type assertions — and a method of a capability that is not
// declared answers ErrUnsupported.
type Full interface {
	Driver
	Inputter
	Streamer
	FrameCapturer
	Waker
	Unlocker
	IdleWaiter
	AppLister
	Filer
	NotificationLister
	Displayer
}

var _ Full = (*Client)(nil)

// A Narrower is a driver over other drivers (a phone host's, which serves
// the drivers of its machine as one): it implements every optional
// interface, and serves only what its drivers serve. The server adapter
// declares those of NarrowCapabilities that it implements, asked at each
// Info, in place of every interface implemented. Info's own Capabilities
// stay ignored, for every driver.
type Narrower interface {
	NarrowCapabilities() []Capability
}

// Complete returns d as a Full: the optional methods d implements, and
// ErrUnsupported for the others; Info declares the capabilities d
// implements when d leaves them unset (as the server adapter does).
func Complete(d Driver) Full {
	if f, ok := d.(Full); ok {
		return f
	}
	return complete{d}
}

type complete struct{ Driver }

func cannot(what string) error { return Errorf(ErrUnsupported, "the driver cannot %s", what) }

func (c complete) Info(ctx context.Context) (Info, error) {
	info, err := c.Driver.Info(ctx)
	if err == nil && len(info.Capabilities) == 0 {
		info.Capabilities = Capabilities(c.Driver)
	}
	return info, err
}

// Act refuses a pinch when the driver does not declare CapPinch, as the
// server adapter does, so an in-process driver behaves like a plugin.
func (c complete) Act(ctx context.Context, deviceID string, a Action) (ActResult, error) {
	if a.Kind == ActPinch {
		if p, ok := c.Driver.(Pincher); !ok || !p.Pinches() {
			return ActResult{}, cannot("pinch")
		}
	}
	return c.Driver.Act(ctx, deviceID, a)
}

func (c complete) Input(ctx context.Context, next func() (InputEvent, error)) (int64, error) {
	if d, ok := c.Driver.(Inputter); ok {
		return d.Input(ctx, next)
	}
	return 0, cannot("take raw input")
}

func (c complete) StreamVideo(ctx context.Context, req VideoRequest, send func(VideoPacket) error) error {
	if d, ok := c.Driver.(Streamer); ok {
		return d.StreamVideo(ctx, req, send)
	}
	return cannot("stream video")
}

func (c complete) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	if d, ok := c.Driver.(Streamer); ok {
		return d.RequestKeyFrame(ctx, deviceID, displayID)
	}
	return cannot("stream video")
}

func (c complete) CaptureFrame(ctx context.Context, req ScreenshotRequest) (*Image, error) {
	if d, ok := c.Driver.(FrameCapturer); ok {
		return d.CaptureFrame(ctx, req)
	}
	return nil, cannot("capture frames")
}

func (c complete) Wake(ctx context.Context, deviceID string) error {
	if d, ok := c.Driver.(Waker); ok {
		return d.Wake(ctx, deviceID)
	}
	return cannot("wake the screen")
}

func (c complete) Unlock(ctx context.Context, deviceID, pin string) error {
	if d, ok := c.Driver.(Unlocker); ok {
		return d.Unlock(ctx, deviceID, pin)
	}
	return cannot("unlock")
}

func (c complete) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	if d, ok := c.Driver.(IdleWaiter); ok {
		return d.WaitIdle(ctx, deviceID, timeout)
	}
	return false, cannot("tell when the screen is idle")
}

func (c complete) ListApps(ctx context.Context, deviceID string) ([]App, error) {
	if d, ok := c.Driver.(AppLister); ok {
		return d.ListApps(ctx, deviceID)
	}
	return nil, cannot("list apps")
}

func (c complete) ListFiles(ctx context.Context, deviceID, path string) ([]FileInfo, error) {
	if d, ok := c.Driver.(Filer); ok {
		return d.ListFiles(ctx, deviceID, path)
	}
	return nil, cannot("reach files")
}

func (c complete) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	if d, ok := c.Driver.(Filer); ok {
		return d.PullFile(ctx, deviceID, path, w)
	}
	return cannot("reach files")
}

func (c complete) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	if d, ok := c.Driver.(Filer); ok {
		return d.PushFile(ctx, deviceID, path, r)
	}
	return 0, cannot("reach files")
}

func (c complete) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	if d, ok := c.Driver.(Filer); ok {
		return d.DeleteFile(ctx, deviceID, path, recursive)
	}
	return cannot("reach files")
}

func (c complete) ListNotifications(ctx context.Context, deviceID string) ([]Notification, error) {
	if d, ok := c.Driver.(NotificationLister); ok {
		return d.ListNotifications(ctx, deviceID)
	}
	return nil, cannot("list notifications")
}

func (c complete) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	if d, ok := c.Driver.(Displayer); ok {
		return d.CreateDisplay(ctx, deviceID, width, height, densityDPI)
	}
	return 0, cannot("make displays")
}

func (c complete) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	if d, ok := c.Driver.(Displayer); ok {
		return d.RemoveDisplay(ctx, deviceID, displayID)
	}
	return cannot("make displays")
}
