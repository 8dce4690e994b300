package sim

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// LackSpec is a capability of the driver that one phone lacks, with what
// the phone then reports: why (Reason) and how to enable it (Fix), as a
// real phone without a broadcast or a scrcpy server does.
type LackSpec struct {
	Capability sdk.Capability `yaml:"capability"`
	Reason     string         `yaml:"reason"`
	Fix        string         `yaml:"fix"`
}

// callCaps maps the calls of each capability a phone can lack to it.
var callCaps = map[string]sdk.Capability{
	"input": sdk.CapInput, "wake": sdk.CapWake, "unlock": sdk.CapUnlock, "wait_idle": sdk.CapWaitIdle,
	"list_apps": sdk.CapApps, "list_notifications": sdk.CapNotifications,
	"list_files": sdk.CapFiles, "pull_file": sdk.CapFiles, "push_file": sdk.CapFiles, "delete_file": sdk.CapFiles,
	"stream_video": sdk.CapVideo, "request_key_frame": sdk.CapVideo,
	"create_display": sdk.CapDisplays, "remove_display": sdk.CapDisplays,
}

// lackable lists the capabilities a phone can lack: those whose every
// call the driver refuses for such a phone.
var lackable = func() []sdk.Capability {
	var out []sdk.Capability
	for _, c := range sdk.AllCapabilities {
		for _, cc := range callCaps {
			if cc == c {
				out = append(out, c)
				break
			}
		}
	}
	return out
}()

// checkLacks checks a phone's lacks: each a capability the sim serves and
// can refuse, once, with a reason.
func checkLacks(lacks []LackSpec) error {
	seen := map[sdk.Capability]bool{}
	for i, l := range lacks {
		if !slices.Contains(lackable, l.Capability) {
			return fmt.Errorf("lacks[%d]: capability %q: want one the sim serves and can refuse, one of %v", i, l.Capability, lackable)
		}
		if seen[l.Capability] {
			return fmt.Errorf("lacks[%d]: capability %q is listed twice", i, l.Capability)
		}
		seen[l.Capability] = true
		if strings.TrimSpace(l.Reason) == "" {
			return fmt.Errorf("lacks[%d] (%s): reason is required: a sentence saying why, for the person", i, l.Capability)
		}
	}
	return nil
}

// caps is what the phone serves now: the driver's capabilities minus the
// lacked ones, which are missing with their reason and fix. p.mu is held
// (or p is not shared yet).
func (p *phone) caps() *sdk.DeviceCaps {
	c := &sdk.DeviceCaps{Served: []sdk.Capability{}}
	for _, x := range p.d.caps {
		l, lacked := p.lacks[x]
		if !lacked {
			c.Served = append(c.Served, x)
			continue
		}
		c.Missing = append(c.Missing, sdk.MissingCap{Cap: x, Reason: l.Reason, Fix: l.Fix})
	}
	return c
}

// refuse answers sdk.ErrUnsupported, with the phone's reason and fix, for
// a call of a capability the phone lacks now. p.mu is held.
func (p *phone) refuse(call string) error {
	c, ok := callCaps[call]
	if !ok {
		return nil
	}
	l, lacked := p.lacks[c]
	if !lacked {
		return nil
	}
	msg := l.Reason
	if l.Fix != "" {
		msg += " (" + l.Fix + ")"
	}
	return fmt.Errorf("device %q: %s: %s: %w", p.spec.ID, c, msg, sdk.ErrUnsupported)
}

// scheduleLack applies a lack fault: After the start the phone lacks l.Cap
// (a CHANGED event says so), and For later serves it again, unless its
// world file has it lack the capability for good.
func (d *Driver) scheduleLack(l Lack) {
	p := d.byID[l.Device]
	if p == nil {
		d.log.Warn("fault: lack names an unknown device", "device", l.Device)
		return
	}
	// The world file's lacks are for good. (p.lacks is not read here: an
	// earlier lack fault of the same capability may be applied already.)
	if slices.ContainsFunc(p.spec.Lacks, func(w LackSpec) bool { return w.Capability == l.Cap }) {
		return
	}
	set := func(lack bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.closed {
			return
		}
		if lack {
			p.lacks[l.Cap] = LackSpec{Capability: l.Cap, Reason: "taken away by the sim's lack fault", Fix: "wait for the fault to end"}
		} else {
			delete(p.lacks, l.Cap)
		}
		if p.present {
			p.changed()
		}
	}
	d.calls.Lock()
	defer d.calls.Unlock()
	d.timers = append(d.timers, time.AfterFunc(l.After, func() { set(true) }))
	if l.For > 0 {
		d.timers = append(d.timers, time.AfterFunc(l.After+l.For, func() { set(false) }))
	}
}
