package agent

import (
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// A Watcher hears what the manager learns about the tasks and the phones'
// screens; the recorder is one (it records only what a read vouched for).
// Its methods are called from the agents' calls, sometimes with the
// manager's lock held: they must not block or call back into the manager.
type Watcher interface {
	// TaskStarted and TaskEnded bracket a task on a device; display is
	// the background display it runs on, 0 for the phone's own screen.
	TaskStarted(device, task string, display int)
	TaskEnded(device, task string)
	// ScreenRead tells of a read of device's screen that began at at (call
	// it for every read, as soon as the read returns); private says why
	// the screen must not be recorded (a locked screen, a blocked app, a
	// one-time code, the person holding the phone), and is empty when it
	// may be. A private read also keeps out what the screen showed since
	// the read before it and until a later read finds it public.
	ScreenRead(device string, at time.Time, private string)
	// ScreenHidden tells that what the screen shows from now on has not
	// been read and must not be kept (an unlock with a PIN under way, the
	// person taking the phone), until a later read finds it public.
	ScreenHidden(device, why string)
}

type noWatcher struct{}

func (noWatcher) TaskStarted(string, string, int)      {}
func (noWatcher) TaskEnded(string, string)             {}
func (noWatcher) ScreenRead(string, time.Time, string) {}
func (noWatcher) ScreenHidden(string, string)          {}

// Private says whether a screen the driver gave of device may be
// recorded: the reason it may not, or "". The recorder's own reads use it,
// so the rule is the same as for the agents' reads.
func (m *Manager) Private(device string, sc *sdk.Screen) string {
	_, boxes := m.mask(m.phone(device), device, sc, false)
	return m.private(device, sc, len(boxes))
}

// private is Private with the secrets already found.
func (m *Manager) private(device string, sc *sdk.Screen, secrets int) string {
	m.mu.Lock()
	_, withHand := m.withHand[device]
	m.mu.Unlock()
	switch {
	case withHand:
		return "the person has the phone in hand"
	case sc.LockState == sdk.LockLocked:
		return "the phone is locked"
	case sc.App.ID != "" && m.cfg.Guard != nil && m.cfg.Guard.Blocked(sc.App.ID):
		return "a blocked app is in front"
	case secrets > 0:
		return "the screen shows a one-time code, a password or a blocked app's notification"
	}
	return ""
}

// category is the policy's category of an app ("authenticators"…), or "".
func (m *Manager) category(app string) string {
	if c, ok := m.cfg.Guard.(interface{ Category(string) string }); ok && app != "" {
		return c.Category(app)
	}
	return ""
}
