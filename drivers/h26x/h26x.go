// Package h26x reads what the H.264 and H.265 bitstreams say of
// themselves: the NAL units of an Annex B stream and the picture size and
// format in a sequence parameter set. The recorder's MP4 writer and the
// scrcpy client share it; it parses, it never decodes.
package h26x

import (
	"errors"
	"fmt"
)

// SPS is what a sequence parameter set says that a container needs.
type SPS struct {
	Width, Height    int    // the picture size, after cropping
	Chroma           uint32 // chroma_format_idc
	DepthY, DepthC   uint32 // bit_depth_*_minus8
	PTL              []byte // H.264: profile, compatibility, level; H.265: the 12 bytes of general_profile_tier_level
	SubLayers        uint32 // H.265: sps_max_sub_layers_minus1 + 1
	TemporalIDNested bool   // H.265
}

// NALUnits splits an Annex B byte stream into its NAL units (without start
// codes). Bytes before the first start code are ignored, and so are the
// zero bytes that trail a unit (trailing_zero_8bits, or the leading zero of
// the next four-byte start code).
func NALUnits(annexB []byte) [][]byte {
	var units [][]byte
	start := -1
	for i := 0; i+2 < len(annexB); {
		if annexB[i+2] > 1 {
			i += 3
			continue
		}
		if annexB[i] != 0 || annexB[i+1] != 0 || annexB[i+2] != 1 {
			i++
			continue
		}
		if start >= 0 {
			units = appendUnit(units, annexB[start:i])
		}
		i += 3
		start = i
	}
	if start >= 0 {
		units = appendUnit(units, annexB[start:])
	}
	return units
}

func appendUnit(units [][]byte, u []byte) [][]byte {
	for len(u) > 0 && u[len(u)-1] == 0 {
		u = u[:len(u)-1]
	}
	if len(u) == 0 {
		return units
	}
	return append(units, u)
}

