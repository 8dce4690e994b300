package sdk

// PinchFingers is where the two fingers of a pinch go down (Start) and
// lift (End), as SPEC.md 5.5 places them: on one line through the centre,
// at the same distance from it, inside a screen of width by height pixels.
// The line is horizontal, or vertical when the centre has more room up and
// down; the longer of the two spans is two fifths of the screen's shorter
// side, shortened near an edge, and the other span is scale thousandths of
// the start (above 1000 the fingers spread). A driver that injects touches
// can use it as it is.
type PinchFingers struct {
	Start, End [2]Point
}

// Pinch places the fingers of a pinch at center with scale thousandths on
// a width by height screen. center is assumed inside the screen.
func Pinch(center Point, scale, width, height int) PinchFingers {
	roomX := min(center.X, width-1-center.X)
	roomY := min(center.Y, height-1-center.Y)
	vertical := roomY > roomX
	room := roomX
	if vertical {
		room = roomY
	}
	long := max(min(room, min(width, height)/5), 0) // half of the longer span
	start, end := long, long*scale/1000
	if scale > 1000 {
		start, end = long*1000/scale, long
	}
	at := func(d int) [2]Point {
		if vertical {
			return [2]Point{{X: center.X, Y: center.Y - d}, {X: center.X, Y: center.Y + d}}
		}
		return [2]Point{{X: center.X - d, Y: center.Y}, {X: center.X + d, Y: center.Y}}
	}
	return PinchFingers{Start: at(start), End: at(end)}
}
