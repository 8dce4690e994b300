// Package ios is the driver of iPhones: pinky-driver-ios. It reads and acts
// through WebDriverAgent (WDA, package wda) running on each phone, and
// receives the screen as H.264 over Wi-Fi from a broadcast source on the
// phone (package video, protocol in VIDEO.md).
//
// # Phones
//
// The phones are listed in $PINKY_HOME/ios.yaml (package config; `pinky ios
// add|remove|list`), which the driver reads again when it changes. Each
// phone's WDA is probed (GET /status) every two seconds: a phone whose WDA
// answers is online, otherwise offline, and the driver logs what to do. A
// phone keeps its id across drops, restarts and edits of its other fields.
//
// # Reading and acting
//
// One WDA session per phone, created without relaunching the app in front
// and created again when WDA has lost it. Screen reads /source (JSON), the
// app in front and the lock state, and reports every rectangle in pixels:
// WDA speaks points, converted with the scale WDA reports (/wda/screen).
// Actions convert back. Typing goes through /wda/keys (any text, emoji
// and every script, never the pasteboard; README.md says how WebDriverAgent
// types it); keys map to WDA's buttons where iOS has them and are
// ErrUnsupported where it has not (iOS has no back key).
//
// # Pictures
//
// Screenshots come from the broadcast when one runs (a JPEG the phone makes
// from its latest frame: fast, no H.264 decoding here), else from WDA's
// MJPEG stream, else from /screenshot (a PNG, slow over Wi-Fi). A phone
// whose broadcast is connected serves frame capture, so that the gateway
// asks for the fast one first. Video is the broadcast's H.264; while none
// runs, StreamVideo waits for one and the driver logs that the person can
// start it.
//
// # Capabilities per phone
//
// Each phone's device says what it serves now (caps.go): without a
// broadcast configured, neither video nor frame capture; with one, video,
// and frame capture while the broadcast is connected, with a CHANGED event
// when it connects and drops. A lacked capability answers ErrUnsupported
// with the reason and the fix its device reports.
//
// # Faults
//
// Every WDA call has a deadline, so a hung /source fails with ErrTimeout
// instead of hanging the phone, and one phone's hung call never blocks
// another's. An action whose answer was lost (the connection dropped after
// the request went out, or its deadline passed) is reported as
// ErrDeviceOffline or ErrTimeout: it may have happened, and the gateway
// tells the agent to observe before repeating.
package ios

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/version"
)

// Version is the driver's version: Pinky's, which it ships with.
var Version = version.Get().Version

// Config configures a Driver.
type Config struct {
	// Path is the phone list (ios.yaml).
	Path string
	// Poll is how often the list is read again and each phone's WDA
	// probed; zero means 2 s.
	Poll time.Duration
	// Timeout and SlowTimeout bound WDA calls; zero means wda's defaults
	// (5 s, and 20 s for /source and /screenshot).
	Timeout, SlowTimeout time.Duration
	// StockWDA leaves WebDriverAgent's settings at its defaults and reads
	// every attribute of the page source, for measuring what the driver's
	// settings (settings.go) buy.
	StockWDA bool
	Logger   *slog.Logger
}

// Driver drives the iPhones of one phone list.
type Driver struct {
	cfg Config
	log *slog.Logger

	ctx    context.Context // the driver's life
	cancel context.CancelFunc
	start  sync.Once
	ready  chan struct{}    // closed after the first load and probe
	caps   []sdk.Capability // what the driver serves for some phone (caps.go)

	mu       sync.Mutex
	phones   map[string]*phone // by id
	watchers map[*watcher]bool
	fileErr  string // the last error reading the list, logged once
	stamp    fileStamp
	loaded   bool // the list was read once
}

