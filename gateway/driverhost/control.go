package driverhost

import (
	"context"
	"fmt"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Restart ends the named driver's process and starts a new one at once,
// without backoff, and returns when the new one runs (nil) or has failed to
// start (its error). It also starts a failed driver at once. The restart
// counter counts it. An attached driver cannot be restarted.
func (h *Host) Restart(ctx context.Context, name string) error {
	h.mu.Lock()
	d, ok := h.drivers[name]
	h.mu.Unlock()
	if !ok {
		return fmt.Errorf("driver %q: %w", name, ErrUnknownDriver)
	}
	d.opMu.Lock()
	defer d.opMu.Unlock()
	h.mu.Lock()
	s, state, lastErr := d.sup, d.state, d.lastErr
	stopped := h.stopped
	h.mu.Unlock()
	switch {
	case stopped:
		return ErrStopped
	case d.host != "":
		return fmt.Errorf("driver %q is the link of phone host %q: restart `pinky host` on that machine", name, d.host)
	case s == nil:
		return fmt.Errorf("driver %q cannot start: %s", name, lastErr)
	case state == StateAttached || state == StateExited:
		return fmt.Errorf("driver %q is attached: restart it by hand and attach it again", name)
	}
	w := make(chan error, 1)
	select {
	case s.restart <- w:
	case <-s.done:
		return fmt.Errorf("driver %q: %w", name, ErrStopped)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-w:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Attach attaches a driver that was started by hand (with
// PINKY_DRIVER_DEBUG=1 it prints r as a JSON line) under name. It is
// supervised like the others except that it is never restarted: when it
// exits, its devices go offline and its state becomes exited. A driver of
// that name that the host runs is ended first; handles to it stay valid and
// now reach the attached process. Stop ends the attached process too.
func (h *Host) Attach(ctx context.Context, name string, r sdk.Reattach) error {
	if !validName(name) {
		return fmt.Errorf("driver name %q: want letters, digits, '-' and '_'", name)
	}
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return ErrStopped
	}
	d, ok := h.drivers[name]
	if !ok {
		d = h.newDriverLocked(name)
	}
	h.mu.Unlock()

	d.opMu.Lock()
	defer d.opMu.Unlock()
	h.mu.Lock()
	old := d.sup
	h.mu.Unlock()
	if old != nil {
		old.cancel()
		<-old.done
	}
	result := make(chan error, 1)
	h.mu.Lock()
	if h.stopped {
		h.mu.Unlock()
		return ErrStopped
	}
	s := d.launchLocked(func(s *supervisor) { d.superviseAttached(s, r, result) })
	h.mu.Unlock()
	select {
	case err := <-result:
		if err != nil {
			return fmt.Errorf("attaching driver %q: %w", name, err)
		}
		return nil
	case <-ctx.Done():
		s.cancel()
		return ctx.Err()
	}
}
