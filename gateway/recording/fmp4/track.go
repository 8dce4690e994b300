package fmp4

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// DefaultTimescale is the track's clock rate when Track.Timescale is 0:
// 90 kHz, the usual video clock, fine enough for any frame rate.
const DefaultTimescale = 90000

// TrackID is the ID of the one track of every file.
const TrackID = 1

// ErrConfig reports a config packet this package cannot use.
var ErrConfig = errors.New("fmp4: bad parameter sets")

// Track describes the one video track: what an init segment carries.
type Track struct {
	Codec         sdk.Codec // sdk.CodecH264 or sdk.CodecH265
	Width, Height int       // the picture size, from the SPS (after cropping)
	// ParamSets are the parameter set NAL units, without start codes, in
	// stream order: SPS then PPS (H.264), VPS, SPS then PPS (H.265).
	ParamSets [][]byte
	Timescale uint32 // ticks per second; 0 means DefaultTimescale

	sps spsInfo
}

// spsInfo is what the sample entry needs from the SPS.
type spsInfo struct {
	width, height    int
	chroma           uint32 // chroma_format_idc
	depthY, depthC   uint32 // bit_depth_*_minus8
	ptl              []byte // H.264: profile, compat, level; H.265: the 12 bytes of general_profile_tier_level
	subLayers        uint32 // H.265: sps_max_sub_layers_minus1 + 1
	temporalIDNested bool   // H.265
}

// ParseConfig reads a config packet's parameter sets (Annex B) into a Track.
// Other NAL units in the packet (an access unit delimiter, SEI) are left
// out. Width and Height come from the SPS.
func ParseConfig(codec sdk.Codec, annexB []byte) (Track, error) {
	t := Track{Codec: codec}
	var sps []byte
	for _, u := range NALUnits(annexB) {
		switch codec {
		case sdk.CodecH264:
			switch u[0] & 0x1f {
			case 7:
				if sps == nil {
					sps = u
				}
				t.ParamSets = append(t.ParamSets, u)
			case 8:
				t.ParamSets = append(t.ParamSets, u)
			}
		case sdk.CodecH265:
			switch u[0] >> 1 & 0x3f {
			case 33:
				if sps == nil {
					sps = u
				}
				t.ParamSets = append(t.ParamSets, u)
			case 32, 34:
				t.ParamSets = append(t.ParamSets, u)
			}
		default:
			return Track{}, fmt.Errorf("%w: codec %q", ErrConfig, codec)
		}
	}
	if sps == nil {
		return Track{}, fmt.Errorf("%w: no SPS", ErrConfig)
	}
	var err error
	if codec == sdk.CodecH264 {
		t.sps, err = parseSPS264(sps)
	} else {
		t.sps, err = parseSPS265(sps)
	}
	if err != nil {
		return Track{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if !t.hasAll() {
		return Track{}, fmt.Errorf("%w: missing parameter sets", ErrConfig)
	}
	t.Width, t.Height = t.sps.width, t.sps.height
	return t, nil
}

// hasAll reports whether every kind of parameter set is there.
func (t *Track) hasAll() bool {
	seen := map[byte]bool{}
	for _, p := range t.ParamSets {
		seen[t.nalType(p)] = true
	}
	if t.Codec == sdk.CodecH264 {
		return seen[7] && seen[8]
	}
	return seen[32] && seen[33] && seen[34]
}

func (t *Track) nalType(u []byte) byte {
	if t.Codec == sdk.CodecH264 {
		return u[0] & 0x1f
	}
	return u[0] >> 1 & 0x3f
}

// SameParams reports whether t and o have the same codec and parameter sets:
// when they do, samples coded with one decode with the other.
func (t *Track) SameParams(o *Track) bool {
	if t.Codec != o.Codec || len(t.ParamSets) != len(o.ParamSets) {
		return false
	}
	for i := range t.ParamSets {
		if !bytes.Equal(t.ParamSets[i], o.ParamSets[i]) {
			return false
		}
	}
	return true
}

func (t *Track) timescale() uint32 {
	if t.Timescale == 0 {
		return DefaultTimescale
	}
	return t.Timescale
}

// parseSPS264 reads an H.264 SPS (7.3.2.1.1) up to the frame cropping.
func parseSPS264(nal []byte) (spsInfo, error) {
	raw := unescape(nal[1:])
	if len(raw) < 4 {
		return spsInfo{}, errShort
	}
	s := spsInfo{chroma: 1, ptl: raw[:3:3]}
	r := &bits{b: raw, pos: 24}
	profile := raw[0]
	r.ue() // seq_parameter_set_id
	separate := false
	switch profile {
	case 100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135:
		s.chroma = r.ue()
		if s.chroma == 3 {
			separate = r.flag()
		}
		s.depthY, s.depthC = r.ue(), r.ue()
		r.skip(1)     // qpprime_y_zero_transform_bypass_flag
		if r.flag() { // seq_scaling_matrix_present_flag
			n := 8
			if s.chroma == 3 {
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
		if s.chroma != 0 && !separate {
			cx, cy = subWidth(s.chroma), subHeight(s.chroma)*fieldMul
		}
		w -= cx * (left + right)
		h -= cy * (top + bottom)
	}
	if r.err != nil {
		return spsInfo{}, r.err
	}
	if w <= 0 || h <= 0 {
		return spsInfo{}, fmt.Errorf("size %dx%d", w, h)
	}
	s.width, s.height = w, h
	return s, nil
}

// parseSPS265 reads an H.265 SPS (7.3.2.2.1) up to the bit depths.
func parseSPS265(nal []byte) (spsInfo, error) {
	if len(nal) < 3 {
		return spsInfo{}, errShort
	}
	raw := unescape(nal[2:])
	if len(raw) < 13 {
		return spsInfo{}, errShort
	}
	r := &bits{b: raw}
	r.skip(4) // sps_video_parameter_set_id
	maxSub := r.u(3)
	s := spsInfo{subLayers: maxSub + 1, temporalIDNested: r.flag(), ptl: raw[1:13:13]}
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
	s.chroma = r.ue()
	separate := false
	if s.chroma == 3 {
		separate = r.flag()
	}
	w, h := int(r.ue()), int(r.ue())
	if r.flag() { // conformance_window_flag
		left, right, top, bottom := int(r.ue()), int(r.ue()), int(r.ue()), int(r.ue())
		cx, cy := 1, 1
		if s.chroma != 0 && !separate {
			cx, cy = subWidth(s.chroma), subHeight(s.chroma)
		}
		w -= cx * (left + right)
		h -= cy * (top + bottom)
	}
	s.depthY, s.depthC = r.ue(), r.ue()
	if r.err != nil {
		return spsInfo{}, r.err
	}
	if w <= 0 || h <= 0 {
		return spsInfo{}, fmt.Errorf("size %dx%d", w, h)
	}
	s.width, s.height = w, h
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
