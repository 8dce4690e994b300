package marks

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		area       sdk.Rect
		w, h, dpi  int
		cols, rows int
	}{
		// 48 dp at 420 dpi is 126 px: 1080/126 = 8.6 and 2337/126 = 18.5.
		{"Pixel 8", sdk.Rect{Top: 63, Right: 1080, Bottom: 2400}, 1080, 2400, 420, 9, 19},
		// 48 dp at 460 dpi is 138 px: 1179/138 = 8.5 and 2487/138 = 18.0.
		{"iPhone 15 Pro", sdk.Rect{Top: 69, Right: 1179, Bottom: 2556}, 1179, 2556, 460, 9, 18},
		{"no density is 160 dpi", sdk.Rect{Right: 480, Bottom: 480}, 480, 480, 0, 10, 10},
		{"a strip smaller than a cell", sdk.Rect{Right: 20, Bottom: 20}, 20, 20, 160, 1, 1},
		{"a huge display gets larger cells", sdk.Rect{Right: 4800, Bottom: 4800}, 4800, 4800, 160, 17, 17},
		{"no area", sdk.Rect{}, 100, 100, 160, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(tt.area, tt.w, tt.h, tt.dpi)
			if g.Cols != tt.cols || g.Rows != tt.rows || g.Len() > MaxMarks {
				t.Errorf("got %dx%d; want %dx%d (at most %d)", g.Cols, g.Rows, tt.cols, tt.rows, MaxMarks)
			}
		})
	}
}

// The cells tile the area exactly, numbered row by row from the top left.
func TestCells(t *testing.T) {
	g := Grid{Area: sdk.Rect{Left: 0, Top: 100, Right: 1000, Bottom: 1100}, Cols: 3, Rows: 2, Width: 1000, Height: 1100}
	tests := []struct {
		n      int
		cell   sdk.Rect
		center sdk.Point
		ok     bool
	}{
		{1, sdk.Rect{Left: 0, Top: 100, Right: 333, Bottom: 600}, sdk.Point{X: 166, Y: 350}, true},
		{2, sdk.Rect{Left: 333, Top: 100, Right: 666, Bottom: 600}, sdk.Point{X: 499, Y: 350}, true},
		{3, sdk.Rect{Left: 666, Top: 100, Right: 1000, Bottom: 600}, sdk.Point{X: 833, Y: 350}, true},
		{4, sdk.Rect{Left: 0, Top: 600, Right: 333, Bottom: 1100}, sdk.Point{X: 166, Y: 850}, true},
		{6, sdk.Rect{Left: 666, Top: 600, Right: 1000, Bottom: 1100}, sdk.Point{X: 833, Y: 850}, true},
		{0, sdk.Rect{}, sdk.Point{}, false},
		{7, sdk.Rect{}, sdk.Point{}, false},
		{-1, sdk.Rect{}, sdk.Point{}, false},
	}
	for _, tt := range tests {
		cell, ok := g.Cell(tt.n)
		center, _ := g.Center(tt.n)
		if cell != tt.cell || ok != tt.ok || (ok && center != tt.center) {
			t.Errorf("mark %d: got %+v %v centre %+v; want %+v %v centre %+v", tt.n, cell, ok, center, tt.cell, tt.ok, tt.center)
		}
	}
	// Every pixel of the area is in exactly one cell.
	area := 0
	for n := 1; n <= g.Len(); n++ {
		c, _ := g.Cell(n)
		area += c.Width() * c.Height()
	}
	if want := g.Area.Width() * g.Area.Height(); area != want {
		t.Errorf("the cells cover %d px²; want %d", area, want)
	}
}

func TestNote(t *testing.T) {
	g := Grid{Area: sdk.Rect{Right: 90, Bottom: 40}, Cols: 9, Rows: 4, Width: 90, Height: 40}
	for _, bare := range []bool{true, false} {
		note := g.Note(bare)
		for _, want := range []string{"36 numbered marks", "9 columns by 4 rows", "from 1 at the top left, row by row, left to right", "phone_tap mark=N"} {
			if !strings.Contains(note, want) {
				t.Errorf("bare %v: %q does not say %q", bare, note, want)
			}
		}
		if strings.Contains(note, "almost no elements") != bare {
			t.Errorf("bare %v: %q", bare, note)
		}
	}
}

// Draw draws each mark's number in its cell: on a plain white picture the
// top-left corner of every cell holds dark label pixels, and the middle of
// a cell stays white.
func TestDraw(t *testing.T) {
	const w, h = 1080, 2400
	g := New(sdk.Rect{Top: 63, Right: w, Bottom: h}, w, h, 420)
	// The screenshot is smaller than the screen, as phone_observe's is.
	pic := image.NewRGBA(image.Rect(0, 0, 576, 1280))
	for i := range pic.Pix {
		pic.Pix[i] = 255
	}
	var in bytes.Buffer
	if err := jpeg.Encode(&in, pic, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	out, err := Draw(in.Bytes(), g, 90)
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds() != pic.Bounds() {
		t.Fatalf("size: got %v; want %v", img.Bounds(), pic.Bounds())
	}
	dark := func(r image.Rectangle) int {
		n := 0
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				if luma(img.At(x, y)) < 100 {
					n++
				}
			}
		}
		return n
	}
	for _, n := range []int{1, 2, 10, g.Len() / 2, g.Len()} {
		c := g.Scaled(n, img.Bounds())
		label := image.Rect(c.Min.X+2, c.Min.Y+2, c.Min.X+c.Dx()*3/4, c.Min.Y+c.Dy()/2)
		if got, all := dark(label), label.Dx()*label.Dy(); got < 15 || got > all/2 {
			t.Errorf("mark %d: %d of %d pixels dark where its number goes (%v); want dark digits on a light plate", n, got, all, label)
		}
		middle := image.Rect(c.Min.X+c.Dx()/2, c.Min.Y+c.Dy()*2/3, c.Max.X-4, c.Max.Y-4)
		if got := dark(middle); got != 0 {
			t.Errorf("mark %d: %d dark pixels in the cell's lower right; want the picture", n, got)
		}
	}
	// More digits draw more: mark 100's label has more ink than mark 1's.
	if g.Len() >= 100 {
		one, hundred := g.Scaled(1, img.Bounds()), g.Scaled(100, img.Bounds())
		if dark(hundred) <= dark(one) {
			t.Errorf("mark 100 has %d dark pixels, mark 1 %d; want more for three digits", dark(hundred), dark(one))
		}
	}
}

func luma(c color.Color) int {
	r, g, b, _ := c.RGBA()
	return int((299*r + 587*g + 114*b) / 1000 >> 8)
}
