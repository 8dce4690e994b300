package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/stream"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// wait bounds every wait of the tests: it detects hangs, it measures nothing.
const wait = testkit.Limit

// fakeDriver is a driver whose streams the test feeds by hand.
type fakeDriver struct {
	opens     atomic.Int32
	keyFrames atomic.Int32
	started   chan *fakeStream
	active    atomic.Int32 // streams running now
	overlaps  atomic.Int32 // opens while another stream ran
	linger    time.Duration
}

type fakeStream struct {
	ctx  context.Context
	send func(sdk.VideoPacket) error
	fail chan error    // an error (or nil) here ends the stream
	done chan struct{} // closed when open has returned
}

func newFake() *fakeDriver { return &fakeDriver{started: make(chan *fakeStream, 8)} }

func (d *fakeDriver) open(ctx context.Context, send func(sdk.VideoPacket) error) error {
	d.opens.Add(1)
	if d.active.Add(1) > 1 {
		d.overlaps.Add(1)
	}
	defer d.active.Add(-1)
	s := &fakeStream{ctx: ctx, send: send, fail: make(chan error, 1), done: make(chan struct{})}
	defer close(s.done)
	d.started <- s
	select {
	case <-ctx.Done():
		time.Sleep(d.linger) // a driver slow to wind down
		return nil
	case err := <-s.fail:
		return err
	}
}

func (d *fakeDriver) keyFrame(context.Context) error {
	d.keyFrames.Add(1)
	return nil
}

func (d *fakeDriver) hub(o stream.Options) *stream.Hub { return stream.NewHub(d.open, d.keyFrame, o) }

// stream waits for the next stream the hub opens.
func (d *fakeDriver) stream(t testing.TB) *fakeStream {
	t.Helper()
	select {
	case s := <-d.started:
		return s
	case <-time.After(wait):
		t.Fatal("the hub did not open a stream")
		return nil
	}
}

// packets makes a stream's packets: a config, then n frames with a key frame
// every gop frames.
func packets(n, gop int) []sdk.VideoPacket {
	ps := []sdk.VideoPacket{{Codec: sdk.Codec("h264"), Config: true, Width: 320, Height: 640, Data: []byte("sps/pps")}}
	for i := range n {
		ps = append(ps, sdk.VideoPacket{
			Codec: sdk.Codec("h264"), KeyFrame: i%gop == 0,
			PTS: time.Duration(i) * time.Millisecond, Width: 320, Height: 640,
			Data: fmt.Appendf(nil, "frame %d", i),
		})
	}
	return ps
}

func (s *fakeStream) sendAll(t testing.TB, ps []sdk.VideoPacket) {
	t.Helper()
	for _, p := range ps {
		if err := s.send(p); err != nil {
			t.Fatalf("send: %v", err)
		}
	}
}

func join(t testing.TB, h *stream.Hub) *stream.Member {
	t.Helper()
	m, err := h.Join(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// read reads n packets from m.
func read(t testing.TB, m *stream.Member, n int) []sdk.VideoPacket {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var got []sdk.VideoPacket
	for range n {
		p, err := m.Next(ctx)
		if err != nil {
			t.Fatalf("after %d packets: %v", len(got), err)
		}
		got = append(got, p)
	}
	return got
}

// drained checks that m has nothing more queued.
func drained(t testing.TB, m *stream.Member) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if p, err := m.Next(ctx); err == nil {
		t.Fatalf("unexpected packet %q", p.Data)
	}
}

func names(ps []sdk.VideoPacket) []string {
	var s []string
	for _, p := range ps {
		s = append(s, string(p.Data))
	}
	return s
}

func TestSingleMemberGetsEverythingInOrder(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{})
	m := join(t, h)
	s := d.stream(t)
	want := packets(30, 10)
	s.sendAll(t, want)
	if diff := cmp.Diff(want, read(t, m, len(want))); diff != "" {
		t.Errorf("packets (-want +got):\n%s", diff)
	}
	drained(t, m)
	if m.Err() != nil {
		t.Errorf("Err = %v while streaming", m.Err())
	}
}