// unescape removes the emulation prevention bytes (00 00 03) of a NAL
// unit's payload, giving its raw bit string.
func Unescape(b []byte) []byte {
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

var errShort = errors.New("parameter set ends early")

// bits reads a raw bit string, big-endian, with Exp-Golomb codes.
type bits struct {
	b   []byte
	pos int // in bits
	err error
}

func (r *bits) u(n int) uint32 {
	var v uint32
	for range n {
		if r.pos >= len(r.b)*8 {
			r.err = errShort
			return 0
		}
		v = v<<1 | uint32(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bits) skip(n int) {
	if r.pos+n > len(r.b)*8 {
		r.err = errShort
		r.pos = len(r.b) * 8
		return
	}
	r.pos += n
}

func (r *bits) flag() bool { return r.u(1) == 1 }

func (r *bits) ue() uint32 {
	zeros := 0
	for r.u(1) == 0 {
		if r.err != nil || zeros > 31 {
			r.err = errShort
			return 0
		}
		zeros++
	}
	return (1<<zeros - 1) + r.u(zeros)
}

func (r *bits) se() int32 {
	v := r.ue()
	if v&1 == 1 {
		return int32(v/2 + 1)
	}
	return -int32(v / 2)
}

// ParseSPS264 reads an H.264 SPS (7.3.2.1.1) up to the frame cropping.
func ParseSPS264(nal []byte) (SPS, error) {
	raw := Unescape(nal[1:])
	if len(raw) < 4 {
		return SPS{}, errShort
	}
	s := SPS{Chroma: 1, PTL: raw[:3:3]}
	r := &bits{b: raw, pos: 24}
	profile := raw[0]
	r.ue() // seq_parameter_set_id
	separate := false
	switch profile {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		s.Chroma = r.ue()
		if s.Chroma == 3 {
			separate = r.flag()
		}
		s.DepthY, s.DepthC = r.ue(), r.ue()
		r.skip(1)     // qpprime_y_zero_transform_bypass_flag
		if r.flag() { // seq_scaling_matrix_present_flag
			n := 8
			if s.Chroma == 3 {
				n = 12
			}
			for i := range n {
				if !r.flag() {
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
		r.skip(1)
		r.se()
		r.se()
		for n := r.ue(); n > 0 && r.err == nil; n-- {
			r.se()
		}
	}
	r.ue()    // max_num_ref_frames
	r.skip(1) // gaps_in_frame_num_value_allowed_flag
	w := int(r.ue()+1) * 16
	mapUnits := int(r.ue() + 1)
	frameOnly := r.flag()
	if !frameOnly {
		r.skip(1) // mb_adaptive_frame_field_flag
	}
	r.skip(1) // direct_8x8_inference_flag
	fieldMul := 1
	if !frameOnly {
		fieldMul = 2
	}
	h := mapUnits * 16 * fieldMul
	if r.flag() { // frame_cropping_flag
		left, right, top, bottom := int(r.ue()), int(r.ue()), int(r.ue()), int(r.ue())
		cx, cy := 1, fieldMul
		if s.Chroma != 0 && !separate {
			cx, cy = subWidth(s.Chroma), subHeight(s.Chroma)*fieldMul
		}
		w -= cx * (left + right)
		h -= cy * (top + bottom)
	}
	if r.err != nil {
		return SPS{}, r.err
	}
	if w <= 0 || h <= 0 {
		return SPS{}, fmt.Errorf("size %dx%d", w, h)
	}
	s.Width, s.Height = w, h
	return s, nil
}

// ParseSPS265 reads an H.265 SPS (7.3.2.2.1) up to the bit depths.
func ParseSPS265(nal []byte) (SPS, error) {
	if len(nal) < 3 {
		return SPS{}, errShort
	}
	raw := Unescape(nal[2:])
	if len(raw) < 13 {
		return SPS{}, errShort
	}
	r := &bits{b: raw}
	r.skip(4) // sps_video_parameter_set_id
	maxSub := r.u(3)
	s := SPS{SubLayers: maxSub + 1, TemporalIDNested: r.flag(), PTL: raw[1:13:13]}
	r.skip(96) // general_profile_tier_level: 2+1+5+32+48+8 bits
	profilePresent, levelPresent := make([]bool, maxSub), make([]bool, maxSub)
	for i := range maxSub {
		profilePresent[i], levelPresent[i] = r.flag(), r.flag()
	}
	if maxSub > 0 {
		r.skip(2 * int(8-maxSub)) // reserved_zero_2bits
	}
	for i := range maxSub {
		if profilePresent[i] {
			r.skip(88)
		}
		if levelPresent[i] {
			r.skip(8)
		}
	}
	r.ue() // sps_seq_parameter_set_id
	s.Chroma = r.ue()
	separate := false
	if s.Chroma == 3 {
		separate = r.flag()
	}
	w, h := int(r.ue()), int(r.ue())
	if r.flag() { // conformance_window_flag
		left, right, top, bottom := int(r.ue()), int(r.ue()), int(r.ue()), int(r.ue())
		cx, cy := 1, 1
		if s.Chroma != 0 && !separate {
			cx, cy = subWidth(s.Chroma), subHeight(s.Chroma)
		}
		w -= cx * (left + right)
		h -= cy * (top + bottom)
	}
	s.DepthY, s.DepthC = r.ue(), r.ue()
	if r.err != nil {
		return SPS{}, r.err
	}
	if w <= 0 || h <= 0 {
		return SPS{}, fmt.Errorf("size %dx%d", w, h)
	}
	s.Width, s.Height = w, h
	return s, nil
}

// subWidth and subHeight are SubWidthC and SubHeightC (Table 6-1).
func subWidth(chroma uint32) int {
	if chroma == 3 {
		return 1
	}
	return 2
}

func subHeight(chroma uint32) int {
	if chroma == 1 {
		return 2
	}
	return 1
}
