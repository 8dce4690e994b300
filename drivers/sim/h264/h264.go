// Package h264 is a small pure-Go H.264 encoder for the virtual phones'
// screens: constrained baseline profile, CAVLC, one slice per picture. IDR
// pictures send every macroblock as I_PCM (raw 4:2:0 samples, so the decoded
// picture is the input up to YCbCr conversion); P pictures skip the
// macroblocks that did not change (P_Skip) and send the changed ones as I_PCM.
// Output is Annex B with 4-byte start codes. Frames are large when much
// changes and tiny when little does, which suits a phone's mostly still screen.
package h264

import (
	"fmt"
	"image"
)

const (
	log2MaxFrameNum = 4 // MaxFrameNum 16
	maxFrameNum     = 1 << log2MaxFrameNum

	nalSPS   = 0x67 // nal_ref_idc 3, type 7
	nalPPS   = 0x68 // nal_ref_idc 3, type 8
	nalIDR   = 0x65 // nal_ref_idc 3, type 5
	nalSlice = 0x61 // nal_ref_idc 3, type 1 (non-IDR, kept as reference)

	mbTypeIPCM = 25     // I_PCM in I slices (Table 7-11)
	mbTypePPCM = 5 + 25 // intra types follow the 5 P types in P slices (Table 7-13)
	mbBytes    = 256 + 64 + 64
)

// Frame is one encoded access unit.
type Frame struct {
	Data    []byte // Annex B; nil when nothing changed and no key frame was asked for
	Key     bool   // an IDR picture
	Changed int    // macroblocks sent as samples
	Total   int    // macroblocks in the picture
}

// Encoder encodes pictures of one size. It is not safe for concurrent use.
type Encoder struct {
	w, h     int // picture size (even)
	mbw, mbh int // size in macroblocks
	frameNum uint32
	idrID    uint32
	started  bool
	cur      planes // the picture being encoded
	ref      planes // what the decoder holds: the last picture sent
}

// planes holds a picture as 4:2:0 samples padded to whole macroblocks.
type planes struct{ y, cb, cr []byte }

// NewEncoder returns an encoder for w x h pictures; both must be even and
// positive (4:2:0 cropping works in steps of two samples).
func NewEncoder(w, h int) (*Encoder, error) {
	if w <= 0 || h <= 0 || w%2 != 0 || h%2 != 0 {
		return nil, fmt.Errorf("h264: size %dx%d: want even and positive", w, h)
	}
	mbw, mbh := (w+15)/16, (h+15)/16
	if mbw*mbh > 139264 {
		return nil, fmt.Errorf("h264: size %dx%d: larger than level 6.2 allows", w, h)
	}
	e := &Encoder{w: w, h: h, mbw: mbw, mbh: mbh}
	e.cur = newPlanes(mbw, mbh)
	e.ref = newPlanes(mbw, mbh)
	return e, nil
}

func newPlanes(mbw, mbh int) planes {
	n := mbw * 16 * mbh * 16
	return planes{y: make([]byte, n), cb: make([]byte, n/4), cr: make([]byte, n/4)}
}

// Size returns the picture size.
func (e *Encoder) Size() (w, h int) { return e.w, e.h }

// levels are level_idc and MaxFS (macroblocks per frame) from Table A-1.
var levels = []struct{ idc, maxFS int }{
	{10, 99}, {20, 396}, {21, 792}, {22, 1620}, {31, 3600}, {32, 5120},
	{40, 8192}, {42, 8704}, {50, 22080}, {51, 36864}, {60, 139264},
}

// level picks the lowest level whose frame size limits fit the picture.
func (e *Encoder) level() int {
	for _, l := range levels {
		side := isqrt(8 * l.maxFS)
		if e.mbw*e.mbh <= l.maxFS && e.mbw <= side && e.mbh <= side {
			return l.idc
		}
	}
	return 62
}

func isqrt(n int) int {
	r := 0
	for (r+1)*(r+1) <= n {
		r++
	}
	return r
}

