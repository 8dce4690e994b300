package h26x_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/h26x"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
)

func TestNALUnits(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want [][]byte
	}{
		{"three-byte start codes", []byte{0, 0, 1, 0x67, 1, 0, 0, 1, 0x68, 2}, [][]byte{{0x67, 1}, {0x68, 2}}},
		{"four-byte start code, trailing zeros", []byte{0, 0, 0, 1, 0x65, 9, 0, 0}, [][]byte{{0x65, 9}}},
		{"bytes before the first start code", []byte{7, 7, 0, 0, 1, 0x41}, [][]byte{{0x41}}},
		{"no start code", []byte{1, 2, 3}, nil},
	} {
		if got := h26x.NALUnits(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("%s: %x, want %x", tc.name, got, tc.want)
		}
	}
}

func TestParseSPS264(t *testing.T) {
	for _, size := range [][2]int{{64, 48}, {576, 1280}, {1080, 2400}, {322, 202}} {
		enc, err := h264.NewEncoder(size[0], size[1])
		if err != nil {
			t.Fatal(err)
		}
		var sps []byte
		for _, u := range h26x.NALUnits(enc.Config()) {
			if u[0]&0x1f == 7 {
				sps = u
			}
		}
		got, err := h26x.ParseSPS264(sps)
		if err != nil || got.Width != size[0] || got.Height != size[1] || len(got.PTL) != 3 || got.Chroma != 1 {
			t.Errorf("SPS of a %dx%d stream: %+v, %v", size[0], size[1], got, err)
		}
		if _, err := h26x.ParseSPS264(sps[:4]); err == nil {
			t.Errorf("a cut SPS parsed")
		}
	}
	if _, err := h26x.ParseSPS265([]byte{0x42, 1}); err == nil {
		t.Errorf("a two-byte H.265 SPS: %v, want an error", err)
	}
}

func TestUnescape(t *testing.T) {
	got := h26x.Unescape([]byte{0, 0, 3, 1, 0, 0, 3, 0, 5})
	if want := []byte{0, 0, 1, 0, 0, 0, 5}; !cmp.Equal(got, want) {
		t.Errorf("Unescape = %x, want %x", got, want)
	}
}
