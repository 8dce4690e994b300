// Package still encodes a driver's still images (screenshots and frames)
// the way a ScreenshotRequest asks: scaled to fit its longest side, as PNG
// or JPEG. Drivers whose phones give them an image share it.
package still

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// DefaultQuality is the JPEG quality of a request that names none.
const DefaultQuality = 80

// Encode scales img to fit req.MaxSide (0 keeps the size) and encodes it
// as req.Format ("" is PNG).
func Encode(img image.Image, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	img = Fit(img, req.MaxSide)
	b := img.Bounds()
	var buf bytes.Buffer
	format := req.Format
	switch format {
	case "", sdk.FormatPNG:
		format = sdk.FormatPNG
		// Speed over size: a screenshot is taken while an agent waits.
		if err := (&png.Encoder{CompressionLevel: png.BestSpeed}).Encode(&buf, img); err != nil {
			return nil, err
		}
	case sdk.FormatJPEG:
		q := req.Quality
		if q == 0 {
			q = DefaultQuality
		}
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: q}); err != nil {
			return nil, err
		}
	default:
		return nil, sdk.Invalid("image format %q: png or jpeg", format)
	}
	return &sdk.Image{Format: format, Width: b.Dx(), Height: b.Dy(), Data: buf.Bytes()}, nil
}

// Fit scales img down so that its longest side is at most maxSide; a
// smaller image, or maxSide 0, is returned as it is.
func Fit(img image.Image, maxSide int) image.Image {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if maxSide <= 0 || max(w, h) <= maxSide {
		return img
	}
	if w >= h {
		w, h = maxSide, max(1, h*maxSide/w)
	} else {
		w, h = max(1, w*maxSide/h), maxSide
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}
