package agent

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
)

// readCounter is the sim behind a driver that counts the reads and idle
// waits the gateway makes. With idle it declares and serves WaitIdle;
// without, it declares everything the sim serves but WaitIdle.
type readCounter struct {
	*sim.Driver
	idle bool

	mu      sync.Mutex
	screens []int // the display of each read
	waits   int
}

func (c *readCounter) Info(ctx context.Context) (sdk.Info, error) {
	info, err := c.Driver.Info(ctx)
	info.Capabilities = slices.DeleteFunc(sdk.Capabilities(c.Driver), func(cp sdk.Capability) bool {
		return cp == sdk.CapWaitIdle && !c.idle
	})
	return info, err
}

func (c *readCounter) Screen(ctx context.Context, id string, display int) (*sdk.Screen, error) {
	c.mu.Lock()
	c.screens = append(c.screens, display)
	c.mu.Unlock()
	return c.Driver.Screen(ctx, id, display)
}

func (c *readCounter) WaitIdle(ctx context.Context, id string, timeout time.Duration) (bool, error) {
	if !c.idle {
		return false, sdk.Errorf(sdk.ErrUnsupported, "not declared")
	}
	c.mu.Lock()
	c.waits++
	c.mu.Unlock()
	return c.Driver.WaitIdle(ctx, id, timeout)
}

// reset forgets what was counted.
func (c *readCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.screens, c.waits = nil, 0
}

func (c *readCounter) counts() ([]int, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.screens), c.waits
}

// TestSettleReadsOnce: with the driver's idle signal an action reads the
// screen twice, once before it (to judge and aim it) and once after the
// signal, on display 0 and on a task's background display alike; without
// the signal it reads until two reads match, so at least three times.
func TestSettleReadsOnce(t *testing.T) {
	for _, tt := range []struct {
		name       string
		idle       bool
		background bool
		wantReads  int // exactly, or at least when the signal is missing
		wantWaits  int
	}{
		{"idle signal, display 0", true, false, 2, 1},
		{"idle signal, background display", true, true, 2, 1},
		{"no idle signal, display 0", false, false, 3, 0},
		{"no idle signal, background display", false, true, 3, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{SettleCap: 3 * time.Second})
			c := &readCounter{Driver: f.drv.d, idle: tt.idle}
			f.drv.wrap = func(sdk.Driver) sdk.Driver { return c }
			s := f.session(t, "agent")
			ctx := context.Background()
			if err := f.drv.d.Unlock(ctx, "sim-android-1", "1234"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Connect(ctx, ConnectRequest{Device: "sim-android-1", Task: "t", Background: tt.background}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Observe(ctx, "sim-android-1", true, false); err != nil {
				t.Fatal(err)
			}
			c.reset()
			obs := tap(t, s, "Settings")
			if !obs.Settled {
				t.Errorf("the tap's answer: not settled; want settled")
			}
			reads, waits := c.counts()
			if waits != tt.wantWaits {
				t.Errorf("idle waits: got %d; want %d", waits, tt.wantWaits)
			}
			if tt.idle && len(reads) != tt.wantReads || !tt.idle && len(reads) < tt.wantReads {
				t.Errorf("reads: got %d (displays %v); want %d", len(reads), reads, tt.wantReads)
			}
			for _, d := range reads {
				if (d != 0) != tt.background {
					t.Errorf("a read of display %d; want the task's display only (background %v)", d, tt.background)
				}
			}
		})
	}
}
