package sim

import (
	"context"
)

// UIAutomatorDump returns the bytes of the captured UI Automator dump the
// phone shows now on display 0, as recorded, for the adb face's
// `uiautomator dump`. It returns nil when the screen is not such a dump, or
// when the dump was scaled to a phone of another size (its bounds would not
// match Screen).
func (d *Driver) UIAutomatorDump(ctx context.Context, deviceID string) ([]byte, error) {
	var out []byte
	err := d.with(ctx, "screen", deviceID, "", func(p *phone) error {
		if !p.screenOn {
			return nil
		}
		var xml []byte
		switch e := p.main().top(); {
		case p.spec.dump != nil:
			if p.spec.dump.Width == p.spec.Width && p.spec.dump.Height == p.spec.Height {
				xml = p.spec.dumpXML
			}
		case e != nil && !p.locked && e.app.Screens[e.screen].dump != nil:
			s := e.app.Screens[e.screen]
			if s.dump.Width == p.spec.Width && s.dump.Height == p.spec.Height {
				xml = s.dumpXML
			}
		}
		out = xml
		return nil
	})
	return out, err
}
