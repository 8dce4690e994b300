package fmp4

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/pinky-gateway/pinky/drivers/h26x"
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

	sps h26x.SPS
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
		t.sps, err = h26x.ParseSPS264(sps)
	} else {
		t.sps, err = h26x.ParseSPS265(sps)
	}
	if err != nil {
		return Track{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if !t.hasAll() {
		return Track{}, fmt.Errorf("%w: missing parameter sets", ErrConfig)
	}
	t.Width, t.Height = t.sps.Width, t.sps.Height
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
