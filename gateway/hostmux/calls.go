package hostmux

import (
	"context"
	"io"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The per-device calls: each goes to the driver of its device (route).

// Screen reads a display of the device through its driver.
func (m *Mux) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	d, _, err := m.route(deviceID, "")
	if err != nil {
		return nil, err
	}
	return d.Screen(ctx, deviceID, displayID)
}

// Screenshot captures a display of the device through its driver.
func (m *Mux) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	d, _, err := m.route(req.DeviceID, "")
	if err != nil {
		return nil, err
	}
	return d.Screenshot(ctx, req)
}

// Act performs an action through the device's driver; a pinch needs a
// driver that serves sdk.CapPinch.
func (m *Mux) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	var c sdk.Capability
	if a.Kind == sdk.ActPinch {
		c = sdk.CapPinch
	}
	d, _, err := m.route(deviceID, c)
	if err != nil {
		return sdk.ActResult{}, err
	}
	return d.Act(ctx, deviceID, a)
}

// StreamVideo streams the device's video through its driver.
func (m *Mux) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	d, _, err := m.route(req.DeviceID, sdk.CapVideo)
	if err != nil {
		return err
	}
	return d.StreamVideo(ctx, req, send)
}

// RequestKeyFrame asks the device's driver for a key frame.
func (m *Mux) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	d, _, err := m.route(deviceID, sdk.CapVideo)
	if err != nil {
		return err
	}
	return d.RequestKeyFrame(ctx, deviceID, displayID)
}

// CaptureFrame takes a still from the device's video through its driver.
func (m *Mux) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	d, _, err := m.route(req.DeviceID, sdk.CapFrameCapture)
	if err != nil {
		return nil, err
	}
	return d.CaptureFrame(ctx, req)
}

// Wake turns the device's screen on through its driver.
func (m *Mux) Wake(ctx context.Context, deviceID string) error {
	d, _, err := m.route(deviceID, sdk.CapWake)
	if err != nil {
		return err
	}
	return d.Wake(ctx, deviceID)
}

// Unlock unlocks the device with pin through its driver.
func (m *Mux) Unlock(ctx context.Context, deviceID, pin string) error {
	d, _, err := m.route(deviceID, sdk.CapUnlock)
	if err != nil {
		return err
	}
	return d.Unlock(ctx, deviceID, pin)
}

// WaitIdle waits for the device's screen to settle through its driver.
func (m *Mux) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	d, _, err := m.route(deviceID, sdk.CapWaitIdle)
	if err != nil {
		return false, err
	}
	return d.WaitIdle(ctx, deviceID, timeout)
}

// ListApps lists the device's apps through its driver.
func (m *Mux) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	d, _, err := m.route(deviceID, sdk.CapApps)
	if err != nil {
		return nil, err
	}
	return d.ListApps(ctx, deviceID)
}

// ListFiles lists a folder of the device's Pinky folder through its driver.
func (m *Mux) ListFiles(ctx context.Context, deviceID, path string) ([]sdk.FileInfo, error) {
	d, _, err := m.route(deviceID, sdk.CapFiles)
	if err != nil {
		return nil, err
	}
	return d.ListFiles(ctx, deviceID, path)
}

// PullFile copies a file of the device to w through its driver.
func (m *Mux) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	d, _, err := m.route(deviceID, sdk.CapFiles)
	if err != nil {
		return err
	}
	return d.PullFile(ctx, deviceID, path, w)
}

// PushFile writes r to a file of the device through its driver.
func (m *Mux) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	d, _, err := m.route(deviceID, sdk.CapFiles)
	if err != nil {
		return 0, err
	}
	return d.PushFile(ctx, deviceID, path, r)
}

// DeleteFile removes a file of the device through its driver.
func (m *Mux) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	d, _, err := m.route(deviceID, sdk.CapFiles)
	if err != nil {
		return err
	}
	return d.DeleteFile(ctx, deviceID, path, recursive)
}

// ListNotifications lists the device's notifications through its driver.
func (m *Mux) ListNotifications(ctx context.Context, deviceID string) ([]sdk.Notification, error) {
	d, _, err := m.route(deviceID, sdk.CapNotifications)
	if err != nil {
		return nil, err
	}
	return d.ListNotifications(ctx, deviceID)
}

// CreateDisplay makes a background display on the device through its driver.
func (m *Mux) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	d, _, err := m.route(deviceID, sdk.CapDisplays)
	if err != nil {
		return 0, err
	}
	return d.CreateDisplay(ctx, deviceID, width, height, densityDPI)
}

// RemoveDisplay removes a background display of the device through its driver.
func (m *Mux) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	d, _, err := m.route(deviceID, sdk.CapDisplays)
	if err != nil {
		return err
	}
	return d.RemoveDisplay(ctx, deviceID, displayID)
}
