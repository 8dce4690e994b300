package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"os"
	"path/filepath"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// cardShot takes the screenshot of an approval card in the background:
// secrets covered, the target outlined in red, saved as
// <media>/<task>/approval-<id>.jpg with a media row "approval-<id>", whose
// id is set on the card.
func (s *Session) cardShot(tk *task, id string, target *screen.Node) {
	m := s.m
	if m.cfg.MediaDir == "" || m.cfg.Approvals == nil {
		return
	}
	go func() {
		drv, _, err := m.cfg.Drivers.DriverForDevice(tk.device)
		if err != nil {
			return
		}
		p := m.phone(tk.device)
		m.mu.Lock()
		blocked := p.blocked
		m.mu.Unlock()
		if blocked {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		img, err := m.still(ctx, p, drv, sdk.ScreenshotRequest{DeviceID: tk.device, DisplayID: tk.display, Format: sdk.FormatJPEG, MaxSide: 960, Quality: 80})
		if err != nil {
			m.log.Debug("approval screenshot", "device", tk.device, "err", err)
			return
		}
		data, err := s.cover(p, img)
		if err == nil && target != nil {
			m.mu.Lock()
			size := p.boxSize
			m.mu.Unlock()
			data, err = outline(data, size, target.Bounds)
		}
		if err != nil {
			m.log.Error("approval screenshot: not saved", "approval", id, "err", err)
			return
		}
		rel := filepath.ToSlash(filepath.Join(tk.id, "approval-"+id+".jpg"))
		full := filepath.Join(m.cfg.MediaDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			m.log.Error("approval screenshot: not saved", "approval", id, "err", err)
			return
		}
		if err := os.WriteFile(full, data, 0o600); err != nil {
			m.log.Error("approval screenshot: not saved", "approval", id, "err", err)
			return
		}
		// The picture is a media row of the task, as a step's are: the
		// console, the history and the export find it by its id.
		media := history.Media{ID: history.ApprovalMediaID(id), TaskID: tk.id, Kind: history.KindApproval, Path: rel,
			Width: img.Width, Height: img.Height, Bytes: int64(len(data)), CreatedAt: time.Now()}
		if err := m.cfg.Store.AddMedia(ctx, media); err != nil && !errors.Is(err, history.ErrExists) {
			os.Remove(full)
			m.log.Error("approval screenshot: not recorded", "approval", id, "err", err)
			return
		}
		m.cfg.Approvals.SetScreenshot(id, media.ID, rel)
	}()
}

// outline draws a red frame around r (screen pixels of a screen of size
// screen) on a JPEG.
func outline(data []byte, size sdk.Point, r sdk.Rect) ([]byte, error) {
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decoding the screenshot: %w", err)
	}
	b := src.Bounds()
	img := image.NewRGBA(b)
	draw.Draw(img, b, src, b.Min, draw.Src)
	if size.X > 0 && size.Y > 0 {
		sx, sy := float64(b.Dx())/float64(size.X), float64(b.Dy())/float64(size.Y)
		box := image.Rect(int(float64(r.Left)*sx), int(float64(r.Top)*sy), int(float64(r.Right)*sx), int(float64(r.Bottom)*sy)).Inset(-4)
		red := image.NewUniform(color.RGBA{R: 230, G: 30, B: 30, A: 255})
		const w = 5
		for _, side := range []image.Rectangle{
			image.Rect(box.Min.X, box.Min.Y, box.Max.X, box.Min.Y+w), image.Rect(box.Min.X, box.Max.Y-w, box.Max.X, box.Max.Y),
			image.Rect(box.Min.X, box.Min.Y, box.Min.X+w, box.Max.Y), image.Rect(box.Max.X-w, box.Min.Y, box.Max.X, box.Max.Y),
		} {
			draw.Draw(img, side.Intersect(b), red, image.Point{}, draw.Src)
		}
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, img, &jpeg.Options{Quality: 80}); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
