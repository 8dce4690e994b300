package fmp4

import (
	"encoding/binary"
	"errors"
)

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

// unescape removes the emulation prevention bytes (00 00 03) of a NAL
// unit's payload, giving its raw bit string.
func unescape(b []byte) []byte {
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
