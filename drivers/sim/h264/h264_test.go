package h264

import (
	"bytes"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"image"
	"image/color"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sim/render"
)

// Decode decodes an Annex B H.264 stream with ffmpeg into w x h RGB frames.
func Decode(t testing.TB, stream []byte, w, h int) [][]byte {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.h264"), filepath.Join(dir, "out.rgb")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ffmpeg, "-v", "error", "-xerror", "-f", "h264", "-i", in, "-f", "rawvideo", "-pix_fmt", "rgb24", out)
	if msg, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) > 0 {
		t.Fatalf("ffmpeg decode: %v: %s", err, msg)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	n := w * h * 3
	if len(raw)%n != 0 {
		t.Fatalf("decoded %d bytes: not a whole number of %dx%d frames", len(raw), w, h)
	}
	var frames [][]byte
	for i := 0; i < len(raw); i += n {
		frames = append(frames, raw[i:i+n])
	}
	return frames
}

// probe returns ffprobe's width, height and frame count of the stream.
func probe(t testing.TB, stream []byte) (w, h, n int) {
	t.Helper()
	ffprobe := testdep.Need(t, "ffprobe")
	in := filepath.Join(t.TempDir(), "in.h264")
	if err := os.WriteFile(in, stream, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ffprobe, "-v", "error", "-f", "h264", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=width,height,nb_read_frames,profile", "-of", "csv=p=0", in).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe: %v: %s", err, out)
	}
	f := strings.Split(strings.TrimSpace(string(out)), ",")
	if len(f) != 4 {
		t.Fatalf("ffprobe: unexpected output %q", out)
	}
	if !strings.Contains(f[0], "Baseline") {
		t.Errorf("ffprobe profile %q; want Constrained Baseline", f[0])
	}
	w, _ = strconv.Atoi(f[1])
	h, _ = strconv.Atoi(f[2])
	n, _ = strconv.Atoi(f[3])
	return w, h, n
}

// Compare returns the mean absolute error per channel and the PSNR of an RGB
// frame against img.
func Compare(img *image.RGBA, rgb []byte) (mae [3]float64, psnr float64) {
	b := img.Bounds()
	var sum [3]float64
	var sq float64
	for y := range b.Dy() {
		for x := range b.Dx() {
			o := img.PixOffset(b.Min.X+x, b.Min.Y+y)
			for c := range 3 {
				d := float64(img.Pix[o+c]) - float64(rgb[(y*b.Dx()+x)*3+c])
				sum[c] += math.Abs(d)
				sq += d * d
			}
		}
	}
	n := float64(b.Dx() * b.Dy())
	for c := range 3 {
		mae[c] = sum[c] / n
	}
	mse := sq / (3 * n)
	if mse == 0 {
		return mae, math.Inf(1)
	}
	return mae, 10 * math.Log10(255*255/mse)
}

// gradient draws a colour gradient with a solid box at (bx, by).
func gradient(w, h, bx, by int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x + y) * 255 / (w + h)), 255})
		}
	}
	for y := by; y < by+24 && y < h; y++ {
		for x := bx; x < bx+24 && x < w; x++ {
			img.SetRGBA(x, y, color.RGBA{230, 40, 60, 255})
		}
	}
	return img
}

// phoneScreen draws a screen like the sim's: a bar, a title, a list, a button.
func phoneScreen(w, h int, title string, pressed bool) *image.RGBA {
	ink, grey := color.RGBA{20, 20, 20, 255}, color.RGBA{150, 150, 150, 255}
	button := color.RGBA{26, 115, 232, 255}
	if pressed {
		button = color.RGBA{12, 80, 170, 255}
	}
	boxes := []render.Box{
		{Rect: image.Rect(0, 0, w, h/20), Fill: color.RGBA{240, 240, 240, 255}, Text: "12:00", Ink: ink, Size: 14},
		{Rect: image.Rect(0, h/20, w, h/8), Fill: color.RGBA{255, 255, 255, 255}, Text: title, Ink: ink, Bold: true, Size: 20},
	}
	for i := range 5 {
		top := h/8 + i*h/12
		boxes = append(boxes, render.Box{Rect: image.Rect(8, top, w-8, top+h/12-4), Fill: color.RGBA{250, 250, 250, 255},
			Stroke: grey, Text: "Item " + strconv.Itoa(i+1), Ink: ink, Size: 15})
	}
	boxes = append(boxes, render.Box{Rect: image.Rect(w/4, h*3/4, w*3/4, h*3/4+h/12), Fill: button,
		Text: "Send", Ink: color.RGBA{255, 255, 255, 255}, Size: 16, Center: true})
	return render.Draw(w, h, color.RGBA{20, 20, 20, 255}, boxes)
}

