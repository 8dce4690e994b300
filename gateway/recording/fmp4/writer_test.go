package fmp4

import (
	"bytes"
	"errors"
	"image"
	"io"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// writeAll writes packets through a Writer with a timer that never fires
// and returns the file; the last sample lasts until end.
func writeAll(t testing.TB, packets []sdk.VideoPacket, end time.Duration) ([]byte, Stats) {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, Options{FragmentDuration: time.Second, Horizon: func() time.Duration { return end }})
	for i, p := range packets {
		if err := w.Write(p); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.Stats()
}

func TestH264DecodesToTheImages(t *testing.T) {
	const w, h, n = 64, 48, 60
	var imgs []*image.RGBA
	for i := range n {
		imgs = append(imgs, pattern(w, h, i))
	}
	e := encode(t, imgs, map[int]bool{30: true}, 0)
	file, st := writeAll(t, e.packets, n*40*time.Millisecond)
	if st.Samples != n || st.Width != w || st.Height != h || st.Bytes != int64(len(file)) {
		t.Errorf("stats %+v; want %d samples, %dx%d, %d bytes", st, n, w, h, len(file))
	}
	path := writeTemp(t, "a.mp4", file)
	p := probe(t, path)
	if want := (probeInfo{"h264", w, h, n}); p != want {
		t.Errorf("ffprobe %+v; want %+v", p, want)
	}
	raw := decode(t, path)
	if len(raw) != n*w*h*3 {
		t.Fatalf("decoded %d bytes; want %d frames of %dx%d", len(raw), n, w, h)
	}
	for i, img := range imgs {
		if d := meanDiff(img, raw[i*w*h*3:]); d > 4 {
			t.Errorf("frame %d: mean difference %.2f; want <= 4 (neighbouring frames differ by 13 or more)", i, d)
		}
	}
}

func TestSizeChange(t *testing.T) {
	var a, b []*image.RGBA
	for i := range 10 {
		a = append(a, pattern(64, 48, i))
		b = append(b, pattern(48, 80, i+3))
	}
	ea := encode(t, a, nil, 0)
	eb := encode(t, b, map[int]bool{6: true}, 400*time.Millisecond)
	file, st := writeAll(t, append(ea.packets, eb.packets...), 800*time.Millisecond)
	if st.Width != 48 || st.Height != 80 {
		t.Errorf("stats size %dx%d; want 48x80", st.Width, st.Height)
	}
	samples := readSamples(t, file)
	// Key frames after the change carry the new parameter sets in band;
	// those before it do not need to.
	for i, s := range samples {
		units := lengthUnits(t, s.data)
		inBand := units[0][0]&0x1f == 7
		if want := i == 10 || i == 16; inBand != want {
			t.Errorf("sample %d: parameter sets in band %v; want %v", i, inBand, want)
		}
	}
	path := writeTemp(t, "size.mp4", file)
	frames := probeFrames(t, path)
	if len(frames) != 20 {
		t.Fatalf("ffprobe decoded %d frames; want 20", len(frames))
	}
	for i, f := range frames {
		w, h := 64, 48
		if i >= 10 {
			w, h = 48, 80
		}
		if f.width != w || f.height != h {
			t.Errorf("frame %d decodes at %dx%d; want %dx%d", i, f.width, f.height, w, h)
		}
	}
	// Decode to the new size (ffmpeg scales the frames before the change,
	// and leaves those after it alone) and compare the frames after it.
	raw := decode(t, path, "-vf", "scale=48:80")
	if len(raw) != 20*48*80*3 {
		t.Fatalf("decoded %d bytes; want 20 frames of 48x80", len(raw))
	}
	for i, img := range b {
		if d := meanDiff(img, raw[(10+i)*48*80*3:]); d > 4 {
			t.Errorf("frame %d after the change: mean difference %.2f; want <= 4", i, d)
		}
	}
}

// lengthUnits splits a length-prefixed sample into its NAL units.
func lengthUnits(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var units [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			t.Fatalf("sample: %d bytes left, not a length", len(b))
		}
		n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		if n == 0 || 4+n > len(b) {
			t.Fatalf("sample: unit of %d bytes, %d left", n, len(b)-4)
		}
		units = append(units, b[4:4+n])
		b = b[4+n:]
	}
	return units
}