func TestLateJoiner(t *testing.T) {
	all := packets(30, 10) // all[0] config, all[1+i] frame i
	tests := []struct {
		name   string
		before int // packets sent before the late join
		want   []sdk.VideoPacket
	}{
		{"mid gop", 1 + 14, append([]sdk.VideoPacket{all[0]}, all[1+10:]...)},
		{"right after a key frame", 1 + 21, append([]sdk.VideoPacket{all[0]}, all[1+20:]...)},
		{"right before a key frame", 1 + 20, append([]sdk.VideoPacket{all[0]}, all[1+10:]...)},
		{"after the config only", 1, all},
		{"before any packet", 0, all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFake()
			h := d.hub(stream.Options{})
			first := join(t, h)
			s := d.stream(t)
			s.sendAll(t, all[:tt.before])
			late := join(t, h)
			s.sendAll(t, all[tt.before:])
			if diff := cmp.Diff(names(tt.want), names(read(t, late, len(tt.want)))); diff != "" {
				t.Errorf("late joiner's packets (-want +got):\n%s", diff)
			}
			drained(t, late)
			if diff := cmp.Diff(names(all), names(read(t, first, len(all)))); diff != "" {
				t.Errorf("first member's packets (-want +got):\n%s", diff)
			}
			if n := d.opens.Load(); n != 1 {
				t.Errorf("driver opened %d streams, want 1", n)
			}
		})
	}
}

func TestLateJoinerWithoutCacheWaitsForKeyFrame(t *testing.T) {
	// A GOP longer than the cache: the late joiner waits for the next key
	// frame, gets the config first, and the hub asks for that key frame.
	all := packets(26, 20)
	d := newFake()
	h := d.hub(stream.Options{MaxQueuePackets: 8, KeyFrameInterval: time.Hour})
	join(t, h) // never reads: it skips, which is no concern here
	s := d.stream(t)
	s.sendAll(t, all[:1+12])
	late := join(t, h)
	s.sendAll(t, all[1+12:])
	want := append([]sdk.VideoPacket{all[0]}, all[1+20:]...)
	if diff := cmp.Diff(names(want), names(read(t, late, len(want)))); diff != "" {
		t.Errorf("late joiner's packets (-want +got):\n%s", diff)
	}
	testkit.WaitUntil(t, "a key frame request", func() bool { return d.keyFrames.Load() >= 1 })
}

func TestMembersShareOneStream(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{})
	ms := []*stream.Member{join(t, h), join(t, h), join(t, h)}
	s := d.stream(t)
	want := packets(5, 5)
	s.sendAll(t, want)
	for i, m := range ms {
		if diff := cmp.Diff(names(want), names(read(t, m, len(want)))); diff != "" {
			t.Errorf("member %d (-want +got):\n%s", i, diff)
		}
	}
	if n := d.opens.Load(); n != 1 {
		t.Errorf("driver opened %d streams, want 1", n)
	}
	if n := h.Members(); n != 3 {
		t.Errorf("Members = %d, want 3", n)
	}
}

func TestLastLeaveClosesStreamAndJoinReopens(t *testing.T) {
	d := newFake()
	d.linger = 50 * time.Millisecond
	h := d.hub(stream.Options{})
	a, b := join(t, h), join(t, h)
	s := d.stream(t)
	a.Close()
	select {
	case <-s.ctx.Done():
		t.Fatal("stream closed while a member is left")
	case <-time.After(20 * time.Millisecond):
	}
	if !errors.Is(a.Err(), stream.ErrClosed) {
		t.Errorf("closed member's Err = %v, want ErrClosed", a.Err())
	}
	if _, err := a.Next(context.Background()); !errors.Is(err, stream.ErrClosed) {
		t.Errorf("closed member's Next = %v, want ErrClosed", err)
	}
	b.Close()
	select {
	case <-s.ctx.Done():
	case <-time.After(wait):
		t.Fatal("last leave did not close the driver's stream")
	}
	if err := s.send(packets(1, 1)[0]); err == nil {
		t.Error("send on a closed stream succeeded")
	}

	c := join(t, h)
	s2 := d.stream(t)
	if n := d.overlaps.Load(); n != 0 {
		t.Error("the new stream opened before the old one returned")
	}
	if n := d.opens.Load(); n != 2 {
		t.Errorf("driver opened %d streams, want 2", n)
	}
	want := packets(3, 3)
	s2.sendAll(t, want)
	if diff := cmp.Diff(names(want), names(read(t, c, len(want)))); diff != "" {
		t.Errorf("rejoined member (-want +got):\n%s", diff)
	}
}

