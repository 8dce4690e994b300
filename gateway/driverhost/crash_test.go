package driverhost

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost/testdata/fakedriver"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// crashTarget is a driver to kill over and over.
type crashTarget struct {
	name    string
	dir     string
	env     []string
	devices []string
	// inflight, when set, asks the driver how many calls hang inside it.
	inflight func(d sdk.Driver) (int, error)
}

func fakeTarget(t testing.TB) crashTarget {
	return crashTarget{
		name: "fake", dir: driverDir(t, "fake"), env: []string{"FAKE_HANG=screen"},
		devices: []string{"fake-1", "fake-2"},
		inflight: func(d sdk.Driver) (int, error) {
			s, err := d.Screen(context.Background(), fakedriver.InflightDevice, 0)
			if err != nil {
				return 0, err
			}
			return s.Width, nil
		},
	}
}

// simTarget is pinky-driver-sim with its Screen calls hanging.
func simTarget(t testing.TB) crashTarget {
	dir := t.TempDir()
	if err := os.Symlink(bin.sim, dir+"/"+Prefix+"sim"); err != nil {
		t.Fatal(err)
	}
	return crashTarget{
		name: "sim", dir: dir, env: []string{"PINKY_SIM_FAULTS=hang=screen"},
		devices: []string{"sim-android-1", "sim-ios-1"},
	}
}

func TestCrashWithCallsInFlight(t *testing.T) {
	cycles := 100
	if testing.Short() {
		cycles = 10
	}
	t.Run("fake", func(t *testing.T) { crashCycles(t, fakeTarget(t), cycles) })
	t.Run("sim", func(t *testing.T) { crashCycles(t, simTarget(t), cycles) })
}

// crashCycles kills the driver with SIGKILL while 8 calls hang inside it,
// n times, and checks that the calls end with ErrDriverGone at once, that
// the driver comes back with its devices, and that nothing leaks.
func crashCycles(t *testing.T, target crashTarget, n int) {
	defer goleak.VerifyNone(t)
	fds := countFDs(t)
	cfg := testConfig(target.dir)
	cfg.Env = map[string][]string{target.name: target.env}
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := h.Driver(target.name)
	if err != nil {
		t.Fatal(err)
	}
	events, cancel := h.Subscribe()
	defer cancel()
	pids := []int{}
	const calls = 8
	var worst time.Duration
	for cycle := range n {
		s := status(h, target.name)
		if s.State != StateRunning || s.Pid == 0 {
			t.Fatalf("cycle %d: status %+v; want running", cycle, s)
		}
		if got := onlineDevices(h, target.name); !slices.Equal(got, target.devices) {
			t.Fatalf("cycle %d: online devices = %v; want %v", cycle, got, target.devices)
		}
		pid := s.Pid
		pids = append(pids, pid)

		errs := make(chan error, calls)
		var started sync.WaitGroup
		for i := range calls {
			started.Add(1)
			go func() {
				started.Done()
				_, err := d.Screen(context.Background(), target.devices[i%len(target.devices)], 0)
				errs <- err
			}()
		}
		started.Wait()
		if target.inflight != nil {
			waitFor(t, 2*time.Second, "8 calls hanging in the driver", func() bool {
				k, err := target.inflight(d)
				return err == nil && k == calls
			})
		} else {
			time.Sleep(20 * time.Millisecond) // the calls reach the driver well within this
		}
		for len(events) > 0 {
			<-events
		}

		killed := time.Now()
		if err := testkit.Kill(pid); err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			select {
			case err := <-errs:
				if !errors.Is(err, sdk.ErrDriverGone) {
					t.Fatalf("cycle %d, call %d: err = %v; want ErrDriverGone", cycle, i, err)
				}
			case <-time.After(2*time.Second - time.Since(killed)):
				t.Fatalf("cycle %d: call %d still running 2 s after the kill", cycle, i)
			}
		}
		worst = max(worst, time.Since(killed))
		offline := 0
		for offline < len(target.devices) {
			select {
			case ev := <-events:
				if ev.Kind == EventOffline && ev.Device.Driver == target.name {
					offline++
				}
			case <-time.After(2 * time.Second):
				t.Fatalf("cycle %d: %d offline events; want %d", cycle, offline, len(target.devices))
			}
		}
		waitFor(t, 5*time.Second, fmt.Sprintf("cycle %d: driver back with its devices", cycle), func() bool {
			s := status(h, target.name)
			return s.State == StateRunning && s.Pid != pid && len(onlineDevices(h, target.name)) == len(target.devices)
		})
	}
	s := status(h, target.name)
	pids = append(pids, s.Pid)
	if s.Restarts != n {
		t.Errorf("restarts = %d; want %d", s.Restarts, n)
	}
	t.Logf("%d cycles; slowest end of the in-flight calls after the kill: %s", n, worst)
	cancel()
	h.Stop()
	for _, pid := range pids {
		if testkit.Alive(pid) {
			t.Errorf("pid %d is alive after Stop", pid)
		}
	}
	if c := children(t); len(c) != 0 {
		t.Errorf("child processes after Stop: %v", c)
	}
	if after := countFDs(t); after > fds+3 {
		t.Errorf("open fds: %d before, %d after Stop", fds, after)
	}
}
