package sim

import (
	"context"
)

// setClipboard replaces the phone's clipboard and tells its watchers, as
// Android's clipboard service calls its primary clip listeners on every set
// (the same text included). p.mu is held.
func (p *phone) setClipboard(text string) {
	p.clipboard = text
	for fn := range p.clipWatch {
		(*fn)(text)
	}
}

// WatchClipboard calls changed with the new text each time the phone's
// clipboard is set, by an app's copy or by SetClipboard from any client,
// until stop is called: it is the virtual phone's
// ClipboardManager.addPrimaryClipChangedListener. changed runs with the
// phone locked, on the goroutine that set the clipboard: it must return
// quickly and must not call the driver.
func (d *Driver) WatchClipboard(ctx context.Context, deviceID string, changed func(text string)) (stop func(), err error) {
	// Not through d.with: watching is no call of the phone's, and must not
	// count for the crash-after-N fault.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.phone(deviceID)
	if err != nil {
		return nil, err
	}
	fn := &changed
	p.mu.Lock()
	if p.clipWatch == nil {
		p.clipWatch = map[*func(string)]struct{}{}
	}
	p.clipWatch[fn] = struct{}{}
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.clipWatch, fn)
	}, nil
}
