package agent

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/lease"
)

// The driver calls a tool makes on a leased phone live no longer than the
// lease: the person's stop, a release, expiry, the phone offline past its
// grace or the session closing end them at once, while the driver may
// still hang (the driver host bounds every call by its own deadline,
// driverhost.Deadlines; this bounds them by the person's word). The
// calls that act on the phone also end when the person takes it over, and
// are refused while they have it.
//
// A call cut this way answers for the lease, not for the driver: stopped
// after a stop, whatever the driver was doing, because the agent may no
// longer look at the phone to find out; an action cut in flight says it
// may or may not have happened.

// leaseCalls ends the driver calls made for one lease. Its zero value is
// ready; it is guarded by Manager.mu.
type leaseCalls struct {
	ctx    context.Context // ends with the lease; nil until first needed
	cancel context.CancelCauseFunc
	// acts ends at take-over; nil until an acting call needs it, and again
	// after a take-over, so that calls after the hand-back get a new one.
	acts     context.Context
	stopActs context.CancelCauseFunc
}

// leaseEnd is the cause of a lease's calls' end: how its task ended.
type leaseEnd struct{ outcome lease.Outcome }

func (e leaseEnd) Error() string { return "the lease ended: " + string(e.outcome) }

// errTakenOver is the cause of the acting calls' end at take-over.
var errTakenOver = errors.New("the person took the phone over")

// callsLocked returns the lease's call context, made on first use.
func (c *leaseCalls) callsLocked() context.Context {
	if c.ctx == nil {
		c.ctx, c.cancel = context.WithCancelCause(context.Background())
	}
	return c.ctx
}

// endCalls ends the calls of l: its task ended with outcome. The first end
// wins; later ones change nothing.
func (m *Manager) endCalls(tk *task, outcome lease.Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &tk.calls
	if c.callsLocked().Err() != nil {
		return
	}
	c.cancel(leaseEnd{outcome})
	if c.stopActs != nil {
		c.stopActs(leaseEnd{outcome})
	}
}

// takeOverCallsLocked ends the acting calls in flight on device: the
// person takes it. It asks no lease table (m.mu is held): every task on
// the device, the one whose lease holds it now included, ends its acting
// calls.
func (m *Manager) takeOverCallsLocked(device string) {
	for _, tk := range m.tasks {
		if tk.device != device || tk.calls.stopActs == nil {
			continue
		}
		tk.calls.stopActs(errTakenOver)
		tk.calls.acts, tk.calls.stopActs = nil, nil
	}
}

// leaseEnded returns what the agent reads when l ended while it waited for
// something other than the driver (an approval), or nil while l holds.
func (m *Manager) leaseEnded(tk *task) error {
	m.mu.Lock()
	ctx := tk.calls.callsLocked()
	m.mu.Unlock()
	if ctx.Err() == nil {
		return nil
	}
	return endError(tk, context.Cause(ctx), false)
}

// endError is the agent's error for a call of l ended by cause. inFlight
// says an action was on its way to the phone when it ended.
func endError(tk *task, cause error, inFlight bool) *Error {
	maybe := ""
	if inFlight {
		maybe = " while your action ran: it may or may not have happened"
	}
	if cause == errTakenOver {
		if inFlight {
			return Errorf(CodePersonInControl, "the person took %s over%s. Once they hand it back, observe before repeating", tk.device, maybe)
		}
		return Errorf(CodePersonInControl, "the person is using %s; reads work, actions wait until they hand it back. Observe later", tk.device)
	}
	outcome := lease.Outcome("ended")
	if e, ok := cause.(leaseEnd); ok {
		outcome = e.outcome
	}
	if outcome == lease.Stopped {
		return Errorf(CodeStopped, "the person stopped you on %s (task %q)%s; do not use it for this task. Tell the user", tk.device, tk.text, maybe)
	}
	return Errorf(CodeNotLeased, "your lease on %s ended (%s)%s; connect again with phone_connect if the task goes on", tk.device, outcome, maybe)
}

// setFence records the fence of tk's lease, as the table gave it.
func (m *Manager) setFence(tk *task, fence int64) {
	m.mu.Lock()
	tk.fence = fence
	m.mu.Unlock()
}

// fenced returns ctx carrying the fence of b's lease, which the driver
// client sends with the calls that act on the phone, so that the phone's
// host refuses them once another gateway has leased the phone. Only a
// shared table's fences are sent (lease.Shared): a table in one daemon's
// memory starts its fences again when the daemon restarts.
func (b *leased) fenced(ctx context.Context) context.Context {
	if !lease.Shared(b.m.leases) {
		return ctx
	}
	b.m.mu.Lock()
	fence := b.tk.fence
	b.m.mu.Unlock()
	return sdk.WithFence(ctx, b.tk.device, fence)
}

// bind returns drv with its calls bound to l.
func (m *Manager) bind(tk *task, drv sdk.Full) sdk.Full {
	return &leased{m: m, tk: tk, d: drv}
}

// leased is a driver whose calls end with a lease (see the top of the
// file), with every optional method (sdk.Full), as the driver host's
// handles have; the driver's declared capabilities say which work.
type leased struct {
	m  *Manager
	tk *task
	d  sdk.Full
}

var _ sdk.Full = (*leased)(nil)

