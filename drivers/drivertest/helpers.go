package drivertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"

	"google.golang.org/grpc/codes"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// unknownDevice is a well-formed device id that no driver should know.
const unknownDevice = "pinky-drivertest-no-such-device"

// errText names an error for a report line by what came over the wire:
// the reason when the status carried one, else the code and what became of
// the detail ("NOT_FOUND with no error detail"), so that a report never
// names a reason the driver did not send.
func errText(err error) string {
	if err == nil {
		return "no error"
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("a timeout (%v)", err)
	}
	w, ok := sdk.WireOf(err)
	if !ok {
		return fmt.Sprintf("%s (%v)", sdk.Category(err).Reason(), err)
	}
	switch w.Detail {
	case sdk.DetailKnown:
		return fmt.Sprintf("%s (%v)", w.Reason, err)
	case sdk.DetailUnknownReason:
		return fmt.Sprintf("%s with reason %q, which SPEC.md does not define (%v)", codeName(w.Code), w.Reason, err)
	}
	return fmt.Sprintf("%s with %s (%v)", codeName(w.Code), w.Detail, err)
}

// codeName is a gRPC code as SPEC.md writes it: NOT_FOUND, not NotFound.
func codeName(c codes.Code) string {
	var b strings.Builder
	for i, r := range c.String() {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToUpper(r))
	}
	return b.String()
}

// wantErr fails the case unless err belongs to category want. A bare code
// that SPEC.md gives want's meaning passes; a detail that does not parse,
// or a reason SPEC.md does not define, fails even when the code alone
// would have matched.
func wantErr(t T, what string, err error, want *sdk.Error) bool {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got %s; want %s", what, errText(err), want.Reason())
		return false
	}
	if w, ok := sdk.WireOf(err); ok && (w.Detail == sdk.DetailBroken || w.Detail == sdk.DetailUnknownReason) {
		t.Errorf("%s: got %s; want %s in a google.rpc.ErrorInfo detail (domain %q), or no detail", what, errText(err), want.Reason(), sdk.ErrorDomain)
		return false
	}
	return true
}

func stateName(s sdk.DeviceState) string {
	if s == sdk.StateUnknown {
		return "in no state"
	}
	return string(s)
}

// screen reads the main display of the device under test, ending the case
// when that fails.
func (s *suite) screen(t T, ctx context.Context) *sdk.Screen {
	t.Helper()
	dev := s.deviceID(t)
	sc, err := s.drv.Screen(ctx, dev, 0)
	if err != nil {
		t.Fatalf("GetScreen on device %q: %v", dev, errText(err))
	}
	if sc == nil {
		t.Fatalf("GetScreen on device %q: the reply has no screen", dev)
	}
	return sc
}

// ready brings the device under test to an unlocked screen that is on:
// it wakes the screen when the driver can, and unlocks with Options.PIN when
// the driver can and a PIN was given. Otherwise it skips the case, saying
// what is missing.
func (s *suite) ready(t T, ctx context.Context) *sdk.Screen {
	t.Helper()
	sc, why := s.tryReady(t, ctx)
	if why != "" {
		t.Skipf("%s", why)
	}
	return sc
}

// tryReady is ready that says why it could not, instead of skipping.
func (s *suite) tryReady(t T, ctx context.Context) (*sdk.Screen, string) {
	t.Helper()
	dev := s.deviceID(t)
	sc := s.screen(t, ctx)
	if !sc.ScreenOn || sc.LockState == sdk.LockLocked {
		if s.serves(t, sdk.CapWake) {
			if err := s.drv.Wake(ctx, dev); err != nil {
				t.Fatalf("Wake on device %q: %v", dev, errText(err))
			}
		}
		sc = s.screen(t, ctx)
	}
	if sc.LockState == sdk.LockLocked {
		switch {
		case !s.serves(t, sdk.CapUnlock):
			return sc, fmt.Sprintf("device %q is locked and does not serve %q; unlock it by hand", dev, sdk.CapUnlock)
		case s.opts.PIN == "":
			return sc, fmt.Sprintf("device %q is locked; give its PIN (Options.PIN, --pin) so that the suite can unlock it", dev)
		}
		if err := s.drv.Unlock(ctx, dev, s.opts.PIN); err != nil {
			t.Fatalf("Unlock on device %q with the PIN from the options: %v", dev, errText(err))
		}
		sc = s.screen(t, ctx)
		if sc.LockState == sdk.LockLocked {
			t.Fatalf("device %q: Unlock with the PIN from the options succeeded, but the screen still reads as locked", dev)
		}
	}
	if !sc.ScreenOn {
		return sc, fmt.Sprintf("the screen of device %q is off and the driver cannot wake it", dev)
	}
	return sc, ""
}