// encodeAll encodes imgs (the first as IDR, keys marks more IDRs) and
// returns the stream and each picture's size in bytes (0: not sent).
func encodeAll(t testing.TB, imgs []*image.RGBA, keys map[int]bool) ([]byte, []int) {
	t.Helper()
	b := imgs[0].Bounds()
	e, err := NewEncoder(b.Dx(), b.Dy())
	if err != nil {
		t.Fatal(err)
	}
	stream := e.Config()
	sizes := make([]int, len(imgs))
	for i, img := range imgs {
		f, err := e.Encode(img, keys[i])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && !f.Key {
			t.Errorf("picture 0: not a key frame")
		}
		sizes[i] = len(f.Data)
		stream = append(stream, f.Data...)
	}
	return stream, sizes
}

// checkDecoded decodes stream and compares it with the pictures sent.
func checkDecoded(t *testing.T, stream []byte, sent []*image.RGBA) {
	t.Helper()
	b := sent[0].Bounds()
	w, h, n := probe(t, stream)
	if w != b.Dx() || h != b.Dy() || n != len(sent) {
		t.Errorf("ffprobe: %dx%d, %d frames; want %dx%d, %d", w, h, n, b.Dx(), b.Dy(), len(sent))
	}
	frames := Decode(t, stream, b.Dx(), b.Dy())
	if len(frames) != len(sent) {
		t.Fatalf("decoded %d frames; want %d", len(frames), len(sent))
	}
	for i, img := range sent {
		mae, psnr := Compare(img, frames[i])
		t.Logf("frame %d: mean abs error R %.2f G %.2f B %.2f, PSNR %.1f dB", i, mae[0], mae[1], mae[2], psnr)
		for c := range 3 {
			if mae[c] > 3 {
				t.Errorf("frame %d channel %d: mean abs error %.2f; want ≤ 3", i, c, mae[c])
			}
		}
		if psnr < 30 {
			t.Errorf("frame %d: PSNR %.1f dB; want ≥ 30", i, psnr)
		}
	}
}

func TestGradientMovingBox(t *testing.T) {
	const w, h = 200, 150 // not multiples of 16: cropping
	var imgs []*image.RGBA
	for i := range 12 {
		imgs = append(imgs, gradient(w, h, 10+i*13, 20+i*7))
	}
	stream, sizes := encodeAll(t, imgs, map[int]bool{8: true})
	t.Logf("sizes: %v", sizes)
	for i, s := range sizes {
		if i != 0 && i != 8 && s > sizes[0]/4 {
			t.Errorf("P picture %d: %d bytes; want far less than the IDR's %d", i, s, sizes[0])
		}
	}
	checkDecoded(t, stream, imgs)
}

func TestPhoneScreens(t *testing.T) {
	const w, h = 360, 800
	imgs := []*image.RGBA{
		phoneScreen(w, h, "Inbox", false),
		phoneScreen(w, h, "Inbox", true),
		phoneScreen(w, h, "Compose", true),
		phoneScreen(w, h, "Compose", false),
		phoneScreen(w, h, "Compose", false), // same: nothing sent
		gradient(w, h, 100, 100),            // all changed
		phoneScreen(w, h, "Inbox", false),
	}
	stream, sizes := encodeAll(t, imgs, nil)
	t.Logf("sizes: %v", sizes)
	if sizes[4] != 0 {
		t.Errorf("an unchanged picture: %d bytes; want nothing sent", sizes[4])
	}
	if sizes[1] > sizes[0]/10 || sizes[2] > sizes[0]/10 {
		t.Errorf("P pictures with a small change: %d and %d bytes; want under a tenth of the IDR's %d", sizes[1], sizes[2], sizes[0])
	}
	sent := append(imgs[:4:4], imgs[5:]...)
	checkDecoded(t, stream, sent)
}

func TestKeyFramesAndFrameNumWrap(t *testing.T) {
	// More pictures than MaxFrameNum, with IDRs in between: frame_num wraps
	// and idr_pic_id changes, and the decoder must accept all of it.
	const w, h = 64, 48
	var imgs []*image.RGBA
	keys := map[int]bool{}
	for i := range 40 {
		imgs = append(imgs, gradient(w, h, (2*i)%40, (2*i)%24)) // even: chroma edges line up
		if i%17 == 16 {
			keys[i] = true
		}
	}
	stream, _ := encodeAll(t, imgs, keys)
	checkDecoded(t, stream, imgs)
}

