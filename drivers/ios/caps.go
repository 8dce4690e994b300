package ios

import (
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// What each iPhone serves differs by its broadcast (SPEC.md section 4):
//
//   - without a broadcast in its list entry it has no video and no frame
//     capture; screenshots come from WebDriverAgent;
//   - with one configured, it serves video and frame capture only while
//     the broadcast is connected: the driver sends a CHANGED event when it
//     connects and when it drops (the gateway starts a waiting task's
//     recording, and the console its live mirror, on the one that adds
//     video). A stream that runs when the broadcast drops waits for it to
//     connect again, going on with its new config and key frame, unless
//     the gateway ends it.
//
// Everything else goes through WebDriverAgent and is the same on every
// phone. Unlock needs no PIN saved here: the gateway passes the person's
// PIN with each call, and without one WDA's own unlock serves a phone that
// has no passcode.

const (
	reasonNoBroadcast  = "no broadcast is configured for this iPhone"
	reasonNotConnected = "the broadcast has not connected: start it on the iPhone"
	fixNotConnected    = "start the broadcast on the iPhone: Control Center, long-press Screen Recording, pick Pinky"
)

// capsLocked is what the phone serves now, of the driver's capabilities
// all; p.mu is held.
func (p *phone) capsLocked() *sdk.DeviceCaps {
	c := &sdk.DeviceCaps{Served: []sdk.Capability{}}
	lack := func(cap sdk.Capability, reason, fix string) {
		if slices.Contains(p.all, cap) {
			c.Missing = append(c.Missing, sdk.MissingCap{Cap: cap, Reason: reason, Fix: fix})
		}
	}
	switch {
	case p.cfg.Video == nil:
		fix := addBroadcastFix(p.cfg.ID, p.cfg.Name, p.cfg.WDA)
		lack(sdk.CapVideo, reasonNoBroadcast, fix)
		lack(sdk.CapFrameCapture, reasonNoBroadcast, fix)
	case !p.live:
		lack(sdk.CapVideo, reasonNotConnected, fixNotConnected)
		lack(sdk.CapFrameCapture, reasonNotConnected, fixNotConnected)
	}
	for _, cap := range p.all {
		if !slices.ContainsFunc(c.Missing, func(m sdk.MissingCap) bool { return m.Cap == cap }) {
			c.Served = append(c.Served, cap)
		}
	}
	return c
}

// lacks returns the ErrUnsupported that an RPC of capability c answers
// when the phone does not serve it now, with the reason and the fix its
// device reports; nil when it serves c.
func (p *phone) lacks(c sdk.Capability) error {
	p.mu.Lock()
	caps := p.capsLocked()
	p.mu.Unlock()
	for _, m := range caps.Missing {
		if m.Cap == c {
			if m.Fix == "" {
				return sdk.Errorf(sdk.ErrUnsupported, "%s: %s", p.cfg.ID, m.Reason)
			}
			return sdk.Errorf(sdk.ErrUnsupported, "%s: %s; %s", p.cfg.ID, m.Reason, m.Fix)
		}
	}
	return nil
}

// setLive records whether the phone's broadcast is connected and reports
// whether that changed.
func (p *phone) setLive(live bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := p.live != live
	p.live = live
	return changed
}

// addBroadcastFix says how the person gives a phone a broadcast: its list
// entry cannot be edited, so it is removed and added again under the same
// id (which keeps its leases and history), with its own name and WDA
// address. When that would not fit on the wire it names them instead.
func addBroadcastFix(id, name, wdaURL string) string {
	fix := "add a broadcast: pinky ios remove " + id + ", then pinky ios add " + shellQuote(name) +
		" --id " + id + " --wda " + shellQuote(wdaURL) + " --video-listen :7420, and start the broadcast app on the iPhone"
	if len(fix) <= sdk.MaxStateDetail {
		return fix
	}
	return "add a broadcast: pinky ios remove " + id + ", then pinky ios add NAME --id " + id + " --wda URL --video-listen :7420"
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.,:/@%+=", r))
	}) < 0 {
		return s
	}
	if !strings.ContainsAny(s, "\"$`\\!") {
		return `"` + s + `"`
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
