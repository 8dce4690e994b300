package sim

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// videoRecorder collects a stream's packets.
type videoRecorder struct {
	mu   sync.Mutex
	pkts []sdk.VideoPacket
}

func (r *videoRecorder) add(p sdk.VideoPacket) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pkts = append(r.pkts, p)
	return nil
}

func (r *videoRecorder) snapshot() []sdk.VideoPacket {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sdk.VideoPacket(nil), r.pkts...)
}

// counts returns the number of frames and key frames so far.
func (r *videoRecorder) counts() (frames, keys int) {
	for _, p := range r.snapshot() {
		if !p.Config {
			frames++
			if p.KeyFrame {
				keys++
			}
		}
	}
	return frames, keys
}

func (r *videoRecorder) waitFor(t *testing.T, what string, ok func(frames, keys int) bool) {
	t.Helper()
	if limit := testkit.Scaled(3 * time.Second); !testkit.Poll(limit, func() bool { return ok(r.counts()) }) {
		f, k := r.counts()
		t.Fatalf("waiting for %s: %d frames, %d key frames after %v", what, f, k, limit)
	}
}

func shot(t *testing.T, d *Driver, maxSide int) *image.RGBA {
	t.Helper()
	im, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: android, MaxSide: maxSide})
	if err != nil {
		t.Fatal(err)
	}
	src, err := png.Decode(bytes.NewReader(im.Data))
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(src.Bounds())
	draw.Draw(out, out.Rect, src, image.Point{}, draw.Src)
	return out
}

// meanAbs is the largest per-channel mean absolute difference of rgb from img.
func meanAbs(img *image.RGBA, rgb []byte) float64 {
	var sum [3]float64
	w, h := img.Rect.Dx(), img.Rect.Dy()
	for i := range w * h {
		for c := range 3 {
			sum[c] += math.Abs(float64(img.Pix[4*i+c]) - float64(rgb[3*i+c]))
		}
	}
	return max(sum[0], sum[1], sum[2]) / float64(w*h)
}

