package secrets

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// coverColor fills covered boxes: an opaque dark grey, clearly a cover and
// not a dark part of the app.
var coverColor = color.RGBA{R: 0x3c, G: 0x3c, B: 0x3c, A: 0xff}

// pad is how far, in screen pixels, a cover reaches past its box, so that
// rounding and anti-aliased glyph edges stay under it.
const pad = 4

// defaultQuality is the JPEG quality when the caller gives none.
const defaultQuality = 85

// Cover paints an opaque box over each of boxes on img, in place. The boxes
// are in screen pixels of a screenW × screenH screen; img may be scaled from
// it (a screenshot taken with a maximum side), and the boxes are scaled to
// img's bounds. Each box grows by a few pixels and is clipped to the image.
// A screenW or screenH of 0 means img is the screen's size. Cover returns
// the image it painted on: img itself, or an RGBA copy when img cannot be
// painted on (a paletted PNG).
func Cover(img image.Image, screenW, screenH int, boxes []sdk.Rect) image.Image {
	return cover(img, screenW, screenH, boxes, 1)
}

// jpegBlock is the side of the largest JPEG coding unit (16×16 pixels with
// 4:2:0 chroma). Covers in a JPEG snap outwards to it, so that every unit
// they touch is one flat colour: it encodes exactly, with no ringing inside
// the cover.
const jpegBlock = 16

// cover is Cover with covers grown outwards to multiples of align pixels.
func cover(img image.Image, screenW, screenH int, boxes []sdk.Rect, align int) image.Image {
	b := img.Bounds()
	if screenW <= 0 || screenH <= 0 {
		screenW, screenH = b.Dx(), b.Dy()
	}
	if len(boxes) == 0 || b.Empty() || screenW <= 0 || screenH <= 0 {
		return img
	}
	sx, sy := float64(b.Dx())/float64(screenW), float64(b.Dy())/float64(screenH)
	var dst draw.Image
	switch m := img.(type) {
	case *image.YCbCr:
		for _, r := range boxes {
			fillYCbCr(m, snap(scale(r, sx, sy, b), align, b))
		}
		return m
	case *image.RGBA, *image.NRGBA, *image.RGBA64, *image.NRGBA64, *image.Gray, *image.Gray16, *image.CMYK:
		dst = m.(draw.Image)
	default:
		rgba := image.NewRGBA(b)
		draw.Draw(rgba, b, img, b.Min, draw.Src)
		dst = rgba
	}
	fill := image.NewUniform(coverColor)
	for _, r := range boxes {
		draw.Draw(dst, snap(scale(r, sx, sy, b), align, b), fill, image.Point{}, draw.Src)
	}
	return dst
}

// scale maps a screen box to image pixels, grown by pad and clipped to b.
func scale(r sdk.Rect, sx, sy float64, b image.Rectangle) image.Rectangle {
	if r.Empty() {
		return image.Rectangle{}
	}
	out := image.Rect(
		b.Min.X+floor(float64(r.Left-pad)*sx), b.Min.Y+floor(float64(r.Top-pad)*sy),
		b.Min.X+ceil(float64(r.Right+pad)*sx), b.Min.Y+ceil(float64(r.Bottom+pad)*sy),
	)
	return out.Intersect(b)
}

// snap grows r outwards to multiples of align from b's corner, within b.
func snap(r image.Rectangle, align int, b image.Rectangle) image.Rectangle {
	if align <= 1 || r.Empty() {
		return r
	}
	r = r.Sub(b.Min)
	r.Min.X -= r.Min.X % align
	r.Min.Y -= r.Min.Y % align
	r.Max.X += (align - r.Max.X%align) % align
	r.Max.Y += (align - r.Max.Y%align) % align
	return r.Add(b.Min).Intersect(b)
}

func floor(f float64) int {
	i := int(f)
	if float64(i) > f {
		i--
	}
	return i
}

func ceil(f float64) int {
	i := int(f)
	if float64(i) < f {
		i++
	}
	return i
}

// fillYCbCr paints r on a decoded JPEG without converting it to RGB. Chroma
// samples shared with pixels just outside r are painted too, which only
// greys a sliver of the neighbouring pixels.
func fillYCbCr(m *image.YCbCr, r image.Rectangle) {
	if r.Empty() {
		return
	}
	y, cb, cr := color.RGBToYCbCr(coverColor.R, coverColor.G, coverColor.B)
	for py := r.Min.Y; py < r.Max.Y; py++ {
		row := m.YOffset(r.Min.X, py)
		for px := r.Min.X; px < r.Max.X; px++ {
			m.Y[row+px-r.Min.X] = y
			c := m.COffset(px, py)
			m.Cb[c], m.Cr[c] = cb, cr
		}
	}
}

// CoverJPEG decodes a JPEG screenshot, covers boxes (see Cover) and encodes
// it again at quality (1 to 100; 0 means 85). Each cover also snaps
// outwards to JPEG's 16-pixel coding units, so it stays one flat colour
// after encoding. With no boxes it returns data unchanged.
func CoverJPEG(data []byte, screenW, screenH int, boxes []sdk.Rect, quality int) ([]byte, error) {
	if len(boxes) == 0 {
		return data, nil
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("cover screenshot: decode jpeg: %w", err)
	}
	return encodeJPEG(cover(img, screenW, screenH, boxes, jpegBlock), quality)
}

// CoverImage covers boxes on an encoded screenshot of a screenW × screenH
// screen, PNG or JPEG, and returns it in the same format and size. With no
// boxes it returns img unchanged.
func CoverImage(img sdk.Image, screenW, screenH int, boxes []sdk.Rect, quality int) (sdk.Image, error) {
	if len(boxes) == 0 {
		return img, nil
	}
	var err error
	out := img
	switch img.Format {
	case sdk.FormatJPEG:
		out.Data, err = CoverJPEG(img.Data, screenW, screenH, boxes, quality)
	case sdk.FormatPNG, "":
		var m image.Image
		if m, err = png.Decode(bytes.NewReader(img.Data)); err != nil {
			return sdk.Image{}, fmt.Errorf("cover screenshot: decode png: %w", err)
		}
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err = enc.Encode(&buf, Cover(m, screenW, screenH, boxes)); err != nil {
			return sdk.Image{}, fmt.Errorf("cover screenshot: encode png: %w", err)
		}
		out.Data = buf.Bytes()
	default:
		// An image we cannot paint on must not go out uncovered.
		return sdk.Image{}, fmt.Errorf("cover screenshot: format %q: want png or jpeg", img.Format)
	}
	if err != nil {
		return sdk.Image{}, err
	}
	return out, nil
}

func encodeJPEG(img image.Image, quality int) ([]byte, error) {
	if quality <= 0 || quality > 100 {
		quality = defaultQuality
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("cover screenshot: encode jpeg: %w", err)
	}
	return buf.Bytes(), nil
}
