package lease

import (
	"log/slog"
	"time"
)

// The defaults of Config.
const (
	DefaultIdleTimeout  = 10 * time.Minute
	DefaultOfflineGrace = 60 * time.Second
)

// Config holds the rules' durations, and the clock they are read on.
type Config struct {
	// IdleTimeout ends a lease nobody used for this long (default 10 min).
	IdleTimeout time.Duration
	// OfflineGrace is how long a lease survives its phone being offline
	// (default 60 s).
	OfflineGrace time.Duration
	// Now is the clock; nil is time.Now. Sweep is told its time instead.
	Now func() time.Time
	// Logger hears of leases taken over by a new session; nil is
	// slog.Default().
	Logger *slog.Logger
	// Gateway names this gateway in a table several share (Postgres): the
	// leases it takes carry it, and EndGateway ends them when the gateway
	// starts again. home's Dirs.GatewayID gives it.
	Gateway string
}

// WithDefaults returns c with the defaults set where it has none.
func (c Config) WithDefaults() Config {
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.OfflineGrace <= 0 {
		c.OfflineGrace = DefaultOfflineGrace
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Due says whether l ends at now, and how: its phone offline (since
// offlineSince; zero while it is online) for the offline grace, nobody
// using it for the idle timeout, or parked past its grace. The first of
// these that holds decides.
func (c Config) Due(l Lease, offlineSince, now time.Time) (Outcome, bool) {
	switch {
	case !offlineSince.IsZero() && now.Sub(offlineSince) >= c.OfflineGrace:
		return Offline, true
	case now.Sub(l.LastUsed) >= c.IdleTimeout:
		return Expired, true
	case l.Parked() && !now.Before(l.ParkedUntil):
		return SessionClosed, true
	}
	return "", false
}

// MayResume says whether h may take l over at now: l is held by another
// session of the same agent program and version, and is either parked
// under h's resume key with its grace not passed, or held by a session
// still open with the same resume key (a client that opens a session per
// call and never closes the last one must still reach its lease). A
// session without a resume key resumes nothing.
func MayResume(h Holder, l Lease, now time.Time) bool {
	if l.Holder.Session == h.Session || h.ResumeKey == "" || l.Holder.Agent != h.Agent || l.Holder.Version != h.Version {
		return false
	}
	if l.Parked() {
		return l.ParkKey == h.ResumeKey && now.Before(l.ParkedUntil)
	}
	return l.Holder.ResumeKey == h.ResumeKey
}