// New returns a driver for the phones listed at cfg.Path.
func New(cfg Config) (*Driver, error) {
	if cfg.Path == "" {
		return nil, errors.New("ios driver: no phone list path")
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &Driver{cfg: cfg, log: log, ctx: ctx, cancel: cancel, ready: make(chan struct{}),
		phones: map[string]*phone{}, watchers: map[*watcher]bool{}}
	d.caps = sdk.Capabilities(d)
	return d, nil
}

// Close stops probing and every phone's video, and ends the WDA sessions.
func (d *Driver) Close() {
	d.cancel()
	d.mu.Lock()
	phones := make([]*phone, 0, len(d.phones))
	for _, p := range d.phones {
		phones = append(phones, p)
	}
	d.mu.Unlock()
	stopAll(phones)
}

// stopAll stops phones at once, outside d.mu: each may wait a second for a
// phone that is gone.
func stopAll(phones []*phone) {
	var wg sync.WaitGroup
	for _, p := range phones {
		wg.Go(p.stop)
	}
	wg.Wait()
}

// Info implements sdk.Driver.
func (d *Driver) Info(context.Context) (sdk.Info, error) {
	return sdk.Info{
		Name: "ios", Version: Version,
		Description: "iPhones through WebDriverAgent, with H.264 over Wi-Fi from a broadcast on the phone",
		Platforms:   []sdk.Platform{sdk.PlatformIOS},
	}, nil
}

// LockEvents implements sdk.LockEventer: each probe reads the lock state.
func (d *Driver) LockEvents() bool { return true }

// Pinches reports that Act serves the pinch action, as two W3C touch
// pointers played together by WebDriverAgent.
func (d *Driver) Pinches() bool { return true }

// fileStamp tells whether the phone list changed since it was last read.
type fileStamp struct {
	mod  time.Time
	size int64
	mode os.FileMode // a chmod 600 makes a refused list readable
	ok   bool
}

// run reads the phone list and probes the phones until the driver closes.
func (d *Driver) run() {
	t := time.NewTicker(d.cfg.Poll)
	defer t.Stop()
	d.reload()
	d.probeAll()
	close(d.ready)
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
		d.reload()
		d.probeAll()
	}
}

// reload applies the phone list if it changed: new phones are added,
// removed ones removed, changed ones started again under the same id.
func (d *Driver) reload() {
	st := fileStamp{}
	if fi, err := os.Stat(d.cfg.Path); err == nil {
		st = fileStamp{mod: fi.ModTime(), size: fi.Size(), mode: fi.Mode(), ok: true}
	}
	d.mu.Lock()
	same := d.loaded && st == d.stamp
	d.mu.Unlock()
	if same {
		return
	}
	f, err := config.Load(d.cfg.Path)
	var stopped []*phone
	defer func() { stopAll(stopped) }() // after the unlock below
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		// Keep the phones as they were: a half-edited file must not drop them.
		if msg := err.Error(); msg != d.fileErr {
			d.log.Error("cannot read the phone list; keeping the phones as they were", "path", d.cfg.Path, "err", err)
			d.fileErr = msg
		}
		d.stamp, d.loaded = st, true
		return
	}
	d.fileErr, d.stamp, d.loaded = "", st, true
	keep := map[string]bool{}
	for _, pc := range f.Phones {
		keep[pc.ID] = true
		old := d.phones[pc.ID]
		if old != nil && old.same(pc) {
			continue
		}
		if old != nil {
			old.release() // its video listener's address may be the new one's
		}
		p, err := d.newPhone(pc)
		if err != nil {
			d.log.Error("phone not added", "device", pc.ID, "err", err)
			continue
		}
		if old != nil {
			stopped = append(stopped, old)
			p.dev.State = old.device().State // (d.mu before p.mu)
		}
		d.phones[pc.ID] = p
		kind := sdk.DeviceAdded
		if old != nil {
			kind = sdk.DeviceChanged
		}
		d.log.Info("phone listed", "device", pc.ID, "name", pc.Name, "wda", pc.WDA)
		d.emitLocked(sdk.DeviceEvent{Kind: kind, Device: p.device()})
	}
	for id, p := range d.phones {
		if !keep[id] {
			stopped = append(stopped, p)
			delete(d.phones, id)
			d.log.Info("phone removed from the list", "device", id)
			d.emitLocked(sdk.DeviceEvent{Kind: sdk.DeviceRemoved, Device: sdk.Device{ID: id}})
		}
	}
}

