package ios

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"math"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/still"
)

// Screen implements sdk.Driver: WDA's page source, the app in front and the
// lock state, read at once, with every rectangle in pixels.
func (d *Driver) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	p, err := d.phone(deviceID)
	if err != nil {
		return nil, err
	}
	if displayID != 0 {
		return nil, sdk.Invalid("display %d: an iPhone has display 0 only", displayID)
	}
	var (
		wg             sync.WaitGroup
		src            []byte
		srcErr, appErr error
		locked         bool
		lockErr        error
		app            struct{ id, name string }
	)
	wg.Go(func() { src, srcErr = p.source(ctx, d.cfg.StockWDA) })
	wg.Go(func() {
		a, err := p.wda.ActiveApp(ctx)
		app.id, app.name, appErr = a.BundleID, a.Name, err
	})
	wg.Go(func() { locked, lockErr = p.wda.Locked(ctx) })
	scale, serr := p.pixels(ctx)
	wg.Wait()
	for _, err := range []error{srcErr, appErr, lockErr, serr} {
		if err != nil {
			return nil, mapErr(deviceID, err)
		}
	}
	s, err := dump.ParseWDA(src)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: %v", deviceID, err)
	}
	scaleScreen(s, scale)
	s.App.ID = app.id
	if app.name != "" {
		s.App.Label = app.name
	}
	s.LockState, s.ScreenOn = sdk.LockUnlocked, true
	p.mu.Lock()
	if app.id != "" && s.App.Label != "" {
		p.names[app.id] = s.App.Label
	}
	p.shown = [2]int{s.Width, s.Height}
	if locked {
		s.LockState, s.ScreenOn = sdk.LockLocked, p.woken
	}
	p.mu.Unlock()
	s.DensityDPI = int(math.Round(160 * scale))
	s.CapturedAt = time.Now()
	return s, nil
}

// pixels returns the phone's scale (pixels per point), reading it once.
func (p *phone) pixels(ctx context.Context) (float64, error) {
	p.mu.Lock()
	scale := p.scale
	p.mu.Unlock()
	if scale > 0 {
		return scale, nil
	}
	si, err := p.wda.Screen(ctx)
	if err != nil {
		return 0, err
	}
	if si.Scale <= 0 || si.Scale > 10 {
		return 0, sdk.Errorf(sdk.ErrInternal, "WebDriverAgent reports a scale of %v", si.Scale)
	}
	p.mu.Lock()
	p.scale, p.size = si.Scale, [2]float64{si.Width, si.Height}
	p.mu.Unlock()
	return si.Scale, nil
}

// scaleScreen turns a screen in points into pixels.
func scaleScreen(s *sdk.Screen, scale float64) {
	px := func(v int) int { return int(math.Round(float64(v) * scale)) }
	s.Width, s.Height = px(s.Width), px(s.Height)
	for i := range s.Elements {
		b := &s.Elements[i].Bounds
		b.Left, b.Top, b.Right, b.Bottom = px(b.Left), px(b.Top), px(b.Right), px(b.Bottom)
	}
}

// Screenshot implements sdk.Driver: from the broadcast when one runs, else
// WDA's MJPEG stream, else WDA's /screenshot.
func (d *Driver) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	p, err := d.phone(req.DeviceID)
	if err != nil {
		return nil, err
	}
	if err := checkShot(req); err != nil {
		return nil, err
	}
	if p.rx != nil && p.rx.Live() {
		if img, err := d.still(ctx, p, req, sdk.FormatPNG); err == nil {
			return img, nil
		}
	}
	if addr := p.cfg.MJPEGAddr(); addr != "" {
		mctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		data, err := wda.OneMJPEGFrame(mctx, addr)
		cancel()
		if err == nil {
			if img, err := reencode(data, jpeg.Decode, req); err == nil {
				return img, nil
			}
		}
	}
	data, err := p.wda.Screenshot(ctx)
	if err != nil {
		return nil, mapErr(req.DeviceID, err)
	}
	img, err := reencode(data, png.Decode, req)
	if err != nil {
		return nil, sdk.Errorf(sdk.ErrInternal, "%s: /screenshot gave no PNG: %v", req.DeviceID, err)
	}
	return img, nil
}

// CaptureFrame implements sdk.FrameCapturer: a still from the broadcast,
// made on the phone from its latest frame. A phone serves it only while its
// broadcast is connected (its device says so, caps.go); otherwise it is
// ErrUnsupported with the reason and the fix, and the gateway takes a
// Screenshot instead.
func (d *Driver) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	p, err := d.phone(req.DeviceID)
	if err != nil {
		return nil, err
	}
	if err := checkShot(req); err != nil {
		return nil, err
	}
	if err := p.lacks(sdk.CapFrameCapture); err != nil {
		return nil, err
	}
	return d.still(ctx, p, req, sdk.FormatJPEG)
}

// still asks the broadcast for a JPEG of its latest frame, and re-encodes
// it when req asks for another format (def when req names none).
func (d *Driver) still(ctx context.Context, p *phone, req sdk.ScreenshotRequest, def sdk.ImageFormat) (*sdk.Image, error) {
	if req.Format == "" {
		req.Format = def
	}
	q := req.Quality
	if q == 0 {
		q = still.DefaultQuality
	}
	data, err := p.rx.Still(ctx, req.MaxSide, q)
	if err != nil {
		return nil, mapErr(req.DeviceID, err)
	}
	if req.Format == sdk.FormatJPEG {
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			return nil, sdk.Errorf(sdk.ErrInternal, "%s: the broadcast's still is no JPEG: %v", req.DeviceID, err)
		}
		return &sdk.Image{Format: sdk.FormatJPEG, Width: cfg.Width, Height: cfg.Height, Data: data}, nil
	}
	return reencode(data, jpeg.Decode, req)
}

func checkShot(req sdk.ScreenshotRequest) error {
	if req.DisplayID != 0 {
		return sdk.Invalid("display %d: an iPhone has display 0 only", req.DisplayID)
	}
	if req.MaxSide < 0 || req.Quality < 0 || req.Quality > 100 {
		return sdk.Invalid("max side %d, quality %d", req.MaxSide, req.Quality)
	}
	return nil
}

// reencode decodes data and encodes it as req asks.
func reencode(data []byte, decode func(io.Reader) (image.Image, error), req sdk.ScreenshotRequest) (*sdk.Image, error) {
	img, err := decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return still.Encode(img, req)
}
