package render

import (
	"image"
	"image/color"
	"testing"
)

func TestDraw(t *testing.T) {
	red := color.RGBA{200, 0, 0, 255}
	img := Draw(100, 50, color.RGBA{0, 0, 0, 255}, []Box{
		{Rect: image.Rect(10, 10, 90, 40), Fill: red, Stroke: color.RGBA{0, 0, 255, 255}, Text: "Hi", Ink: color.RGBA{255, 255, 255, 255}, Size: 14},
		{Rect: image.Rect(-10, -10, 5, 5), Fill: red}, // clipped, must not panic
	})
	tests := []struct {
		x, y int
		want color.RGBA
	}{
		{0, 49, color.RGBA{0, 0, 0, 255}},
		{85, 35, red},
		{10, 10, color.RGBA{0, 0, 255, 255}},
		{2, 2, red},
	}
	for _, tt := range tests {
		if got := img.RGBAAt(tt.x, tt.y); got != tt.want {
			t.Errorf("pixel (%d,%d): got %v; want %v", tt.x, tt.y, got, tt.want)
		}
	}
	var inked bool
	for y := 10; y < 40; y++ {
		for x := 10; x < 90; x++ {
			if c := img.RGBAAt(x, y); c.R > 220 && c.G > 200 {
				inked = true
			}
		}
	}
	if !inked {
		t.Error("text: got no white pixels; want the text drawn")
	}
}
