package recording

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
	"github.com/pinky-gateway/pinky/gateway/stream"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var _ Packets = (*stream.Member)(nil)

var errEnded = errors.New("stream ended")

// fakeStream gives the packets a test sends, one at a time: send returns
// once the recorder has taken the packet and asks for the next.
type fakeStream struct {
	ch      chan sdk.VideoPacket
	asked   chan struct{}
	keyReqs atomic.Int32 // calls of RequestKeyFrame
}

func (f *fakeStream) RequestKeyFrame() { f.keyReqs.Add(1) }

func (f *fakeStream) Next(ctx context.Context) (sdk.VideoPacket, error) {
	select {
	case f.asked <- struct{}{}:
	case <-ctx.Done():
		return sdk.VideoPacket{}, ctx.Err()
	}
	select {
	case p, ok := <-f.ch:
		if !ok {
			return sdk.VideoPacket{}, errEnded
		}
		return p, nil
	case <-ctx.Done():
		return sdk.VideoPacket{}, ctx.Err()
	}
}

func (f *fakeStream) Close() {}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// harness runs a Recorder on scripted streams of solid-colour frames.
type harness struct {
	t       *testing.T
	r       *Recorder
	clock   *clock
	path    string
	streams chan *fakeStream
	joins   atomic.Int32
	cur     *fakeStream
	enc     *h264.Encoder
	shade   int
	updates atomic.Int32
}

var (
	green = color.RGBA{0, 160, 0, 255}
	red   = color.RGBA{200, 0, 0, 255}
)

func newHarness(t *testing.T, real bool, mod func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{now: time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)}, streams: make(chan *fakeStream)}
	h.path = filepath.Join(t.TempDir(), "recordings", "task.mp4")
	cfg := Config{
		Path: h.path,
		Join: func(ctx context.Context) (Packets, error) {
			select {
			case s := <-h.streams:
				h.joins.Add(1)
				return s, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		ReadAfter: time.Hour,       // no read of the recorder's own unless a test asks
		Lag:       time.Nanosecond, // the frames of a test come 40 ms apart
		Now:       h.clock.Now,
		OnUpdate:  func(Info) { h.updates.Add(1) },
		Logger:    testkit.Logger(t),
	}
	if real {
		cfg.Now = nil
	}
	if mod != nil {
		mod(&cfg)
	}
	r, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.r = r
	t.Cleanup(func() { r.Close() })
	h.join()
	return h
}

// join gives the recorder a new stream, with a new encoder: its first
// frame is a key frame after a config packet.
func (h *harness) join() {
	h.cur = &fakeStream{ch: make(chan sdk.VideoPacket), asked: make(chan struct{})}
	h.streams <- h.cur
	<-h.cur.asked
	h.enc = nil
}

// end ends the current stream.
func (h *harness) end() { close(h.cur.ch) }

func (h *harness) send(p sdk.VideoPacket) {
	h.cur.ch <- p
	<-h.cur.asked
}

// frame sends one frame of colour c, 40 ms after the last; the shade
// changes with each so that every frame is coded.
func (h *harness) frame(c color.RGBA, key bool) {
	h.t.Helper()
	const w, hh = 32, 32
	if h.enc == nil {
		var err error
		if h.enc, err = h264.NewEncoder(w, hh); err != nil {
			h.t.Fatal(err)
		}
		h.send(sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: w, Height: hh, Data: h.enc.Config()})
	}
	h.shade++
	img := image.NewRGBA(image.Rect(0, 0, w, hh))
	c.B = uint8(h.shade % 8 * 8) // far enough apart to change the coded picture
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, 255
	}
	f, err := h.enc.Encode(img, key)
	if err != nil || f.Data == nil {
		h.t.Fatalf("encode: %v, %d bytes", err, len(f.Data))
	}
	h.clock.advance(40 * time.Millisecond)
	h.send(sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: f.Key, Width: w, Height: hh, Data: f.Data})
}

