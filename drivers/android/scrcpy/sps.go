package scrcpy

import (
	"bytes"
	"errors"
)

var errSPS = errors.New("h264 sps: malformed")

// h264Size returns the picture size of the first sequence parameter set in an
// Annex B config packet. scrcpy 3.x says a new size only through the SPS.
func h264Size(annexB []byte) (w, h int, err error) {
	for _, nal := range splitAnnexB(annexB) {
		if len(nal) > 1 && nal[0]&0x1f == 7 {
			return spsSize(unescapeRBSP(nal[1:]))
		}
	}
	return 0, 0, errors.New("h264 config: no sps")
}

// splitAnnexB splits a byte stream at its start codes.
func splitAnnexB(b []byte) [][]byte {
	var out [][]byte
	start := -1
	for i := 0; i+2 < len(b); i++ {
		if b[i] == 0 && b[i+1] == 0 && b[i+2] == 1 {
			if start >= 0 {
				out = append(out, bytes.TrimRight(b[start:i], "\x00"))
			}
			start = i + 3
			i += 2
		}
	}
	if start >= 0 {
		out = append(out, b[start:])
	}
	return out
}

// unescapeRBSP removes emulation prevention bytes (00 00 03 → 00 00).
func unescapeRBSP(b []byte) []byte {
	out := make([]byte, 0, len(b))
	zeros := 0
	for _, c := range b {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
		out = append(out, c)
	}
	return out
}

type bitReader struct {
	b   []byte
	pos int
	err error
}

func (r *bitReader) u(n int) uint32 {
	var v uint32
	for range n {
		if r.pos >= 8*len(r.b) {
			r.err = errSPS
			return 0
		}
		v = v<<1 | uint32(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() uint32 {
	zeros := 0
	for r.u(1) == 0 {
		if zeros++; zeros > 31 || r.err != nil {
			r.err = errSPS
			return 0
		}
	}
	return 1<<zeros - 1 + r.u(zeros)
}

func (r *bitReader) se() int32 {
	v := r.ue()
	if v&1 == 1 {
		return int32(v/2 + 1)
	}
	return -int32(v / 2)
}

// spsSize parses an SPS's RBSP (after the NAL header) for the cropped size.
func spsSize(rbsp []byte) (int, int, error) {
	r := &bitReader{b: rbsp}
	profile := r.u(8)
	r.u(16) // constraint flags, level
	r.ue()  // seq_parameter_set_id
	chroma := uint32(1)
	separate := false
	switch profile {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		chroma = r.ue()
		if chroma == 3 {
			separate = r.u(1) == 1
		}
		r.ue()           // bit_depth_luma_minus8
		r.ue()           // bit_depth_chroma_minus8
		r.u(1)           // qpprime_y_zero_transform_bypass_flag
		if r.u(1) == 1 { // seq_scaling_matrix_present_flag
			lists := 8
			if chroma == 3 {
				lists = 12
			}
			for i := range lists {
				if r.u(1) == 0 {
					continue
				}
				size := 16
				if i >= 6 {
					size = 64
				}
				last, next := int32(8), int32(8)
				for range size {
					if next != 0 {
						next = (last + r.se() + 256) % 256
					}
					if next != 0 {
						last = next
					}
				}
			}
		}
	}
	r.ue() // log2_max_frame_num_minus4
	switch r.ue() {
	case 0:
		r.ue() // log2_max_pic_order_cnt_lsb_minus4
	case 1:
		r.u(1)
		r.se()
		r.se()
		n := r.ue()
		if n > 255 {
			return 0, 0, errSPS
		}
		for range n {
			r.se()
		}
	}
	r.ue() // max_num_ref_frames
	r.u(1) // gaps_in_frame_num_value_allowed_flag
	wMBs := int(r.ue()) + 1
	hMaps := int(r.ue()) + 1
	frameMBsOnly := int(r.u(1))
	if frameMBsOnly == 0 {
		r.u(1) // mb_adaptive_frame_field_flag
	}
	r.u(1) // direct_8x8_inference_flag
	var cl, cr, ct, cb int
	if r.u(1) == 1 {
		cl, cr, ct, cb = int(r.ue()), int(r.ue()), int(r.ue()), int(r.ue())
	}
	if r.err != nil {
		return 0, 0, r.err
	}
	unitX, unitY := 1, 2-frameMBsOnly
	if chroma != 0 && !separate {
		subW, subH := 2, 2 // 4:2:0
		switch chroma {
		case 2:
			subH = 1
		case 3:
			subW, subH = 1, 1
		}
		unitX, unitY = subW, subH*(2-frameMBsOnly)
	}
	w := wMBs*16 - unitX*(cl+cr)
	h := (2-frameMBsOnly)*hMaps*16 - unitY*(ct+cb)
	if w <= 0 || h <= 0 {
		return 0, 0, errSPS
	}
	return w, h, nil
}
