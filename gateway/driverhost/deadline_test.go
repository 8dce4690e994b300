package driverhost

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestParseDeadlines(t *testing.T) {
	tests := []struct {
		in      string
		want    Deadlines
		wantErr string
	}{
		{in: "", want: Deadlines{}},
		{in: "read=2s, act=3s,idle_margin=1s,stall=4s,window=1m,misses=2",
			want: Deadlines{Read: 2 * time.Second, Act: 3 * time.Second, IdleMargin: time.Second, Stall: 4 * time.Second, Window: time.Minute, Misses: 2}},
		{in: "read", wantErr: "want key=value"},
		{in: "read=soon", wantErr: `read="soon": want a positive duration`},
		{in: "act=-1s", wantErr: "want a positive duration"},
		{in: "misses=0", wantErr: "at least 1"},
		{in: "nap=1s", wantErr: `"nap" unknown`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseDeadlines(Deadlines{}, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v; want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("deadlines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultConfigReadsDeadlines: the daemon's deadlines come from
// $PINKY_DRIVER_DEADLINES; a bad value keeps the defaults.
func TestDefaultConfigReadsDeadlines(t *testing.T) {
	t.Setenv(DeadlinesEnv, "read=3s")
	if got := DefaultConfig("").withDefaults().Deadlines; got.Read != 3*time.Second || got.Act != DefaultDeadlines.Act {
		t.Errorf("got %+v; want read 3s and the default act", got)
	}
	t.Setenv(DeadlinesEnv, "read=never")
	cfg := DefaultConfig("")
	if cfg.envErr == nil || cfg.withDefaults().Deadlines != DefaultDeadlines {
		t.Errorf("bad value: got %+v, error %v; want the defaults and an error to log", cfg.Deadlines, cfg.envErr)
	}
}

// hungHost starts the fake driver with the named calls hanging and the
// given deadlines.
func hungHost(t *testing.T, hang string, dl Deadlines) (*Host, sdk.Driver) {
	t.Helper()
	cfg := testConfig(driverDir(t, "fake"))
	cfg.Env = map[string][]string{"fake": {"FAKE_HANG=" + hang}}
	cfg.Deadlines = dl
	h := New(cfg)
	t.Cleanup(h.Stop)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := h.Driver("fake")
	if err != nil {
		t.Fatal(err)
	}
	return h, d
}

// TestHungCallsMissTheirDeadline: a call into a driver that does not
// answer fails with ErrTimeout once its deadline passed, a deadline that
// grows with the action's own length; a call its caller gave up on first
// answers with the caller's error.
func TestHungCallsMissTheirDeadline(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the host stops
	const read, act = 300 * time.Millisecond, 400 * time.Millisecond
	_, d := hungHost(t, "screen,act", Deadlines{Read: read, Act: act, Misses: 100})
	bg := context.Background()
	tests := []struct {
		name     string
		ctx      func() (context.Context, context.CancelFunc)
		call     func(ctx context.Context) error
		deadline time.Duration
		want     error
		text     string
	}{
		{name: "screen", call: func(ctx context.Context) error { _, err := d.Screen(ctx, "fake-1", 0); return err },
			deadline: read, want: sdk.ErrTimeout, text: `driver "fake": screen on fake-1 did not answer within 300ms`},
		{name: "tap", call: func(ctx context.Context) error {
			_, err := d.Act(ctx, "fake-1", sdk.Action{Kind: sdk.ActTap})
			return err
		}, deadline: act, want: sdk.ErrTimeout, text: "act tap on fake-1 did not answer within 400ms"},
		{name: "long press", call: func(ctx context.Context) error {
			_, err := d.Act(ctx, "fake-1", sdk.Action{Kind: sdk.ActLongPress, Duration: 600 * time.Millisecond})
			return err
		}, deadline: act + 600*time.Millisecond, want: sdk.ErrTimeout, text: "within 1s"},
		{name: "typing", call: func(ctx context.Context) error {
			_, err := d.Act(ctx, "fake-1", sdk.Action{Kind: sdk.ActType, Text: strings.Repeat("é", 10)})
			return err
		}, deadline: act + 10*typingTime, want: sdk.ErrTimeout, text: "within 900ms"},
		{name: "caller gives up first",
			ctx:  func() (context.Context, context.CancelFunc) { return context.WithTimeout(bg, 100*time.Millisecond) },
			call: func(ctx context.Context) error { _, err := d.Screen(ctx, "fake-1", 0); return err },
			// The caller's own deadline, not the host's: the caller's error.
			deadline: 100 * time.Millisecond, want: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(bg)
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			start := time.Now()
			err := tt.call(ctx)
			took := time.Since(start)
			if !errors.Is(err, tt.want) || (tt.want != sdk.ErrTimeout && errors.Is(err, sdk.ErrTimeout)) {
				t.Fatalf("got %v; want %v", err, tt.want)
			}
			if tt.text != "" && !strings.Contains(err.Error(), tt.text) {
				t.Errorf("error %q; want it to contain %q", err, tt.text)
			}
			// Generous: the machine may be busy; what matters is the call
			// ends near its deadline, and not before it.
			if took < tt.deadline || took > tt.deadline+3*time.Second {
				t.Errorf("took %s; want about %s", took, tt.deadline)
			}
		})
	}
}

// TestMissedDeadlinesRestartTheDriver: Misses calls past their deadline
// make the host restart the driver, which says why; calls their caller
// cancelled do not count.
func TestMissedDeadlinesRestartTheDriver(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the host stops
	h, d := hungHost(t, "screen", Deadlines{Read: 100 * time.Millisecond, Misses: 2, Window: time.Minute})
	before := status(h, "fake")
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		d.Screen(ctx, "fake-1", 0)
		cancel()
	}
	if _, err := d.Screen(context.Background(), "fake-1", 0); !errors.Is(err, sdk.ErrTimeout) {
		t.Fatalf("first miss: got %v; want ErrTimeout", err)
	}
	time.Sleep(200 * time.Millisecond) // a restart, if wrongly asked for, would begin within this
	if s := status(h, "fake"); s.Restarts != 0 || s.Pid != before.Pid {
		t.Fatalf("after cancelled calls and one miss: %+v; want no restart yet", s)
	}
	if _, err := d.Screen(context.Background(), "fake-1", 0); !errors.Is(err, sdk.ErrTimeout) {
		t.Fatalf("second miss: got %v; want ErrTimeout", err)
	}
	waitFor(t, 10*time.Second, "the restarted driver running with its devices", func() bool {
		s := status(h, "fake")
		return s.State == StateRunning && s.Restarts == 1 && s.Pid != before.Pid && len(onlineDevices(h, "fake")) == 2
	})
	s := status(h, "fake")
	if !strings.Contains(s.LastError, "2 calls missed their deadlines within 1m0s") || !strings.Contains(s.LastError, "screen on fake-1") {
		t.Errorf("LastError %q; want it to say the driver was restarted for missed deadlines", s.LastError)
	}
	// The new process answers what does not hang.
	if _, err := d.Act(context.Background(), "fake-1", sdk.Action{Kind: sdk.ActTap}); err != nil {
		t.Errorf("act after the restart: %v", err)
	}
}

// TestHungRestartsDoNotLoop: a driver that hangs again after every restart
// ends failed after MaxFailures restarts (here 3), even though each run
// lasts longer than Backoff.Stable, which forgives crashes.
func TestHungRestartsDoNotLoop(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // after the host stops
	h, d := hungHost(t, "screen", Deadlines{Read: 50 * time.Millisecond, Misses: 1})
	// Each check reads the hung screen again, which is what makes it fail.
	if !testkit.PollEvery(20*time.Second, 5*time.Millisecond, func() bool {
		if status(h, "fake").State == StateFailed {
			return true
		}
		d.Screen(context.Background(), "fake-1", 0) //nolint:errcheck // the read is meant to miss its deadline
		return false
	}) {
		t.Fatalf("status %+v; want failed", status(h, "fake"))
	}
	s := status(h, "fake")
	if s.Restarts != 2 || s.Pid != 0 || !strings.Contains(s.LastError, "missed their deadlines") {
		t.Errorf("status %+v; want failed after 2 restarts (3 hung runs), no process, and the reason", s)
	}
	time.Sleep(100 * time.Millisecond)
	if got := status(h, "fake"); got.Restarts != 2 || got.State != StateFailed {
		t.Errorf("a failed driver restarted again at once: %+v", got)
	}
}

// simHost starts pinky-driver-sim with fault knobs and deadlines.
func simHost(t *testing.T, faults string, dl Deadlines) sdk.Driver {
	t.Helper()
	target := simTarget(t)
	cfg := testConfig(target.dir)
	cfg.Env = map[string][]string{"sim": {"PINKY_SIM_FAULTS=" + faults}}
	cfg.Deadlines = dl
	h := New(cfg)
	t.Cleanup(h.Stop)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, err := h.Driver("sim")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// slowReader yields its chunks with a pause before each.
type slowReader struct {
	chunks [][]byte
	pause  time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.chunks) == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.pause)
	n := copy(p, r.chunks[0])
	r.chunks = r.chunks[1:]
	return n, nil
}

// TestLongCallsKeepGoing: the calls that last by nature are not cut by
// the read deadline: the device watch and video have none, WaitIdle gets
// its own timeout plus the margin, and a file transfer goes on for as
// long as it makes progress, and fails when it stops.
func TestLongCallsKeepGoing(t *testing.T) {
	if bin.sim == "" {
		t.Fatal("pinky-driver-sim was not built")
	}
	const read, margin, stall = 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond
	dl := Deadlines{Read: read, Act: read, IdleMargin: margin, Stall: stall, Misses: 100}
	const dev = "sim-android-1"

	t.Run("watch and video", func(t *testing.T) {
		d := simHost(t, "", dl)
		// A cancel, not a deadline: gRPC sends a deadline to the driver,
		// which may end the stream a moment before the caller sees it pass.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		time.AfterFunc(4*read, cancel)
		watchErr := make(chan error, 1)
		go func() { watchErr <- d.WatchDevices(ctx, func(sdk.DeviceEvent) error { return nil }) }()
		packets := 0
		err := d.(sdk.Streamer).StreamVideo(ctx, sdk.VideoRequest{DeviceID: dev, MaxSide: 320}, func(sdk.VideoPacket) error { packets++; return nil })
		if ctx.Err() == nil || errors.Is(err, sdk.ErrTimeout) || packets == 0 {
			t.Errorf("video: ended with %v after %d packets, before its caller's end; want it to run until then", err, packets)
		}
		if err := <-watchErr; errors.Is(err, sdk.ErrTimeout) {
			t.Errorf("watch: %v; want it to run until its caller's end", err)
		}
	})
	t.Run("wait idle", func(t *testing.T) {
		d := simHost(t, "hang=wait_idle", dl)
		const timeout = 500 * time.Millisecond
		start := time.Now()
		_, err := d.(sdk.IdleWaiter).WaitIdle(context.Background(), dev, timeout)
		took := time.Since(start)
		if !errors.Is(err, sdk.ErrTimeout) || took < timeout+margin || took > timeout+margin+3*time.Second {
			t.Errorf("got %v after %s; want ErrTimeout after about %s", err, took, timeout+margin)
		}
	})
	t.Run("push with progress", func(t *testing.T) {
		d := simHost(t, "", dl)
		chunk := bytes.Repeat([]byte("x"), 1000)
		r := &slowReader{chunks: [][]byte{chunk, chunk, chunk, chunk, chunk, chunk}, pause: stall / 3}
		start := time.Now()
		n, err := d.(sdk.Filer).PushFile(context.Background(), dev, "slow.bin", r)
		if err != nil || n != 6000 {
			t.Fatalf("got %d, %v; want 6000 bytes pushed", n, err)
		}
		if took := time.Since(start); took < 2*stall {
			t.Fatalf("took %s; the test wants a push longer than the stall limit", took)
		}
	})
	t.Run("push without progress", func(t *testing.T) {
		d := simHost(t, "hang=push_file", dl)
		start := time.Now()
		_, err := d.(sdk.Filer).PushFile(context.Background(), dev, "stuck.bin", bytes.NewReader([]byte("hello")))
		took := time.Since(start)
		if !errors.Is(err, sdk.ErrTimeout) || !strings.Contains(err.Error(), "no progress") || took > stall+3*time.Second {
			t.Errorf("got %v after %s; want ErrTimeout (no progress) after about %s", err, took, stall)
		}
	})
}
