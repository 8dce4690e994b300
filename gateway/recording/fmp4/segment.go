package fmp4

import (
	"encoding/binary"
	"fmt"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Sample flags in trun (ISO/IEC 14496-12 8.8.3.1): a sync sample depends on
// no other; any other sample depends on earlier ones and is not a sync
// sample.
const (
	flagsSync    = 0x02000000 // sample_depends_on = 2
	flagsNonSync = 0x01010000 // sample_depends_on = 1, sample_is_non_sync_sample
)

// InitSegment returns the init segment of t: ftyp and moov, with empty
// sample tables and mvex, so that the samples come in fragments. The sample
// entry is avc3 (H.264) or hev1 (H.265): parameter sets may also come in
// band, which is how a size change mid-file is carried.
func InitSegment(t Track) ([]byte, error) {
	if !t.hasAll() || t.sps.PTL == nil {
		return nil, fmt.Errorf("%w: track has no parsed parameter sets (use ParseConfig)", ErrConfig)
	}
	var w boxes
	w.start("ftyp")
	w.raw([]byte("iso6"))
	w.u32(0)
	for _, b := range []string{"iso6", "isom", "mp41", "dash"} {
		w.raw([]byte(b))
	}
	w.end()

	w.start("moov")
	w.full("mvhd", 0, 0)
	w.u32(0) // creation_time
	w.u32(0) // modification_time
	w.u32(1000)
	w.u32(0)          // duration: unknown, the fragments tell
	w.u32(0x00010000) // rate 1.0
	w.u16(0x0100)     // volume 1.0
	w.zeros(10)
	w.matrix()
	w.zeros(24)        // pre_defined
	w.u32(TrackID + 1) // next_track_ID
	w.end()

	w.start("trak")
	w.full("tkhd", 0, 3) // enabled, in movie
	w.u32(0)
	w.u32(0)
	w.u32(TrackID)
	w.u32(0) // reserved
	w.u32(0) // duration
	w.zeros(8)
	w.u16(0) // layer
	w.u16(0) // alternate_group
	w.u16(0) // volume: video
	w.u16(0)
	w.matrix()
	w.u32(uint32(t.Width) << 16)
	w.u32(uint32(t.Height) << 16)
	w.end()

	w.start("mdia")
	w.full("mdhd", 0, 0)
	w.u32(0)
	w.u32(0)
	w.u32(t.timescale())
	w.u32(0)
	w.u16(0x55c4) // language "und"
	w.u16(0)
	w.end()
	w.full("hdlr", 0, 0)
	w.u32(0)
	w.raw([]byte("vide"))
	w.zeros(12)
	w.raw([]byte("Pinky screen\x00"))
	w.end()

	w.start("minf")
	w.full("vmhd", 0, 1)
	w.zeros(8) // graphicsmode, opcolor
	w.end()
	w.start("dinf")
	w.full("dref", 0, 0)
	w.u32(1)
	w.full("url ", 0, 1) // the data is in this file
	w.end()
	w.end()
	w.end()

	w.start("stbl")
	w.full("stsd", 0, 0)
	w.u32(1)
	t.sampleEntry(&w)
	w.end()
	for _, typ := range []string{"stts", "stsc", "stco"} {
		w.full(typ, 0, 0)
		w.u32(0)
		w.end()
	}
	w.full("stsz", 0, 0)
	w.u32(0)
	w.u32(0)
	w.end()
	w.end() // stbl
	w.end() // minf
	w.end() // mdia
	w.end() // trak

	w.start("mvex")
	w.full("trex", 0, 0)
	w.u32(TrackID)
	w.u32(1) // default_sample_description_index
	w.u32(0) // default_sample_duration
	w.u32(0) // default_sample_size
	w.u32(0) // default_sample_flags
	w.end()
	w.end()
	w.end() // moov
	return w.b, nil
}

// sampleEntry writes the visual sample entry with its decoder configuration.
func (t *Track) sampleEntry(w *boxes) {
	if t.Codec == sdk.CodecH264 {
		w.start("avc3")
	} else {
		w.start("hev1")
	}
	w.zeros(6)
	w.u16(1) // data_reference_index
	w.zeros(16)
	w.u16(uint16(t.Width))
	w.u16(uint16(t.Height))
	w.u32(0x00480000) // 72 dpi
	w.u32(0x00480000)
	w.u32(0)
	w.u16(1) // frame_count
	w.zeros(32)
	w.u16(0x0018) // depth
	w.u16(0xffff) // pre_defined = -1
	if t.Codec == sdk.CodecH264 {
		t.avcC(w)
	} else {
		t.hvcC(w)
	}
	w.end()
}

// avcC writes the AVCDecoderConfigurationRecord (ISO/IEC 14496-15 5.3.3.1).
func (t *Track) avcC(w *boxes) {
	var sps, pps [][]byte
	for _, p := range t.ParamSets {
		if t.nalType(p) == 7 {
			sps = append(sps, p)
		} else {
			pps = append(pps, p)
		}
	}
	w.start("avcC")
	w.u8(1)
	w.raw(t.sps.PTL) // profile, compatibility, level
	w.u8(0xfc | 3)   // lengthSizeMinusOne
	w.u8(0xe0 | uint8(len(sps)))
	for _, p := range sps {
		w.u16(uint16(len(p)))
		w.raw(p)
	}
	w.u8(uint8(len(pps)))
	for _, p := range pps {
		w.u16(uint16(len(p)))
		w.raw(p)
	}
	switch t.sps.PTL[0] {
	case 100, 110, 122, 144:
		w.u8(0xfc | uint8(t.sps.Chroma))
		w.u8(0xf8 | uint8(t.sps.DepthY))
		w.u8(0xf8 | uint8(t.sps.DepthC))
		w.u8(0) // numOfSequenceParameterSetExt
	}
	w.end()
}

// hvcC writes the HEVCDecoderConfigurationRecord (ISO/IEC 14496-15 8.3.3.1).
func (t *Track) hvcC(w *boxes) {
	w.start("hvcC")
	w.u8(1)
	w.raw(t.sps.PTL)
	w.u16(0xf000) // min_spatial_segmentation_idc 0
	w.u8(0xfc)    // parallelismType 0: unknown
	w.u8(0xfc | uint8(t.sps.Chroma))
	w.u8(0xf8 | uint8(t.sps.DepthY))
	w.u8(0xf8 | uint8(t.sps.DepthC))
	w.u16(0) // avgFrameRate: unknown
	nested := uint8(0)
	if t.sps.TemporalIDNested {
		nested = 1
	}
	// constantFrameRate 0, numTemporalLayers, temporalIdNested, lengthSizeMinusOne 3
	w.u8(uint8(t.sps.SubLayers&7)<<3 | nested<<2 | 3)
	var arrays [][][]byte
	var types []byte
	for _, p := range t.ParamSets {
		typ := t.nalType(p)
		i := 0
		for i < len(types) && types[i] != typ {
			i++
		}
		if i == len(types) {
			types = append(types, typ)
			arrays = append(arrays, nil)
		}
		arrays[i] = append(arrays[i], p)
	}
	w.u8(uint8(len(arrays)))
	for i, a := range arrays {
		w.u8(types[i]) // array_completeness 0: more may come in band (hev1)
		w.u16(uint16(len(a)))
		for _, p := range a {
			w.u16(uint16(len(p)))
			w.raw(p)
		}
	}
	w.end()
}

// Sample is one sample of a fragment.
type Sample struct {
	Data     []byte // the access unit, length-prefixed (see AppendSample)
	Duration uint32 // in the track's timescale
	Sync     bool   // a key frame: decodes without earlier samples
}

// Fragment returns one movie fragment: moof (mfhd with seq, traf with tfhd,
// tfdt and trun) and the mdat with the samples. seq counts fragments from
// 1; decodeTime is the first sample's decode time in the track's timescale.
func Fragment(seq uint32, decodeTime uint64, samples []Sample) []byte {
	size := 0
	for _, s := range samples {
		size += len(s.Data)
	}
	var w boxes
	w.b = make([]byte, 0, 128+12*len(samples)+size)
	w.start("moof")
	w.full("mfhd", 0, 0)
	w.u32(seq)
	w.end()
	w.start("traf")
	w.full("tfhd", 0, 0x020000) // default-base-is-moof
	w.u32(TrackID)
	w.end()
	w.full("tfdt", 1, 0)
	w.u64(decodeTime)
	w.end()
	w.full("trun", 0, 0x000701) // data offset; per-sample duration, size, flags
	w.u32(uint32(len(samples)))
	offsetAt := len(w.b)
	w.u32(0)
	for _, s := range samples {
		w.u32(s.Duration)
		w.u32(uint32(len(s.Data)))
		if s.Sync {
			w.u32(flagsSync)
		} else {
			w.u32(flagsNonSync)
		}
	}
	w.end() // trun
	w.end() // traf
	w.end() // moof
	binary.BigEndian.PutUint32(w.b[offsetAt:], uint32(len(w.b)+8))
	w.start("mdat")
	for _, s := range samples {
		w.raw(s.Data)
	}
	w.end()
	return w.b
}
