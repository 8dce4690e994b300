// Package render draws a phone screen from boxes: filled rectangles with a
// line of text each, in the Go fonts. It is fast enough to draw a full
// 1080x2400 screen in a few milliseconds.
package render

import (
	"image"
	"image/color"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Box is one rectangle to draw, in drawing order.
type Box struct {
	Rect   image.Rectangle
	Fill   color.RGBA // drawn when Fill.A > 0, as opaque
	Stroke color.RGBA // a one-pixel outline when Stroke.A > 0
	Text   string
	Ink    color.RGBA
	Bold   bool
	Size   int // text height in pixels
	Center bool
}

// Draw paints boxes on a w x h image with background bg.
func Draw(w, h int, bg color.RGBA, boxes []Box) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(img, img.Rect, bg)
	for _, b := range boxes {
		r := b.Rect.Intersect(img.Rect)
		if r.Empty() {
			continue
		}
		if b.Fill.A > 0 {
			fill(img, r, b.Fill)
		}
		if b.Stroke.A > 0 {
			outline(img, r, b.Stroke)
		}
		if b.Text != "" && b.Size > 0 {
			text(img, r, b)
		}
	}
	return img
}

// fill writes c into every pixel of r directly.
func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	c.A = 255
	if r.Empty() {
		return
	}
	row := img.PixOffset(r.Min.X, r.Min.Y)
	first := img.Pix[row : row+4*r.Dx()]
	for i := 0; i < len(first); i += 4 {
		first[0+i], first[1+i], first[2+i], first[3+i] = c.R, c.G, c.B, c.A
	}
	for y := r.Min.Y + 1; y < r.Max.Y; y++ {
		off := img.PixOffset(r.Min.X, y)
		copy(img.Pix[off:off+4*r.Dx()], first)
	}
}

func outline(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), c)
	fill(img, image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), c)
	fill(img, image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), c)
	fill(img, image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), c)
}

// text draws one line of b.Text inside r, clipped to it.
func text(img *image.RGBA, r image.Rectangle, b Box) {
	lf := faceFor(b.Size, b.Bold)
	lf.mu.Lock()
	defer lf.mu.Unlock()
	face := lf.face
	dst := img.SubImage(r).(*image.RGBA)
	d := font.Drawer{Dst: dst, Src: image.NewUniform(b.Ink), Face: face}
	m := face.Metrics()
	pad := b.Size / 2
	x := fixed.I(r.Min.X + pad)
	if b.Center {
		if w := d.MeasureString(b.Text); w < fixed.I(r.Dx()) {
			x = fixed.I(r.Min.X) + (fixed.I(r.Dx())-w)/2
		}
	}
	y := fixed.I(r.Min.Y) + (fixed.I(r.Dy())-m.Height)/2 + m.Ascent
	if r.Dy() > 3*b.Size {
		y = fixed.I(r.Min.Y+pad) + m.Ascent
	}
	d.Dot = fixed.Point26_6{X: x, Y: y}
	d.DrawString(b.Text)
}

var (
	facesMu sync.Mutex
	faces   = map[[2]int]*lockedFace{}
	fonts   [2]*opentype.Font
)

// lockedFace guards a face, which is not safe for concurrent use.
type lockedFace struct {
	mu   sync.Mutex
	face font.Face
}

// faceFor returns a cached face of the Go font at size pixels.
func faceFor(size int, bold bool) *lockedFace {
	facesMu.Lock()
	defer facesMu.Unlock()
	b := 0
	if bold {
		b = 1
	}
	key := [2]int{size, b}
	if f, ok := faces[key]; ok {
		return f
	}
	if fonts[b] == nil {
		ttf := goregular.TTF
		if bold {
			ttf = gobold.TTF
		}
		f, err := opentype.Parse(ttf)
		if err != nil {
			panic(err) // the embedded Go fonts always parse
		}
		fonts[b] = f
	}
	f, err := opentype.NewFace(fonts[b], &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		panic(err)
	}
	lf := &lockedFace{face: f}
	faces[key] = lf
	return lf
}