// step is one scripted event.
type step struct {
	frame color.RGBA // a frame of this colour, unless zero
	key   bool
	vouch *bool         // a read that begins now (1 ms on), vouching (or not)…
	ago   time.Duration // …or that began this long before
	drop  string
	wait  time.Duration // time passes
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

func g(key bool) step    { return step{frame: green, key: key} }
func rd() step           { return step{frame: red} }
func rdKey() step        { return step{frame: red, key: true} }
func public() step       { return step{vouch: yes} }
func private() step      { return step{vouch: no} }
func drop(s string) step { return step{drop: s} }

// sample is a written sample as read back from the file.
type sample struct {
	dts, dur uint64
	sync     bool
}

// samples reads the trun entries of a fragmented file.
func samples(t *testing.T, b []byte) []sample {
	t.Helper()
	var out []sample
	for len(b) >= 8 {
		size := int(binary.BigEndian.Uint32(b))
		if size < 8 || size > len(b) {
			t.Fatalf("bad box size %d", size)
		}
		if string(b[4:8]) == "moof" {
			moof := b[8:size]
			var dts uint64
			for i := 0; i+8 <= len(moof); {
				n, typ := int(binary.BigEndian.Uint32(moof[i:])), string(moof[i+4:i+8])
				switch typ {
				case "traf":
					i += 8
					continue
				case "tfdt":
					dts = binary.BigEndian.Uint64(moof[i+12:])
				case "trun":
					cnt := int(binary.BigEndian.Uint32(moof[i+12:]))
					for k := range cnt {
						e := moof[i+20+12*k:]
						s := sample{dts: dts, dur: uint64(binary.BigEndian.Uint32(e)), sync: binary.BigEndian.Uint32(e[8:]) == 0x02000000}
						dts += s.dur
						out = append(out, s)
					}
				}
				i += n
			}
		}
		b = b[size:]
	}
	return out
}

// decodeColours decodes the file with ffmpeg and names each frame's colour.
func decodeColours(t *testing.T, path string) []string {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	var stderr bytes.Buffer
	// Frames may come closer together than a guessed frame rate allows:
	// the output keeps the track's own clock.
	cmd := exec.Command(ffmpeg, "-v", "error", "-xerror", "-i", path, "-fps_mode", "passthrough", "-enc_time_base", "1/90000", "-f", "rawvideo", "-pix_fmt", "rgb24", "-")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("ffmpeg: %v: %s", err, stderr.Bytes())
	}
	const n = 32 * 32 * 3
	var names []string
	for i := 0; i+n <= len(out); i += n {
		var sum [3]int
		for k := 0; k < n; k += 3 {
			for c := range 3 {
				sum[c] += int(out[i+k+c])
			}
		}
		r, g := sum[0]/(n/3), sum[1]/(n/3)
		switch {
		case g > 120 && r < 40:
			names = append(names, "green")
		case r > 150 && g < 40:
			names = append(names, "red")
		default:
			names = append(names, "other")
		}
	}
	return names
}

