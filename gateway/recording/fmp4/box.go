package fmp4

import "encoding/binary"

// boxes builds ISO BMFF boxes into one buffer: start opens a box, end
// closes the innermost open one and fills in its size.
type boxes struct {
	b    []byte
	open []int // offsets of the open boxes' size fields
}

func (w *boxes) start(typ string) {
	w.open = append(w.open, len(w.b))
	w.b = append(w.b, 0, 0, 0, 0)
	w.b = append(w.b, typ...)
}

// full opens a full box (a box with version and flags).
func (w *boxes) full(typ string, version byte, flags uint32) {
	w.start(typ)
	w.u32(uint32(version)<<24 | flags&0xffffff)
}

func (w *boxes) end() {
	i := w.open[len(w.open)-1]
	w.open = w.open[:len(w.open)-1]
	binary.BigEndian.PutUint32(w.b[i:], uint32(len(w.b)-i))
}

func (w *boxes) u8(v uint8)   { w.b = append(w.b, v) }
func (w *boxes) u16(v uint16) { w.b = binary.BigEndian.AppendUint16(w.b, v) }
func (w *boxes) u32(v uint32) { w.b = binary.BigEndian.AppendUint32(w.b, v) }
func (w *boxes) u64(v uint64) { w.b = binary.BigEndian.AppendUint64(w.b, v) }
func (w *boxes) raw(p []byte) { w.b = append(w.b, p...) }
func (w *boxes) zeros(n int) {
	for range n {
		w.b = append(w.b, 0)
	}
}

// matrix writes the identity transformation matrix of mvhd and tkhd.
func (w *boxes) matrix() {
	for _, v := range []uint32{0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000} {
		w.u32(v)
	}
}
