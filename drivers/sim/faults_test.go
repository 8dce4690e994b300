package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestParseFaults(t *testing.T) {
	got, err := ParseFaults("crash_after=20, crash_on=type,hang=screen,slow=150ms,drop=sim-android-1@2s/1s,drop=x@0s/5s,lack=sim-ios-1:video@1s/0s,offline_mid_action=tap,offline_for=1s")
	if err != nil {
		t.Fatal(err)
	}
	want := Faults{
		CrashAfter: 20, CrashOn: "type", Hang: "screen", Slow: 150 * time.Millisecond,
		Drops:            []Drop{{"sim-android-1", 2 * time.Second, time.Second}, {"x", 0, 5 * time.Second}},
		Lacks:            []Lack{{"sim-ios-1", sdk.CapVideo, time.Second, 0}},
		OfflineMidAction: "tap", OfflineFor: time.Second,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("faults (-want +got):\n%s", diff)
	}
	bad := []struct{ in, want string }{
		{"crash_after", `"crash_after": want key=value`},
		{"crash_after=0", "at least 1"},
		{"hang=everything", `fault hang="everything": want a call`},
		{"slow=fast", `fault slow="fast"`},
		{"drop=sim-android-1", "want DEVICE@AFTER/FOR"},
		{"drop=a@1s/x", `fault drop="a@1s/x"`},
		{"lack=a@1s/1s", "want DEVICE:CAPABILITY@AFTER/FOR"},
		{"lack=a:frame_capture@1s/1s", `capability "frame_capture"`},
		{"lack=a:video@1s", "want DEVICE:CAPABILITY@AFTER/FOR"},
		{"explode=1", `fault "explode" unknown`},
	}
	for _, tt := range bad {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseFaults(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestFaultCrash(t *testing.T) {
	tests := []struct {
		knobs string
		calls int // calls that succeed before the crash
	}{
		{"crash_after=3", 3},
		{"crash_on=screen", 0},
	}
	for _, tt := range tests {
		t.Run(tt.knobs, func(t *testing.T) {
			f, err := ParseFaults(tt.knobs)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			code := -1
			d := newDefault(t, WithFaults(f), WithExit(func(c int) {
				mu.Lock()
				code = c
				mu.Unlock()
			}))
			for i := 0; i <= tt.calls; i++ {
				mu.Lock()
				crashed := code
				mu.Unlock()
				if crashed != -1 {
					t.Fatalf("crashed after %d calls; want %d", i, tt.calls)
				}
				d.Screen(context.Background(), android, 0)
			}
			if code != 2 {
				t.Errorf("exit code: got %d; want 2", code)
			}
		})
	}
}

func TestFaultHangAndSlow(t *testing.T) {
	f, _ := ParseFaults("hang=tap,slow=50ms")
	d := newDefault(t, WithFaults(f))
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 1, Y: 1}})
	// A hung call returns only once its context is done.
	if !errors.Is(err, context.DeadlineExceeded) || ctx.Err() == nil {
		t.Errorf("hang: got %v with the context's error %v; want DeadlineExceeded once the deadline passed", err, ctx.Err())
	}
	start := time.Now()
	screen(t, d, android)
	if time.Since(start) < 50*time.Millisecond {
		t.Errorf("slow: got %v; want at least 50ms", time.Since(start))
	}
}

// TestFaultHangMark: with hang_mark, the first process hangs and writes the
// mark; a process started after it (a restarted driver) does not hang.
func TestFaultHangMark(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "hung")
	f, err := ParseFaults("hang=screen,hang_mark=" + mark)
	if err != nil {
		t.Fatal(err)
	}
	first := newDefault(t, WithFaults(f))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := first.Screen(ctx, android, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("first process: got %v; want the screen read to hang until its deadline", err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the first hang did not write the mark: %v", err)
	}
	second := newDefault(t, WithFaults(f))
	sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer scancel()
	if _, err := second.Screen(sctx, android, 0); err != nil {
		t.Errorf("process started after the mark: got %v; want the screen read to answer", err)
	}
	if _, err := ParseFaults("hang_mark="); err == nil {
		t.Error("hang_mark with no path: got no error")
	}
}