// scope returns the contexts that end a call of b's lease: the lease's, and
// for an acting call the one that a take-over ends. An acting call while
// the person has the phone is refused.
func (b *leased) scope(acting bool) (lease, acts context.Context, err error) {
	m := b.m
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &b.tk.calls
	lease = c.callsLocked()
	if lease.Err() != nil || !acting {
		return lease, nil, nil
	}
	if _, taken := m.withHand[b.tk.device]; taken {
		return nil, nil, endError(b.tk, errTakenOver, false)
	}
	if c.acts == nil {
		c.acts, c.stopActs = context.WithCancelCause(context.Background())
	}
	return lease, c.acts, nil
}

// bound runs f with a context that also ends when the lease does (and,
// for an acting call, at take-over), and answers for the lease when that
// ended the call.
func bound[T any](b *leased, ctx context.Context, acting bool, f func(context.Context) (T, error)) (T, error) {
	var zero T
	lease, acts, err := b.scope(acting)
	if err != nil {
		return zero, err
	}
	ended := func(inFlight bool) error {
		switch {
		case lease.Err() != nil:
			return endError(b.tk, context.Cause(lease), inFlight && acting)
		case acts != nil && acts.Err() != nil:
			return endError(b.tk, context.Cause(acts), inFlight)
		}
		return nil
	}
	if err := ended(false); err != nil {
		return zero, err // never sent
	}
	cctx, cancel := context.WithCancelCause(b.fenced(ctx))
	defer cancel(nil)
	defer context.AfterFunc(lease, func() { cancel(context.Cause(lease)) })()
	if acts != nil {
		defer context.AfterFunc(acts, func() { cancel(context.Cause(acts)) })()
	}
	v, err := f(cctx)
	if err != nil {
		if e := ended(true); e != nil {
			return v, e
		}
	}
	return v, err
}

func bound0(b *leased, ctx context.Context, acting bool, f func(context.Context) error) error {
	_, err := bound(b, ctx, acting, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

func (b *leased) Info(ctx context.Context) (sdk.Info, error) {
	return bound(b, ctx, false, func(ctx context.Context) (sdk.Info, error) { return b.d.Info(ctx) })
}

func (b *leased) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.WatchDevices(ctx, send) })
}

func (b *leased) Screen(ctx context.Context, deviceID string, displayID int) (*sdk.Screen, error) {
	return bound(b, ctx, false, func(ctx context.Context) (*sdk.Screen, error) { return b.d.Screen(ctx, deviceID, displayID) })
}

func (b *leased) Screenshot(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return bound(b, ctx, false, func(ctx context.Context) (*sdk.Image, error) { return b.d.Screenshot(ctx, req) })
}

func (b *leased) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	return bound(b, ctx, true, func(ctx context.Context) (sdk.ActResult, error) { return b.d.Act(ctx, deviceID, a) })
}

func (b *leased) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	return bound(b, ctx, true, func(ctx context.Context) (int64, error) { return b.d.Input(ctx, next) })
}

func (b *leased) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.StreamVideo(ctx, req, send) })
}

func (b *leased) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.RequestKeyFrame(ctx, deviceID, displayID) })
}

func (b *leased) CaptureFrame(ctx context.Context, req sdk.ScreenshotRequest) (*sdk.Image, error) {
	return bound(b, ctx, false, func(ctx context.Context) (*sdk.Image, error) { return b.d.CaptureFrame(ctx, req) })
}

// Wake is not an acting call: reads wake the phone too, and the person's
// take-over leaves reads working.
func (b *leased) Wake(ctx context.Context, deviceID string) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.Wake(ctx, deviceID) })
}

func (b *leased) Unlock(ctx context.Context, deviceID, pin string) error {
	return bound0(b, ctx, true, func(ctx context.Context) error { return b.d.Unlock(ctx, deviceID, pin) })
}

func (b *leased) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	return bound(b, ctx, false, func(ctx context.Context) (bool, error) { return b.d.WaitIdle(ctx, deviceID, timeout) })
}

func (b *leased) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	return bound(b, ctx, false, func(ctx context.Context) ([]sdk.App, error) { return b.d.ListApps(ctx, deviceID) })
}

func (b *leased) ListFiles(ctx context.Context, deviceID, path string) ([]sdk.FileInfo, error) {
	return bound(b, ctx, false, func(ctx context.Context) ([]sdk.FileInfo, error) { return b.d.ListFiles(ctx, deviceID, path) })
}

func (b *leased) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.PullFile(ctx, deviceID, path, w) })
}

func (b *leased) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	return bound(b, ctx, true, func(ctx context.Context) (int64, error) { return b.d.PushFile(ctx, deviceID, path, r) })
}

func (b *leased) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	return bound0(b, ctx, true, func(ctx context.Context) error { return b.d.DeleteFile(ctx, deviceID, path, recursive) })
}

func (b *leased) ListNotifications(ctx context.Context, deviceID string) ([]sdk.Notification, error) {
	return bound(b, ctx, false, func(ctx context.Context) ([]sdk.Notification, error) { return b.d.ListNotifications(ctx, deviceID) })
}

func (b *leased) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	return bound(b, ctx, false, func(ctx context.Context) (int, error) {
		return b.d.CreateDisplay(ctx, deviceID, width, height, densityDPI)
	})
}

func (b *leased) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	return bound0(b, ctx, false, func(ctx context.Context) error { return b.d.RemoveDisplay(ctx, deviceID, displayID) })
}
