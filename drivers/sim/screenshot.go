package sim

import (
	"context"
	"fmt"
	"image"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/render"
	"github.com/pinky-gateway/pinky/drivers/still"
)

// Screenshot draws a display from its element tree, as PNG or JPEG.
func (d *Driver) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	var boxes []render.Box
	var w, h int
	var f float64
	var blanked bool
	err := d.withDisplay(ctx, "screenshot", req.DeviceID, req.DisplayID, "", func(ds *display) error {
		switch {
		case req.MaxSide < 0:
			return sdk.Invalid("max side %d: want 0 or more", req.MaxSide)
		case req.Quality < 0 || req.Quality > 100:
			return sdk.Invalid("quality %d: want 0 to 100", req.Quality)
		case req.Format != "" && req.Format != sdk.FormatPNG && req.Format != sdk.FormatJPEG:
			return sdk.Invalid("format %q: want png or jpeg", req.Format)
		}
		w, h, f = ds.width, ds.height, 1
		if long := max(w, h); req.MaxSide > 0 && long > req.MaxSide {
			f = float64(req.MaxSide) / float64(long)
			w, h = max(1, int(float64(w)*f+0.5)), max(1, int(float64(h)*f+0.5))
		}
		v := ds.view()
		boxes, blanked = ds.boxes(v, f), ds.blanked(v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Drawing and encoding happen outside the phone's lock, once for the
	// same picture (shotcache.go).
	req.MaxSide = 0 // drawn at its size already
	img, err := d.shots.get(shotKey(w, h, req, boxes), func() (*sdk.Image, error) {
		out, err := still.Encode(render.Draw(w, h, black, boxes), req)
		if err != nil {
			return nil, fmt.Errorf("device %q: encode screenshot: %w", req.DeviceID, err)
		}
		return out, nil
	})
	if err != nil || !blanked {
		return img, err
	}
	// The cache shares its images: the flag goes on a copy.
	out := *img
	out.Blanked = true
	return &out, nil
}

// boxes turns a view into what to draw, scaled by f.
func (ds *display) boxes(v *view, f float64) []render.Box {
	scale := func(r sdk.Rect) image.Rectangle {
		return image.Rect(int(float64(r.Left)*f), int(float64(r.Top)*f), int(float64(r.Right)*f), int(float64(r.Bottom)*f))
	}
	size := max(6, int(float64(ds.px(15))*f))
	var out []render.Box
	for _, l := range v.layers {
		if l.secure {
			out = append(out, render.Box{Rect: scale(l.area), Fill: secureFill})
			continue
		}
		for _, n := range l.nodes {
			if !n.el.Visible {
				continue
			}
			b := render.Box{Rect: scale(n.el.Bounds), Fill: n.fill, Ink: n.ink, Bold: n.bold, Size: size}
			b.Text = n.el.Text
			if b.Text == "" && n.el.Editable {
				b.Text, b.Ink = n.el.Hint, grey
			}
			if b.Text == "" && (n.el.Clickable || n.el.Class == ds.class("progress", PerPlatform{})) {
				b.Text = n.el.ContentDescription
			}
			if n.el.Clickable || n.el.Editable {
				b.Stroke = grey
				b.Center = !n.el.Editable && n.el.Class != ds.class("item", PerPlatform{})
			}
			if n.el.Checkable {
				b.Text += map[bool]string{true: "  [on]", false: "  [off]"}[n.el.Checked]
			}
			out = append(out, b)
		}
	}
	return out
}
