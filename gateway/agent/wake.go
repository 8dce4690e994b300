package agent

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// PINSource gives the PIN saved for a phone, for automatic unlock (the
// gateway's is the OS keychain, gateway/pin). ok is false when none is saved.
type PINSource interface {
	PIN(device string) (pin string, ok bool, err error)
}

// defaultWakeEvery is the least time between two wakes of a phone.
const defaultWakeEvery = 5 * time.Second

// serves reports whether the phone serves capability c, as it says now
// within what its driver declared: the one way the agent knows what a
// phone can do (the driver it holds has every optional method, sdk.Full).
// unsupported (lacks.go) says why a phone lacks one.
func (m *Manager) serves(p *phone, c sdk.Capability) bool {
	return m.cfg.Drivers.Serves(p.id, c)
}

// wake turns the phone's screen on before an agent reads or acts on it,
// when its driver can, at most once every WakeEvery. It reports whether it
// woke the phone (the screen may have changed: read it again).
func (m *Manager) wake(ctx context.Context, drv sdk.Full, p *phone, device string) bool {
	if !m.serves(p, sdk.CapWake) || m.displayOf(p) != 0 {
		return false // never for a task on a background display
	}
	now := time.Now()
	m.mu.Lock()
	due := p.lastWake.IsZero() || now.Sub(p.lastWake) >= m.cfg.WakeEvery
	if due {
		p.lastWake = now
	}
	m.mu.Unlock()
	if !due {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := drv.Wake(wctx, device); err != nil {
		m.log.Debug("waking a phone", "device", device, "err", err)
		return false
	}
	return true
}

// seen notes the lock state of a phone's fresh read: a phone seen unlocked
// ends its lock, so the next lock may be unlocked automatically again.
func (m *Manager) seen(p *phone, sc *sdk.Screen) {
	if sc.LockState != sdk.LockUnlocked {
		return
	}
	m.mu.Lock()
	p.unlockTried = false
	m.mu.Unlock()
}

// wakeNow wakes the phone whatever the time since the last wake: a read
// found its screen off.
func (m *Manager) wakeNow(ctx context.Context, drv sdk.Full, p *phone, device string) bool {
	m.mu.Lock()
	p.lastWake = time.Time{}
	m.mu.Unlock()
	return m.wake(ctx, drv, p, device)
}

// autoUnlock unlocks a phone that a fresh read found locked, with the PIN
// saved for it, when the person turned automatic unlock on (Config.PINs)
// and the driver declares CapUnlock. It tries once per lock and never a PIN
// the phone refused. It returns the fresh view after an unlock, nil when it
// did not try, or the error to answer.
//
// The PIN goes from the PIN source to the driver and nowhere else: it is not
// logged, recorded or shown, and no screenshot is taken meanwhile.
func (s *Session) autoUnlock(ctx context.Context, drv sdk.Full, p *phone, device string) (*screen.View, error) {
	m := s.m
	if m.cfg.PINs == nil || !m.serves(p, sdk.CapUnlock) {
		return nil, nil
	}
	pin, ok, err := m.cfg.PINs.PIN(device)
	if err != nil {
		m.log.Warn("unlock failed", "device", device, "reason", "the saved PIN could not be read")
		return nil, Errorf(CodeDeviceLocked, "%s is locked and its saved PIN could not be read from the keychain; ask the person to unlock it with phone_ask_person (they run pinky unlock %s, or unlock it in hand)", device, device)
	}
	if !ok {
		return nil, nil
	}
	sum := m.pinSum(pin)
	m.mu.Lock()
	refused := p.refusedPIN != nil && hmac.Equal(p.refusedPIN, sum)
	tried := p.unlockTried
	if !refused && !tried {
		p.unlockTried = true
	}
	m.mu.Unlock()
	if refused {
		return nil, refusedPIN(device)
	}
	if tried {
		return nil, nil // this lock was tried already
	}
	uctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	m.cfg.Watcher.ScreenHidden(device, "unlocking")
	err = drv.Unlock(uctx, device, pin)
	m.cfg.Watcher.ScreenHidden(device, "unlocked")
	if err != nil && strings.Contains(err.Error(), pin) {
		err = scrubbed{err} // a driver that echoes the PIN does not get it logged or recorded
	}
	pin = ""
	switch {
	case errors.Is(err, sdk.ErrWrongPIN):
		m.mu.Lock()
		p.refusedPIN = sum
		m.mu.Unlock()
		m.log.Warn("unlock failed", "device", device, "reason", "wrong PIN")
		return nil, refusedPIN(device)
	case err != nil:
		m.log.Warn("unlock failed", "device", device, "err", err)
		if errors.Is(err, sdk.ErrLocked) || errors.Is(err, sdk.ErrUnlockMethod) || errors.Is(err, sdk.ErrFailedPrecondition) || errors.Is(err, sdk.ErrUnsupported) {
			return nil, nil
		}
		return nil, fromDriver(device, err, false)
	}
	m.log.Info("unlocked", "device", device)
	return s.read(ctx, drv, p, device)
}

func refusedPIN(device string) error {
	return Errorf(CodeDeviceLocked, "%s is locked and refused the PIN saved for it, so it is not tried again; ask the person to run pinky pin set %s with the right PIN, or to unlock it (phone_ask_person)", device, device)
}

// pinSum is a keyed hash of a PIN, to recognize a refused PIN without
// keeping it; the key lives only in this process.
func (m *Manager) pinSum(pin string) []byte {
	m.mu.Lock()
	if m.pinKey == nil {
		m.pinKey = make([]byte, 32)
		rand.Read(m.pinKey) //nolint:errcheck // never fails
	}
	key := m.pinKey
	m.mu.Unlock()
	h := hmac.New(sha256.New, key)
	h.Write([]byte(pin))
	return h.Sum(nil)
}

// scrubbed hides the message of a driver error that held the PIN.
type scrubbed struct{ err error }

func (e scrubbed) Error() string { return "the driver could not unlock the phone" }
func (e scrubbed) Unwrap() error { return e.err }

// still takes a picture of a display: from the driver's video pipeline
// when it declares frame capture (an iPhone's broadcast makes one in
// milliseconds, where a screenshot over Wi-Fi takes a second), else, or
// when that fails, a screenshot.
func (m *Manager) still(ctx context.Context, p *phone, drv sdk.Full, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	if m.serves(p, sdk.CapFrameCapture) {
		img, err := drv.CaptureFrame(ctx, req)
		if err == nil {
			return img, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		m.log.Debug("frame capture failed; taking a screenshot", "device", req.DeviceID, "err", err)
	}
	return drv.Screenshot(ctx, req)
}