func TestPrivacy(t *testing.T) {
	tests := []struct {
		name  string
		lag   time.Duration
		steps []step
		sync  []bool // the written samples: key frame or not
	}{
		{"recordable", 0, []step{public(), g(true), g(false), g(false), public()}, []bool{true, false, false}},
		{"nothing before the first read", 0, []step{
			g(true), g(false), public(), // the stream's cache, or the screen before the task
			g(false), g(true), g(false), public(),
		}, []bool{true, false}},
		{"nothing after the last read", 0, []step{public(), g(true), g(false)}, nil}, // Close reads with no reader
		{"locked between reads", 0, []step{
			public(), g(true), g(false), public(),
			rd(), rd(), private(), // a locked screen
			g(false), g(false), public(), // recordable again, but the reference is gone
			g(true), g(false), public(),
		}, []bool{true, false, true, false}},
		{"a private read drops what came since the read before", 0, []step{
			public(), g(true), g(false), public(),
			rdKey(), rd(), private(), // the shade with a code, and its key frame
			public(), g(true), g(false), public(),
		}, []bool{true, false, true, false}},
		{"packets after a private read wait for a public read begun after them", 0, []step{
			public(), g(true), public(),
			rd(), private(), rdKey(), rd(), // still private: a key frame comes, but no read has found the screen public
			public(), g(true), public(),
		}, []bool{true, true}},
		{"a public read that began before the private one does not end it", 0, []step{
			public(), g(true), public(),
			rd(), private(), {vouch: yes, ago: 30 * time.Millisecond}, rdKey(), rd(),
			public(), g(true), public(),
		}, []bool{true, true}},
		{"the video's lag after a private screen", 100 * time.Millisecond, []step{
			public(), {wait: time.Second}, g(true), public(),
			private(), public(), // the shade with the code, then closed
			rdKey(), rd(), // its frames, coming late (40 and 80 ms)
			g(true), g(false), public(), // after the lag
		}, []bool{true, true, false}},
		{"take over and hand back", 0, []step{
			public(), g(true), g(false), public(),
			g(false), drop("take over"), rd(), rd(), drop("hand back"),
			g(false), public(), g(true), g(false), public(),
		}, []bool{true, false, true, false}},
		{"a drop is private until a read", 0, []step{
			public(), g(true), public(),
			drop("unlocking"), rdKey(), rd(), // the PIN pad
			drop("unlocked"), rdKey(), rd(), // the unlocked screen before a read
			public(), g(true), public(),
		}, []bool{true, true}},
		{"blocked app in a held run", 0, []step{
			public(), g(true), g(false), rd(), rd(), private(), g(false), g(true), public(),
			g(true), public(),
		}, []bool{true}},
		{"writing resumes at a key frame", 0, []step{
			public(), g(true), rd(), private(), public(), g(false), g(true), g(false), public(),
		}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, false, func(c *Config) {
				if tt.lag > 0 {
					c.Lag = tt.lag
				}
			})
			wantFrames := 0
			for _, s := range tt.steps {
				switch {
				case s.frame != (color.RGBA{}):
					h.frame(s.frame, s.key)
				case s.vouch != nil:
					h.clock.advance(time.Millisecond)
					at := h.clock.Now().Add(-s.ago)
					v := Verdict{OK: *s.vouch}
					if !v.OK {
						v.Why = "locked"
					}
					h.r.Vouch(at, v)
				case s.drop != "":
					h.r.Drop(s.drop)
				case s.wait > 0:
					h.clock.advance(s.wait)
				}
			}
			wantFrames = len(tt.sync)
			info, err := h.r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if wantFrames == 0 {
				if info.Bytes != 0 {
					t.Errorf("Info.Bytes %d; want 0", info.Bytes)
				}
				if _, err := os.Stat(h.path); !os.IsNotExist(err) {
					t.Errorf("the empty recording was not removed: %v", err)
				}
				return
			}
			file, err := os.ReadFile(h.path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Bytes != int64(len(file)) || info.Codec != "h264" || info.Width != 32 {
				t.Errorf("info %+v; want the file's %d bytes, h264, 32x32", info, len(file))
			}
			var gotSync []bool
			for _, s := range samples(t, file) {
				gotSync = append(gotSync, s.sync)
			}
			if len(gotSync) != len(tt.sync) {
				t.Fatalf("written samples (key or not) %v; want %v", gotSync, tt.sync)
			}
			for i := range gotSync {
				if gotSync[i] != tt.sync[i] {
					t.Fatalf("written samples (key or not) %v; want %v", gotSync, tt.sync)
				}
			}
			colours := decodeColours(t, h.path)
			if len(colours) != wantFrames {
				t.Errorf("decoded %d frames; want %d", len(colours), wantFrames)
			}
			for i, c := range colours {
				if c != "green" {
					t.Errorf("frame %d is %s; want only green frames", i, c)
				}
			}
		})
	}
}

// vouch reports a read that begins 1 ms from now.
func (h *harness) vouch(ok bool) {
	h.clock.advance(time.Millisecond)
	h.r.Vouch(h.clock.Now(), Verdict{OK: ok, Why: map[bool]string{false: "private"}[ok]})
}

