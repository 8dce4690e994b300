package sdk

import (
	"context"
	"errors"
	"io"
	"time"
)

// Driver is what every phone driver implements. The gateway sees only this
// interface, whether the driver runs in-process or as a plugin.
//
// Every method may be called concurrently. A method on a device the driver
// does not know returns ErrDeviceNotFound; on a known device that cannot be
// reached now, ErrDeviceOffline.
type Driver interface {
	// Info describes the driver. Capabilities need not be set: the server
	// adapter fills them in from the optional interfaces implemented.
	Info(ctx context.Context) (Info, error)
	// WatchDevices calls send with a DeviceAdded event for each current
	// device, then one DevicesSynced event, then every change, until ctx ends
	// (return nil then) or send fails (return its error).
	WatchDevices(ctx context.Context, send func(DeviceEvent) error) error
	// Screen reads a display as an element tree.
	Screen(ctx context.Context, deviceID string, displayID int) (*Screen, error)
	// Screenshot captures a display as an image.
	Screenshot(ctx context.Context, req ScreenshotRequest) (*Image, error)
	// Act performs one action and returns once the phone has accepted it; it
	// does not wait for the screen to settle.
	Act(ctx context.Context, deviceID string, a Action) (ActResult, error)
}

// Inputter applies raw input from a person's mirror (CapInput).
type Inputter interface {
	// Input applies events returned by next until next returns io.EOF, and
	// returns how many it applied.
	Input(ctx context.Context, next func() (InputEvent, error)) (int64, error)
}

// Streamer streams encoded video (CapVideo).
type Streamer interface {
	// StreamVideo calls send with a config packet, then frames, until ctx ends
	// (return nil then) or send fails (return its error).
	StreamVideo(ctx context.Context, req VideoRequest, send func(VideoPacket) error) error
	// RequestKeyFrame asks the running stream for a key frame soon.
	RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error
}

// FrameCapturer takes stills from the video pipeline (CapFrameCapture).
type FrameCapturer interface {
	CaptureFrame(ctx context.Context, req ScreenshotRequest) (*Image, error)
}

// Waker turns the screen on (CapWake).
type Waker interface {
	Wake(ctx context.Context, deviceID string) error
}

// Unlocker unlocks a lock screen with a PIN (CapUnlock). A wrong PIN is
// ErrWrongPIN.
type Unlocker interface {
	Unlock(ctx context.Context, deviceID, pin string) error
}

// LockEventer marks a driver whose WatchDevices sends DeviceChanged events
// when LockState or ScreenOn change (CapLockEvents).
type LockEventer interface {
	LockEvents() bool
}

// IdleWaiter knows when the screen has stopped changing (CapWaitIdle).
type IdleWaiter interface {
	// WaitIdle returns true once the screen is idle, false when timeout passed first.
	WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error)
}

// Pincher marks a driver whose Act serves ActPinch, two fingers moving apart
// or together (CapPinch). Without it the server adapter refuses a pinch with
// ErrUnsupported before the driver sees it.
type Pincher interface {
	Pinches() bool
}

// AppLister lists launchable apps (CapApps).
type AppLister interface {
	ListApps(ctx context.Context, deviceID string) ([]App, error)
}

// Filer reads and writes files in the phone's Pinky folder (CapFiles). Paths
// are slash-separated and relative to that folder; a path that is absolute or
// leaves the folder is ErrInvalidArgument, a missing file ErrFileNotFound.
type Filer interface {
	ListFiles(ctx context.Context, deviceID, path string) ([]FileInfo, error)
	PullFile(ctx context.Context, deviceID, path string, w io.Writer) error
	// PushFile writes r to path, replacing a file there, and returns the bytes written.
	PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error)
	// DeleteFile removes a file, an empty folder, or with recursive a folder
	// and everything in it. path is never "" (the folder itself).
	DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error
}

// NotificationLister lists a phone's notifications, newest first (CapNotifications).
type NotificationLister interface {
	ListNotifications(ctx context.Context, deviceID string) ([]Notification, error)
}

// Displayer creates background displays (CapDisplays).
type Displayer interface {
	CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error)
	RemoveDisplay(ctx context.Context, deviceID string, displayID int) error
}

// Capabilities lists what d serves, from the optional interfaces it implements.
func Capabilities(d Driver) []Capability {
	var caps []Capability
	if _, ok := d.(Inputter); ok {
		caps = append(caps, CapInput)
	}
	if _, ok := d.(Streamer); ok {
		caps = append(caps, CapVideo)
	}
	if _, ok := d.(FrameCapturer); ok {
		caps = append(caps, CapFrameCapture)
	}
	if _, ok := d.(Waker); ok {
		caps = append(caps, CapWake)
	}
	if _, ok := d.(Unlocker); ok {
		caps = append(caps, CapUnlock)
	}
	if l, ok := d.(LockEventer); ok && l.LockEvents() {
		caps = append(caps, CapLockEvents)
	}
	if _, ok := d.(IdleWaiter); ok {
		caps = append(caps, CapWaitIdle)
	}
	if _, ok := d.(AppLister); ok {
		caps = append(caps, CapApps)
	}
	if _, ok := d.(Filer); ok {
		caps = append(caps, CapFiles)
	}
	if _, ok := d.(Displayer); ok {
		caps = append(caps, CapDisplays)
	}
	if _, ok := d.(NotificationLister); ok {
		caps = append(caps, CapNotifications)
	}
	if p, ok := d.(Pincher); ok && p.Pinches() {
		caps = append(caps, CapPinch)
	}
	return caps
}

// errListed ends ListDevices's watch.
var errListed = errors.New("listed")

// ListDevices returns d's devices as its WatchDevices first lists them (the
// ADDED events before SYNCED), and ends the watch.
func ListDevices(ctx context.Context, d Driver) ([]Device, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var devs []Device
	err := d.WatchDevices(ctx, func(ev DeviceEvent) error {
		switch ev.Kind {
		case DeviceAdded:
			devs = append(devs, ev.Device)
		case DevicesSynced:
			return errListed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errListed) {
		return nil, err
	}
	return devs, nil
}
