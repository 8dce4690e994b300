// Package sim is Pinky's virtual phone driver: phones described by a world
// file (apps, screens, what taps and typing do) that behave like real ones,
// with a lock screen, notifications, a keyboard, files and fault knobs for
// reliability tests. Create one with New and serve it with sdk.Serve.
package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/version"
)

// Version is the driver's version: Pinky's, which it ships with.
var Version = version.Get().Version

// Driver serves a World's phones. It implements sdk.Driver and the optional
// Inputter, Waker, Unlocker, LockEventer, IdleWaiter, AppLister, Filer,
// Streamer, NotificationLister and Displayer.
type Driver struct {
	phones []*phone
	byID   map[string]*phone
	faults Faults
	shots  shotCache // the last screenshots encoded
	log    *slog.Logger
	exit   func(int)
	now    func() time.Time

	calls   sync.Mutex // guards ncalls and marked
	ncalls  int
	hangs   bool // faults.Hang applies to this process (see Faults.HangMark)
	marked  bool // the HangMark file was written
	timers  []*time.Timer
	watchMu sync.Mutex // guards watchers and devices
	watch   map[*watcher]struct{}
	devices map[string]sdk.Device
	caps    []sdk.Capability // the driver's, as Info declares them through the SDK
}

var (
	_ sdk.Driver      = (*Driver)(nil)
	_ sdk.Inputter    = (*Driver)(nil)
	_ sdk.Waker       = (*Driver)(nil)
	_ sdk.Unlocker    = (*Driver)(nil)
	_ sdk.LockEventer = (*Driver)(nil)
	_ sdk.IdleWaiter  = (*Driver)(nil)
	_ sdk.AppLister   = (*Driver)(nil)
	_ sdk.Filer       = (*Driver)(nil)
	_ sdk.Streamer    = (*Driver)(nil)
	_ sdk.Displayer   = (*Driver)(nil)

	_ sdk.NotificationLister = (*Driver)(nil)
)

// Option configures a Driver.
type Option func(*Driver)

// WithFaults replaces the world's fault knobs.
func WithFaults(f Faults) Option { return func(d *Driver) { d.faults = f } }

// WithLogger sets the logger; the default discards.
func WithLogger(l *slog.Logger) Option { return func(d *Driver) { d.log = l } }

// WithExit replaces os.Exit for the crash faults, for tests.
func WithExit(exit func(code int)) Option { return func(d *Driver) { d.exit = exit } }

// New returns a driver serving w's phones. Call Close when done.
func New(w *World, opts ...Option) *Driver {
	d := &Driver{
		byID: map[string]*phone{}, faults: w.Faults, exit: os.Exit, now: time.Now,
		log:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		watch: map[*watcher]struct{}{}, devices: map[string]sdk.Device{},
	}
	for _, o := range opts {
		o(d)
	}
	d.caps = sdk.Capabilities(d)
	d.hangs = d.faults.Hang != ""
	if m := d.faults.HangMark; m != "" && d.hangs {
		_, err := os.Stat(m)
		d.hangs = errors.Is(err, fs.ErrNotExist)
	}
	for _, spec := range w.Phones {
		p := newPhone(d, spec, w.Apps)
		d.phones = append(d.phones, p)
		d.byID[spec.ID] = p
		d.devices[spec.ID] = p.device()
	}
	for _, dr := range d.faults.Drops {
		d.scheduleDrop(dr)
	}
	for _, l := range d.faults.Lacks {
		d.scheduleLack(l)
	}
	return d
}

// Close stops timers and removes the phones' Pinky folders.
func (d *Driver) Close() error {
	d.calls.Lock()
	for _, t := range d.timers {
		t.Stop()
	}
	d.calls.Unlock()
	var first error
	for _, p := range d.phones {
		if dir := p.close(); dir != "" {
			if err := os.RemoveAll(dir); err != nil && first == nil {
				first = err
			}
		}
	}
	return first
}

// Info describes the driver.
func (d *Driver) Info(ctx context.Context) (sdk.Info, error) {
	if err := d.enter(ctx, "info", "", ""); err != nil {
		return sdk.Info{}, err
	}
	return sdk.Info{
		Name: "sim", Version: Version,
		Description: "virtual phones for trying Pinky and testing agents",
		Platforms:   []sdk.Platform{sdk.PlatformAndroid, sdk.PlatformIOS},
	}, nil
}

// LockEvents reports that WatchDevices sends lock and screen changes.
func (d *Driver) LockEvents() bool { return true }

// Pinches reports that Act serves the pinch action: an element with a zoom
// variable zooms under it.
func (d *Driver) Pinches() bool { return true }