func TestFragmentPolicy(t *testing.T) {
	const w, h = 32, 32
	var imgs []*image.RGBA
	for i := range 40 {
		imgs = append(imgs, pattern(w, h, i))
	}
	e := encode(t, imgs, map[int]bool{10: true, 12: true}, 0)
	// Frames come every 40 ms, except for a 2 s gap before frame 30 (packets
	// dropped): the frame before it covers the gap.
	for i := 31; i < len(e.packets); i++ {
		e.packets[i].PTS += 2 * time.Second
	}
	var frags []Stats
	var buf bytes.Buffer
	wr := NewWriter(&buf, Options{FragmentDuration: 500 * time.Millisecond, Horizon: func() time.Duration { return 5 * time.Second },
		OnFragment: func(s Stats) { frags = append(frags, s) }})
	for _, p := range e.packets {
		if err := wr.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	samples := readSamples(t, buf.Bytes())
	var starts []int
	for i, s := range samples {
		if i == 0 || s.frag != samples[i-1].frag {
			starts = append(starts, i)
		}
		if want := uint64(i) * 3600; i < 30 && s.dts != want || i >= 30 && s.dts != want+2*90000 {
			t.Errorf("sample %d: decode time %d; want the packet's PTS", i, s.dts)
		}
	}
	// Cut at key frames 10 and 12, then every 500 ms (12.5 frames) of media,
	// then at the first frame after the gap; the last lasts until Horizon.
	if want := []int{0, 10, 12, 25, 30}; !cmp.Equal(starts, want) {
		t.Errorf("fragments start at samples %v; want %v", starts, want)
	}
	if last := samples[len(samples)-1]; last.dts+last.dur != 5*90000 {
		t.Errorf("the last sample ends at %d; want the horizon, %d", last.dts+last.dur, 5*90000)
	}
	if len(frags) != 5 || frags[4].Duration != 5*time.Second || frags[4].Fragments != 5 || frags[4].Samples != 40 {
		t.Errorf("OnFragment got %+v; want 5 calls, the last at 5 s, 5 fragments, 40 samples", frags)
	}
	if _, err := readBoxes(buf.Bytes(), 0); err != nil {
		t.Error(err)
	}
	path := writeTemp(t, "policy.mp4", buf.Bytes())
	frames := probeFrames(t, path)
	if len(frames) != 40 || frames[30].pts < 3.19 || frames[30].pts > 3.21 {
		t.Errorf("ffprobe: %d frames, frame 30 at %v s; want 40, 3.2 s", len(frames), frames[30].pts)
	}
}

func TestTimerFlush(t *testing.T) {
	e := encode(t, []*image.RGBA{pattern(32, 32, 0), pattern(32, 32, 1), pattern(32, 32, 2)}, nil, 0)
	var buf testkit.Buffer // written from the timer goroutine
	got := make(chan Stats, 4)
	wr := NewWriter(&buf, Options{FragmentDuration: 50 * time.Millisecond, OnFragment: func(s Stats) { got <- s }})
	defer wr.Close()
	for _, p := range e.packets[:3] {
		if err := wr.Write(p); err != nil {
			t.Fatal(err)
		}
	}
	// No packet comes: the timer writes the first frame, which lasts until
	// the second; the second waits, its duration unknown.
	select {
	case st := <-got:
		if st.Fragments != 1 || st.Samples != 1 {
			t.Errorf("timer flush: %+v; want 1 fragment of 1 sample", st)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no fragment written by the timer")
	}
	if n := len(readSamples(t, buf.Bytes())); n != 1 {
		t.Errorf("file holds %d samples; want 1", n)
	}
	// A packet whose PTS (10 ms) is before the waiting sample's: its decode
	// time moves after it.
	p := e.packets[3]
	p.PTS = 10 * time.Millisecond
	if err := wr.Write(p); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	s := readSamples(t, buf.Bytes())
	if len(s) != 3 {
		t.Fatalf("got %d samples; want 3", len(s))
	}
	for i := 0; i+1 < len(s); i++ {
		if s[i+1].dts != s[i].dts+s[i].dur || s[i].dur == 0 {
			t.Errorf("sample %d at %d lasting %d, the next at %d: want no gap", i, s[i].dts, s[i].dur, s[i+1].dts)
		}
	}
	// Close gives the last sample the time until now: the video lasts as
	// long as the recording.
	if last := s[2]; last.dur < 50*90 {
		t.Errorf("the last sample lasts %d ticks; want it to last until Close (over 50 ms)", last.dur)
	}
}

func TestTruncatedFileStaysPlayable(t *testing.T) {
	var imgs []*image.RGBA
	for i := range 30 {
		imgs = append(imgs, pattern(32, 32, i))
	}
	e := encode(t, imgs, map[int]bool{10: true, 20: true}, 0)
	file, _ := writeAll(t, e.packets, 1200*time.Millisecond)
	top, err := readBoxes(file, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A crash leaves the init segment and the fragments written whole,
	// maybe followed by part of the next one, which Repair cuts off.
	frames := 0
	for _, b := range top[2:] {
		if b.typ != "mdat" {
			continue
		}
		end := b.off + 8 + len(b.data)
		frames += 10
		for _, extra := range []int{0, 7, 100, 2000} {
			cut := min(end+extra, len(file))
			t.Run(strconv.Itoa(cut), func(t *testing.T) {
				path := writeTemp(t, "cut.mp4", file[:cut])
				if extra == 0 {
					if p := probe(t, path); p.frames != frames || p.width != 32 {
						t.Errorf("ffprobe %+v; want %d frames", p, frames)
					}
				}
				n, err := Repair(path)
				if err != nil || n != int64(end) {
					t.Fatalf("Repair: %d, %v; want %d", n, err, end)
				}
				if p := probe(t, path); p.frames != frames || p.width != 32 {
					t.Errorf("ffprobe after Repair %+v; want %d frames", p, frames)
				}
			})
		}
	}
	if frames != 30 {
		t.Fatalf("found %d frames in fragments; want 30", frames)
	}
}

func TestWriteErrors(t *testing.T) {
	e := encode(t, []*image.RGBA{pattern(32, 32, 0), pattern(32, 32, 1)}, nil, 0)
	tests := []struct {
		name    string
		packets []sdk.VideoPacket
		want    error
	}{
		{"frame before config", e.packets[1:2], ErrNeedKeyFrame},
		{"non-key first frame", []sdk.VideoPacket{e.packets[0], e.packets[2]}, ErrNeedKeyFrame},
		{"bad config", []sdk.VideoPacket{{Codec: sdk.CodecH264, Config: true, Data: []byte{0, 0, 1, 0x68}}}, ErrConfig},
		{"codec change", []sdk.VideoPacket{e.packets[0], e.packets[1],
			{Codec: sdk.CodecH265, Config: true, Data: annexB(x265VPS, x265SPS, x265PPS)}}, ErrCodecChange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter(io.Discard, Options{})
			defer w.Close()
			var err error
			for _, p := range tt.packets {
				err = w.Write(p)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v; want %v", err, tt.want)
			}
		})
	}
}

// BenchmarkRemux measures the writer alone: packets of a phone-like stream
// (1080x2400, a 3.9 MB I_PCM key frame every 60 packets, P frames of a
// few macroblocks between, 60 a second) remuxed
// into io.Discard.
func BenchmarkRemux(b *testing.B) {
	enc, err := h264.NewEncoder(1080, 2400)
	if err != nil {
		b.Fatal(err)
	}
	key, err := enc.Encode(pattern(1080, 2400, 0), true)
	if err != nil {
		b.Fatal(err)
	}
	img := pattern(1080, 2400, 0)
	for y := 100; y < 148; y++ { // a small change: a P frame of a few macroblocks
		for x := 100; x < 148; x++ {
			img.Pix[img.PixOffset(x, y)] ^= 0xff
		}
	}
	p1, err := enc.Encode(img, false)
	if err != nil {
		b.Fatal(err)
	}
	config := sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Data: enc.Config()}
	w := NewWriter(io.Discard, Options{FragmentDuration: time.Hour})
	if err := w.Write(config); err != nil {
		b.Fatal(err)
	}
	var bytes int64
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		p := sdk.VideoPacket{Codec: sdk.CodecH264, PTS: time.Duration(i) * time.Second / 60}
		if i%60 == 0 {
			p.KeyFrame, p.Data = true, key.Data
		} else {
			p.Data = p1.Data
		}
		if err := w.Write(p); err != nil {
			b.Fatal(err)
		}
		bytes += int64(len(p.Data))
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(bytes)/b.Elapsed().Seconds()/1e6, "MB/s")
	// An hour of this stream is 216 000 packets.
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*216_000, "cpu-s/video-hour")
}

