package driverhost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Errors of the host itself.
var (
	// ErrUnknownDriver: no driver of that name was discovered or attached.
	ErrUnknownDriver = errors.New("unknown driver")
	// ErrStopped: the host was stopped.
	ErrStopped = errors.New("driver host stopped")
)

// subBuffer is the channel capacity of a subscriber.
const subBuffer = 256

// Host runs and supervises the drivers. It is safe for concurrent use.
type Host struct {
	cfg Config
	log *slog.Logger

	// mu guards everything below and the status fields of every driver.
	// It is never held across a driver call, a process start or kill, or a
	// blocking channel operation. driver.opMu, when needed, is taken first.
	mu      sync.Mutex
	started bool
	stopped bool
	drivers map[string]*driver
	devices map[devKey]*devEntry
	devSeq  uint64
	subs    map[*subscriber]struct{}

	socks sockets // the drivers' socket folders; its own lock

	// stopCtx ends when Stop is called: it ends the phone hosts' links,
	// whose goroutines remotes counts.
	stopCtx context.Context
	stopAll context.CancelFunc
	remotes sync.WaitGroup
}

type devKey struct{ driver, id string }

type devEntry struct {
	dev Device // Duplicate is computed when read
	seq uint64 // order of first listing
}

type subscriber struct {
	ch     chan Event
	lagged bool
}

// New returns a host for cfg. Nothing starts until Start.
func New(cfg Config) *Host {
	cfg = cfg.withDefaults()
	if cfg.envErr != nil {
		cfg.Logger.Warn("driver deadlines", "err", cfg.envErr)
	}
	base := cfg.SocketDir
	if base == "" {
		base = defaultSocketBase()
	}
	stopCtx, stopAll := context.WithCancel(context.Background())
	return &Host{
		stopCtx: stopCtx,
		stopAll: stopAll,
		socks:   sockets{base: base},
		cfg:     cfg,
		log:     cfg.Logger,
		drivers: map[string]*driver{},
		devices: map[devKey]*devEntry{},
		subs:    map[*subscriber]struct{}{},
	}
}

