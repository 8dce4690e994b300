package android

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestToVideo maps a point across sizes and orientations: the screen's
// natural size turned to the video's, then scaled to the video.
func TestToVideo(t *testing.T) {
	tests := []struct {
		name           string
		p              sdk.Point
		natW, natH     int
		videoW, videoH int
		wantX, wantY   int
		wantSW, wantSH int
	}{
		{"portrait, full size", sdk.Point{X: 540, Y: 1200}, 1080, 2400, 1080, 2400, 540, 1200, 1080, 2400},
		{"portrait, max_size 1200", sdk.Point{X: 1079, Y: 2399}, 1080, 2400, 544, 1200, 543, 1199, 1080, 2400},
		{"landscape, full size", sdk.Point{X: 2000, Y: 1000}, 1080, 2400, 2400, 1080, 2000, 1000, 2400, 1080},
		{"landscape, max_size 1200", sdk.Point{X: 2000, Y: 1000}, 1080, 2400, 1200, 544, 1000, 503, 2400, 1080},
		{"upside down keeps the size", sdk.Point{X: 100, Y: 200}, 1080, 2400, 1080, 2400, 100, 200, 1080, 2400},
		{"a tablet, natural landscape, turned portrait", sdk.Point{X: 800, Y: 1200}, 2560, 1600, 800, 1280, 400, 600, 1600, 2560},
		{"an iPhone-sized screen landscape", sdk.Point{X: 2555, Y: 0}, 1179, 2556, 1280, 590, 1279, 0, 2556, 1179},
		{"no video yet", sdk.Point{X: 7, Y: 9}, 1080, 2400, 0, 0, 7, 9, 1080, 2400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if sw, sh := turned(tt.natW, tt.natH, tt.videoW, tt.videoH); sw != tt.wantSW || sh != tt.wantSH {
				t.Errorf("turned: got %dx%d; want %dx%d", sw, sh, tt.wantSW, tt.wantSH)
			}
			if x, y := toVideo(tt.p, tt.natW, tt.natH, tt.videoW, tt.videoH); x != tt.wantX || y != tt.wantY {
				t.Errorf("toVideo(%v): got (%d,%d); want (%d,%d)", tt.p, x, y, tt.wantX, tt.wantY)
			}
		})
	}
}
