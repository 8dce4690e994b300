package recording

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
	"github.com/pinky-gateway/pinky/gateway/stream"
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
		HoldFor:  time.Hour,
		Now:      h.clock.Now,
		OnUpdate: func(Info) { h.updates.Add(1) },
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
	vouch *bool // a read that begins now, vouching (or not)
	drop  string
}

var (
	yes = func() *bool { b := true; return &b }()
	no  = func() *bool { b := false; return &b }()
)

func g(key bool) step { return step{frame: green, key: key} }
func rd() step        { return step{frame: red} }

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
	cmd := exec.Command(ffmpeg, "-v", "error", "-xerror", "-i", path, "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", "-")
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
		steps []step
		sync  []bool // the written samples: key frame or not
	}{
		{"recordable", []step{g(true), g(false), g(false), {vouch: yes}}, []bool{true, false, false}},
		{"nothing before the first vouch", []step{g(true), g(false)}, nil},
		{"locked between reads", []step{
			g(true), g(false), {vouch: yes},
			rd(), rd(), {vouch: no}, // a locked screen
			g(false), g(false), {vouch: yes}, // recordable again, but the reference is gone
			g(true), g(false), {vouch: yes},
		}, []bool{true, false, true, false}},
		{"read decides only what came before it", []step{
			g(true), g(false), {vouch: yes}, rd(), {vouch: no}, g(true), {vouch: yes},
		}, []bool{true, false, true}},
		{"take over and hand back", []step{
			g(true), g(false), {vouch: yes},
			g(false), {drop: "take over"}, rd(), rd(), {drop: "hand back"},
			g(false), {vouch: yes}, g(true), g(false), {vouch: yes},
		}, []bool{true, false, true, false}},
		{"blocked app in a held run", []step{
			g(true), g(false), rd(), rd(), {vouch: no}, g(false), g(true), {vouch: yes},
		}, []bool{true}},
		{"key frame held after a not-OK read survives", []step{
			g(true), rd(), {vouch: no}, g(true), g(false), {vouch: yes},
		}, []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, false, nil)
			wantFrames := 0
			for _, s := range tt.steps {
				switch {
				case s.frame != (color.RGBA{}):
					h.frame(s.frame, s.key)
				case s.vouch != nil:
					h.clock.advance(time.Millisecond)
					at := h.clock.Now()
					v := Verdict{OK: *s.vouch}
					if !v.OK {
						v.Why = "locked"
					}
					h.r.Vouch(at, v)
				case s.drop != "":
					h.r.Drop(s.drop)
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

func TestTimeline(t *testing.T) {
	h := newHarness(t, false, nil)
	first := h.clock.Now().Add(40 * time.Millisecond)
	h.frame(green, true)
	h.frame(green, false)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
	h.frame(red, false) // dropped: a 40 ms gap, then 2 s with no packet
	h.r.Drop("lock")
	h.clock.advance(2 * time.Second)
	h.frame(green, true)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
	h.clock.advance(500 * time.Millisecond)
	info, err := h.r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !info.Start.Equal(first) {
		t.Errorf("Start %v; want the first written packet's arrival %v", info.Start, first)
	}
	if want := 40*time.Millisecond + 40*time.Millisecond + 2*time.Second + 40*time.Millisecond + 500*time.Millisecond; info.Duration != want {
		t.Errorf("Duration %v; want %v (to Close)", info.Duration, want)
	}
	file, err := os.ReadFile(h.path)
	if err != nil {
		t.Fatal(err)
	}
	got := samples(t, file)
	const ms = 90
	want := []sample{{0, 40 * ms, true}, {40 * ms, 2080 * ms, false}, {2120 * ms, 500 * ms, true}}
	if len(got) != len(want) {
		t.Fatalf("samples %+v; want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("sample %d: %+v; want %+v (media time = arrival - Start; the gap lengthens the frame before it)", i, got[i], want[i])
		}
	}
}

func TestHoldForSelfRead(t *testing.T) {
	for _, ok := range []bool{true, false} {
		t.Run(map[bool]string{true: "recordable", false: "blocked"}[ok], func(t *testing.T) {
			var reads atomic.Int32
			h := newHarness(t, true, func(c *Config) {
				c.HoldFor = 50 * time.Millisecond
				c.Read = func(context.Context) (Verdict, error) {
					reads.Add(1)
					return Verdict{OK: ok, Why: "blocked app"}, nil
				}
			})
			h.frame(green, true)
			h.frame(green, false)
			deadline := time.Now().Add(5 * time.Second)
			for reads.Load() == 0 || h.r.heldSince.Load() != nil {
				if time.Now().After(deadline) {
					t.Fatal("no read of the recorder's own after HoldFor")
				}
				time.Sleep(5 * time.Millisecond)
			}
			before := reads.Load()
			info, err := h.r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if reads.Load() != before {
				t.Errorf("Close read again with nothing held")
			}
			if got := len(decodeOrNone(t, h.path)); ok && got != 2 || !ok && (got != 0 || info.Bytes != 0) {
				t.Errorf("%d frames written, Info.Bytes %d; want %d", got, info.Bytes, map[bool]int{true: 2}[ok])
			}
		})
	}
}

// decodeOrNone decodes the file's colours, none when there is no file.
func decodeOrNone(t *testing.T, path string) []string {
	if _, err := os.Stat(path); os.IsNotExist(err) {
		return nil
	}
	return decodeColours(t, path)
}

func TestMemoryCap(t *testing.T) {
	h := newHarness(t, false, func(c *Config) { c.HoldBytes = 4000 }) // a 32x32 I_PCM frame is ~1.6 kB
	h.frame(green, true)
	h.frame(green, false)
	h.frame(green, false) // past the cap: all three dropped
	if h.r.heldSince.Load() != nil {
		t.Fatal("held packets past the memory cap were kept")
	}
	h.frame(green, false) // never held: its reference is gone
	h.frame(green, true)
	h.frame(green, false)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
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
	h.frame(green, true)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
	h.frame(red, false) // held when the phone goes offline: dropped
	h.end()
	h.join() // after the backoff
	h.frame(green, false)
	h.frame(green, false)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
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
			h.frame(green, true)
			h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
			h.frame(green, false)
			h.frame(green, false)
			start := time.Now()
			info, err := h.r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if d := time.Since(start); d > 3*time.Second {
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
	h.frame(green, true)
	h.r.Vouch(h.clock.Now().Add(time.Millisecond), Verdict{OK: true})
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

// TestWithHub records a stream shared by a real stream.Hub.
func TestWithHub(t *testing.T) {
	enc, err := h264.NewEncoder(32, 32)
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context, send func(sdk.VideoPacket) error) error {
		if err := send(sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: 32, Height: 32, Data: enc.Config()}); err != nil {
			return err
		}
		for i := range 5 {
			img := image.NewRGBA(image.Rect(0, 0, 32, 32))
			for k := 0; k < len(img.Pix); k += 4 {
				img.Pix[k], img.Pix[k+1], img.Pix[k+2], img.Pix[k+3] = 0, 160, uint8(i*8), 255
			}
			f, err := enc.Encode(img, i == 0)
			if err != nil {
				return err
			}
			if err := send(sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: f.Key, Width: 32, Height: 32, Data: f.Data}); err != nil {
				return err
			}
		}
		<-ctx.Done()
		return nil
	}
	hub := stream.NewHub(open, nil, stream.Options{})
	path := filepath.Join(t.TempDir(), "hub.mp4")
	r, err := Start(context.Background(), Config{Path: path, Join: func(ctx context.Context) (Packets, error) { return hub.Join(ctx) },
		Read: func(context.Context) (Verdict, error) { return Verdict{OK: true}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.held)
		r.mu.Unlock()
		if n == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d packets held; want 5", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	info, err := r.Close()
	if err != nil {
		t.Fatal(err)
	}
	if c := decodeColours(t, path); len(c) != 5 || info.Fragments < 1 {
		t.Errorf("decoded %v, %d fragments; want 5 green frames", c, info.Fragments)
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

// TestAsksForAKeyFrameAfterADrop: a frame that cannot be written because
// its key frame was dropped makes the recorder ask the stream for a key
// frame, so writing resumes soon; frames it can write ask for nothing.
func TestAsksForAKeyFrameAfterADrop(t *testing.T) {
	h := newHarness(t, false, nil)
	h.frame(green, true)
	h.frame(green, false)
	if n := h.cur.keyReqs.Load(); n != 0 {
		t.Fatalf("%d key frame requests while every frame could be written", n)
	}
	h.r.Drop("the person took the phone")
	h.frame(red, false)
	if n := h.cur.keyReqs.Load(); n != 1 {
		t.Errorf("%d key frame requests after a P frame whose key frame was dropped, want 1", n)
	}
	h.frame(green, true)
	h.frame(green, false)
	if n := h.cur.keyReqs.Load(); n != 1 {
		t.Errorf("%d key frame requests once a key frame came, want still 1", n)
	}
}
