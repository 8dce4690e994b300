package doctor

import (
	"errors"
	"fmt"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// renewWithin is how long before a certificate expires the doctor says to
// pair again.
const renewWithin = 30 * 24 * time.Hour

// Hosts checks the phone hosts of a daemon that listens for them: each
// paired host linked now, its certificate not about to expire.
func Hosts(hs api.Hosts, now time.Time) []Result {
	out := []Result{ok("phone hosts", fmt.Sprintf("listening on %s, fingerprint %s", hs.Listen, hs.Fingerprint))}
	for _, h := range hs.Hosts {
		name := "host " + h.Name
		switch {
		case h.State == "pending":
			out = append(out, ok(name, "a pairing code waits to be used, until "+h.Expires.Local().Format(time.DateTime)))
		case !h.Expires.IsZero() && h.Expires.Before(now):
			out = append(out, problem(name, "its certificate expired on "+h.Expires.Local().Format(time.DateOnly)+": it is refused",
				"pair it again: `pinky hosts add "+h.Name+"` here, then `pinky host --gateway ADDR --pair CODE` there"))
		case h.State != "online":
			since := "since the daemon started"
			if !h.Since.IsZero() {
				since = "since " + h.Since.Local().Format(time.DateTime)
			}
			detail := "not linked " + since + ": its phones are offline"
			if h.LastError != "" {
				detail += " (" + h.LastError + ")"
			}
			out = append(out, problem(name, detail,
				"check that `pinky host` runs on that machine (its log says why it cannot link) and reaches "+hs.Listen))
		case !h.Expires.IsZero() && h.Expires.Sub(now) < renewWithin:
			out = append(out, problem(name, "online, but its certificate expires on "+h.Expires.Local().Format(time.DateOnly),
				"pair it again before then: `pinky hosts add "+h.Name+"` here, then `pinky host --gateway ADDR --pair CODE` there"))
		default:
			out = append(out, ok(name, fmt.Sprintf("online, %d phones, version %s", h.Devices, h.Version)))
		}
	}
	return out
}

// HostIdentity checks this machine's identity as a phone host, as
// pki.LoadHost read it from dir (err ErrNotPaired: this machine is no
// host, which is fine).
func HostIdentity(dir string, h *pki.Host, err error, now time.Time) Result {
	const name = "phone host identity"
	switch {
	case errors.Is(err, pki.ErrNotPaired):
		return ok(name, "this machine is not paired as a phone host (pinky host --pair makes it one)")
	case err != nil:
		return problem(name, fmt.Sprintf("%s cannot be read: %v", dir, err),
			"pair again: `pinky hosts add NAME` on the gateway, then `pinky host --gateway ADDR --pair CODE` here")
	}
	exp := h.Certificate().NotAfter
	switch {
	case exp.Before(now):
		return problem(name, fmt.Sprintf("paired as %s, but the certificate expired on %s", h.Name, exp.Local().Format(time.DateOnly)),
			"pair again: `pinky hosts add "+h.Name+"` on the gateway, then `pinky host --gateway ADDR --pair CODE` here")
	case exp.Sub(now) < renewWithin:
		return problem(name, fmt.Sprintf("paired as %s; the certificate expires on %s", h.Name, exp.Local().Format(time.DateOnly)),
			"pair again before then: `pinky hosts add "+h.Name+"` on the gateway, then `pinky host --gateway ADDR --pair CODE` here")
	}
	return ok(name, fmt.Sprintf("paired as %s with the gateway %s, until %s", h.Name, h.Pin, exp.Local().Format(time.DateOnly)))
}
