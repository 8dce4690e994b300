package drivertest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/load"
)

// Case is one check of the suite.
type Case struct {
	// Name is unique, lowercase and dash-separated, e.g. "screen-wellformed".
	Name string
	// Capability is what the driver must declare for the case to run; empty
	// for the core contract.
	Capability sdk.Capability
	// NeedsDevice says the case acts on a device and skips without one.
	NeedsDevice bool
	// Doc says in one line what the case checks.
	Doc string

	run func(t T, s *suite)
}

// registry is every case, in the order they run. Cases do not depend on
// that order: each one brings the device to the state it needs.
var registry = slices.Concat(driverCases, lockCases, screenCases, actCases, mediaCases)

// Cases lists every case of the suite, for `pinky driver check --list`.
func Cases() []Case {
	return append([]Case(nil), registry...)
}

// suite is the state shared by the cases of one run: the driver, its info
// and the device under test. Both are looked up once, lazily.
type suite struct {
	drv  *sdk.Client
	opts Options

	infoOnce sync.Once
	info     sdk.Info
	infoErr  error

	devOnce sync.Once
	device  sdk.Device // the device under test as first seen; zero when none
	devSkip string     // why device cases skip
	devErr  error      // why device cases fail
	unwatch func()     // stops the watch that keeps latest current
	root    *suite     // for a view pinned to one device (on), the suite it views

	mu     sync.Mutex
	latest map[string]sdk.Device // every device as its last event said
	order  []string              // device ids in the order they were added
}

func newSuite(drv *sdk.Client, opts Options) *suite {
	if opts.Slack == 0 { // the machine's load, read once for the whole run
		opts.Slack = load.Factor()
	}
	return &suite{drv: drv, opts: opts}
}

// close stops the suite's background watch of the devices.
func (s *suite) close() {
	s.mu.Lock()
	stop := s.unwatch
	s.unwatch = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// run runs one case: it skips by capability and device, then calls the case.
// A case of a capability that needs a device skips when the device under
// test does not serve it now (its Caps, SPEC.md section 4), saying why and
// how to enable it; the case device-capabilities checks that such a
// device answers UNSUPPORTED.
func (s *suite) run(t T, c Case) {
	t.Helper()
	if c.Capability != "" {
		info := s.getInfo(t)
		if !info.Has(c.Capability) {
			t.Skipf("the driver does not declare capability %q", c.Capability)
		}
	}
	if c.NeedsDevice {
		s.deviceID(t)
		if c.Capability != "" && !s.serves(t, c.Capability) {
			t.Skipf("%s", s.lacks(t, c.Capability))
		}
	}
	c.run(t, s)
}

// top is the suite that owns the watch: s, or the suite a view was made
// from.
func (s *suite) top() *suite {
	if s.root != nil {
		return s.root
	}
	return s
}

// on returns a view of s whose device under test is d: the cases of a
// capability run through it on each online device that serves the
// capability (see targets). s's info and device list are read already.
func (s *suite) on(d sdk.Device) *suite {
	v := &suite{drv: s.drv, opts: s.opts, root: s.top(), device: d}
	v.opts.DeviceID = d.ID
	v.infoOnce.Do(func() { v.info, v.infoErr = s.info, s.infoErr })
	v.devOnce.Do(func() {})
	return v
}

// targets returns the devices a case runs on when that is not just the
// device under test: for a case of a capability that needs a device, with
// no Options.DeviceID, every online device that serves the capability now,
// when that is more than one device or another one than the device under
// test. Otherwise it returns nil and the case runs as usual (on the device
// under test, skipping with its reason when it lacks the capability).
func (s *suite) targets(c Case) []sdk.Device {
	if c.Capability == "" || !c.NeedsDevice || s.opts.DeviceID != "" || s.root != nil {
		return nil
	}
	s.loadInfo()
	s.devOnce.Do(s.findDevice)
	if s.infoErr != nil || s.devErr != nil || s.devSkip != "" || !s.info.Has(c.Capability) {
		return nil
	}
	var out []sdk.Device
	for _, d := range s.onlineNow() {
		if d.Serves(c.Capability, s.info.Capabilities) {
			out = append(out, d)
		}
	}
	if len(out) == 0 || (len(out) == 1 && out[0].ID == s.device.ID) {
		return nil
	}
	return out
}

// current returns the device under test as its latest event describes it
// (a CHANGED event may have changed its capabilities since the first read).
func (s *suite) current(t T) sdk.Device {
	t.Helper()
	id := s.deviceID(t)
	r := s.top()
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.latest[id]; ok {
		return d
	}
	return s.device
}

// online returns the online devices as their latest events describe them,
// in the order they were added: only the one of Options.DeviceID when set.
func (s *suite) online(t T) []sdk.Device {
	t.Helper()
	s.deviceID(t)
	return s.onlineNow()
}

// onlineNow is online once the device list has been read.
func (s *suite) onlineNow() []sdk.Device {
	r := s.top()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []sdk.Device
	for _, id := range r.order {
		d, ok := r.latest[id]
		if !ok || d.State != sdk.StateOnline || (s.opts.DeviceID != "" && id != s.opts.DeviceID) {
			continue
		}
		out = append(out, d)
	}
	return out
}

// serves reports whether the device under test serves c now: by its own
// Caps when it sends them, else by the driver's capabilities.
func (s *suite) serves(t T, c sdk.Capability) bool {
	t.Helper()
	return s.current(t).Serves(c, s.getInfo(t).Capabilities)
}

// lacks says that the device under test does not serve c, with the reason
// and the fix its Caps give.
func (s *suite) lacks(t T, c sdk.Capability) string {
	t.Helper()
	d := s.current(t)
	msg := fmt.Sprintf("device %q does not serve %q now", d.ID, c)
	if m, ok := d.Missing(c); ok {
		msg += ": " + m.Reason
		if m.Fix != "" {
			msg += " (fix: " + m.Fix + ")"
		}
	}
	return msg
}

// ctx returns the case's context, bounded by Options.CaseTimeout.
func (s *suite) ctx(t T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), s.opts.caseTimeout())
	t.Cleanup(cancel)
	return ctx
}

