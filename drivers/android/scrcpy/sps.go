package scrcpy

import (
	"errors"

	"github.com/pinky-gateway/pinky/drivers/h26x"
)

// h264Size returns the picture size of the first sequence parameter set in an
// Annex B config packet. scrcpy 3.x says a new size only through the SPS.
func h264Size(annexB []byte) (w, h int, err error) {
	for _, nal := range h26x.NALUnits(annexB) {
		if len(nal) > 1 && nal[0]&0x1f == 7 {
			sps, err := h26x.ParseSPS264(nal)
			return sps.Width, sps.Height, err
		}
	}
	return 0, 0, errors.New("h264 config: no sps")
}