// enter applies the fault knobs to a call; deviceID may be empty.
func (d *Driver) enter(ctx context.Context, call, deviceID string, kind sdk.ActionKind) error {
	f := d.faults
	d.calls.Lock()
	d.ncalls++
	n := d.ncalls
	d.calls.Unlock()
	if (f.CrashAfter > 0 && n > f.CrashAfter) || matches(f.CrashOn, call, kind) {
		d.log.Error("fault: crashing", "call", call, "kind", kind, "calls", n)
		fmt.Fprintf(os.Stderr, "pinky-driver-sim: fault: crash on call %d (%s)\n", n, call)
		d.exit(2)
	}
	if f.Slow > 0 {
		select {
		case <-time.After(f.Slow):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if d.hangs && matches(f.Hang, call, kind) {
		d.mark()
		d.log.Warn("fault: hanging", "call", call, "kind", kind, "device", deviceID)
		<-ctx.Done()
		return ctx.Err()
	}
	return ctx.Err()
}

// mark writes the HangMark file on the first hang, so that the next
// process does not hang.
func (d *Driver) mark() {
	m := d.faults.HangMark
	if m == "" {
		return
	}
	d.calls.Lock()
	defer d.calls.Unlock()
	if d.marked {
		return
	}
	d.marked = true
	if err := os.WriteFile(m, []byte("hung\n"), 0o600); err != nil {
		d.log.Error("fault: writing the hang mark", "file", m, "err", err)
	}
}

// phone finds a device that is present and online.
func (d *Driver) phone(id string) (*phone, error) {
	p := d.byID[id]
	if p == nil {
		return nil, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
	}
	return p, nil
}

// with runs f on a usable phone with its lock held, after the fault knobs.
func (d *Driver) with(ctx context.Context, call, id string, kind sdk.ActionKind, f func(p *phone) error) error {
	if err := d.enter(ctx, call, id, kind); err != nil {
		return err
	}
	p, err := d.phone(id)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.present:
		return fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
	case !p.online:
		return fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
	case matches(d.faults.OfflineMidAction, call, kind):
		d.goOffline(p)
		return fmt.Errorf("device %q: went offline during %s: %w", id, call, sdk.ErrDeviceOffline)
	}
	if err := p.refuse(call); err != nil {
		return err
	}
	// Each display takes the orientation of what is in front before and
	// after the call, so sizes and bounds checks are the current ones.
	p.orient()
	defer p.orient()
	return f(p)
}

// goOffline marks p offline for a while. p.mu is held.
func (d *Driver) goOffline(p *phone) {
	p.online = false
	p.changed()
	dur := d.faults.OfflineFor
	if dur == 0 {
		dur = 500 * time.Millisecond
	}
	p.after(dur, func() {
		p.online = true
		p.changed()
	})
}

func (d *Driver) scheduleDrop(dr Drop) {
	p := d.byID[dr.Device]
	if p == nil {
		d.log.Warn("fault: drop names an unknown device", "device", dr.Device)
		return
	}
	set := func(present bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed || p.present == present {
			return
		}
		p.present = present
		if present {
			d.publish(sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: p.device()})
		} else {
			d.publish(sdk.DeviceEvent{Kind: sdk.DeviceRemoved, Device: sdk.Device{ID: p.spec.ID}})
		}
	}
	d.calls.Lock()
	defer d.calls.Unlock()
	d.timers = append(d.timers,
		time.AfterFunc(dr.After, func() { set(false) }),
		time.AfterFunc(dr.After+dr.For, func() { set(true) }))
}

// Screen reads a display as an element tree.
func (d *Driver) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	var s *sdk.Screen
	err := d.withDisplay(ctx, "screen", deviceID, displayID, "", func(ds *display) error {
		s = ds.view().screen(ds)
		return nil
	})
	return s, err
}

// Act performs one action on the action's display.
func (d *Driver) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	var detail string
	err := d.withDisplay(ctx, "act", deviceID, a.DisplayID, a.Kind, func(ds *display) error {
		var err error
		detail, err = ds.act(a)
		return err
	})
	return sdk.ActResult{Detail: detail}, err
}

// Wake turns the screen on.
func (d *Driver) Wake(ctx context.Context, deviceID string) error {
	return d.with(ctx, "wake", deviceID, "", func(p *phone) error {
		p.wake()
		return nil
	})
}

// Unlock turns the screen on and unlocks it with pin; a wrong pin is sdk.ErrWrongPIN.
func (d *Driver) Unlock(ctx context.Context, deviceID, pin string) error {
	return d.with(ctx, "unlock", deviceID, "", func(p *phone) error {
		p.wake()
		if !p.locked {
			return nil
		}
		if pin != p.spec.PIN {
			p.pinWrong = true
			return fmt.Errorf("device %q: %w", deviceID, sdk.ErrWrongPIN)
		}
		p.unlock()
		return nil
	})
}

// WaitIdle waits until no animation is running on any of the phone's
// displays: the contract's WaitIdle names no display.
func (d *Driver) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		var idle bool
		if err := d.with(ctx, "wait_idle", deviceID, "", func(p *phone) error {
			idle = p.idle()
			return nil
		}); err != nil {
			return false, err
		}
		if idle {
			return true, nil
		}
		if !time.Now().Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(min(10*time.Millisecond, time.Until(deadline))):
		}
	}
}

// ListApps lists the phone's apps.
func (d *Driver) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	var apps []sdk.App
	err := d.with(ctx, "list_apps", deviceID, "", func(p *phone) error {
		for _, a := range p.apps {
			apps = append(apps, p.appInfo(a))
		}
		return nil
	})
	return apps, err
}

// ListNotifications lists the phone's notifications, newest first.
func (d *Driver) ListNotifications(ctx context.Context, deviceID string) ([]sdk.Notification, error) {
	var out []sdk.Notification
	err := d.with(ctx, "list_notifications", deviceID, "", func(p *phone) error {
		for i := len(p.notes) - 1; i >= 0; i-- {
			n := p.notes[i]
			sn := sdk.Notification{ID: strconv.Itoa(n.id), Title: n.title, Text: n.text, Posted: n.posted}
			if n.app != nil {
				sn.AppID = p.appInfo(n.app).ID
			}
			out = append(out, sn)
		}
		return nil
	})
	return out, err
}

// Input applies a person's raw events: a finger that goes down and up in
// place taps, one that moves swipes; a key taps on its release.
func (d *Driver) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	var n int64
	for {
		ev, err := next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		err = d.withDisplay(ctx, "input", ev.DeviceID, ev.DisplayID, "", func(ds *display) error { return ds.input(ev) })
		if err != nil {
			return n, err
		}
		n++
	}
}
