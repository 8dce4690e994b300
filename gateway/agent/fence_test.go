package agent

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/lease"
)

// sharedMemory is the memory table posing as one that several gateways
// share, as lease.Postgres is.
type sharedMemory struct{ *lease.Memory }

func (sharedMemory) Shared() bool { return true }

// fenceSeen is a driver that records the fence each action's context
// carries, and fails the actions with err when it is set.
type fenceSeen struct {
	sdk.Driver
	mu     sync.Mutex
	fences []int64 // 0 for none
	err    error
}

func (f *fenceSeen) Act(ctx context.Context, device string, a sdk.Action) (sdk.ActResult, error) {
	d, fence, ok := sdk.FenceOf(ctx)
	if !ok || d != device {
		fence = 0
	}
	f.mu.Lock()
	f.fences = append(f.fences, fence)
	err := f.err
	f.mu.Unlock()
	if err != nil {
		return sdk.ActResult{}, err
	}
	return f.Driver.Act(ctx, device, a)
}

func (f *fenceSeen) seen() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.fences...)
}

// TestActionsCarryTheFence: with a shared lease table, every action on a
// leased phone carries the lease's fence to the driver; with the daemon's
// own table, none does.
func TestActionsCarryTheFence(t *testing.T) {
	for _, tt := range []struct {
		name   string
		shared bool
	}{
		{"shared table", true},
		{"memory table", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var table lease.Table = lease.NewMemory(lease.Config{})
			if tt.shared {
				table = sharedMemory{table.(*lease.Memory)}
			}
			f := newFixture(t, Config{Leases: table})
			rec := &fenceSeen{Driver: f.drv.d}
			f.drv.wrap = func(sdk.Driver) sdk.Driver { return rec }
			s := f.connected(t)
			l, ok := table.Get("sim-android-1")
			if !ok || l.Fence <= 0 {
				t.Fatalf("lease %+v, %v; want one with a fence", l, ok)
			}
			tap(t, s, "Messages")
			want := int64(0)
			if tt.shared {
				want = l.Fence
			}
			got := rec.seen()
			if len(got) == 0 {
				t.Fatal("the tap reached no driver action")
			}
			for _, fence := range got {
				if fence != want {
					t.Errorf("fences seen %v; want each %d", got, want)
					break
				}
			}
		})
	}
}

// TestLeaseLost: an action the phone's host refuses because another
// gateway leased the phone tells the agent its lease was lost and to
// connect again.
func TestLeaseLost(t *testing.T) {
	f := newFixture(t, Config{Leases: sharedMemory{lease.NewMemory(lease.Config{})}})
	rec := &fenceSeen{Driver: f.drv.d, err: sdk.Errorf(sdk.ErrLeaseLost, "device %q: fence 1, seen 2", "sim-android-1")}
	f.drv.wrap = func(sdk.Driver) sdk.Driver { return rec }
	s := f.connected(t)
	_, err := s.Act(context.Background(), "sim-android-1", Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: "Messages"}}, nil)
	e := wantCode(t, "tap refused by the host", err, CodeLeaseLost)
	want := "your lease on sim-android-1 was lost: another gateway has leased the phone since, and nothing reached it. Connect to it again with phone_connect before you go on"
	if e.Message != want {
		t.Errorf("message %q; want %q", e.Message, want)
	}
}

// TestResyncLeavesOtherGatewaysLeases: with a shared table, a resync of
// this gateway's drivers marks offline only the phones of its own leases,
// not those another gateway leased on phones this one does not serve.
func TestResyncLeavesOtherGatewaysLeases(t *testing.T) {
	table := sharedMemory{lease.NewMemory(lease.Config{})}
	f := newFixture(t, Config{Leases: table})
	elsewhere := lease.Holder{Session: "other-gateway-session", Agent: "a"}
	if _, err := table.Take(lease.Lease{Device: "phone-of-another-gateway", Holder: elsewhere, TaskID: "t-elsewhere", Task: "x", Since: time.Now()}); err != nil {
		t.Fatal(err)
	}
	s := f.connected(t)
	f.drv.mu.Lock()
	f.drv.online["sim-android-1"] = false
	f.drv.mu.Unlock()
	f.m.deviceEvent(driverhost.Event{Kind: driverhost.EventResync})
	if _, err := table.Use(elsewhere, "phone-of-another-gateway"); err != nil {
		t.Errorf("another gateway's lease after the resync: %v; want it untouched", err)
	}
	if _, err := table.Use(s.holder(), "sim-android-1"); !errors.Is(err, lease.ErrOffline) {
		t.Errorf("this gateway's lease on a phone its drivers list offline: %v; want ErrOffline", err)
	}
}
