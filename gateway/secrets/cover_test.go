package secrets

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// testImage is a smooth gradient (which JPEG keeps well) with black and
// white stripes, the "secret", inside each of secrets (image pixels).
func testImage(w, h int, secrets []image.Rectangle) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.Set(x, y, color.RGBA{uint8(40 + 160*x/w), uint8(60 + 150*y/h), 180, 255})
		}
	}
	for _, r := range secrets {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if (x/3)%2 == 0 {
					m.Set(x, y, color.Black)
				} else {
					m.Set(x, y, color.White)
				}
			}
		}
	}
	return m
}

func encJPEG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decode(t *testing.T, data []byte) image.Image {
	t.Helper()
	m, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func near(a, b color.Color, tol int) bool {
	r1, g1, b1, _ := a.RGBA()
	r2, g2, b2, _ := b.RGBA()
	d := func(x, y uint32) bool { v := int(x>>8) - int(y>>8); return v <= tol && v >= -tol }
	return d(r1, r2) && d(g1, g2) && d(b1, b2)
}

// checkCovered asserts every pixel of r (image pixels) is the cover colour
// within tol.
func checkCovered(t *testing.T, m image.Image, r image.Rectangle, tol int) {
	t.Helper()
	bad := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if !near(m.At(x, y), coverColor, tol) {
				if bad == 0 {
					t.Errorf("pixel (%d,%d) in %v: got %v; want the cover %v", x, y, r, m.At(x, y), coverColor)
				}
				bad++
			}
		}
	}
	if bad > 1 {
		t.Errorf("%d pixels in %v not covered", bad, r)
	}
}

// checkUnchanged asserts pixels farther than margin from every cover are
// what they were, within tol.
func checkUnchanged(t *testing.T, before, after image.Image, covers []image.Rectangle, margin, tol int) {
	t.Helper()
	b := before.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
	pixel:
		for x := b.Min.X; x < b.Max.X; x += 2 {
			for _, c := range covers {
				if image.Pt(x, y).In(c.Inset(-margin)) {
					continue pixel
				}
			}
			if !near(before.At(x, y), after.At(x, y), tol) {
				t.Fatalf("pixel (%d,%d) outside the covers: got %v; want %v", x, y, after.At(x, y), before.At(x, y))
			}
		}
	}
}

func TestCoverJPEG(t *testing.T) {
	const screenW, screenH = 1080, 2400
	boxes := []sdk.Rect{
		{Left: 100, Top: 300, Right: 700, Bottom: 420},
		{Left: 900, Top: 2300, Right: 1200, Bottom: 2500}, // runs off the screen
	}
	for _, tt := range []struct {
		name string
		w, h int
	}{
		{"full size", screenW, screenH},
		{"scaled", 540, 1200},
		{"odd scale", 361, 802},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sx, sy := float64(tt.w)/screenW, float64(tt.h)/screenH
			img := func(r sdk.Rect) image.Rectangle {
				return image.Rect(int(float64(r.Left)*sx), int(float64(r.Top)*sy), int(float64(r.Right)*sx+0.999), int(float64(r.Bottom)*sy+0.999)).
					Intersect(image.Rect(0, 0, tt.w, tt.h))
			}
			var secrets []image.Rectangle
			for _, b := range boxes {
				secrets = append(secrets, img(b))
			}
			data := encJPEG(t, testImage(tt.w, tt.h, secrets))
			out, err := CoverJPEG(data, screenW, screenH, boxes, 90)
			if err != nil {
				t.Fatal(err)
			}
			before, after := decode(t, data), decode(t, out)
			if after.Bounds() != before.Bounds() {
				t.Fatalf("size: got %v; want %v", after.Bounds(), before.Bounds())
			}
			for _, s := range secrets {
				checkCovered(t, after, s, 4)
			}
			var covers []image.Rectangle
			for _, b := range boxes {
				covers = append(covers, snap(scale(b, sx, sy, before.Bounds()), jpegBlock, before.Bounds()))
			}
			checkUnchanged(t, before, after, covers, 8, 10)
		})
	}
}

func TestCoverImagePNG(t *testing.T) {
	box := sdk.Rect{Left: 10, Top: 20, Right: 50, Bottom: 40}
	src := testImage(200, 100, []image.Rectangle{image.Rect(10, 20, 50, 40)})
	var b bytes.Buffer
	if err := png.Encode(&b, src); err != nil {
		t.Fatal(err)
	}
	in := sdk.Image{Format: sdk.FormatPNG, Width: 200, Height: 100, Data: b.Bytes()}
	out, err := CoverImage(in, 200, 100, []sdk.Rect{box}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if out.Format != sdk.FormatPNG || out.Width != 200 || out.Height != 100 {
		t.Errorf("image: got %v %dx%d; want png 200x100", out.Format, out.Width, out.Height)
	}
	m := decode(t, out.Data)
	cover := image.Rect(10-pad, 20-pad, 50+pad, 40+pad)
	checkCovered(t, m, cover, 0)
	checkUnchanged(t, src, m, []image.Rectangle{cover}, 0, 0)
}

func TestCoverEdges(t *testing.T) {
	data := encJPEG(t, testImage(64, 64, nil))
	if out, err := CoverJPEG(data, 64, 64, nil, 80); err != nil || !bytes.Equal(out, data) {
		t.Errorf("no boxes: got %d bytes, %v; want the input unchanged", len(out), err)
	}
	if _, err := CoverJPEG([]byte("not a jpeg"), 64, 64, []sdk.Rect{{Right: 1, Bottom: 1}}, 80); err == nil {
		t.Error("garbage: got no error; want one")
	}
	if _, err := CoverImage(sdk.Image{Format: "webp", Data: data}, 64, 64, []sdk.Rect{{Right: 1, Bottom: 1}}, 80); err == nil {
		t.Error("unknown format: got no error; want one (never an uncovered image)")
	}
	// Boxes entirely off the image, empty, and a zero screen size.
	out, err := CoverJPEG(data, 0, 0, []sdk.Rect{{Left: 500, Top: 500, Right: 600, Bottom: 600}, {}}, 80)
	if err != nil {
		t.Fatal(err)
	}
	checkUnchanged(t, decode(t, data), decode(t, out), nil, 0, 8)
}

// TestCoverSimScreenshot covers what MaskScreen found on a real screenshot
// of the virtual phone's notification shade, taken scaled down.
func TestCoverSimScreenshot(t *testing.T) {
	p, _, _ := bankPhone(t)
	p.Act(sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1200}})
	s := p.Screen()
	_, boxes := MaskScreen(s, Options{})
	if len(boxes) == 0 {
		t.Fatal("no boxes for the shade with a code")
	}
	shot, err := p.Driver.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: android, Format: sdk.FormatJPEG, MaxSide: 1200})
	if err != nil {
		t.Fatal(err)
	}
	out, err := CoverImage(*shot, s.Width, s.Height, boxes, 80)
	if err != nil {
		t.Fatal(err)
	}
	m := decode(t, out.Data)
	sx, sy := float64(shot.Width)/float64(s.Width), float64(shot.Height)/float64(s.Height)
	for _, b := range boxes {
		r := image.Rect(int(float64(b.Left)*sx), int(float64(b.Top)*sy), int(float64(b.Right)*sx), int(float64(b.Bottom)*sy))
		checkCovered(t, m, r, 4)
	}
}
