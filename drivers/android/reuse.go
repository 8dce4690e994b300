package android

import (
	"slices"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Reusing a read. A uiautomator dump takes 1–2 s on a real phone, and the
// gateway reads before every action (to judge it on the screen as it is)
// right after the read that settled the one before: two dumps of a screen
// that did not change. scrcpy sends a video frame only when the screen
// changes, so while the control session's video runs, a dump is still the
// screen as long as no frame came and the driver did not act since it
// began. Such a read is given again (with the app, lock and screen state
// read afresh from dumpsys, which is cheap) instead of dumping:
//
//   - only with a live control session whose video has sent a frame (the
//     session that vouches for the dump must be the one running now);
//   - only within Config.ReuseFor of the dump's start (30 s by default), so
//     that a change the picture does not show (a description, a state a
//     screen reader sees) is never hidden for long;
//   - after waiting the quiet period (Config.IdleQuiet, 300 ms), so that a
//     change made just before the read has had time to arrive as a frame;
//   - never when dumpsys disagrees with the kept read (a dark screen sends
//     no frame when it goes off or locks);
//   - only when the dump took longer than that wait (on an emulator or a
//     fast phone dumping again is quicker).

// defaultReuse is how long a dump may be given again while the video
// shows no change.
const defaultReuse = 30 * time.Second

// keptRead is the last dump of display 0 and what vouches for it.
type keptRead struct {
	screen *sdk.Screen
	begun  time.Time     // when the read began: a frame since then voids it
	took   time.Duration // how long the dump and dumpsys took
	sess   *session      // the control session whose video watched it
}

// copy is the kept screen, safe to hand out.
func (k *keptRead) copy() *sdk.Screen {
	sc := *k.screen
	sc.Elements = slices.Clone(k.screen.Elements)
	return &sc
}

// sameState reports whether sc, the kept screen with dumpsys read again,
// has the app, lock and screen state the kept read had.
func (k *keptRead) sameState(sc *sdk.Screen) bool {
	return sc.App.ID == k.screen.App.ID && sc.LockState == k.screen.LockState && sc.ScreenOn == k.screen.ScreenOn
}

// videoSession is the phone's control session if its video runs and has
// sent a frame; nil otherwise.
func (d *Driver) videoSession(p *phone) *session {
	if d.cfg.ReuseFor < 0 { // without a scrcpy server there is no session
		return nil
	}
	s := p.vid.Load()
	if s == nil || !s.alive() || s.lastFrame.Load() == 0 {
		return nil
	}
	return s
}

// unchanged returns the kept read of p if the screen cannot have changed
// since it began, waiting the quiet period to be sure; nil otherwise.
// p.readMu is held.
func (d *Driver) unchanged(p *phone, now time.Time) *keptRead {
	k := p.kept
	if k == nil {
		return nil
	}
	reuse := d.cfg.ReuseFor
	if reuse == 0 {
		reuse = defaultReuse
	}
	still := func() bool {
		s := d.videoSession(p)
		return s != nil && s == k.sess && s.lastFrame.Load() < k.begun.UnixNano() && p.acted.Load() < k.begun.UnixNano()
	}
	if reuse < 0 || now.Sub(k.begun) > reuse || !still() {
		p.kept = nil
		return nil
	}
	q := d.cfg.IdleQuiet
	if q <= 0 {
		q = idleQuiet
	}
	if k.took <= q {
		return nil // dumping again costs less than waiting to be sure
	}
	time.Sleep(q)
	if !still() {
		p.kept = nil
		return nil
	}
	return k
}

// keep remembers sc, read from begun on, if s's video watched the read.
// p.readMu is held.
func (d *Driver) keep(p *phone, s *session, sc *sdk.Screen, begun time.Time) {
	p.kept = nil
	if s == nil || d.videoSession(p) != s || s.lastFrame.Load() >= begun.UnixNano() {
		return // no video, another session, or the screen moved meanwhile
	}
	k := &keptRead{screen: sc, begun: begun, took: time.Since(begun), sess: s}
	k.screen = k.copy()
	p.kept = k
}