// cleanupCtx is a context for cleanup work, which runs after the case's
// context has been canceled.
func cleanupCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 10*time.Second)
}

// getInfo returns the driver's info, ending the case when GetInfo fails.
func (s *suite) getInfo(t T) sdk.Info {
	t.Helper()
	s.loadInfo()
	if s.infoErr != nil {
		t.Fatalf("GetInfo: %v", s.infoErr)
	}
	return s.info
}

// loadInfo reads the driver's info once.
func (s *suite) loadInfo() {
	s.infoOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.caseTimeout())
		defer cancel()
		s.info, s.infoErr = s.drv.Info(ctx)
	})
}

// deviceID returns the device under test, skipping the case when there is
// none and failing it when the device list could not be read.
func (s *suite) deviceID(t T) string {
	t.Helper()
	s.devOnce.Do(s.findDevice)
	if s.devErr != nil {
		t.Fatalf("finding the device under test: %v", s.devErr)
	}
	if s.devSkip != "" {
		t.Skipf("%s", s.devSkip)
	}
	return s.device.ID
}

func (s *suite) findDevice() {
	if s.opts.NoDevices {
		s.devSkip = "needs a device, and the options say the driver has none"
		return
	}
	// The watch stays open for the whole run, so that a CHANGED event (new
	// capabilities, a lock) reaches the cases that read the device after it.
	ctx, cancel := context.WithCancel(context.Background())
	w := watchFollow(ctx, s.drv, s.opts.syncTimeout(), s.follow)
	if w.err != nil {
		cancel()
		s.devErr = w.err
		return
	}
	s.mu.Lock()
	s.unwatch = func() {
		cancel()
		w.stop() //nolint:errcheck // the watch was checked by devices-sync
	}
	s.mu.Unlock()
	for _, d := range w.devices {
		if s.opts.DeviceID != "" && d.ID == s.opts.DeviceID {
			if d.State != sdk.StateOnline {
				s.devErr = fmt.Errorf("device %q is %s; want online", d.ID, stateName(d.State))
				return
			}
			s.device = d
			return
		}
		if s.opts.DeviceID == "" && d.State == sdk.StateOnline {
			s.device = d
			return
		}
	}
	if s.opts.DeviceID != "" {
		s.devErr = fmt.Errorf("device %q is not among the %d devices WatchDevices reported", s.opts.DeviceID, len(w.devices))
		return
	}
	s.devSkip = fmt.Sprintf("needs an online device, and the driver reports none (%d devices in all)", len(w.devices))
}