func TestTimeline(t *testing.T) {
	h := newHarness(t, false, nil)
	h.vouch(true)
	first := h.clock.Now().Add(40 * time.Millisecond)
	h.frame(green, true)
	h.frame(green, false)
	h.vouch(true)
	h.frame(red, false) // dropped: a gap, then 2 s with no packet
	h.r.Drop("lock")
	h.clock.advance(2 * time.Second)
	h.vouch(true)
	resumed := h.clock.Now().Add(40 * time.Millisecond)
	h.frame(green, true)
	h.vouch(true)
	h.clock.advance(500 * time.Millisecond)
	info, err := h.r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !info.Start.Equal(first) {
		t.Errorf("Start %v; want the first written packet's arrival %v", info.Start, first)
	}
	end := h.clock.Now().Sub(first)
	if info.Duration != end {
		t.Errorf("Duration %v; want %v (to Close)", info.Duration, end)
	}
	file, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	got := samples(t, file)
	ticks := func(d time.Duration) uint64 { return uint64(d * 90000 / time.Second) }
	gap := resumed.Sub(first)
	want := []sample{{0, ticks(40 * time.Millisecond), true}, {ticks(40 * time.Millisecond), ticks(gap - 40*time.Millisecond), false}, {ticks(gap), ticks(end - gap), true}}
	if len(got) != len(want) {
		t.Fatalf("samples %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d: %+v; want %+v (media time = arrival - Start; the gap lengthens the frame before it)", i, got[i], want[i])
		}
	}
}

// TestSelfRead: packets that no read has seen make the recorder read the
// screen itself; the read that ends the private span at the start makes
// it ask for a key frame.
func TestSelfRead(t *testing.T) {
	for _, ok := range []bool{true, false} {
		t.Run(map[bool]string{true: "recordable", false: "blocked"}[ok], func(t *testing.T) {
			var reads atomic.Int32
			h := newHarness(t, true, func(c *Config) {
				c.ReadAfter, c.Lag = 20*time.Millisecond, 20*time.Millisecond
				c.Read = func(context.Context) (Verdict, error) {
					reads.Add(1)
					return Verdict{OK: ok, Why: "blocked app"}, nil
				}
			})
			h.frame(green, true) // before any read: dropped, but it makes the recorder read
			testkit.WaitUntil(t, "a read of the recorder's own", func() bool { return reads.Load() == 1 })
			if ok {
				testkit.WaitUntil(t, "a key frame request", func() bool { return h.cur.keyReqs.Load() > 0 })
			}
			h.frame(green, true)
			h.frame(green, false)
			testkit.WaitUntil(t, "the recorder reads again and decides", func() bool { return reads.Load() == 2 && h.r.heldSince.Load() == nil })
			before := reads.Load()
			info, err := h.r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != before {
				t.Errorf("Close read again with nothing held")
			}
			if !ok && h.cur.keyReqs.Load() != 0 {
				t.Errorf("%d key frame requests while the screen was private; want none", h.cur.keyReqs.Load())
			}
			if got := len(decodeOrNone(t, h.path)); ok && got != 2 || !ok && (got != 0 || info.Bytes != 0) {
				t.Errorf("%d frames written, Info.Bytes %d; want %d", got, info.Bytes, map[bool]int{true: 2}[ok])
			}
		})
	}
}

// TestSecretBetweenPublicReads: a secret that comes and goes between two
// public reads of the agent (a code that arrives in the open shade, which
// closes before the agent reads again) is found by the recorder's own
// read, and its frames are dropped.
func TestSecretBetweenPublicReads(t *testing.T) {
	var secret atomic.Bool
	var reads atomic.Int32
	h := newHarness(t, true, func(c *Config) {
		c.ReadAfter, c.Lag = 0, 30*time.Millisecond // the default ReadAfter
		c.Read = func(context.Context) (Verdict, error) {
			reads.Add(1)
			if secret.Load() {
				return Verdict{Why: "one-time code"}, nil
			}
			return Verdict{OK: true}, nil
		}
	})
	h.r.Vouch(time.Now(), Verdict{OK: true}) // the agent's first read
	time.Sleep(40 * time.Millisecond)
	h.frame(green, true)
	h.frame(green, false)
	h.r.Vouch(time.Now(), Verdict{OK: true}) // the agent opened the shade: no code in it
	secret.Store(true)
	h.frame(red, false)              // the code arrives
	time.Sleep(3 * DefaultReadAfter) // and stays a while, but no agent reads
	if reads.Load() == 0 {
		t.Fatalf("no read of the recorder's own %v after a frame no read had seen", 3*DefaultReadAfter)
	}
	secret.Store(false)
	h.frame(green, false)                    // the shade closes
	h.r.Vouch(time.Now(), Verdict{OK: true}) // the agent reads the home screen
	time.Sleep(60 * time.Millisecond)        // past the lag
	h.frame(green, true)
	h.frame(green, false)
	h.r.Vouch(time.Now(), Verdict{OK: true})
	if _, err := h.r.Close(); err != nil {
		t.Fatal(err)
	}
	c := decodeColours(t, h.path)
	if len(c) != 4 || slices.Contains(c, "red") || slices.Contains(c, "other") {
		t.Errorf("decoded %v; want 4 green frames: the frames of the code dropped, the rest kept", c)
	}
}

