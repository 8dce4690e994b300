package drivertest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Cases about acting on a device: Act, Input, Wake, Unlock, WaitIdle.

// lockCases run before the cases that unlock the device, so that a
// device that starts locked shows how it refuses a wrong PIN.
var lockCases = []Case{
	{Name: "wake-idempotent", Capability: sdk.CapWake, NeedsDevice: true, Doc: "Wake twice succeeds both times and leaves the screen on", run: checkWake},
	{Name: "unlock-wrong-pin", Capability: sdk.CapUnlock, NeedsDevice: true, Doc: "Unlock with a wrong PIN answers WRONG_PIN and the device stays locked; a malformed PIN answers INVALID_ARGUMENT", run: checkUnlockWrongPIN},
	{Name: "unlock-pin", Capability: sdk.CapUnlock, NeedsDevice: true, Doc: "Unlock with the PIN from the options unlocks the device, and again is harmless", run: checkUnlockPIN},
}

var actCases = []Case{
	{Name: "act-empty", NeedsDevice: true, Doc: "Act without an action answers INVALID_ARGUMENT", run: checkActEmpty},
	{Name: "act-bad-coordinates", NeedsDevice: true, Doc: "tap, double tap, long press and swipe outside the screen answer INVALID_ARGUMENT", run: checkActBadCoordinates},
	{Name: "act-bad-arguments", NeedsDevice: true, Doc: "actions with a field outside its limits (durations, amount, text, key, app id, URL) answer INVALID_ARGUMENT", run: checkActBadArguments},
	{Name: "act-tap-effect", NeedsDevice: true, Doc: "a tap on a clickable element changes the screen, or the driver says what it did", run: checkActTapEffect},
	{Name: "act-launch-unknown-app", NeedsDevice: true, Doc: "launching an app that is not installed answers NOT_FOUND (APP_NOT_FOUND)", run: checkLaunchUnknownApp},
	{Name: "act-pinch", NeedsDevice: true, Doc: "with pinch declared, a pinch spreading two fingers at a quiet point is done, and a centre outside the screen or a scale outside its limits answers INVALID_ARGUMENT; without it, a pinch answers UNSUPPORTED (INVALID_ARGUMENT from a driver older than the field)", run: checkActPinch},
	{Name: "input-tap", Capability: sdk.CapInput, NeedsDevice: true, Doc: "Input applies a tap as DOWN and UP; a point outside the screen answers INVALID_ARGUMENT", run: checkInputTap},
	{Name: "wait-idle", Capability: sdk.CapWaitIdle, NeedsDevice: true, Doc: "WaitIdle returns within its timeout; a timeout of 0 answers INVALID_ARGUMENT", run: checkWaitIdle},
}

func checkActEmpty(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	_, err := s.drv.Act(ctx, dev, sdk.Action{})
	wantErr(t, fmt.Sprintf("Act with no action on device %q", dev), err, sdk.ErrInvalidArgument)
}

func checkActBadCoordinates(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.ready(t, ctx)
	in := sdk.Point{X: sc.Width / 2, Y: sc.Height / 2}
	bad := []sdk.Point{{X: -1, Y: in.Y}, {X: in.X, Y: -1}, {X: sc.Width, Y: in.Y}, {X: in.X, Y: sc.Height}, {X: sc.Width + 100, Y: sc.Height + 100}}
	for _, p := range bad {
		for _, a := range []sdk.Action{
			{Kind: sdk.ActTap, Point: p},
			{Kind: sdk.ActDoubleTap, Point: p},
			{Kind: sdk.ActLongPress, Point: p},
			{Kind: sdk.ActSwipe, Point: p, To: in},
			{Kind: sdk.ActSwipe, Point: in, To: p},
		} {
			_, err := s.drv.Act(ctx, dev, a)
			what := fmt.Sprintf("Act(%s) at %v → %v on the %dx%d screen of device %q", a.Kind, a.Point, a.To, sc.Width, sc.Height, dev)
			if a.Kind != sdk.ActSwipe {
				what = fmt.Sprintf("Act(%s) at %v on the %dx%d screen of device %q", a.Kind, a.Point, sc.Width, sc.Height, dev)
			}
			wantErr(t, what, err, sdk.ErrInvalidArgument)
		}
	}
}

