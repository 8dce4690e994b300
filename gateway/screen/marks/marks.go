// Package marks lays a grid of numbered cells over a screen that has no
// useful element tree (screen.View.Bare) and draws it on a screenshot, so
// that an agent can name a place by its mark ("tap mark 23") instead of
// guessing pixel coordinates from a picture.
//
// The cells are about CellDP density-independent pixels on a side, the
// size of a fingertip, and tile the screen's content area exactly (the
// last column and row take what rounding leaves). Marks are numbered from
// 1 at the top left, row by row, left to right. A Grid is plain geometry
// in screen pixels: the gateway keeps the one it showed with the task's
// last read, and turns a mark into the centre of its cell.
package marks

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"strconv"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// CellDP is a cell's side in density-independent pixels.
const CellDP = 48

// MaxMarks bounds the marks of one grid; a huge display gets larger cells.
const MaxMarks = 400

// Grid is a grid of numbered cells over Area, a part of a Width x Height
// screen, in screen pixels.
type Grid struct {
	Area          sdk.Rect
	Cols, Rows    int
	Width, Height int // the screen's size
}

// New lays a grid over area of a width x height screen of density dpi (160
// when 0): as many columns and rows of about CellDP as fit, at most
// MaxMarks cells.
func New(area sdk.Rect, width, height, dpi int) Grid {
	if dpi <= 0 {
		dpi = 160
	}
	cell := max(1, (CellDP*dpi+80)/160)
	g := Grid{Area: area, Width: width, Height: height}
	if area.Width() <= 0 || area.Height() <= 0 {
		return g
	}
	for {
		g.Cols = max(1, (area.Width()+cell/2)/cell)
		g.Rows = max(1, (area.Height()+cell/2)/cell)
		if g.Cols*g.Rows <= MaxMarks {
			return g
		}
		cell += cell / 4
	}
}

// Len is the number of marks, 0 for an empty grid.
func (g Grid) Len() int { return g.Cols * g.Rows }

// Cell is mark n's cell in screen pixels; false when the grid has no mark
// n.
func (g Grid) Cell(n int) (sdk.Rect, bool) {
	if n < 1 || n > g.Len() {
		return sdk.Rect{}, false
	}
	i := n - 1
	col, row := i%g.Cols, i/g.Cols
	w, h := g.Area.Width(), g.Area.Height()
	return sdk.Rect{
		Left: g.Area.Left + col*w/g.Cols, Right: g.Area.Left + (col+1)*w/g.Cols,
		Top: g.Area.Top + row*h/g.Rows, Bottom: g.Area.Top + (row+1)*h/g.Rows,
	}, true
}

// Center is the middle of mark n's cell, where a tap on it lands.
func (g Grid) Center(n int) (sdk.Point, bool) {
	r, ok := g.Cell(n)
	return r.Center(), ok
}

// Note is the one sentence that tells an agent what the marks are and
// how to use them; bare says that the screen has no useful tree.
func (g Grid) Note(bare bool) string {
	lead := "The screenshot carries"
	if bare {
		lead = "This screen has almost no elements the phone can name (an app that draws itself: a game, a canvas, a web view), so the screenshot carries"
	}
	return fmt.Sprintf("%s a grid of %d numbered marks (%d columns by %d rows, numbered from 1 at the top left, row by row, left to right): "+
		"tap a place with phone_tap mark=N, which taps its cell's centre, rather than at x,y guessed from the picture.",
		lead, g.Len(), g.Cols, g.Rows)
}

// Colours of the grid: dark lines and labels on a light plate, legible on
// any picture.
var (
	lineInk  = color.RGBA{R: 230, G: 30, B: 120, A: 255}
	plate    = color.NRGBA{R: 255, G: 255, B: 255, A: 230}
	labelInk = color.RGBA{R: 20, G: 20, B: 20, A: 255}
)

// Draw draws the grid on a JPEG screenshot of the grid's screen (of any
// size: the grid is scaled to it) and returns the new JPEG: a line around
// each cell and its number on a light plate in its top-left corner.
func Draw(data []byte, g Grid, quality int) ([]byte, error) {
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	img := image.NewRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	if err := drawOn(img, g); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: quality}); err != nil {
		return nil, fmt.Errorf("encoding the screenshot: %w", err)
	}
	return out.Bytes(), nil
}

// Scaled is mark n's cell on an image of img's size, the screen's picture.
func (g Grid) Scaled(n int, img image.Rectangle) image.Rectangle {
	r, ok := g.Cell(n)
	if !ok || g.Width <= 0 || g.Height <= 0 {
		return image.Rectangle{}
	}
	sx, sy := float64(img.Dx())/float64(g.Width), float64(img.Dy())/float64(g.Height)
	return image.Rect(img.Min.X+int(float64(r.Left)*sx), img.Min.Y+int(float64(r.Top)*sy),
		img.Min.X+int(float64(r.Right)*sx), img.Min.Y+int(float64(r.Bottom)*sy))
}

// drawOn draws the grid on img.
func drawOn(img *image.RGBA, g Grid) error {
	if g.Len() == 0 {
		return nil
	}
	first := g.Scaled(1, img.Bounds())
	// The label's height: a third of the cell, legible at any scale.
	size := max(9, min(first.Dx(), first.Dy())/3)
	face, err := faceOf(size)
	if err != nil {
		return err
	}
	defer face.Close()
	line := image.NewUniform(lineInk)
	for n := 1; n <= g.Len(); n++ {
		c := g.Scaled(n, img.Bounds())
		// The right and bottom edges are the next cells' left and top.
		draw.Draw(img, image.Rect(c.Min.X, c.Min.Y, c.Max.X, c.Min.Y+1), line, image.Point{}, draw.Src)
		draw.Draw(img, image.Rect(c.Min.X, c.Min.Y, c.Min.X+1, c.Max.Y), line, image.Point{}, draw.Src)
		label := strconv.Itoa(n)
		w := font.MeasureString(face, label).Ceil()
		m := face.Metrics()
		h := (m.Ascent + m.Descent).Ceil()
		pl := image.Rect(c.Min.X+1, c.Min.Y+1, c.Min.X+1+w+4, c.Min.Y+1+h+2).Intersect(c)
		draw.Draw(img, pl, image.NewUniform(plate), image.Point{}, draw.Over)
		d := font.Drawer{Dst: img, Src: image.NewUniform(labelInk), Face: face,
			Dot: fixed.P(pl.Min.X+2, pl.Min.Y+1+m.Ascent.Ceil())}
		d.DrawString(label)
	}
	return nil
}

var (
	fontOnce sync.Once
	boldFont *opentype.Font
	fontErr  error
)

// faceOf is the bold Go font at size pixels. A face is not safe for
// concurrent use, so each drawing makes its own; the parsed font is shared.
func faceOf(size int) (font.Face, error) {
	fontOnce.Do(func() { boldFont, fontErr = opentype.Parse(gobold.TTF) })
	if fontErr != nil {
		return nil, fontErr
	}
	return opentype.NewFace(boldFont, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingFull})
}