func TestJoinContextEndsMember(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	m, err := h.Join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := d.stream(t)
	cancel()
	select {
	case <-s.ctx.Done():
	case <-time.After(wait):
		t.Fatal("the member's context did not close the stream")
	}
	if _, err := m.Next(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
	if _, err := h.Join(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Join with a done context = %v", err)
	}
}

func TestSlowMemberSkipsToKeyFrame(t *testing.T) {
	// The limits are such that the slow member skips once, some way into
	// the stream, and has a key frame and what follows queued at the end.
	const gop, gops = 10, 35
	tests := []struct {
		name string
		opts stream.Options
	}{
		{"packet limit", stream.Options{MaxQueuePackets: 250, KeyFrameInterval: time.Hour}},
		{"byte limit", stream.Options{MaxQueueBytes: 2000, KeyFrameInterval: time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFake()
			h := d.hub(tt.opts)
			fast, slow := join(t, h), join(t, h)
			s := d.stream(t)
			all := packets(gop*gops, gop)

			var fastGot atomic.Int32
			fastDone := make(chan []sdk.VideoPacket, 1)
			go func() {
				var got []sdk.VideoPacket
				for range len(all) {
					p, err := fast.Next(context.Background())
					if err != nil {
						break
					}
					got = append(got, p)
					fastGot.Add(1)
				}
				fastDone <- got
			}()

			// The producer sends a GOP, then waits for the fast member (only so
			// that the fast member never lags by more than a GOP); the slow
			// member never reads. Every send must return at once.
			var sending time.Duration
			sent := 0
			for i := 0; i < len(all); {
				n := min(gop, len(all)-i)
				if i == 0 {
					n++ // the config
				}
				t0 := time.Now()
				s.sendAll(t, all[i:i+n])
				sending += time.Since(t0)
				i += n
				sent = i
				testkit.WaitUntil(t, "fast member progress", func() bool { return int(fastGot.Load()) == sent })
			}
			if sending > wait {
				t.Fatalf("sending %d packets took %v: the driver was blocked", len(all), sending)
			}
			var got []sdk.VideoPacket
			select {
			case got = <-fastDone:
			case <-time.After(wait):
				t.Fatal("fast member hung")
			}
			if diff := cmp.Diff(names(all), names(got)); diff != "" {
				t.Errorf("fast member (-want +got):\n%s", diff)
			}
			if fast.Skips() != 0 {
				t.Errorf("fast member skipped %d times", fast.Skips())
			}

			if slow.Skips() == 0 {
				t.Fatal("slow member never skipped")
			}
			testkit.WaitUntil(t, "key frame request", func() bool { return d.keyFrames.Load() > 0 })
			if n := d.keyFrames.Load(); n != 1 {
				t.Errorf("key frame requested %d times within the interval, want 1", n)
			}
			// What the slow member has now: the config, then a key frame and
			// the frames after it, up to the end, with no gap.
			s.fail <- sdk.ErrDeviceOffline
			var rest []sdk.VideoPacket
			for {
				p, err := slow.Next(context.Background())
				if err != nil {
					if !errors.Is(err, sdk.ErrDeviceOffline) {
						t.Errorf("slow member ended with %v", err)
					}
					break
				}
				rest = append(rest, p)
			}
			if len(rest) < 2 || !rest[0].Config || !rest[1].KeyFrame {
				t.Fatalf("slow member resumed with %q, want config then key frame", names(rest[:min(2, len(rest))]))
			}
			var first int
			fmt.Sscanf(string(rest[1].Data), "frame %d", &first)
			want := append([]sdk.VideoPacket{all[0]}, all[1+first:]...)
			if diff := cmp.Diff(names(want), names(rest)); diff != "" {
				t.Errorf("slow member after the skip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSkipRequestsKeyFrameRateLimited(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration
		wantMin  int32
		wantMax  int32
	}{
		{"within the interval", time.Hour, 1, 1},
		{"after the interval", time.Nanosecond, 2, 1 << 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFake()
			h := d.hub(stream.Options{MaxQueuePackets: 4, KeyFrameInterval: tt.interval})
			slow := join(t, h)
			s := d.stream(t)
			all := packets(60, 10)
			s.sendAll(t, all[:1+10])
			testkit.WaitUntil(t, "first key frame request", func() bool { return d.keyFrames.Load() >= 1 })
			time.Sleep(5 * time.Millisecond)
			s.sendAll(t, all[1+10:])
			if tt.wantMin > 1 {
				testkit.WaitUntil(t, "second key frame request", func() bool { return d.keyFrames.Load() >= tt.wantMin })
			} else {
				time.Sleep(20 * time.Millisecond)
			}
			if n := d.keyFrames.Load(); n < tt.wantMin || n > tt.wantMax {
				t.Errorf("key frame requests = %d, want %d..%d", n, tt.wantMin, tt.wantMax)
			}
			if slow.Skips() < 2 {
				t.Errorf("skips = %d, want several", slow.Skips())
			}
		})
	}
}

func TestDriverEndEndsAllMembers(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"phone offline", fmt.Errorf("device %q: %w", "emu-1", sdk.ErrDeviceOffline), sdk.ErrDeviceOffline},
		{"driver gone", fmt.Errorf("driver exited: %w", sdk.ErrDriverGone), sdk.ErrDriverGone},
		{"ended without error", nil, stream.ErrStreamEnded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newFake()
			h := d.hub(stream.Options{})
			ms := []*stream.Member{join(t, h), join(t, h)}
			s := d.stream(t)
			want := packets(3, 10)
			s.sendAll(t, want)
			s.fail <- tt.err
			for i, m := range ms {
				// What was queued comes first, then the end.
				if diff := cmp.Diff(names(want), names(read(t, m, len(want)))); diff != "" {
					t.Errorf("member %d (-want +got):\n%s", i, diff)
				}
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				_, err := m.Next(ctx)
				cancel()
				if !errors.Is(err, tt.want) {
					t.Errorf("member %d: Next = %v, want %v", i, err, tt.want)
				}
				if !errors.Is(m.Err(), tt.want) {
					t.Errorf("member %d: Err = %v, want %v", i, m.Err(), tt.want)
				}
			}
			if n := h.Members(); n != 0 {
				t.Errorf("Members = %d after the end", n)
			}
			// Back again: a new join opens a new stream.
			m := join(t, h)
			s2 := d.stream(t)
			s2.sendAll(t, want)
			if diff := cmp.Diff(names(want), names(read(t, m, len(want)))); diff != "" {
				t.Errorf("rejoined (-want +got):\n%s", diff)
			}
			if n := d.opens.Load(); n != 2 {
				t.Errorf("opens = %d, want 2", n)
			}
		})
	}
}

func TestStopEndsMembers(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{})
	m := join(t, h)
	s := d.stream(t)
	h.Stop(sdk.ErrDeviceOffline)
	select {
	case <-s.ctx.Done():
	case <-time.After(wait):
		t.Fatal("Stop did not close the driver's stream")
	}
	if _, err := m.Next(context.Background()); !errors.Is(err, sdk.ErrDeviceOffline) {
		t.Errorf("Next = %v", err)
	}
}