func TestStreamVideo(t *testing.T) {
	ffmpeg := testdep.Need(t, "ffmpeg")
	d := newDefault(t)
	unlock(t, d, android)
	const maxSide = 800
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &videoRecorder{}
	var streamErr error
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		streamErr = d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android, MaxSide: maxSide}, rec.add)
	}()
	rec.waitFor(t, "the first frame", func(f, _ int) bool { return f >= 1 })

	// checkpoints pairs a screenshot with the number of frames sent once the
	// screen had settled: that frame must show it.
	type checkpoint struct {
		name   string
		img    *image.RGBA
		frames int
	}
	var cps []checkpoint
	mark := func(name string) {
		time.Sleep(300 * time.Millisecond) // three polls: the change is sent
		img := shot(t, d, maxSide)
		time.Sleep(300 * time.Millisecond)
		f, _ := rec.counts()
		cps = append(cps, checkpoint{name, img, f})
	}
	mark("unlocked home")

	// A still screen sends nothing; a requested key frame comes at once.
	f0, k0 := rec.counts()
	time.Sleep(500 * time.Millisecond)
	if f, _ := rec.counts(); f != f0 {
		t.Errorf("still screen: %d frames in 500ms; want none", f-f0)
	}
	if err := d.RequestKeyFrame(ctx, android, 0); err != nil {
		t.Fatal(err)
	}
	rec.waitFor(t, "a requested key frame", func(_, k int) bool { return k > k0 })

	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android}, func(sdk.VideoPacket) error { return errors.New("unexpected packet") })
	if !errors.Is(err, sdk.ErrBusy) {
		t.Errorf("second stream: %v; want BUSY", err)
	}

	act(t, d, android, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 5}, To: sdk.Point{X: 540, Y: 1500}})
	if _, err := d.WaitIdle(ctx, android, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	mark("notification shade")
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	mark("home again")
	act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeySleep})
	mark("screen off")

	cancel()
	select {
	case <-ended:
		if streamErr != nil {
			t.Errorf("StreamVideo after cancel: %v; want nil", streamErr)
		}
	case <-time.After(time.Second):
		t.Fatal("StreamVideo did not return within 1s of cancel")
	}
	if err := d.RequestKeyFrame(context.Background(), android, 0); err != nil {
		t.Errorf("RequestKeyFrame with no stream: %v; want nil", err)
	}

	pkts := rec.snapshot()
	if !pkts[0].Config || pkts[1].Config || !pkts[1].KeyFrame {
		t.Fatalf("stream starts %+v, %+v; want config, then a key frame", pkts[0].Config, pkts[1].KeyFrame)
	}
	var stream []byte
	var last time.Duration
	for i, p := range pkts {
		if p.Codec != sdk.CodecH264 || p.Width != 360 || p.Height != 800 {
			t.Errorf("packet %d: %s %dx%d; want h264 360x800", i, p.Codec, p.Width, p.Height)
		}
		if p.PTS < last {
			t.Errorf("packet %d: PTS %v after %v", i, p.PTS, last)
		}
		last = p.PTS
		if i > 0 && p.Config {
			t.Errorf("packet %d: a config packet without a size change", i)
		}
		t.Logf("packet %d: config %v key %v pts %v %d bytes", i, p.Config, p.KeyFrame, p.PTS, len(p.Data))
		stream = append(stream, p.Data...)
	}

	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.h264"), filepath.Join(dir, "out.rgb")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(ffmpeg, "-v", "error", "-xerror", "-f", "h264", "-i", in, "-f", "rawvideo", "-pix_fmt", "rgb24", out).CombinedOutput(); err != nil || len(msg) > 0 {
		t.Fatalf("ffmpeg: %v: %s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	const size = 360 * 800 * 3
	frames, _ := rec.counts()
	if len(raw) != frames*size {
		t.Fatalf("decoded %d bytes: want %d frames of 360x800", len(raw), frames)
	}
	for i, cp := range cps {
		if i > 0 && cp.frames == cps[i-1].frames {
			t.Errorf("%s: no frame sent since %s", cp.name, cps[i-1].name)
		}
		got := raw[(cp.frames-1)*size : cp.frames*size]
		e := meanAbs(cp.img, got)
		t.Logf("%s: frame %d, mean abs error %.2f", cp.name, cp.frames-1, e)
		if e > 3 {
			t.Errorf("%s: decoded frame %d differs from the screenshot: mean abs error %.2f; want ≤ 3", cp.name, cp.frames-1, e)
		}
	}
	// The screen off is black.
	off := raw[(cps[len(cps)-1].frames-1)*size:]
	for i := 0; i < size; i += 3 * 997 {
		if off[i] > 40 || off[i+1] > 40 || off[i+2] > 40 {
			t.Fatalf("screen off: pixel %d is %v; want black", i/3, off[i:i+3])
		}
	}
}

func TestStreamVideoErrors(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	nop := func(sdk.VideoPacket) error { return nil }
	if err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: "nope"}, nop); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("unknown device: %v", err)
	}
	if err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android, DisplayID: 1}, nop); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("display 1: %v", err)
	}
	// A failing send ends the stream with its error.
	stop := errors.New("stop")
	if err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android}, func(sdk.VideoPacket) error { return stop }); err != stop {
		t.Errorf("send failing: %v; want its error", err)
	}
	// A stream that ended frees the phone for the next.
	n := 0
	err := d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: android}, func(p sdk.VideoPacket) error {
		if n++; n == 2 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("second stream after the first ended: %v", err)
	}
	caps := sdk.Capabilities(d)
	found := false
	for _, c := range caps {
		found = found || c == sdk.CapVideo
	}
	if !found {
		t.Errorf("capabilities %v: no video", caps)
	}
}
