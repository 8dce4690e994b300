package scrcpyd

import "github.com/pinky-gateway/pinky/drivers/sdk"

// The virtual encoder's capabilities, as MediaCodecInfo.VideoCapabilities
// would give them for the sim's H.264 encoder: it takes even sizes only
// (width and height alignment 2, as Android's software AVC encoder), from
// 2 to 8192 pixels a side (level 6.2's widest picture), each side on its own.
const (
	codecAlignment = 2
	codecMinSide   = 2
	codecMaxSide   = 8192
)

// sizer sizes the video of a display as the server's version does. Its
// maxSize is max_size as the version parsed it (3.x: rounded down to a
// multiple of 8 by Options.parse).
type sizer struct {
	version   [2]int // major, minor
	maxSize   int
	alignment int // 4.x: max(codec alignment, min_size_alignment); 1 when the constraints are ignored
}

// newSizer is the sizer of the parsed options.
func newSizer(o options) sizer {
	z := sizer{version: [2]int{o.version.Major, o.version.Minor}, maxSize: o.maxSize}
	if o.version.Major >= 4 {
		// SurfaceEncoder.streamCapture: the codec's alignment, unless
		// ignore_video_encoder_constraints (4.1), raised to min_size_alignment.
		z.alignment = codecAlignment
		if o.ignoreEncoderConstraints {
			z.alignment = 1
		}
		z.alignment = max(z.alignment, o.minSizeAlignment)
	}
	return z
}

// video is the size of the video of a display of w x h: in 3.x
// Size.limit(maxSize).round8() (ScreenCapture.prepare, NewDisplayCapture.prepare),
// in 4.0 Size.constrain with the encoder's capabilities, in 4.1 and later
// Size.constrain without them (SurfaceEncoder applies them only after an
// encoding failure, which the virtual encoder never has).
func (z sizer) video(w, h int) (int, int) {
	switch {
	case z.version[0] < 4:
		return round8(limit(w, h, z.maxSize))
	case z.version == [2]int{4, 0}:
		return constrainCaps(w, h, z.maxSize, z.alignment)
	default:
		return constrain(w, h, z.maxSize, z.alignment)
	}
}

// encodable is the size the virtual encoder takes for the size the server
// chose: only with an alignment of 1 (ignore_video_encoder_constraints) may
// a side be odd, which the real encoder would refuse; the virtual one takes
// it rounded down to even.
func encodable(w, h int) (int, int) {
	return max(w&^1, 2), max(h&^1, 2)
}

// display is the size new_display gives its display for w x h, the size
// asked or else the main display's in its natural orientation: 3.x keeps it
// as it is, 4.x aligns it down to the video alignment
// (NewDisplayCapture.prepare: "Align the physical display size").
func (z sizer) display(w, h int) (int, int) {
	if z.version[0] < 4 {
		return w, h
	}
	return alignDown(w, z.alignment), alignDown(h, z.alignment)
}

// limit is Size.limit of 3.x (device/Size.java): the major side becomes
// maxSize when it is larger, the minor side is scaled and truncated.
func limit(w, h, maxSize int) (int, int) {
	if maxSize == 0 {
		return w, h
	}
	portrait := h > w
	major, minor := w, h
	if portrait {
		major, minor = h, w
	}
	if major <= maxSize {
		return w, h
	}
	minor = maxSize * minor / major
	if portrait {
		return minor, maxSize
	}
	return maxSize, minor
}

// round8 is Size.round8 of 3.x (device/Size.java): the major side is
// rounded down to a multiple of 8 (never above the initial size), the minor
// side to the nearest multiple of 8 but never above the major.
func round8(w, h int) (int, int) {
	if w&7 == 0 && h&7 == 0 {
		return w, h
	}
	portrait := h > w
	major, minor := w, h
	if portrait {
		major, minor = h, w
	}
	major &^= 7
	minor = (minor + 4) &^ 7
	minor = min(minor, major)
	if portrait {
		return minor, major
	}
	return major, minor
}

// constrain is Size.constrain of 4.1 without encoder capabilities
// (model/Size.java): a side over maxSize scales the size so that the larger
// side (the height for a square) is maxSize, then each side is aligned down
// to the alignment and is at least the alignment.
func constrain(w, h, maxSize, alignment int) (int, int) {
	if maxSize > 0 && (w > maxSize || h > maxSize) {
		if w > h {
			w, h = maxSize, h*maxSize/w
		} else {
			w, h = w*maxSize/h, maxSize
		}
	}
	return max(alignDown(w, alignment), alignment), max(alignDown(h, alignment), alignment)
}

// constrainCaps is Size.constrain of 4.0 with aspect ratio kept
// (model/Size.java), for the virtual encoder's capabilities: the largest
// codec size is capped by maxSize and aligned first, the size is scaled to
// fit it, aligned down, and raised to the codec's smallest side aligned up.
func constrainCaps(w, h, maxSize, alignment int) (int, int) {
	maxW, maxH := codecMaxSide, codecMaxSide
	if maxSize > 0 {
		maxW, maxH = min(maxW, maxSize), min(maxH, maxSize)
	}
	maxW, maxH = alignDown(maxW, alignment), alignDown(maxH, alignment)
	if w > maxW || h > maxH {
		if w*maxH > h*maxW {
			w, h = maxW, h*maxW/w
		} else {
			w, h = w*maxH/h, maxH
		}
	}
	w, h = alignDown(w, alignment), alignDown(h, alignment)
	least := (codecMinSide + alignment - 1) / alignment * alignment
	return max(w, least), max(h, least)
}

func alignDown(n, alignment int) int { return n / alignment * alignment }

// naturalSize is a screen's size at rotation 0: a phone turned to
// landscape has its sides swapped (NewDisplayCapture.init rotates it back).
func naturalSize(scr *sdk.Screen) (int, int) {
	switch scr.Orientation {
	case sdk.OrientationLandscape, sdk.OrientationLandscapeRight:
		return scr.Height, scr.Width
	}
	return scr.Width, scr.Height
}
