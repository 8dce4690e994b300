package agent

import (
	"context"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Background displays: a task may run on a display of the phone that the
// gateway makes for it, so that the person keeps using the phone's own
// screen meanwhile. Every read, action and screenshot of the task goes to
// that display; the gateway never wakes or unlocks the phone for it; the
// display is removed when the task ends.

// The size of a background display when the phone's own is not known yet.
const (
	defaultDisplayW   = 1080
	defaultDisplayH   = 2400
	defaultDisplayDPI = 420
)

// displayOf is the display the phone's lease works on.
func (m *Manager) displayOf(p *phone) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return p.display
}

// background makes a display for l's task on its phone.
func (s *Session) background(ctx context.Context, drv sdk.Full, p *phone, tk *task) error {
	m := s.m
	if !m.serves(p, sdk.CapDisplays) {
		return m.unsupported(p, tk.device, sdk.CapDisplays, "the driver of "+tk.device+" cannot make background displays: connect without background")
	}
	m.mu.Lock()
	w, h := p.boxSize.X, p.boxSize.Y
	m.mu.Unlock()
	if w > h {
		// The phone is turned: the background display takes its natural,
		// upright size and keeps it whatever the phone's own screen does.
		w, h = h, w
	}
	if w <= 0 || h <= 0 {
		w, h = defaultDisplayW, defaultDisplayH
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	id, err := drv.CreateDisplay(cctx, tk.device, w&^1, h&^1, defaultDisplayDPI)
	if err != nil {
		return m.refused(p, tk.device, ToolConnect, fromDriver(tk.device, err, false))
	}
	m.mu.Lock()
	tk.display, p.display = id, id
	p.model = screen.NewModel() // refs of the phone's own screen mean nothing here
	p.boxes = nil
	m.mu.Unlock()
	m.log.Info("background display", "device", tk.device, "task", tk.id, "display", id, "size", [2]int{w, h})
	return nil
}

// removeDisplay removes the background display of an ended task.
func (m *Manager) removeDisplay(tk *task) {
	p := m.phone(tk.device)
	m.mu.Lock()
	if p.display == tk.display {
		p.display = 0
		p.model = screen.NewModel()
		p.boxes = nil
	}
	m.mu.Unlock()
	drv, _, err := m.cfg.Drivers.DriverForDevice(tk.device)
	if err != nil {
		return
	}
	if m.serves(p, sdk.CapDisplays) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := drv.RemoveDisplay(ctx, tk.device, tk.display); err != nil {
			m.log.Warn("removing a background display", "device", tk.device, "display", tk.display, "err", err)
		}
	}
}