func TestFaultDropAndOffline(t *testing.T) {
	f, _ := ParseFaults("drop=sim-ios-1@50ms/100ms,offline_mid_action=type,offline_for=100ms")
	d := newDefault(t, WithFaults(f))
	ctx, next := watch(t, d)
	for i := 0; i < 3; i++ {
		next() // two Added, Synced
	}
	if ev := next(); ev.Kind != sdk.DeviceRemoved || ev.Device.ID != "sim-ios-1" {
		t.Fatalf("got %+v; want sim-ios-1 removed", ev)
	}
	if _, err := d.Screen(ctx, "sim-ios-1", 0); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("dropped device: got %v; want ErrDeviceNotFound", err)
	}
	if ev := next(); ev.Kind != sdk.DeviceAdded || ev.Device.ID != "sim-ios-1" {
		t.Fatalf("got %+v; want sim-ios-1 added back", ev)
	}
	unlock(t, d, android)
	next() // unlocked
	if _, err := d.Act(ctx, android, sdk.Action{Kind: sdk.ActType, Text: "x"}); !errors.Is(err, sdk.ErrDeviceOffline) {
		t.Fatalf("offline mid action: got %v; want ErrDeviceOffline", err)
	}
	if ev := next(); ev.Kind != sdk.DeviceChanged || ev.Device.State != sdk.StateOffline {
		t.Errorf("got %+v; want changed to offline", ev)
	}
	if _, err := d.Screen(ctx, android, 0); !errors.Is(err, sdk.ErrDeviceOffline) {
		t.Errorf("offline device: got %v; want ErrDeviceOffline", err)
	}
	if ev := next(); ev.Kind != sdk.DeviceChanged || ev.Device.State != sdk.StateOnline {
		t.Errorf("got %+v; want changed to online", ev)
	}
}

// TestFaultLack: the lack fault takes video from a phone for a while: a
// CHANGED event carries its capabilities without video and the reason,
// video calls answer UNSUPPORTED, and a second CHANGED gives it back.
func TestFaultLack(t *testing.T) {
	f, err := ParseFaults("lack=sim-ios-1:video@50ms/100ms")
	if err != nil {
		t.Fatal(err)
	}
	d := newDefault(t, WithFaults(f))
	ctx, next := watch(t, d)
	caps := sdk.Capabilities(d)
	for range 3 {
		ev := next() // two Added, Synced
		if ev.Kind == sdk.DeviceAdded && !ev.Device.Serves(sdk.CapVideo, caps) {
			t.Errorf("device %q before the fault: got no video; want it served", ev.Device.ID)
		}
	}
	ev := next()
	if ev.Kind != sdk.DeviceChanged || ev.Device.ID != "sim-ios-1" || ev.Device.Serves(sdk.CapVideo, caps) {
		t.Fatalf("got %+v; want sim-ios-1 changed without video", ev)
	}
	if m, ok := ev.Device.Missing(sdk.CapVideo); !ok || m.Reason == "" {
		t.Errorf("missing video: got %+v, %v; want it with a reason", m, ok)
	}
	if err := d.RequestKeyFrame(ctx, "sim-ios-1", 0); !errors.Is(err, sdk.ErrUnsupported) {
		t.Errorf("RequestKeyFrame without video: got %v; want ErrUnsupported", err)
	}
	if ev := next(); ev.Kind != sdk.DeviceChanged || !ev.Device.Serves(sdk.CapVideo, caps) {
		t.Errorf("got %+v; want sim-ios-1 changed with video again", ev)
	}
}

// TestFaultLackTwice: a second lack fault of the same capability is
// scheduled though the first has already taken it (as a lack at 0 s does
// before the next is read): only the world file's lacks are for good.
func TestFaultLackTwice(t *testing.T) {
	d := newDefault(t)
	p := d.byID["sim-ios-1"]
	p.mu.Lock()
	p.lacks[sdk.CapVideo] = LackSpec{Capability: sdk.CapVideo, Reason: "an earlier lack fault"}
	p.mu.Unlock()
	d.calls.Lock()
	before := len(d.timers)
	d.calls.Unlock()
	d.scheduleLack(Lack{Device: "sim-ios-1", Cap: sdk.CapVideo, After: time.Hour, For: time.Hour})
	d.calls.Lock()
	after := len(d.timers)
	d.calls.Unlock()
	if after != before+2 {
		t.Errorf("the second lack fault made %d timers; want 2 (taken, then given back)", after-before)
	}
}

// watch watches d's devices until the test ends; next returns the next
// event, failing the test when none comes in 2 s.
func watch(t *testing.T, d *Driver) (ctx context.Context, next func() sdk.DeviceEvent) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	events := make(chan sdk.DeviceEvent, 100)
	go d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error { events <- ev; return nil })
	return ctx, func() sdk.DeviceEvent {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(2 * time.Second):
			t.Fatal("no event")
			return sdk.DeviceEvent{}
		}
	}
}