// Config returns the parameter sets, SPS then PPS, in Annex B.
func (e *Encoder) Config() []byte {
	var s bitWriter
	s.u(8, 66)   // profile_idc: baseline
	s.u(8, 0xc0) // constraint_set0 and set1 (constrained baseline), reserved zeros
	s.u(8, uint32(e.level()))
	s.ue(0)                                            // seq_parameter_set_id
	s.ue(log2MaxFrameNum - 4)                          // log2_max_frame_num_minus4
	s.ue(2)                                            // pic_order_cnt_type: output order is decode order
	s.ue(1)                                            // max_num_ref_frames
	s.flag(false)                                      // gaps_in_frame_num_value_allowed_flag
	s.ue(uint32(e.mbw - 1))                            // pic_width_in_mbs_minus1
	s.ue(uint32(e.mbh - 1))                            // pic_height_in_map_units_minus1
	s.flag(true)                                       // frame_mbs_only_flag
	s.flag(true)                                       // direct_8x8_inference_flag
	cropR, cropB := (e.mbw*16-e.w)/2, (e.mbh*16-e.h)/2 // CropUnitX = CropUnitY = 2
	s.flag(cropR > 0 || cropB > 0)                     // frame_cropping_flag
	if cropR > 0 || cropB > 0 {
		s.ue(0)
		s.ue(uint32(cropR))
		s.ue(0)
		s.ue(uint32(cropB))
	}
	s.flag(true)  // vui_parameters_present_flag
	s.flag(false) // aspect_ratio_info_present_flag
	s.flag(false) // overscan_info_present_flag
	s.flag(true)  // video_signal_type_present_flag
	s.u(3, 5)     // video_format: unspecified
	s.flag(false) // video_full_range_flag: limited range
	s.flag(true)  // colour_description_present_flag
	s.u(8, 6)     // colour_primaries: SMPTE 170M
	s.u(8, 6)     // transfer_characteristics: SMPTE 170M
	s.u(8, 6)     // matrix_coefficients: BT.601
	s.flag(false) // chroma_loc_info_present_flag
	s.flag(false) // timing_info_present_flag
	s.flag(false) // nal_hrd_parameters_present_flag
	s.flag(false) // vcl_hrd_parameters_present_flag
	s.flag(false) // pic_struct_present_flag
	s.flag(true)  // bitstream_restriction_flag: lets decoders output at once
	s.flag(true)  // motion_vectors_over_pic_boundaries_flag
	s.ue(0)       // max_bytes_per_pic_denom
	s.ue(0)       // max_bits_per_mb_denom
	s.ue(16)      // log2_max_mv_length_horizontal
	s.ue(16)      // log2_max_mv_length_vertical
	s.ue(0)       // max_num_reorder_frames
	s.ue(1)       // max_dec_frame_buffering
	s.trailing()

	var p bitWriter
	p.ue(0)       // pic_parameter_set_id
	p.ue(0)       // seq_parameter_set_id
	p.flag(false) // entropy_coding_mode_flag: CAVLC
	p.flag(false) // bottom_field_pic_order_in_frame_present_flag
	p.ue(0)       // num_slice_groups_minus1
	p.ue(0)       // num_ref_idx_l0_default_active_minus1
	p.ue(0)       // num_ref_idx_l1_default_active_minus1
	p.flag(false) // weighted_pred_flag
	p.u(2, 0)     // weighted_bipred_idc
	p.se(0)       // pic_init_qp_minus26
	p.se(0)       // pic_init_qs_minus26
	p.se(0)       // chroma_qp_index_offset
	p.flag(true)  // deblocking_filter_control_present_flag
	p.flag(false) // constrained_intra_pred_flag
	p.flag(false) // redundant_pic_cnt_present_flag
	p.trailing()

	out := appendNAL(nil, nalSPS, s.buf)
	return appendNAL(out, nalPPS, p.buf)
}