func TestExpGolomb(t *testing.T) {
	var w bitWriter
	for _, v := range []uint32{0, 1, 2, 3, 7, 30, 1 << 20} {
		w.ue(v)
	}
	w.se(-3)
	w.se(3)
	w.trailing()
	// Expected bit strings, concatenated.
	want := "1" + "010" + "011" + "00100" + "0001000" + "000011111" + "000000000000000000001" + "00000000000000000001" +
		"00111" + "00110" + "1"
	for len(want)%8 != 0 {
		want += "0"
	}
	var got strings.Builder
	for _, b := range w.buf {
		got.WriteString(strconv.FormatUint(uint64(b)|0x100, 2)[1:])
	}
	if got.String() != want {
		t.Errorf("bits\n got %s\nwant %s", got.String(), want)
	}
}

func TestEmulationPrevention(t *testing.T) {
	got := appendNAL(nil, 0x65, []byte{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0x80})
	want := []byte{0, 0, 0, 1, 0x65, 0, 0, 3, 0, 0, 3, 0, 1, 0, 0, 3, 2, 0, 0, 3, 3, 0, 0, 4, 0x80}
	if !bytes.Equal(got, want) {
		t.Errorf("got % x\nwant % x", got, want)
	}
}

func TestScaleAndSizes(t *testing.T) {
	for _, c := range []struct{ w, h, max, ww, wh int }{
		{1080, 2400, 0, 1080, 2400}, {1080, 2400, 1200, 540, 1200}, {1080, 2400, 5000, 1080, 2400},
		{1179, 2556, 0, 1178, 2556}, {2400, 1080, 800, 800, 360},
	} {
		if w, h := FitSize(c.w, c.h, c.max); w != c.ww || h != c.wh {
			t.Errorf("FitSize(%d, %d, %d) = %dx%d; want %dx%d", c.w, c.h, c.max, w, h, c.ww, c.wh)
		}
	}
	img := gradient(400, 300, 0, 0)
	s := Scale(img, 200)
	if s.Bounds().Dx() != 200 || s.Bounds().Dy() != 150 {
		t.Fatalf("Scale: %v", s.Bounds())
	}
	// A box filter of a smooth gradient stays close to the original.
	want := img.RGBAAt(101, 101)
	if got := s.RGBAAt(50, 50); absDiff(got.R, want.R) > 3 || absDiff(got.G, want.G) > 3 {
		t.Errorf("Scale pixel %v; want about %v", got, want)
	}
	if _, err := NewEncoder(201, 100); err == nil {
		t.Error("NewEncoder(201, 100): no error; want odd sizes refused")
	}
}

func absDiff(a, b uint8) int { return int(max(a, b) - min(a, b)) }

func TestLargeIDR(t *testing.T) {
	const w, h = 1080, 2400
	a, b := phoneScreen(w, h, "Inbox", false), phoneScreen(w, h, "Inbox", true)
	e, err := NewEncoder(w, h)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	k, err := e.Encode(a, true)
	if err != nil {
		t.Fatal(err)
	}
	idrTime := time.Since(start)
	start = time.Now()
	p, _ := e.Encode(b, false)
	pTime := time.Since(start)
	t.Logf("1080x2400: IDR %d bytes in %v; P (button pressed, %d of %d macroblocks) %d bytes in %v",
		len(k.Data), idrTime, p.Changed, p.Total, len(p.Data), pTime)
	if len(p.Data) == 0 || len(p.Data) > len(k.Data)/10 {
		t.Errorf("P picture %d bytes; want some, and under a tenth of the IDR's %d", len(p.Data), len(k.Data))
	}
	stream := append(append(e.Config(), k.Data...), p.Data...)
	checkDecoded(t, stream, []*image.RGBA{a, b})
}

func BenchmarkIDR1080x2400(b *testing.B) {
	img := phoneScreen(1080, 2400, "Inbox", false)
	e, _ := NewEncoder(1080, 2400)
	b.ResetTimer()
	for b.Loop() {
		e.Encode(img, true)
	}
}

func BenchmarkUnchanged1080x2400(b *testing.B) {
	img := phoneScreen(1080, 2400, "Inbox", false)
	e, _ := NewEncoder(1080, 2400)
	e.Encode(img, true)
	b.ResetTimer()
	for b.Loop() {
		e.Encode(img, false)
	}
}