func TestConcurrentJoinLeave(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{MaxQueuePackets: 16})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	// The driver: feed whichever stream is open until the test ends.
	wg.Go(func() {
		all := packets(1000, 10)
		for {
			select {
			case <-ctx.Done():
				return
			case s := <-d.started:
				for i := 0; s.ctx.Err() == nil; i = (i + 1) % len(all) {
					if s.send(all[i]) != nil {
						break
					}
				}
			}
		}
	})
	for range 8 {
		wg.Go(func() {
			for range 50 {
				m, err := h.Join(ctx)
				if err != nil {
					return
				}
				for range 5 {
					rctx, rcancel := context.WithTimeout(ctx, time.Millisecond)
					m.Next(rctx)
					rcancel()
				}
				m.Close()
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	wg.Wait()
	if n := h.Members(); n != 0 {
		t.Errorf("Members = %d after all left", n)
	}
}

func BenchmarkFanOut(b *testing.B) {
	for _, members := range []int{1, 4, 10, 50} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			d := newFake()
			// Queues unbounded here, so that every member gets every packet.
			h := d.hub(stream.Options{MaxQueuePackets: 1 << 30, MaxQueueBytes: 1 << 40})
			var wg sync.WaitGroup
			ms := make([]*stream.Member, members)
			for i := range ms {
				ms[i] = join(b, h)
			}
			s := d.stream(b)
			ps := packets(300, 30)
			n := b.N
			for _, m := range ms {
				wg.Go(func() {
					for range n {
						if _, err := m.Next(context.Background()); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			b.ResetTimer()
			for i := range n {
				if err := s.send(ps[i%len(ps)]); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "packets/s")
			for _, m := range ms {
				if m.Skips() != 0 {
					b.Logf("a member skipped %d times", m.Skips())
				}
				m.Close()
			}
			<-s.done
		})
	}
}

// BenchmarkLatency measures what the hub adds to a packet's way from the
// driver's send to each member's Next, with members waiting in Next as the
// mirrors and the recorder do. Packets are paced (1 ms apart, faster than
// any phone's frames) so that the figure is the hand-off, not a queue.
func BenchmarkLatency(b *testing.B) {
	for _, members := range []int{1, 10, 50} {
		b.Run(fmt.Sprintf("members=%d", members), func(b *testing.B) {
			d := newFake()
			h := d.hub(stream.Options{})
			ms := make([]*stream.Member, members)
			for i := range ms {
				ms[i] = join(b, h)
			}
			s := d.stream(b)
			n := b.N
			sent := make([]time.Time, n)
			lat := make([][]time.Duration, members)
			var wg sync.WaitGroup
			for i, m := range ms {
				lat[i] = make([]time.Duration, 0, n)
				wg.Go(func() {
					for range n {
						p, err := m.Next(context.Background())
						if err != nil {
							b.Error(err)
							return
						}
						lat[i] = append(lat[i], time.Since(sent[p.PTS]))
					}
				})
			}
			b.ResetTimer()
			for i := range n {
				// PTS carries the packet's index: its send time is sent[PTS].
				p := sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: i%30 == 0, PTS: time.Duration(i), Data: []byte("frame")}
				sent[i] = time.Now()
				if err := s.send(p); err != nil {
					b.Fatal(err)
				}
				time.Sleep(time.Millisecond)
			}
			wg.Wait()
			b.StopTimer()
			var all []time.Duration
			for _, l := range lat {
				all = append(all, l...)
			}
			slices.Sort(all)
			if len(all) > 0 {
				b.ReportMetric(float64(all[len(all)/2].Microseconds()), "us-p50")
				b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "us-p99")
			}
			for _, m := range ms {
				m.Close()
			}
			<-s.done
		})
	}
}

// TestMemberRequestsKeyFrame: a member's request reaches the driver once a
// stream runs, rate-limited by KeyFrameInterval.
func TestMemberRequestsKeyFrame(t *testing.T) {
	d := newFake()
	h := d.hub(stream.Options{KeyFrameInterval: time.Hour})
	m := join(t, h)
	s := d.stream(t)
	m.RequestKeyFrame() // no config yet: nothing to ask a key frame of
	if n := d.keyFrames.Load(); n != 0 {
		t.Errorf("%d requests before the stream's config", n)
	}
	s.sendAll(t, packets(2, 2))
	m.RequestKeyFrame()
	m.RequestKeyFrame()
	testkit.Poll(wait, func() bool { return d.keyFrames.Load() > 0 })
	time.Sleep(20 * time.Millisecond)
	if n := d.keyFrames.Load(); n != 1 {
		t.Errorf("%d requests reached the driver for two within the interval, want 1", n)
	}
}