// probeAll probes every phone at once and reports what changed.
func (d *Driver) probeAll() {
	d.mu.Lock()
	phones := make([]*phone, 0, len(d.phones))
	for _, p := range d.phones {
		phones = append(phones, p)
	}
	d.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range phones {
		wg.Go(func() {
			if p.probe(d.ctx, d.log) {
				d.phoneChanged(p)
			}
		})
	}
	wg.Wait()
}

// phoneChanged sends p's device as it is now in a CHANGED event, unless p
// was replaced or removed meanwhile. Each event is made under d.mu from
// the phone's current state, so the last one a watcher gets is the
// latest, whichever of the probe and the broadcast changed it.
func (d *Driver) phoneChanged(p *phone) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.phones[p.cfg.ID] == p {
		d.emitLocked(sdk.DeviceEvent{Kind: sdk.DeviceChanged, Device: p.device()})
	}
}

// watcher is one WatchDevices call's queue.
type watcher struct {
	mu     sync.Mutex
	events []sdk.DeviceEvent
	wake   chan struct{}
}

func (w *watcher) push(e sdk.DeviceEvent) {
	w.mu.Lock()
	w.events = append(w.events, e)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *watcher) take() []sdk.DeviceEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	ev := w.events
	w.events = nil
	return ev
}

// emitLocked queues e for every watcher; d.mu is held.
func (d *Driver) emitLocked(e sdk.DeviceEvent) {
	for w := range d.watchers {
		w.push(e)
	}
}

// WatchDevices implements sdk.Driver. The first listing waits for the
// first probe of every phone (a few seconds at most), so that it says
// which phones are online.
func (d *Driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	d.start.Do(func() { go d.run() })
	select {
	case <-d.ready:
	case <-ctx.Done():
		return nil
	case <-d.ctx.Done():
		return errors.New("ios driver closed")
	}
	w := &watcher{wake: make(chan struct{}, 1)}
	d.mu.Lock()
	initial := make([]sdk.DeviceEvent, 0, len(d.phones)+1)
	for _, p := range d.phones {
		initial = append(initial, sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: p.device()})
	}
	initial = append(initial, sdk.DeviceEvent{Kind: sdk.DevicesSynced})
	d.watchers[w] = true
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.watchers, w)
		d.mu.Unlock()
	}()
	for _, e := range initial {
		if err := send(e); err != nil {
			return err
		}
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-d.ctx.Done():
			return nil
		case <-w.wake:
		}
		for _, e := range w.take() {
			if err := send(e); err != nil {
				return err
			}
		}
	}
}

// phone returns the phone with id, online.
func (d *Driver) phone(id string) (*phone, error) {
	d.start.Do(func() { go d.run() })
	d.mu.Lock()
	p := d.phones[id]
	d.mu.Unlock()
	if p == nil {
		return nil, sdk.Errorf(sdk.ErrDeviceNotFound, "%s is not in the phone list (pinky ios list)", id)
	}
	if p.device().State != sdk.StateOnline {
		return nil, sdk.Errorf(sdk.ErrDeviceOffline, "%s: WebDriverAgent at %s is not answering", id, p.cfg.WDA)
	}
	return p, nil
}

// mapErr turns a WDA client error into the driver's categories.
func mapErr(id string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.As(err, new(*sdk.Error)):
		return err
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, wda.ErrUncertain):
		return sdk.Errorf(sdk.ErrDeviceOffline, "%s: the answer to the action was lost (%v); it may have happened", id, err)
	case errors.Is(err, wda.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return sdk.Errorf(sdk.ErrTimeout, "%s: WebDriverAgent did not answer in time: %v", id, err)
	case errors.Is(err, wda.ErrUnreachable):
		return sdk.Errorf(sdk.ErrDeviceOffline, "%s: WebDriverAgent is not answering: %v", id, err)
	case errors.Is(err, wda.ErrUnknownCommand):
		return sdk.Errorf(sdk.ErrUnsupported, "%s: this WebDriverAgent does not know the command: %v", id, err)
	case errors.Is(err, video.ErrNoBroadcast):
		return sdk.Errorf(sdk.ErrUnsupported, "%s: %s; %s", id, reasonNotConnected, fixNotConnected)
	}
	return sdk.Errorf(sdk.ErrInternal, "%s: %v", id, err)
}

var _ sdk.Driver = (*Driver)(nil)