// Start discovers the drivers and starts them all at once. It returns when
// each has finished its first start, successfully (running, devices listed)
// or not, which takes at most about Config.StartTimeout; one slow or broken
// driver does not hold back the others. A driver that fails to start is
// not an error of Start: it shows in Drivers and is retried with backoff.
// ctx bounds only the wait; the drivers run until Stop.
func (h *Host) Start(ctx context.Context) error {
	cands, derr := Discover(h.cfg)
	if derr != nil {
		h.log.Warn("driver discovery", "err", derr)
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return ErrStopped
	}
	if h.started {
		h.mu.Unlock()
		return errors.New("driver host already started")
	}
	h.started = true
	var firsts []chan struct{}
	for _, c := range cands {
		if _, ok := h.drivers[c.Name]; ok {
			continue // attached before Start
		}
		d := h.newDriverLocked(c.Name)
		d.path, d.source = c.Path, c.Source
		first := make(chan struct{})
		firsts = append(firsts, first)
		d.launchLocked(func(s *supervisor) { d.supervise(s, first) })
	}
	for name, path := range h.cfg.Pins { // pins that Discover rejected
		if _, ok := h.drivers[name]; ok || h.cfg.Disabled[name] {
			continue
		}
		d := h.newDriverLocked(name)
		d.path, d.source, d.state = path, SourcePin, StateFailed
		if err := checkExecutable(path); err != nil {
			d.lastErr = err.Error()
		} else {
			d.lastErr = "invalid driver name"
		}
	}
	h.mu.Unlock()
	for _, f := range firsts {
		select {
		case <-f:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Stop ends every driver process (a graceful shutdown, then SIGKILL after
// 2 s), waits for them, and closes the subscribers' channels. The devices
// stay listed, offline. It is idempotent.
func (h *Host) Stop() {
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return
	}
	h.stopped = true
	var sups []*supervisor
	for _, d := range h.drivers {
		if d.sup != nil {
			sups = append(sups, d.sup)
		}
	}
	h.mu.Unlock()
	for _, s := range sups {
		s.cancel()
	}
	for _, s := range sups {
		<-s.done
	}
	h.stopAll()
	h.remotes.Wait()
	h.mu.Lock()
	for s := range h.subs {
		close(s.ch)
	}
	clear(h.subs)
	h.mu.Unlock()
}

// Drivers returns the status of every driver, sorted by name.
func (h *Host) Drivers() []DriverStatus {
	h.mu.Lock()
	out := make([]DriverStatus, 0, len(h.drivers))
	count := map[string]int{}
	for k := range h.devices {
		count[k.driver]++
	}
	var logs []*stderrLog
	for _, d := range h.drivers {
		out = append(out, DriverStatus{
			Name:         d.name,
			Host:         d.host,
			Version:      d.info.Version,
			Path:         d.path,
			Source:       d.source,
			Pid:          d.pid,
			State:        d.state,
			Restarts:     d.restarts,
			Devices:      count[d.name],
			Capabilities: slices.Clone(d.info.Capabilities),
			Platforms:    slices.Clone(d.info.Platforms),
			LastError:    d.lastErr,
			StartedAt:    d.startedAt,
			UnlinkedAt:   d.unlinkedAt,
		})
		logs = append(logs, d.stderr)
	}
	h.mu.Unlock()
	for i := range out {
		out[i].Stderr = logs[i].tail()
	}
	slices.SortFunc(out, func(a, b DriverStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Driver returns a handle to the named driver. The handle stays valid
// across restarts; see the package comment. It has every optional method
// (sdk.Full); Info().Capabilities says which ones the driver serves.
func (h *Host) Driver(name string) (sdk.Full, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, ok := h.drivers[name]
	if !ok {
		return nil, fmt.Errorf("driver %q: %w", name, ErrUnknownDriver)
	}
	return d.handle, nil
}

// DriverForDevice returns a handle to the driver that lists deviceID, and
// the driver's name. When two drivers list the id, the online one listed
// first wins. An unknown id is sdk.ErrDeviceNotFound.
func (h *Host) DriverForDevice(deviceID string) (sdk.Full, string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	d := h.driverOfLocked(deviceID)
	if d == nil {
		return nil, "", fmt.Errorf("device %q: %w", deviceID, sdk.ErrDeviceNotFound)
	}
	return d.handle, d.name, nil
}

// driverOfLocked is the driver that lists deviceID: when two do, the online
// one listed first. h.mu is held.
func (h *Host) driverOfLocked(deviceID string) *driver {
	d, _ := h.entryOfLocked(deviceID)
	return d
}

// entryOfLocked returns the driver of deviceID and its entry: of the
// entries with that id, an online one before an offline one, then the one
// listed first.
func (h *Host) entryOfLocked(deviceID string) (*driver, *devEntry) {
	var best *devEntry
	for _, e := range h.devices {
		if e.dev.ID != deviceID {
			continue
		}
		if best == nil || (e.dev.Online && !best.dev.Online) || (e.dev.Online == best.dev.Online && e.seq < best.seq) {
			best = e
		}
	}
	if best == nil {
		return nil, nil
	}
	return h.drivers[best.dev.Driver], best
}

// Serves reports whether deviceID serves capability c: as the device says
// now (sdk.Device.Caps), within what its driver's Info declared when it
// started; by the driver's Info alone for a device that says nothing.
// That is the one way to know what a device can do (its handle has every
// optional method, sdk.Full, and one it does not serve answers
// ErrUnsupported). An unknown device serves nothing.
func (h *Host) Serves(deviceID string, c sdk.Capability) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	d, e := h.entryOfLocked(deviceID)
	return d != nil && e.dev.Device.Serves(c, d.info.Capabilities)
}

// Missing returns why deviceID lacks capability c and how the person can
// enable it, when the device said so (sdk.Device.Caps).
func (h *Host) Missing(deviceID string, c sdk.Capability) (sdk.MissingCap, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	_, e := h.entryOfLocked(deviceID)
	if e == nil {
		return sdk.MissingCap{}, false
	}
	return e.dev.Device.Missing(c)
}

// Devices lists every device of every driver, online or not, sorted by id
// and then driver.
func (h *Host) Devices() []Device {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]Device, 0, len(h.devices))
	for _, e := range h.devices {
		out = append(out, h.deviceLocked(e))
	}
	slices.SortFunc(out, func(a, b Device) int {
		return cmp.Or(strings.Compare(a.ID, b.ID), strings.Compare(a.Driver, b.Driver))
	})
	return out
}

// Subscribe returns a channel of device events and a function that ends
// the subscription and closes the channel. The host never blocks on a
// subscriber: when the channel's buffer (256 events) is full, events are
// dropped and the next one delivered is an EventResync, after which the
// subscriber should read Devices. Stop closes every channel.
func (h *Host) Subscribe() (<-chan Event, func()) {
	s := &subscriber{ch: make(chan Event, subBuffer)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stopped {
		close(s.ch)
		return s.ch, func() {}
	}
	h.subs[s] = struct{}{}
	return s.ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[s]; ok {
			delete(h.subs, s)
			close(s.ch)
		}
	}
}

// publishLocked hands ev to every subscriber without blocking.
func (h *Host) publishLocked(kind EventKind, e *devEntry) {
	ev := Event{Kind: kind, Device: h.deviceLocked(e)}
	for s := range h.subs {
		if s.lagged {
			select {
			case s.ch <- Event{Kind: EventResync}:
				s.lagged = false
			default:
				continue
			}
		}
		select {
		case s.ch <- ev:
		default:
			s.lagged = true
		}
	}
}

// deviceLocked returns the entry's device with Duplicate set when another
// driver listed the same id earlier.
func (h *Host) deviceLocked(e *devEntry) Device {
	dev := e.dev
	for _, o := range h.devices {
		if o.dev.ID == dev.ID && o.seq < e.seq {
			dev.Duplicate = true
			break
		}
	}
	if d := h.drivers[dev.Driver]; d != nil && d.info.Name != "" {
		// Known, if empty: a driver that offers nothing optional.
		dev.Offered = append([]sdk.Capability{}, d.info.Capabilities...)
	}
	return dev
}

// applyLocked applies one event from a driver's device watch. seen holds
// the ids listed since the watch began; DevicesSynced removes the others,
// which were listed by an earlier process and are gone now.
func (h *Host) applyLocked(d *driver, seen map[string]bool, ev sdk.DeviceEvent) {
	switch ev.Kind {
	case sdk.DeviceAdded, sdk.DeviceChanged:
		id := ev.Device.ID
		if id == "" {
			return
		}
		seen[id] = true
		online := ev.Device.State == sdk.StateOnline
		key := devKey{d.name, id}
		e, ok := h.devices[key]
		if !ok {
			h.devSeq++
			e = &devEntry{seq: h.devSeq, dev: Device{Device: ev.Device, Driver: d.name, Host: d.host, Online: online}}
			e.dev.ID = h.qualifiedLocked(d, id)
			h.devices[key] = e
			if dev := h.deviceLocked(e); dev.Duplicate {
				d.log.Warn("device id already listed by another driver", "device", id)
			}
			h.publishLocked(EventAdded, e)
			return
		}
		was := e.dev.Online
		listed := e.dev.ID // a qualified id stays as it was first listed
		e.dev.Device, e.dev.Online = ev.Device, online
		e.dev.ID = listed
		switch {
		case online && !was:
			h.publishLocked(EventOnline, e)
		case !online && was:
			h.publishLocked(EventOffline, e)
		default:
			h.publishLocked(EventChanged, e)
		}
	case sdk.DeviceRemoved:
		key := devKey{d.name, ev.Device.ID}
		if e, ok := h.devices[key]; ok {
			delete(h.devices, key)
			h.publishLocked(EventRemoved, e)
		}
	case sdk.DevicesSynced:
		for key, e := range h.devices {
			if key.driver == d.name && !seen[key.id] {
				delete(h.devices, key)
				h.publishLocked(EventRemoved, e)
			}
		}
	}
}

// offlineLocked marks every device of d offline: its process is gone.
func (h *Host) offlineLocked(d *driver) {
	var es []*devEntry
	for key, e := range h.devices {
		if key.driver == d.name {
			es = append(es, e)
		}
	}
	slices.SortFunc(es, func(a, b *devEntry) int { return cmp.Compare(a.seq, b.seq) })
	for _, e := range es {
		e.dev.Online = false
		e.dev.State = sdk.StateOffline
		h.publishLocked(EventOffline, e)
	}
}
