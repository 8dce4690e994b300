package android

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

var _ sdk.IdleWaiter = (*Driver)(nil)

// idleQuiet is how long no video frame may come for the screen to count as
// idle, unless Config.IdleQuiet says otherwise. scrcpy's server sends a frame only when the screen changes, and its
// encoder repeats the last picture once 100 ms after the last change
// (KEY_REPEAT_PREVIOUS_FRAME_AFTER): a quiet period must outlast that
// repeat. A text cursor blinks every 500 ms and makes a frame (and its
// repeat) each time: a quiet period under 400 ms still sees the screen idle
// between two blinks, where a longer one would never see it idle while a
// field has the focus. 300 ms lies between the two.
const idleQuiet = 300 * time.Millisecond

// stillEvery is the pause between two screencaps when the driver has no
// video to watch (no scrcpy server).
const stillEvery = 100 * time.Millisecond

// maxIdleTimeout is the contract's largest WaitIdle timeout (SPEC.md §5.11).
const maxIdleTimeout = 30 * time.Second

// WaitIdle implements sdk.IdleWaiter from the phone's video: the screen is
// idle when none of the phone's scrcpy sessions (its control session, which
// always reads the video of display 0, and its background displays') has
// had a frame for idleQuiet, counted from the last frame, the driver's last
// action on the phone, or the call, whichever came last. The contract's
// WaitIdle names no display, so it waits for every display of the phone. A
// screen that keeps changing (an animation) gives false at the timeout.
//
// Without a scrcpy server (or when the control session cannot start), it
// compares screencaps instead: idle when two in a row are the same picture.
// A screencap costs a fraction of a dump, so that is still cheaper than
// reading the screen until two reads match.
func (d *Driver) WaitIdle(ctx context.Context, serial string, timeout time.Duration) (bool, error) {
	if timeout <= 0 || timeout > maxIdleTimeout {
		return false, sdk.Invalid("timeout %v: want 1 ms to 30 s", timeout)
	}
	start := time.Now()
	p, dev, err := d.phone(ctx, serial)
	if err != nil {
		return false, err
	}
	deadline := start.Add(timeout)
	if srv, _ := d.server(); srv == nil {
		return stills(ctx, dev, deadline)
	}
	p.ctlMu.Lock()
	s, err := d.control(ctx, p, dev, -1)
	p.ctlMu.Unlock()
	if err != nil {
		if ctx.Err() != nil {
			return false, mapErr(ctx.Err())
		}
		d.log.Debug("no video to wait for idle on; comparing screencaps", "serial", serial, "err", err)
		return stills(ctx, dev, deadline)
	}
	q := d.cfg.IdleQuiet
	if q <= 0 {
		q = idleQuiet
	}
	idle, err := quiet(ctx, p, s, q, start, deadline)
	if errors.Is(err, errVideoEnded) {
		// The control session ended under the wait: its silence says
		// nothing. Look at the screen itself for the time that is left.
		d.log.Debug("the video ended while waiting for idle; comparing screencaps", "serial", serial, "said", s.lastWords())
		return stills(ctx, dev, deadline)
	}
	return idle, err
}

// errVideoEnded is quiet's error when the control session's video stopped.
var errVideoEnded = errors.New("the phone's video ended")

// quiet waits until no frame came on s or the phone's background displays
// for q, or until deadline. The sessions' last frames are polled a
// few times per quiet period: a frame only ever moves the end of the wait
// later, so polling loses at most one poll's time.
func quiet(ctx context.Context, p *phone, s *session, q time.Duration, start, deadline time.Time) (bool, error) {
	tick := time.NewTicker(q / 10)
	defer tick.Stop()
	for {
		if !s.alive() {
			return false, errVideoEnded
		}
		last := max(start.UnixNano(), p.acted.Load(), s.lastFrame.Load())
		for _, ds := range p.displaySessions() {
			last = max(last, ds.lastFrame.Load())
		}
		now := time.Now()
		if now.Sub(time.Unix(0, last)) >= q {
			return true, nil
		}
		if !now.Before(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, mapErr(ctx.Err())
		case <-tick.C:
		}
	}
}

// displaySessions are the sessions of the phone's live background displays.
func (p *phone) displaySessions() []*session {
	p.dispMu.Lock()
	defer p.dispMu.Unlock()
	ss := make([]*session, 0, len(p.displays))
	for _, ds := range p.displays {
		if ds.s.alive() {
			ss = append(ss, ds.s)
		}
	}
	return ss
}

// stills waits until two screencaps of display 0 in a row are the same
// picture (the same PNG bytes: screencap encodes the same pixels the same
// way), or until deadline.
func stills(ctx context.Context, dev *adb.Device, deadline time.Time) (bool, error) {
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var prev *[sha256.Size]byte
	for {
		out, err := dev.ExecOutput(wctx, "screencap -p")
		switch {
		case ctx.Err() != nil:
			return false, mapErr(ctx.Err())
		case wctx.Err() != nil:
			return false, nil // the timeout passed during the screencap
		case err != nil:
			return false, mapErr(err)
		}
		sum := sha256.Sum256(out)
		if prev != nil && *prev == sum {
			return true, nil
		}
		prev = &sum
		select {
		case <-ctx.Done():
			return false, mapErr(ctx.Err())
		case <-wctx.Done():
			return false, nil
		case <-time.After(stillEvery):
		}
	}
}

// stamp keeps when something last happened, in Unix nanoseconds (zero for
// never); it is safe for concurrent use.
type stamp struct{ atomic.Int64 }

// now sets the stamp to the present.
func (t *stamp) now() { t.Store(time.Now().UnixNano()) }