// TestOwnReadComesFirst: an agent's public read that began while the
// recorder's own read was under way waits for it, so that the recorder's
// read, which found a secret, drops what came before it.
func TestOwnReadComesFirst(t *testing.T) {
	release := make(chan Verdict)
	started := make(chan struct{}, 1)
	h := newHarness(t, true, func(c *Config) {
		c.ReadAfter, c.Lag = 20*time.Millisecond, 20*time.Millisecond
		c.Read = func(ctx context.Context) (Verdict, error) {
			started <- struct{}{}
			select {
			case v := <-release:
				return v, nil
			case <-ctx.Done():
				return Verdict{}, ctx.Err()
			}
		}
	})
	h.r.Vouch(time.Now(), Verdict{OK: true})
	time.Sleep(40 * time.Millisecond)
	h.frame(red, true) // the recorder's read, to come, finds a secret
	<-started
	h.frame(red, false)
	h.r.Vouch(time.Now(), Verdict{OK: true}) // began later, reported first
	release <- Verdict{Why: "one-time code"}
	testkit.WaitUntil(t, "the reads are judged", func() bool {
		h.r.mu.Lock()
		defer h.r.mu.Unlock()
		return !h.r.reading && len(h.r.deferred) == 0
	})
	time.Sleep(40 * time.Millisecond) // past the lag after the agent's read
	h.frame(green, true)
	<-started // the green key frame is read too
	release <- Verdict{OK: true}
	h.frame(green, false)
	h.r.Vouch(time.Now(), Verdict{OK: true})
	go func() { // Close reads about what may still be held
		for range started {
			release <- Verdict{OK: true}
		}
	}()
	if _, err := h.r.Close(); err != nil {
		t.Fatal(err)
	}
	close(started)
	c := decodeColours(t, h.path)
	if len(c) == 0 || slices.Contains(c, "red") {
		t.Errorf("decoded %v; want green frames only", c)
	}
}

func TestMemoryCap(t *testing.T) {
	h := newHarness(t, false, func(c *Config) { c.HoldBytes = 4000 }) // a 32x32 I_PCM frame is ~1.6 kB
	h.vouch(true)
	h.frame(green, true)
	h.frame(green, false)
	h.frame(green, false) // past the cap: all three dropped
	if h.r.heldSince.Load() != nil {
		t.Fatal("held packets past the memory cap were kept")
	}
	h.frame(green, false) // never held: its reference is gone
	h.frame(green, true)
	h.frame(green, false)
	h.vouch(true)
	if _, err := h.r.Close(); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(h.path)
	if s := samples(t, file); len(s) != 2 || !s[0].sync {
		t.Errorf("samples %+v; want 2 from the key frame after the cap", s)
	}
}

