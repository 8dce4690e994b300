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
	devices []sdk.Device // the initial set, from the first watch
	device  sdk.Device   // the device under test; zero when none
	devSkip string       // why device cases skip
	devErr  error        // why device cases fail
}

func newSuite(drv *sdk.Client, opts Options) *suite {
	if opts.Slack == 0 { // the machine's load, read once for the whole run
		opts.Slack = load.Factor()
	}
	return &suite{drv: drv, opts: opts}
}

// run runs one case: it skips by capability and device, then calls the case.
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
	}
	c.run(t, s)
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
	s.infoOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.caseTimeout())
		defer cancel()
		s.info, s.infoErr = s.drv.Info(ctx)
	})
	if s.infoErr != nil {
		t.Fatalf("GetInfo: %v", s.infoErr)
	}
	return s.info
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
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.syncTimeout()+time.Second)
	defer cancel()
	w := watchInitial(ctx, s.drv, s.opts.syncTimeout())
	if w.err != nil {
		s.devErr = w.err
		return
	}
	w.stop() //nolint:errcheck // only the initial set matters here
	s.devices = w.devices
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