// Encode encodes img, which must be the encoder's size. The first picture and
// every one with key set is an IDR picture; otherwise only the macroblocks
// that differ from the last picture sent are coded, and when none differ
// Encode returns a Frame with no Data and the decoder's state is unchanged.
func (e *Encoder) Encode(img *image.RGBA, key bool) (Frame, error) {
	if b := img.Bounds(); b.Dx() != e.w || b.Dy() != e.h {
		return Frame{}, fmt.Errorf("h264: picture %dx%d: the encoder is %dx%d", b.Dx(), b.Dy(), e.w, e.h)
	}
	toYCbCr(img, e.cur, e.mbw*16, e.mbh*16)
	key = key || !e.started
	total := e.mbw * e.mbh
	var changed []bool
	n := total
	if !key {
		changed = make([]bool, total)
		n = 0
		for mb := range changed {
			if !e.sameMB(mb) {
				changed[mb] = true
				n++
			}
		}
		if n == 0 {
			return Frame{Total: total}, nil
		}
	}

	var w bitWriter
	w.buf = make([]byte, 0, 16+n*(mbBytes+2))
	var header byte
	if key {
		header = nalIDR
		e.frameNum = 0
		w.ue(0)                 // first_mb_in_slice
		w.ue(7)                 // slice_type: I (all slices)
		w.ue(0)                 // pic_parameter_set_id
		w.u(log2MaxFrameNum, 0) // frame_num
		w.ue(e.idrID)           // idr_pic_id
		w.flag(false)           // no_output_of_prior_pics_flag
		w.flag(false)           // long_term_reference_flag
		w.se(0)                 // slice_qp_delta
		w.ue(1)                 // disable_deblocking_filter_idc: off
		e.idrID = (e.idrID + 1) % 65536
		for mb := range total {
			w.ue(mbTypeIPCM)
			e.pcm(&w, mb)
		}
	} else {
		header = nalSlice
		e.frameNum = (e.frameNum + 1) % maxFrameNum
		w.ue(0)                          // first_mb_in_slice
		w.ue(5)                          // slice_type: P (all slices)
		w.ue(0)                          // pic_parameter_set_id
		w.u(log2MaxFrameNum, e.frameNum) // frame_num
		w.flag(false)                    // num_ref_idx_active_override_flag
		w.flag(false)                    // ref_pic_list_modification_flag_l0
		w.flag(false)                    // adaptive_ref_pic_marking_mode_flag
		w.se(0)                          // slice_qp_delta
		w.ue(1)                          // disable_deblocking_filter_idc: off
		run := uint32(0)
		for mb, c := range changed {
			if !c {
				run++
				continue
			}
			w.ue(run) // mb_skip_run
			run = 0
			w.ue(mbTypePPCM)
			e.pcm(&w, mb)
		}
		if run > 0 {
			w.ue(run)
		}
	}
	w.trailing()
	e.started = true
	e.cur, e.ref = e.ref, e.cur
	data := appendNAL(make([]byte, 0, len(w.buf)+len(w.buf)/64+8), header, w.buf)
	return Frame{Data: data, Key: key, Changed: n, Total: total}, nil
}

// pcm writes macroblock mb's samples from cur after pcm_alignment_zero_bits.
func (e *Encoder) pcm(w *bitWriter, mb int) {
	w.alignZero()
	stride := e.mbw * 16
	x, y := mb%e.mbw*16, mb/e.mbw*16
	for r := range 16 {
		o := (y+r)*stride + x
		w.bytes(e.cur.y[o : o+16])
	}
	cs := stride / 2
	for _, pl := range [][]byte{e.cur.cb, e.cur.cr} {
		for r := range 8 {
			o := (y/2+r)*cs + x/2
			w.bytes(pl[o : o+8])
		}
	}
}

// sameMB reports whether macroblock mb is the same in cur and ref.
func (e *Encoder) sameMB(mb int) bool {
	stride := e.mbw * 16
	x, y := mb%e.mbw*16, mb/e.mbw*16
	for r := range 16 {
		o := (y+r)*stride + x
		if string(e.cur.y[o:o+16]) != string(e.ref.y[o:o+16]) {
			return false
		}
	}
	cs := stride / 2
	for r := range 8 {
		o := (y/2+r)*cs + x/2
		if string(e.cur.cb[o:o+8]) != string(e.ref.cb[o:o+8]) || string(e.cur.cr[o:o+8]) != string(e.ref.cr[o:o+8]) {
			return false
		}
	}
	return true
}
