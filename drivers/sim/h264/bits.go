package h264

// bitWriter writes the RBSP of one NAL unit, most significant bit first.
type bitWriter struct {
	buf  []byte
	cur  byte // bits not yet in buf, left-aligned as they arrive
	ncur uint // how many bits cur holds (0..7)
}

// u writes the n low bits of v (n ≤ 32).
func (w *bitWriter) u(n uint, v uint32) {
	for n > 0 {
		n--
		w.cur = w.cur<<1 | byte(v>>n&1)
		w.ncur++
		if w.ncur == 8 {
			w.buf = append(w.buf, w.cur)
			w.cur, w.ncur = 0, 0
		}
	}
}

// flag writes one bit.
func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// ue writes v as unsigned exp-Golomb: n zeros, then the n+1 bits of v+1.
func (w *bitWriter) ue(v uint32) {
	x := uint64(v) + 1
	n := uint(0)
	for x>>(n+1) != 0 {
		n++
	}
	w.u(n, 0)
	if n+1 > 32 {
		w.u(n+1-32, uint32(x>>32))
		w.u(32, uint32(x))
		return
	}
	w.u(n+1, uint32(x))
}

// se writes v as signed exp-Golomb: 1 → 1, -1 → 2, 2 → 3, ...
func (w *bitWriter) se(v int32) {
	if v > 0 {
		w.ue(uint32(2*v - 1))
	} else {
		w.ue(uint32(-2 * v))
	}
}

// alignZero writes zero bits up to the next byte boundary (pcm_alignment_zero_bit).
func (w *bitWriter) alignZero() {
	for w.ncur != 0 {
		w.u(1, 0)
	}
}

// bytes appends whole bytes; the writer must be aligned.
func (w *bitWriter) bytes(b []byte) {
	if w.ncur != 0 {
		panic("h264: unaligned byte write")
	}
	w.buf = append(w.buf, b...)
}

// trailing writes rbsp_trailing_bits: a one, then zeros to the byte boundary.
func (w *bitWriter) trailing() {
	w.u(1, 1)
	w.alignZero()
}

// appendNAL appends a 4-byte start code, the NAL header byte and rbsp with
// emulation prevention: 0x000003 before any 0x00–0x03 that follows two zeros.
func appendNAL(dst []byte, header byte, rbsp []byte) []byte {
	dst = append(dst, 0, 0, 0, 1, header)
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			dst = append(dst, 3)
			zeros = 0
		}
		dst = append(dst, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return dst
}