// follow applies one device event to s.latest.
func (s *suite) follow(e sdk.DeviceEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		s.latest = map[string]sdk.Device{}
	}
	switch e.Kind {
	case sdk.DeviceAdded, sdk.DeviceChanged:
		if _, ok := s.latest[e.Device.ID]; !ok {
			s.order = append(s.order, e.Device.ID)
		}
		s.latest[e.Device.ID] = e.Device
	case sdk.DeviceRemoved:
		delete(s.latest, e.Device.ID)
		s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == e.Device.ID })
	}
}

// initialWatch is the start of a WatchDevices stream: the events before
// SYNCED, and whether the stream went on after it.
type initialWatch struct {
	events  []sdk.DeviceEvent // before SYNCED
	devices []sdk.Device      // the devices of the ADDED events
	err     error             // no SYNCED in time, or the call failed
	stop    func() error      // cancels the watch and returns what WatchDevices returned
	ended   <-chan struct{}   // closed when WatchDevices has returned
}

var errStop = errors.New("drivertest: stop")

// watchInitial opens a watch and reads it until SYNCED or until timeout.
// The watch goes on in the background until stop is called (or ctx ends).
func watchInitial(ctx context.Context, d sdk.Driver, timeout time.Duration) initialWatch {
	return watchFollow(ctx, d, timeout, nil)
}

// watchFollow is watchInitial that hands every device event, before SYNCED
// and after it, to follow in the order they come, when follow is not nil.
func watchFollow(ctx context.Context, d sdk.Driver, timeout time.Duration, follow func(sdk.DeviceEvent)) initialWatch {
	ctx, cancel := context.WithCancel(ctx)
	synced := make(chan struct{})
	ended := make(chan struct{})
	var (
		mu        sync.Mutex
		events    []sdk.DeviceEvent
		gotSynced bool
		retErr    error
	)
	go func() {
		defer close(ended)
		err := d.WatchDevices(ctx, func(e sdk.DeviceEvent) error {
			if follow != nil && e.Kind != sdk.DevicesSynced {
				follow(e)
			}
			mu.Lock()
			defer mu.Unlock()
			if gotSynced {
				return nil
			}
			if e.Kind == sdk.DevicesSynced {
				gotSynced = true
				close(synced)
				return nil
			}
			events = append(events, e)
			return nil
		})
		mu.Lock()
		retErr = err
		mu.Unlock()
	}()
	w := initialWatch{ended: ended}
	w.stop = func() error {
		cancel()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			return errors.New("WatchDevices did not return within 5s of its context being canceled")
		}
		mu.Lock()
		defer mu.Unlock()
		return retErr
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-synced:
	case <-ended:
		mu.Lock()
		err := retErr
		mu.Unlock()
		select {
		case <-synced: // SYNCED, then the call ended
		default:
			if err != nil {
				w.err = fmt.Errorf("WatchDevices failed before SYNCED: %w", err)
			} else {
				w.err = errors.New("WatchDevices ended before sending SYNCED")
			}
		}
	case <-timer.C:
		w.err = fmt.Errorf("WatchDevices sent no SYNCED event within %v", timeout)
	case <-ctx.Done():
		w.err = fmt.Errorf("WatchDevices sent no SYNCED event: %w", ctx.Err())
	}
	mu.Lock()
	w.events = append([]sdk.DeviceEvent(nil), events...)
	mu.Unlock()
	for _, e := range w.events {
		if e.Kind == sdk.DeviceAdded {
			w.devices = append(w.devices, e.Device)
		}
	}
	if w.err != nil {
		w.err = fmt.Errorf("%w (%d events before it)", w.err, len(w.events))
		w.stop() //nolint:errcheck // the watch already failed
	}
	return w
}