func TestStreamEndAndRejoin(t *testing.T) {
	h := newHarness(t, false, nil)
	h.vouch(true)
	h.frame(green, true)
	h.vouch(true)
	h.frame(red, false) // held when the phone goes offline: dropped
	h.end()
	h.join()            // after the backoff
	h.frame(red, false) // the phone is back (a new encoder: a key frame), but what it shows is unknown until a read
	h.vouch(true)
	h.frame(green, true)
	h.frame(green, false)
	h.vouch(true)
	if n := h.joins.Load(); n != 2 {
		t.Errorf("joined %d times; want 2", n)
	}
	if _, err := h.r.Close(); err != nil {
		t.Fatal(err)
	}
	file, _ := os.ReadFile(h.path)
	s := samples(t, file)
	if len(s) != 3 || !s[0].sync || !s[1].sync || s[2].sync {
		t.Errorf("samples %+v; want a key frame, then the new stream's key frame and a P frame", s)
	}
	if c := decodeColours(t, h.path); len(c) != 3 || c[0] != "green" || c[1] != "green" || c[2] != "green" {
		t.Errorf("decoded %v; want 3 green frames", c)
	}
}

func TestCloseDecidesHeld(t *testing.T) {
	tests := []struct {
		name   string
		read   func(context.Context) (Verdict, error)
		frames int
	}{
		{"last read OK", func(context.Context) (Verdict, error) { return Verdict{OK: true}, nil }, 3},
		{"last read not OK", func(context.Context) (Verdict, error) { return Verdict{Why: "one-time code"}, nil }, 1},
		{"last read fails", func(context.Context) (Verdict, error) { return Verdict{}, errors.New("device offline") }, 1},
		{"last read hangs", func(ctx context.Context) (Verdict, error) { <-ctx.Done(); return Verdict{OK: true}, ctx.Err() }, 1},
		{"no reader", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, false, func(c *Config) { c.Read = tt.read })
			h.vouch(true)
			h.frame(green, true)
			h.vouch(true)
			h.frame(green, false)
			h.frame(green, false)
			start := time.Now()
			info, err := h.r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > testkit.Scaled(3*time.Second) {
				t.Errorf("Close took %v; want the last read bounded by 2 s", d)
			}
			file, _ := os.ReadFile(h.path)
			if s := samples(t, file); len(s) != tt.frames || info.Bytes != int64(len(file)) {
				t.Errorf("%d samples, Info.Bytes %d; want %d samples, %d bytes", len(s), info.Bytes, tt.frames, len(file))
			}
			if h.updates.Load() == 0 {
				t.Error("OnUpdate was never called")
			}
		})
	}
}

func TestFileModes(t *testing.T) {
	h := newHarness(t, false, nil)
	h.vouch(true)
	h.frame(green, true)
	h.vouch(true)
	if _, err := h.r.Close(); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{filepath.Dir(h.path): 0o700 | os.ModeDir, h.path: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, fi.Mode(), err, want)
		}
	}
	// A recording never overwrites a file.
	if _, err := Start(context.Background(), Config{Path: h.path, Join: func(context.Context) (Packets, error) { return nil, errEnded }}); err == nil {
		t.Error("Start over an existing file succeeded; want an error")
	}
}