func checkActBadArguments(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.ready(t, ctx)
	in := sdk.Point{X: sc.Width / 2, Y: sc.Height / 2}
	long := strings.Repeat("a", 8193)
	tests := []struct {
		what string
		a    sdk.Action
	}{
		{"long press of 10001 ms", sdk.Action{Kind: sdk.ActLongPress, Point: in, Duration: 10001 * time.Millisecond}},
		{"swipe of 10001 ms", sdk.Action{Kind: sdk.ActSwipe, Point: in, To: sdk.Point{X: in.X, Y: in.Y / 2}, Duration: 10001 * time.Millisecond}},
		{"scroll with no direction", sdk.Action{Kind: sdk.ActScroll}},
		{"scroll by 1001 permille", sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown, Amount: 1001}},
		{"scroll at a point outside the screen", sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown, HasPoint: true, Point: sdk.Point{X: -1, Y: -1}}},
		{"type of no text", sdk.Action{Kind: sdk.ActType}},
		{"type of 4097 characters", sdk.Action{Kind: sdk.ActType, Text: long[:4097]}},
		{"key with no key", sdk.Action{Kind: sdk.ActKey}},
		{"launch with no app id", sdk.Action{Kind: sdk.ActLaunch}},
		{"stop with no app id", sdk.Action{Kind: sdk.ActStop}},
		{"launch with an app id of 257 bytes", sdk.Action{Kind: sdk.ActLaunch, AppID: long[:257]}},
		{"open_url with no URL", sdk.Action{Kind: sdk.ActOpenURL}},
		{"open_url with a relative URL", sdk.Action{Kind: sdk.ActOpenURL, URL: "example/page"}},
		{"open_url with a URL without a scheme", sdk.Action{Kind: sdk.ActOpenURL, URL: "//example.com/page"}},
		{"open_url with 8193 bytes", sdk.Action{Kind: sdk.ActOpenURL, URL: "https://example.com/" + long[:8193-len("https://example.com/")]}},
	}
	for _, tt := range tests {
		_, err := s.drv.Act(ctx, dev, tt.a)
		wantErr(t, fmt.Sprintf("Act(%s) on device %q", tt.what, dev), err, sdk.ErrInvalidArgument)
	}
}

func checkActPinch(t T, s *suite) {
	if !s.serves(t, sdk.CapPinch) {
		checkActPinchUndeclared(t, s)
		return
	}
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.ready(t, ctx)
	// Spreading fingers (zoom in) at a point outside every control, because
	// bringing them together opens the home screen's editor on some launchers.
	p := quietPoint(sc)
	a := sdk.Action{Kind: sdk.ActPinch, Point: p, Scale: 1500, Duration: 300 * time.Millisecond}
	res, err := s.drv.Act(ctx, dev, a)
	if err != nil {
		t.Errorf("Act(pinch) of 1500‰ at %v on the %dx%d screen of device %q: got %s; want it done", p, sc.Width, sc.Height, dev, errText(err))
	} else if res.Detail != "" {
		t.Logf("Act(pinch) at %v: the driver says %q", p, res.Detail)
	}
	in := sdk.Point{X: sc.Width / 2, Y: sc.Height / 2}
	tests := []struct {
		what string
		a    sdk.Action
	}{
		{"with the centre left of the screen", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: -1, Y: in.Y}, Scale: 2000}},
		{"with the centre below the screen", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: in.X, Y: sc.Height}, Scale: 2000}},
		{"with the centre right of the screen", sdk.Action{Kind: sdk.ActPinch, Point: sdk.Point{X: sc.Width, Y: in.Y}, Scale: 500}},
		{"of scale 0", sdk.Action{Kind: sdk.ActPinch, Point: in}},
		{"of scale 1000", sdk.Action{Kind: sdk.ActPinch, Point: in, Scale: 1000}},
		{"of scale 99", sdk.Action{Kind: sdk.ActPinch, Point: in, Scale: 99}},
		{"of scale 10001", sdk.Action{Kind: sdk.ActPinch, Point: in, Scale: 10001}},
		{"of 10001 ms", sdk.Action{Kind: sdk.ActPinch, Point: in, Scale: 2000, Duration: 10001 * time.Millisecond}},
	}
	for _, tt := range tests {
		_, err := s.drv.Act(ctx, dev, tt.a)
		wantErr(t, fmt.Sprintf("Act(pinch) %s on the %dx%d screen of device %q", tt.what, sc.Width, sc.Height, dev), err, sdk.ErrInvalidArgument)
	}
}

