package sim

import (
	"context"
	"fmt"
	"slices"
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

// StreamVideo streams a display's rendered screen as H.264: a config
// packet, an IDR frame, then a frame whenever the screen changes and a key
// frame at least every 5 s or when asked. A second stream of the same
// display is BUSY; removing the display ends its stream.
func (d *Driver) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	return d.StreamVideoKeyEvery(ctx, req, videoKeyEvery, send)
}

// StreamVideoKeyEvery is StreamVideo with a key frame at least every
// keyEvery instead of every 5 s, for a face that copies a real encoder's
// interval (scrcpy's is 10 s).
func (d *Driver) StreamVideoKeyEvery(ctx context.Context, req sdk.VideoRequest, keyEvery time.Duration, send func(sdk.VideoPacket) error) error {
	fit := func(w, h int) (int, int) { return h264.FitSize(w, h, req.MaxSide) }
	return d.streamVideo(ctx, req, keyEvery, true, fit, send)
}

// StreamVideoFit is StreamVideoKeyEvery with the video's size chosen by fit
// from the display's current size instead of by req.MaxSide, for a face that
// sizes its video as a real encoder does (scrcpy's alignment). fit is asked
// for every frame, so a rotation gives a new size; it must return even sizes.
// As a surface encoder (MediaCodec gets no input while the screen stands
// still), it sends nothing on a still screen: keyEvery makes a key frame
// of the first change after it, not a frame of its own.
func (d *Driver) StreamVideoFit(ctx context.Context, req sdk.VideoRequest, keyEvery time.Duration, fit func(w, h int) (int, int), send func(sdk.VideoPacket) error) error {
	return d.streamVideo(ctx, req, keyEvery, false, fit, send)
}

// streamVideo is the stream: with periodic, a key frame every keyEvery
// even on a still screen; without, only frames of changes.
func (d *Driver) streamVideo(ctx context.Context, req sdk.VideoRequest, keyEvery time.Duration, periodic bool, fit func(w, h int) (int, int), send func(sdk.VideoPacket) error) error {
	var ds *display
	keyReq := make(chan struct{}, 1)
	err := d.withDisplay(ctx, "stream_video", req.DeviceID, req.DisplayID, "", func(s *display) error {
		switch {
		case req.MaxSide < 0:
			return sdk.Invalid("max side %d: want 0 or more", req.MaxSide)
		case req.MaxFPS < 0:
			return sdk.Invalid("max fps %d: want 0 or more", req.MaxFPS)
		case s.video != nil:
			return fmt.Errorf("device %q display %d: a video stream is already running: %w", req.DeviceID, req.DisplayID, sdk.ErrBusy)
		}
		ds, s.video = s, keyReq
		return nil
	})
	if err != nil {
		return err
	}
	defer func() {
		ds.mu.Lock()
		defer ds.mu.Unlock()
		if ds.video == keyReq {
			ds.video = nil
		}
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
		boxes, w, h, err := ds.videoFrame(fit)
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
		changed := lastBoxes == nil || !slices.Equal(boxes, lastBoxes)
		key := wantKey || (periodic || changed) && time.Since(lastKey) >= keyEvery
		// Drawing the same boxes gives the same picture: skip the work.
		if key || changed {
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
		case <-ds.gone:
			return sdk.Invalid("device %q display %d: removed", req.DeviceID, req.DisplayID)
		case <-keyReq:
			wantKey = true
		case <-tick.C:
		}
	}
}

// videoFrame returns what to draw for the next video frame at the size fit
// gives for the display's; an absent or offline phone or a removed display
// ends the stream.
func (ds *display) videoFrame(fit func(w, h int) (int, int)) ([]render.Box, int, int, error) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	id := ds.spec.ID
	switch {
	case !ds.present || ds.closed:
		return nil, 0, 0, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceNotFound)
	case !ds.online:
		return nil, 0, 0, fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
	case ds.removed:
		return nil, 0, 0, sdk.Invalid("device %q display %d: removed", id, ds.id)
	}
	ds.orient() // a timer's step may have turned the screen since the last call
	sw, sh := ds.width, ds.height
	w, h := fit(sw, sh)
	// Scale each axis on its own: rounding to even sizes may change the ratio slightly.
	f := min(float64(w)/float64(sw), float64(h)/float64(sh))
	if w == sw && h == sh {
		f = 1
	}
	return ds.boxes(ds.view(), f), w, h, nil
}

// RequestKeyFrame asks the display's running stream for a key frame;
// without one it does nothing.
func (d *Driver) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	return d.withDisplay(ctx, "request_key_frame", deviceID, displayID, "", func(ds *display) error {
		if c := ds.video; c != nil {
			select {
			case c <- struct{}{}:
			default:
			}
		}
		return nil
	})
}