// settle waits for the device's screen to stop changing: through WaitIdle
// when the driver serves it, else by sleeping a little.
func (s *suite) settle(t T, ctx context.Context) {
	t.Helper()
	dev := s.deviceID(t)
	if s.serves(t, sdk.CapWaitIdle) {
		if _, err := s.drv.WaitIdle(ctx, dev, 3*time.Second); err != nil {
			t.Fatalf("WaitIdle on device %q: %v", dev, errText(err))
		}
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(500 * time.Millisecond):
	}
}

// probe calls one RPC of an optional capability with harmless arguments.
type probe struct {
	cap  sdk.Capability
	name string
	call func(ctx context.Context, c *sdk.Client, dev string) error
}

// probes covers every RPC of every optional capability. CapLockEvents has
// no RPC of its own.
var probes = []probe{
	{sdk.CapInput, "Input", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.Input(ctx, events(sdk.InputEvent{DeviceID: dev, Key: &sdk.KeyEvent{Action: sdk.KeyDown, Key: sdk.KeyVolumeDown}},
			sdk.InputEvent{DeviceID: dev, Key: &sdk.KeyEvent{Action: sdk.KeyUp, Key: sdk.KeyVolumeDown}}))
		return err
	}},
	{sdk.CapVideo, "StreamVideo", func(ctx context.Context, c *sdk.Client, dev string) error {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		err := c.StreamVideo(ctx, sdk.VideoRequest{DeviceID: dev}, func(sdk.VideoPacket) error { return errStop })
		if errors.Is(err, errStop) {
			return nil // it streams
		}
		if err == nil && ctx.Err() != nil {
			return context.DeadlineExceeded
		}
		return err
	}},
	{sdk.CapVideo, "RequestKeyFrame", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.RequestKeyFrame(ctx, dev, 0)
	}},
	{sdk.CapFrameCapture, "CaptureFrame", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: dev})
		return err
	}},
	{sdk.CapWake, "Wake", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.Wake(ctx, dev)
	}},
	{sdk.CapUnlock, "Unlock", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.Unlock(ctx, dev, "0918273645546372")
	}},
	{sdk.CapWaitIdle, "WaitIdle", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.WaitIdle(ctx, dev, 100*time.Millisecond)
		return err
	}},
	{sdk.CapApps, "ListApps", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.ListApps(ctx, dev)
		return err
	}},
	{sdk.CapNotifications, "ListNotifications", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.ListNotifications(ctx, dev)
		return err
	}},
	{sdk.CapFiles, "ListFiles", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.ListFiles(ctx, dev, "")
		return err
	}},
	{sdk.CapFiles, "PullFile", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.PullFile(ctx, dev, "pinky-drivertest-probe.txt", io.Discard)
	}},
	{sdk.CapFiles, "PushFile", func(ctx context.Context, c *sdk.Client, dev string) error {
		_, err := c.PushFile(ctx, dev, "pinky-drivertest-probe.txt", bytes.NewReader(nil))
		return err
	}},
	{sdk.CapFiles, "DeleteFile", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.DeleteFile(ctx, dev, "pinky-drivertest-probe.txt", false) // also removes PushFile's probe
	}},
	{sdk.CapDisplays, "CreateDisplay", func(ctx context.Context, c *sdk.Client, dev string) error {
		id, err := c.CreateDisplay(ctx, dev, 640, 480, 0)
		if err == nil { // a device that serves displays: leave none behind
			c.RemoveDisplay(ctx, dev, id) //nolint:errcheck // checked by the displays case
		}
		return err
	}},
	{sdk.CapDisplays, "RemoveDisplay", func(ctx context.Context, c *sdk.Client, dev string) error {
		return c.RemoveDisplay(ctx, dev, neverDisplay)
	}},
}

// events returns an Input source that yields evs, then io.EOF.
func events(evs ...sdk.InputEvent) func() (sdk.InputEvent, error) {
	return func() (sdk.InputEvent, error) {
		if len(evs) == 0 {
			return sdk.InputEvent{}, io.EOF
		}
		e := evs[0]
		evs = evs[1:]
		return e, nil
	}
}