// checkActPinchUndeclared checks that a driver that does not declare pinch
// refuses one, with the code that says nothing reached the phone.
func checkActPinchUndeclared(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.ready(t, ctx)
	p := quietPoint(sc)
	_, err := s.drv.Act(ctx, dev, sdk.Action{Kind: sdk.ActPinch, Point: p, Scale: 1500})
	if !errors.Is(err, sdk.ErrUnsupported) && !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("Act(pinch) at %v on device %q, which does not declare %q: got %s; want UNSUPPORTED (gRPC UNIMPLEMENTED)", p, dev, sdk.CapPinch, errText(err))
	}
}

// tapTarget is the first clickable, enabled, visible element whose centre
// lies on the screen.
func tapTarget(sc *sdk.Screen) (sdk.Element, bool) {
	screen := sdk.Rect{Right: sc.Width, Bottom: sc.Height}
	for _, e := range sc.Elements {
		if e.Clickable && e.Enabled && e.Visible && !e.Bounds.Empty() && screen.Contains(e.Bounds.Center()) {
			return e, true
		}
	}
	return sdk.Element{}, false
}

func checkActTapEffect(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	s.ready(t, ctx)
	s.settle(t, ctx)
	before := s.screen(t, ctx)
	e, ok := tapTarget(before)
	if !ok {
		t.Skipf("the screen of device %q has no clickable, enabled, visible element to tap", dev)
	}
	p := e.Bounds.Center()
	res, err := s.drv.Act(ctx, dev, sdk.Action{Kind: sdk.ActTap, Point: p})
	switch {
	case errors.Is(err, sdk.ErrInvalidArgument), errors.Is(err, sdk.ErrUnsupported), errors.Is(err, sdk.ErrDeviceNotFound):
		t.Fatalf("Act(tap) at %v on %s of device %q: got %s; want it done", p, elementName(e), dev, errText(err))
	case err != nil:
		t.Logf("Act(tap) at %v on %s: the driver says %s", p, elementName(e), errText(err))
		return
	case res.Detail != "":
		t.Logf("Act(tap) at %v on %s: the driver says %q", p, elementName(e), res.Detail)
		return
	}
	// The screen may take a moment to react.
	deadline := time.Now().Add(3 * time.Second)
	for {
		s.settle(t, ctx)
		after := s.screen(t, ctx)
		if !cmp.Equal(shapeOf(before), shapeOf(after)) {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("Act(tap) at %v on %s of device %q: the screen did not change within 3s and the reply has no detail; "+
				"want a change, or a detail or error that says why not", p, elementName(e), dev)
			return
		}
	}
}

func checkLaunchUnknownApp(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	s.ready(t, ctx)
	_, err := s.drv.Act(ctx, dev, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.drivertest.notinstalled"})
	wantErr(t, fmt.Sprintf("Act(launch) of an app that is not installed on device %q", dev), err, sdk.ErrAppNotFound)
}

// quietPoint is a point on the screen outside every clickable element, or
// the centre when there is none.
func quietPoint(sc *sdk.Screen) sdk.Point {
	for y := 1; y < 8; y++ {
		for x := 1; x < 4; x++ {
			p := sdk.Point{X: sc.Width * x / 4, Y: sc.Height * y / 8}
			hit := false
			for _, e := range sc.Elements {
				if (e.Clickable || e.LongClickable || e.Editable) && e.Bounds.Contains(p) {
					hit = true
					break
				}
			}
			if !hit {
				return p
			}
		}
	}
	return sdk.Point{X: sc.Width / 2, Y: sc.Height / 2}
}

func checkInputTap(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	sc := s.screen(t, ctx)
	p := quietPoint(sc)
	n, err := s.drv.Input(ctx, events(
		sdk.InputEvent{DeviceID: dev, Pointer: &sdk.PointerEvent{Action: sdk.PointerDown, Point: p}},
		sdk.InputEvent{DeviceID: dev, Pointer: &sdk.PointerEvent{Action: sdk.PointerUp, Point: p}},
	))
	if err != nil {
		t.Errorf("Input DOWN, UP at %v on device %q: %s", p, dev, errText(err))
	} else if n != 2 {
		t.Errorf("Input DOWN, UP at %v on device %q: applied %d; want 2", p, dev, n)
	}
	bad := sdk.Point{X: -1, Y: -1}
	_, err = s.drv.Input(ctx, events(sdk.InputEvent{DeviceID: dev, Pointer: &sdk.PointerEvent{Action: sdk.PointerDown, Point: bad}}))
	wantErr(t, fmt.Sprintf("Input DOWN at %v on device %q", bad, dev), err, sdk.ErrInvalidArgument)
}

func checkWaitIdle(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	const timeout = 2 * time.Second
	start := time.Now()
	idle, err := s.drv.WaitIdle(ctx, dev, timeout)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("WaitIdle(%v) on device %q: %s", timeout, dev, errText(err))
	}
	if took > timeout+time.Second {
		t.Errorf("WaitIdle(%v) on device %q took %v; want at most the timeout (plus 1s)", timeout, dev, took.Round(time.Millisecond))
	}
	t.Logf("WaitIdle(%v): idle %v after %v", timeout, idle, took.Round(time.Millisecond))
	_, err = s.drv.WaitIdle(ctx, dev, 0)
	wantErr(t, fmt.Sprintf("WaitIdle with timeout 0 on device %q", dev), err, sdk.ErrInvalidArgument)
}

