package h264

import "image"

// toYCbCr converts img to BT.601 limited-range 4:2:0 samples in p, padded to
// cw x ch by repeating the last column and row. Chroma is the mean of each
// 2x2 block's chroma.
func toYCbCr(img *image.RGBA, p planes, cw, ch int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	for y := range h {
		row := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+y):]
		out := p.y[y*cw : y*cw+cw]
		for x := range w {
			r, g, bl := int32(row[4*x]), int32(row[4*x+1]), int32(row[4*x+2])
			out[x] = byte((66*r+129*g+25*bl+128)>>8 + 16)
		}
		for x := w; x < cw; x++ {
			out[x] = out[w-1]
		}
	}
	for y := h; y < ch; y++ {
		copy(p.y[y*cw:(y+1)*cw], p.y[(h-1)*cw:h*cw])
	}
	ccw, cch, hw, hh := cw/2, ch/2, w/2, h/2
	for y := range hh {
		r0 := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+2*y):]
		r1 := img.Pix[img.PixOffset(b.Min.X, b.Min.Y+2*y+1):]
		cb, cr := p.cb[y*ccw:(y+1)*ccw], p.cr[y*ccw:(y+1)*ccw]
		for x := range hw {
			i := 8 * x
			r := int32(r0[i]) + int32(r0[i+4]) + int32(r1[i]) + int32(r1[i+4])
			g := int32(r0[i+1]) + int32(r0[i+5]) + int32(r1[i+1]) + int32(r1[i+5])
			bl := int32(r0[i+2]) + int32(r0[i+6]) + int32(r1[i+2]) + int32(r1[i+6])
			// Sums of four: divide by 4 inside the >> (8+2).
			cb[x] = byte((-38*r-74*g+112*bl+512)>>10 + 128)
			cr[x] = byte((112*r-94*g-18*bl+512)>>10 + 128)
		}
		for x := hw; x < ccw; x++ {
			cb[x], cr[x] = cb[hw-1], cr[hw-1]
		}
	}
	for y := hh; y < cch; y++ {
		copy(p.cb[y*ccw:(y+1)*ccw], p.cb[(hh-1)*ccw:hh*ccw])
		copy(p.cr[y*ccw:(y+1)*ccw], p.cr[(hh-1)*ccw:hh*ccw])
	}
}

// Scale returns img scaled so its long side is at most maxSide, with a box
// filter, and both sides even; img itself when it already fits and is even.
func Scale(img *image.RGBA, maxSide int) *image.RGBA {
	b := img.Bounds()
	w, h := FitSize(b.Dx(), b.Dy(), maxSide)
	if w == b.Dx() && h == b.Dy() {
		return img
	}
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	sw, sh := b.Dx(), b.Dy()
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var s [4]int
			for yy := y0; yy < y1; yy++ {
				row := img.Pix[img.PixOffset(b.Min.X+x0, b.Min.Y+yy):]
				for xx := 0; xx < x1-x0; xx++ {
					for c := range 4 {
						s[c] += int(row[4*xx+c])
					}
				}
			}
			n := (y1 - y0) * (x1 - x0)
			o := out.PixOffset(x, y)
			for c := range 4 {
				out.Pix[o+c] = byte((s[c] + n/2) / n)
			}
		}
	}
	return out
}

// FitSize returns the encoded size for a w x h screen: scaled down so the
// long side is at most maxSide (0: no limit), then rounded down to even.
func FitSize(w, h, maxSide int) (int, int) {
	if long := max(w, h); maxSide > 0 && long > maxSide {
		w, h = w*maxSide/long, h*maxSide/long
	}
	return max(2, w&^1), max(2, h&^1)
}
