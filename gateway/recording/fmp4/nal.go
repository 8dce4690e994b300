package fmp4

import (
	"encoding/binary"

	"github.com/pinky-gateway/pinky/drivers/h26x"
)

// NALUnits splits an Annex B byte stream into its NAL units (without start
// codes); see h26x.NALUnits.
func NALUnits(annexB []byte) [][]byte { return h26x.NALUnits(annexB) }

// AppendSample appends one sample in MP4 form to dst: each NAL unit of the
// Annex B access unit, prefixed by its 4-byte big-endian length. The
// parameter sets in params (NAL units, as in Track.ParamSets) come first:
// that is how a key frame carries its parameter sets in band.
func AppendSample(dst, annexB []byte, params [][]byte) []byte {
	for _, p := range params {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(p)))
		dst = append(dst, p...)
	}
	for _, u := range NALUnits(annexB) {
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(u)))
		dst = append(dst, u...)
	}
	return dst
}
