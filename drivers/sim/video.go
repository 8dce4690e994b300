package sim

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
	"github.com/pinky-gateway/pinky/drivers/sim/render"
)

// Video timing: the screen is looked at up to ten times a second, and a key
// frame goes out at least every five seconds.
const (
	videoPoll     = 100 * time.Millisecond
	videoKeyEvery = 5 * time.Second
)

// videoStreams holds the running stream of each phone (one display each).
var videoStreams = struct {
	sync.Mutex
	m map[*phone]chan struct{} // a key frame request, buffered 1
}{m: map[*phone]chan struct{}{}}

// StreamVideo streams the phone's rendered screen as H.264: a config packet,
// an IDR frame, then a frame whenever the screen changes and a key frame at
// least every 5 s or when asked. A second stream of the same phone is BUSY.
func (d *Driver) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	var p *phone
	err := d.with(ctx, "stream_video", req.DeviceID, "", func(ph *phone) error {
		switch {
		case req.DisplayID != 0:
			return sdk.Invalid("display %d: this phone has only display 0", req.DisplayID)
		case req.MaxSide < 0:
			return sdk.Invalid("max side %d: want 0 or more", req.MaxSide)
		case req.MaxFPS < 0:
			return sdk.Invalid("max fps %d: want 0 or more", req.MaxFPS)
		}
		p = ph
		return nil
	})
	if err != nil {
		return err
	}
	keyReq := make(chan struct{}, 1)
	videoStreams.Lock()
	if _, busy := videoStreams.m[p]; busy {
		videoStreams.Unlock()
		return fmt.Errorf("device %q display 0: a video stream is already running: %w", req.DeviceID, sdk.ErrBusy)
	}
	videoStreams.m[p] = keyReq
	videoStreams.Unlock()
	defer func() {
		videoStreams.Lock()
		delete(videoStreams.m, p)
		videoStreams.Unlock()
	}()

	poll := videoPoll
	if req.MaxFPS > 0 {
		poll = max(poll, time.Second/time.Duration(req.MaxFPS))
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	start := time.Now()
	var (
		enc       *h264.Encoder
		lastBoxes []render.Box
		lastKey   time.Time
		wantKey   bool
	)
	for {
		boxes, w, h, err := p.videoFrame(req.DeviceID, req.MaxSide)
		if err != nil {
			return err
		}
		pts := time.Since(start).Truncate(time.Microsecond)
		if enc != nil {
			if ew, eh := enc.Size(); ew != w || eh != h {
				enc = nil // a new size (rotation): new parameter sets, then a key frame
			}
		}
		if enc == nil {
			if enc, err = h264.NewEncoder(w, h); err != nil {
				return fmt.Errorf("device %q: %w", req.DeviceID, err)
			}
			lastBoxes = nil
			pkt := sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, PTS: pts, Width: w, Height: h, Data: enc.Config()}
			if err := send(pkt); err != nil {
				return err
			}
			wantKey = true
		}
		key := wantKey || time.Since(lastKey) >= videoKeyEvery
		// Drawing the same boxes gives the same picture: skip the work.
		if key || lastBoxes == nil || !slices.Equal(boxes, lastBoxes) {
			img := render.Draw(w, h, black, boxes)
			f, err := enc.Encode(img, key)
			if err != nil {
				return fmt.Errorf("device %q: %w", req.DeviceID, err)
			}
			lastBoxes = boxes
			if f.Data != nil {
				pkt := sdk.VideoPacket{Codec: sdk.CodecH264, KeyFrame: f.Key, PTS: pts, Width: w, Height: h, Data: f.Data}
				if err := send(pkt); err != nil {
					return err
				}
				if f.Key {
					wantKey, lastKey = false, time.Now()
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-keyReq:
			wantKey = true
		case <-tick.C:
		}
	}
}

// videoFrame returns what to draw for the next video frame at the stream's
// size; an absent or offline phone ends the stream.
func (p *phone) videoFrame(id string, maxSide int) ([]render.Box, int, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case !p.present || p.closed:
		return nil, 0, 0, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
	case !p.online:
		return nil, 0, 0, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
	}
	sw, sh := p.spec.Width, p.spec.Height
	w, h := h264.FitSize(sw, sh, maxSide)
	// Scale each axis on its own: rounding to even sizes may change the ratio slightly.
	f := min(float64(w)/float64(sw), float64(h)/float64(sh))
	if w == sw && h == sh {
		f = 1
	}
	return p.boxes(p.view(), f), w, h, nil
}

// RequestKeyFrame asks the phone's running stream for a key frame; without
// one it does nothing.
func (d *Driver) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	return d.with(ctx, "request_key_frame", deviceID, "", func(p *phone) error {
		if displayID != 0 {
			return sdk.Invalid("display %d: this phone has only display 0", displayID)
		}
		videoStreams.Lock()
		defer videoStreams.Unlock()
		if c := videoStreams.m[p]; c != nil {
			select {
			case c <- struct{}{}:
			default:
			}
		}
		return nil
	})
}
