package still

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestEncode(t *testing.T) {
	src := image.NewRGBA(image.Rect(0, 0, 300, 600))
	for y := 0; y < 600; y++ {
		for x := 0; x < 300; x++ {
			src.Set(x, y, color.RGBA{uint8(x), uint8(y), 0, 255})
		}
	}
	tests := []struct {
		name   string
		req    sdk.ScreenshotRequest
		format sdk.ImageFormat
		w, h   int
	}{
		{"png as is", sdk.ScreenshotRequest{}, sdk.FormatPNG, 300, 600},
		{"png scaled", sdk.ScreenshotRequest{MaxSide: 100}, sdk.FormatPNG, 50, 100},
		{"jpeg default quality", sdk.ScreenshotRequest{Format: sdk.FormatJPEG}, sdk.FormatJPEG, 300, 600},
		{"jpeg scaled", sdk.ScreenshotRequest{Format: sdk.FormatJPEG, MaxSide: 60, Quality: 30}, sdk.FormatJPEG, 30, 60},
		{"larger max side keeps size", sdk.ScreenshotRequest{MaxSide: 1000}, sdk.FormatPNG, 300, 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			img, err := Encode(src, tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if img.Format != tt.format || img.Width != tt.w || img.Height != tt.h {
				t.Errorf("got %s %dx%d; want %s %dx%d", img.Format, img.Width, img.Height, tt.format, tt.w, tt.h)
			}
			decode := png.DecodeConfig
			if tt.format == sdk.FormatJPEG {
				decode = jpeg.DecodeConfig
			}
			cfg, err := decode(bytes.NewReader(img.Data))
			if err != nil {
				t.Fatalf("data is no %s: %v", tt.format, err)
			}
			if cfg.Width != tt.w || cfg.Height != tt.h {
				t.Errorf("encoded %dx%d; want %dx%d", cfg.Width, cfg.Height, tt.w, tt.h)
			}
		})
	}
	if _, err := Encode(src, sdk.ScreenshotRequest{Format: "gif"}); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("gif: %v; want ErrInvalidArgument", err)
	}
}

func TestFitLandscape(t *testing.T) {
	got := Fit(image.NewRGBA(image.Rect(0, 0, 800, 200)), 400).Bounds()
	if got.Dx() != 400 || got.Dy() != 100 {
		t.Errorf("got %v; want 400x100", got)
	}
}