// TestWithHub records a stream shared by a real stream.Hub: the recorder's
// own reads vouch for it, and its key frame requests reach the phone
// through the hub.
func TestWithHub(t *testing.T) {
	enc, err := h264.NewEncoder(32, 32)
	if err != nil {
		t.Fatal(err)
	}
	keyReq := make(chan struct{}, 1)
	var keyReqs atomic.Int32
	open := func(ctx context.Context, send func(sdk.VideoPacket) error) error {
		if err := send(sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: 32, Height: 32, Data: enc.Config()}); err != nil {
			return err
		}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			key := i == 0
			select {
			case <-ctx.Done():
				return nil
			case <-keyReq:
				key = true
			case <-tick.C:
			}
			img := image.NewRGBA(image.Rect(0, 0, 32, 32))
			for k := 0; k < len(img.Pix); k += 4 {
				img.Pix[k], img.Pix[k+1], img.Pix[k+2], img.Pix[k+3] = 0, 160, uint8(i%8*8), 255
			}
			f, err := enc.Encode(img, key)
			if err != nil {
				return err
			}
			if err := send(sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: f.Key, Width: 32, Height: 32, Data: f.Data}); err != nil {
				return err
			}
		}
	}
	hub := stream.NewHub(open, func(context.Context) error {
		keyReqs.Add(1)
		select {
		case keyReq <- struct{}{}:
		default:
		}
		return nil
	}, stream.Options{KeyFrameInterval: 10 * time.Millisecond})
	path := filepath.Join(t.TempDir(), "hub.mp4")
	r, err := Start(context.Background(), Config{Path: path, Join: func(ctx context.Context) (Packets, error) { return hub.Join(ctx) },
		ReadAfter: 20 * time.Millisecond, Lag: 20 * time.Millisecond,
		Read: func(context.Context) (Verdict, error) { return Verdict{OK: true}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitUntil(t, "five frames written", func() bool {
		r.infoMu.Lock()
		w := r.w
		r.infoMu.Unlock()
		return w != nil && w.Stats().Samples >= 5
	})
	info, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if c := decodeColours(t, path); len(c) < 5 || slices.Contains(c, "red") || info.Fragments < 1 || keyReqs.Load() == 0 {
		t.Errorf("decoded %v, %d fragments, %d key frame requests; want at least 5 green frames, after a key frame request", c, info.Fragments, keyReqs.Load())
	}
	hub.Stop(nil)
}

func TestCloseTwiceAndLateCalls(t *testing.T) {
	h := newHarness(t, false, nil)
	a, err1 := h.r.Close()
	b, err2 := h.r.Close()
	h.r.Vouch(time.Now(), Verdict{OK: true})
	h.r.Drop("late")
	if a != b || err1 != nil || err2 != nil {
		t.Errorf("Close twice: %+v %v, %+v %v; want the same, no error", a, err1, b, err2)
	}
}

// TestAsksForAKeyFrameAfterADrop: once a private span is over, a frame
// that cannot be written because its key frame was dropped makes the
// recorder ask the stream for a key frame, so writing resumes soon; while
// the screen is private, and once a key frame came, it asks for nothing.
func TestAsksForAKeyFrameAfterADrop(t *testing.T) {
	h := newHarness(t, false, nil)
	h.vouch(true)
	// The recorder starts private, so once the read vouched for the screen
	// it may ask for a key frame before the test's first one arrives (when
	// its loop runs between the fake clock's step and the frame): count
	// from that frame on.
	h.frame(green, true)
	base := h.cur.keyReqs.Load()
	h.frame(green, false)
	if n := h.cur.keyReqs.Load(); n != base {
		t.Fatalf("%d key frame requests while every frame could be written", n-base)
	}
	h.r.Drop("the person took the phone")
	h.frame(red, false)
	h.frame(red, false)
	if n := h.cur.keyReqs.Load(); n != base {
		t.Errorf("%d key frame requests while the person holds the phone; want none", n-base)
	}
	h.vouch(true)
	h.frame(green, false)
	if n := h.cur.keyReqs.Load(); n == base {
		t.Errorf("no key frame request after a P frame whose key frame was dropped")
	}
	h.frame(green, true)
	n := h.cur.keyReqs.Load()
	h.frame(green, false)
	time.Sleep(50 * time.Millisecond)
	if m := h.cur.keyReqs.Load(); m != n {
		t.Errorf("%d key frame requests once a key frame came, want still %d", m, n)
	}
}

// decodeOrNone decodes the file's colours, none when there is no file.
func decodeOrNone(t *testing.T, path string) []string {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	return decodeColours(t, path)
}

// TestRejoinEndsTheWait: a recorder whose join failed waits its backoff
// before joining again, unless Rejoin says the stream is back (a phone
// whose video returned): then it joins at once.
func TestRejoinEndsTheWait(t *testing.T) {
	joins := make(chan struct{}, 8)
	r, err := Start(context.Background(), Config{
		Path: filepath.Join(t.TempDir(), "r.mp4"),
		Join: func(context.Context) (Packets, error) {
			joins <- struct{}{}
			return nil, errEnded // no video now
		},
		JoinBackoff: time.Hour, // without Rejoin, no second join in this test's life
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	<-joins
	for i := range 3 {
		r.Rejoin()
		select {
		case <-joins:
		case <-time.After(30 * time.Second):
			t.Fatalf("Rejoin %d: no join; the recorder still waits its hour", i+1)
		}
	}
	select {
	case <-joins:
		t.Error("a join without a Rejoin, inside the hour's backoff")
	case <-time.After(100 * time.Millisecond):
	}
}