// BenchmarkStreamMemory measures the heap one recording's writer keeps: a
// second of the stream above waiting in the fragment being built (the
// recorder's held packets are the hub's own, shared, not copied).
func BenchmarkStreamMemory(b *testing.B) {
	enc, err := h264.NewEncoder(1080, 2400)
	if err != nil {
		b.Fatal(err)
	}
	key, err := enc.Encode(pattern(1080, 2400, 0), true)
	if err != nil {
		b.Fatal(err)
	}
	p1, err := enc.Encode(pattern(1080, 2400, 0), false)
	if err != nil {
		b.Fatal(err)
	}
	config := sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Data: enc.Config()}
	var before, after runtime.MemStats
	var total float64
	for range b.N {
		runtime.GC()
		runtime.ReadMemStats(&before)
		w := NewWriter(io.Discard, Options{FragmentDuration: time.Hour})
		if err := w.Write(config); err != nil {
			b.Fatal(err)
		}
		for i := range 59 {
			p := sdk.VideoPacket{Codec: sdk.CodecH264, PTS: time.Duration(i) * time.Second / 60, Data: p1.Data}
			if i == 0 {
				p.KeyFrame, p.Data = true, key.Data
			}
			if err := w.Write(p); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		total += float64(after.HeapInuse) - float64(before.HeapInuse)
		w.Close()
	}
	b.ReportMetric(total/float64(b.N)/1024, "KiB-heap/stream")
}