func checkWake(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	for i := range 2 {
		if err := s.drv.Wake(ctx, dev); err != nil {
			t.Fatalf("Wake #%d on device %q: got %s; want success", i+1, dev, errText(err))
		}
	}
	if sc := s.screen(t, ctx); !sc.ScreenOn {
		t.Errorf("device %q after Wake: screen_on false; want true", dev)
	}
}

// wrongPIN returns a well-formed PIN that is not pin.
func wrongPIN(pin string) string {
	for _, p := range []string{"0918273645546372", "1029384756657483"} {
		if p != pin {
			return p
		}
	}
	return "0000"
}

func checkUnlockWrongPIN(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	for _, pin := range []string{"12", "12345678901234567", "abcd"} {
		err := s.drv.Unlock(ctx, dev, pin)
		wantErr(t, fmt.Sprintf("Unlock with the malformed PIN %q on device %q", pin, dev), err, sdk.ErrInvalidArgument)
	}
	sc := s.screen(t, ctx)
	if sc.LockState != sdk.LockLocked {
		// SPEC.md: Unlock succeeds at once when already unlocked.
		if err := s.drv.Unlock(ctx, dev, wrongPIN(s.opts.PIN)); err != nil {
			t.Errorf("Unlock with any PIN on unlocked device %q: got %s; want success at once", dev, errText(err))
		}
		t.Skipf("device %q is not locked; a wrong PIN can only be refused on a lock screen (the suite does not lock a phone)", dev)
	}
	err := s.drv.Unlock(ctx, dev, wrongPIN(s.opts.PIN))
	wantErr(t, fmt.Sprintf("Unlock with a wrong PIN on device %q", dev), err, sdk.ErrWrongPIN)
	if sc := s.screen(t, ctx); sc.LockState != sdk.LockLocked {
		t.Errorf("device %q after a wrong PIN: lock state %q; want %q", dev, sc.LockState, sdk.LockLocked)
	}
}

func checkUnlockPIN(t T, s *suite) {
	ctx := s.ctx(t)
	dev := s.deviceID(t)
	if s.opts.PIN == "" {
		t.Skipf("no PIN in the options (Options.PIN, --pin) to unlock device %q with", dev)
	}
	if s.serves(t, sdk.CapWake) {
		if err := s.drv.Wake(ctx, dev); err != nil {
			t.Fatalf("Wake on device %q: %s", dev, errText(err))
		}
	}
	for i := range 2 {
		if err := s.drv.Unlock(ctx, dev, s.opts.PIN); err != nil {
			t.Fatalf("Unlock #%d with the PIN from the options on device %q: got %s; want success", i+1, dev, errText(err))
		}
	}
	if sc := s.screen(t, ctx); sc.LockState != sdk.LockUnlocked {
		t.Errorf("device %q after Unlock: lock state %q; want %q", dev, sc.LockState, sdk.LockUnlocked)
	}
}
