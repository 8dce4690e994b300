package drivertest

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/load"
)

// T is what a case reports to. *testing.T implements it; so does the runner
// behind Check, which lets `pinky driver check` and `go test` run the same
// cases. Fatalf and Skipf end the case's goroutine, as in package testing.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	// Context is canceled when the case ends, before its cleanups run.
	Context() context.Context
}

var _ T = (*testing.T)(nil)

// Options tune a run of the suite. The zero value is ready to use.
type Options struct {
	// DeviceID is the device to act on. Empty means the first online
	// device that WatchDevices reports.
	DeviceID string
	// PIN unlocks the device's lock screen when the driver serves
	// CapUnlock. Without it, cases that need an unlocked screen skip when
	// the device is locked.
	PIN string
	// NoDevices says the driver has no devices to offer (a skeleton, or a
	// machine with no phone attached): every case that needs a device skips.
	// A driver that reports no online device is treated the same way.
	NoDevices bool
	// Run, when set, is a regular expression: only cases whose name matches
	// it run, as with `go test -run`.
	Run string
	// Skip, when set, is a regular expression: cases whose name matches it
	// do not run, as with `go test -skip`.
	Skip string
	// CaseTimeout bounds each case; zero means 30 s.
	CaseTimeout time.Duration
	// SyncTimeout bounds the wait for WatchDevices' SYNCED event; zero means
	// 5 s, the limit SPEC.md sets.
	SyncTimeout time.Duration
	// Slack multiplies the waits for what SPEC.md promises in time (a key
	// frame within 1 s of RequestKeyFrame); zero means the machine's load
	// (the load average over the cores when above 1, else 1: the promise
	// itself), so that a check on a busy shared runner does not fail a
	// driver for the host's slowness. A test of the driver under the race
	// detector gives more; what the check says stays the promise.
	Slack float64
}

// within is d times the slack.
func (o Options) within(d time.Duration) time.Duration {
	s := o.Slack
	if s == 0 {
		s = load.Factor()
	}
	if s > 1 {
		return time.Duration(float64(d) * s)
	}
	return d
}

// Config is what Run needs: the driver and the options.
type Config struct {
	// Driver is the driver under test. An *sdk.Client (a driver process
	// started with sdk.Start, or dialed) is used as it is; any other Driver
	// is served in-process through sdk.NewServer on an in-memory gRPC
	// connection, so that the checks see exactly what the gateway sees:
	// capabilities taken from the optional interfaces, errors as status
	// codes.
	Driver sdk.Driver
	Options
}

// caseTimeout bounds a case: CaseTimeout, else 30 s, times the slack
// (a case that only ends by it hangs; a busy machine is not a hang).
func (o Options) caseTimeout() time.Duration {
	d := 30 * time.Second
	if o.CaseTimeout > 0 {
		d = o.CaseTimeout
	}
	return o.within(d)
}

func (o Options) syncTimeout() time.Duration {
	if o.SyncTimeout > 0 {
		return o.SyncTimeout
	}
	return 5 * time.Second
}

// filter returns what decides whether a case runs, from Run and Skip.
func (o Options) filter() (func(name string) bool, error) {
	var run, skip *regexp.Regexp
	var err error
	if o.Run != "" {
		if run, err = regexp.Compile(o.Run); err != nil {
			return nil, fmt.Errorf("case filter %q: %w", o.Run, err)
		}
	}
	if o.Skip != "" {
		if skip, err = regexp.Compile(o.Skip); err != nil {
			return nil, fmt.Errorf("case skip filter %q: %w", o.Skip, err)
		}
	}
	return func(name string) bool {
		return (run == nil || run.MatchString(name)) && (skip == nil || !skip.MatchString(name))
	}, nil
}

// Run runs every case of the suite against cfg.Driver, each as a subtest of
// t named after the case. Cases the driver does not declare the capability
// for, or that need a device when there is none, are skipped with the
// reason. Without Options.DeviceID, a case of a capability runs on every
// online device that serves it, as a subtest named after the device, when
// that is not just the device under test.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.Driver == nil {
		t.Fatal("drivertest.Run: Config.Driver is nil")
	}
	match, err := cfg.filter()
	if err != nil {
		t.Fatal(err)
	}
	drv, closeFn, err := connect(cfg.Driver)
	if err != nil {
		t.Fatalf("serving the driver in-process: %v", err)
	}
	t.Cleanup(closeFn)
	s := newSuite(drv, cfg.Options)
	t.Cleanup(s.close)
	for _, c := range registry {
		if !match(c.Name) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			devs := s.targets(c)
			if devs == nil {
				s.run(t, c)
				return
			}
			for _, d := range devs {
				t.Run(d.ID, func(t *testing.T) { s.on(d).run(t, c) })
			}
		})
	}
}
