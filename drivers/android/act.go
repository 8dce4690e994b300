package android

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Android key codes the driver sends itself.
const (
	keyWakeup  = 224
	keyEnter   = 66
	keyDel     = 67
	keyA       = 29
	keyMoveEnd = 123
	metaCtrlOn = 0x1000
)

// Act implements sdk.Driver.
func (d *Driver) Act(ctx context.Context, serial string, a sdk.Action) (sdk.ActResult, error) {
	p, dev, err := d.phone(ctx, serial)
	if err != nil {
		return sdk.ActResult{}, err
	}
	// The action's effect starts once it reached the phone: WaitIdle
	// counts its quiet period from here at the earliest.
	defer p.acted.now()
	if a.DisplayID != 0 {
		ds, err := d.display(p, a.DisplayID)
		if err != nil {
			return sdk.ActResult{}, err
		}
		return d.actOnDisplay(ctx, p, dev, ds, a)
	}
	switch a.Kind {
	case sdk.ActLaunch:
		return sdk.ActResult{}, launch(ctx, dev, a.AppID)
	case sdk.ActStop:
		if err := checkPackage(a.AppID); err != nil {
			return sdk.ActResult{}, err
		}
		_, err := shell(ctx, dev, "am force-stop "+a.AppID)
		return sdk.ActResult{}, err
	case sdk.ActOpenURL:
		return sdk.ActResult{}, openURL(ctx, dev, a.URL)
	}
	if a.Kind == sdk.ActPinch {
		// Two fingers are the scrcpy server's: without one the phone lacks
		// pinch, even while a session started before it went still runs.
		if err := d.lacks(serial, sdk.CapPinch); err != nil {
			return sdk.ActResult{}, err
		}
	}
	p.ctlMu.Lock()
	defer p.ctlMu.Unlock()
	s, err := d.control(ctx, p, dev, -1)
	if errors.Is(err, sdk.ErrUnsupported) {
		// No scrcpy server on this computer: adb shell input, slower.
		return sdk.ActResult{Detail: "adb shell input"}, d.shellAct(ctx, dev, a)
	}
	if err != nil {
		return sdk.ActResult{}, err
	}
	sent := s.c.Sent()
	err = d.inject(ctx, s, a)
	if s.alive() {
		return sdk.ActResult{}, err
	}
	if err != nil && s.c.Sent() == sent && ctx.Err() == nil {
		// The server was dead before the action's first message: nothing
		// reached the phone. Start it again, once.
		d.log.Warn("the scrcpy server died; starting it again", "serial", p.serial, "said", s.lastWords())
		if s, err = d.control(ctx, p, dev, -1); err != nil {
			return sdk.ActResult{}, err
		}
		err = d.inject(ctx, s, a)
		if s.alive() {
			return sdk.ActResult{}, err
		}
	}
	return sdk.ActResult{}, d.lost(ctx, p, s, err)
}

// lost is the error of an action whose scrcpy session ended under it, once
// some of its messages were written: the phone may or may not have done it,
// so the error is never one that says the action did not run. It says
// offline when the phone went away, else that the server ended.
func (d *Driver) lost(ctx context.Context, p *phone, s *session, err error) error {
	why := s.lastWords()
	if err != nil {
		why = err.Error()
	}
	if ctx.Err() != nil {
		return mapErr(ctx.Err())
	}
	// The adb server may take a moment to see the transport gone.
	for try := 0; ; try++ {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		list, lerr := d.adb.Devices(lctx)
		cancel()
		if lerr != nil {
			return sdk.Errorf(sdk.ErrDeviceOffline, "%s went away during the action (%s; %v): it may or may not have happened", p.serial, why, lerr)
		}
		d.remember(list)
		if _, info := d.known(p.serial); info.State != adb.StateDevice {
			state := info.State
			if state == "" {
				state = "gone"
			}
			return sdk.Errorf(sdk.ErrDeviceOffline, "%s went away during the action (%s, now %s): it may or may not have happened", p.serial, why, state)
		}
		if try == 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return sdk.Errorf(sdk.ErrInternal, "%s: the scrcpy server ended during the action (%s): it may or may not have happened", p.serial, why)
}

// inject performs a through scrcpy's control socket.
func (d *Driver) inject(ctx context.Context, s *session, a sdk.Action) error {
	c := s.c
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress, sdk.ActSwipe, sdk.ActPinch:
		if err := s.onScreen(a.Point); err != nil {
			return err
		}
	}
	if a.Kind == sdk.ActSwipe {
		if err := s.onScreen(a.To); err != nil {
			return err
		}
	}
	if a.Kind == sdk.ActScroll && a.HasPoint {
		if err := s.onScreen(a.Point); err != nil {
			return err
		}
	}
	pt := func(p sdk.Point) (int, int) { return s.point(p) }
	switch a.Kind {
	case sdk.ActTap:
		x, y := pt(a.Point)
		return c.Tap(x, y)
	case sdk.ActDoubleTap:
		x, y := pt(a.Point)
		if err := c.Tap(x, y); err != nil {
			return err
		}
		time.Sleep(80 * time.Millisecond)
		return c.Tap(x, y)
	case sdk.ActLongPress:
		x, y := pt(a.Point)
		return c.LongPress(ctx, x, y, a.Duration)
	case sdk.ActSwipe:
		x1, y1 := pt(a.Point)
		x2, y2 := pt(a.To)
		dur := a.Duration
		if dur == 0 {
			dur = 300 * time.Millisecond
		}
		return c.Swipe(ctx, sdk.Point{X: x1, Y: y1}, sdk.Point{X: x2, Y: y2}, dur)
	case sdk.ActScroll:
		from, to, err := scrollLine(s, a)
		if err != nil {
			return err
		}
		return c.Swipe(ctx, from, to, scrollMillis*time.Millisecond)
	case sdk.ActPinch:
		w, h := s.screen()
		f := sdk.Pinch(a.Point, a.Scale, w, h)
		var from, to [2]sdk.Point
		for i := range 2 {
			from[i].X, from[i].Y = pt(f.Start[i])
			to[i].X, to[i].Y = pt(f.End[i])
		}
		dur := a.Duration
		if dur == 0 {
			dur = 400 * time.Millisecond
		}
		return c.Pinch(ctx, from, to, dur)
	case sdk.ActKey:
		code, ok := scrcpy.Keycode(a.Key)
		if !ok {
			return sdk.Invalid("key %q has no Android key code", a.Key)
		}
		return c.Key(code)
	case sdk.ActType:
		return typeText(ctx, c, a)
	}
	return sdk.Invalid("action %q", a.Kind)
}

// typeText types a's text: ASCII as injected text, the rest through the
// clipboard (pasted, then the old clipboard put back).
func typeText(ctx context.Context, c *scrcpy.Client, a sdk.Action) error {
	if a.Replace {
		// Select all, then delete: the field's old text goes.
		if err := c.Send(scrcpy.InjectKeycode{Action: scrcpy.KeyActionDown, Keycode: keyA, MetaState: metaCtrlOn}); err != nil {
			return err
		}
		if err := c.Send(scrcpy.InjectKeycode{Action: scrcpy.KeyActionUp, Keycode: keyA, MetaState: metaCtrlOn}); err != nil {
			return err
		}
		if err := c.Key(keyDel); err != nil {
			return err
		}
	}
	if a.Text != "" {
		var err error
		if isASCII(a.Text) {
			err = c.Text(a.Text)
		} else {
			err = c.PasteText(ctx, a.Text)
		}
		if err != nil {
			return err
		}
	}
	if a.Submit {
		return c.Key(keyEnter)
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// scrollLine is the swipe that scrolls through the session: in the
// video's pixels, which touches are given in.
func scrollLine(s *session, a sdk.Action) (sdk.Point, sdk.Point, error) {
	w, h := s.c.VideoSize()
	at := sdk.Point{X: w / 2, Y: h / 2}
	if a.HasPoint {
		at.X, at.Y = s.point(a.Point)
	}
	return scrollSwipe(a, at, w, h)
}

// scrollSwipe is the swipe that scrolls a w×h screen at a point: across
// it against the direction (the finger moves up to show what is further
// down), Amount thousandths of the screen's side (600 by default), kept a
// pixel inside the screen. The scrcpy session and adb shell input both
// scroll with it, so a scroll moves the content as far either way.
func scrollSwipe(a sdk.Action, at sdk.Point, w, h int) (sdk.Point, sdk.Point, error) {
	amount := a.Amount
	if amount == 0 {
		amount = 600
	}
	dx, dy := w*amount/2000, h*amount/2000
	clamp := func(p sdk.Point) sdk.Point {
		return sdk.Point{X: min(max(p.X, 1), w-2), Y: min(max(p.Y, 1), h-2)}
	}
	switch a.Direction {
	case sdk.ScrollDown: // content moves up: the finger goes up
		return clamp(sdk.Point{X: at.X, Y: at.Y + dy}), clamp(sdk.Point{X: at.X, Y: at.Y - dy}), nil
	case sdk.ScrollUp:
		return clamp(sdk.Point{X: at.X, Y: at.Y - dy}), clamp(sdk.Point{X: at.X, Y: at.Y + dy}), nil
	case sdk.ScrollRight:
		return clamp(sdk.Point{X: at.X + dx, Y: at.Y}), clamp(sdk.Point{X: at.X - dx, Y: at.Y}), nil
	case sdk.ScrollLeft:
		return clamp(sdk.Point{X: at.X - dx, Y: at.Y}), clamp(sdk.Point{X: at.X + dx, Y: at.Y}), nil
	}
	return sdk.Point{}, sdk.Point{}, sdk.Invalid("scroll direction %q", a.Direction)
}

// scrollMillis is how long a scroll's swipe takes, through scrcpy or adb.
const scrollMillis = 300

// shellAct performs a with adb shell input, when no scrcpy server can:
// a point off the screen is refused first, as the session refuses it, and
// a scroll is the session's swipe in the screen's pixels.
func (d *Driver) shellAct(ctx context.Context, dev *adb.Device, a sdk.Action) error {
	var w, h int
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress, sdk.ActSwipe, sdk.ActScroll:
		var err error
		if w, h, err = shellScreen(ctx, dev); err != nil {
			return err
		}
		if err := onShellScreen(a, w, h); err != nil {
			return err
		}
	}
	cmd, err := shellCommand(a, w, h)
	if errors.Is(err, errNotTypable) {
		return d.notTypable(dev.Serial())
	}
	if err != nil || cmd == "" {
		return err
	}
	_, err = shell(ctx, dev, cmd)
	return err
}

// errNotTypable is shellCommand's answer to text adb shell input cannot
// type.
var errNotTypable = errors.New("adb shell input cannot type this text")

// notTypable is the error of typing text that only the scrcpy server
// types, on a computer without one. It says neither the text nor which of
// its characters (the typed text is never logged).
func (d *Driver) notTypable(serial string) error {
	_, why := d.server()
	if why == nil {
		why = ErrNoScrcpyServer
	}
	reason, fix := scrcpyMissing(why)
	return sdk.Errorf(sdk.ErrUnsupported, "%s: this text needs the scrcpy server, whose clipboard paste types any script (adb shell input types only printable ASCII, and no literal %%s), and %s; nothing was typed; to enable it: %s", serial, reason, fix)
}

// shellCommand is the adb shell input command that performs a on a w×h
// screen (in its current orientation), or errNotTypable. The whole command
// is made before any of it runs: text it cannot type is refused before a
// replace deletes anything, and none of the text is typed.
//
// A double tap is two input commands in one shell call; before Android 12
// each starts a runtime of its own (input is app_process there, cmd input
// after), so the two taps may come further apart than the platform's
// double-tap timeout (300 ms), and the app then sees two taps.
func shellCommand(a sdk.Action, w, h int) (string, error) {
	var cmd string
	switch a.Kind {
	case sdk.ActTap:
		cmd = fmt.Sprintf("input tap %d %d", a.Point.X, a.Point.Y)
	case sdk.ActDoubleTap:
		cmd = fmt.Sprintf("input tap %d %d; input tap %d %d", a.Point.X, a.Point.Y, a.Point.X, a.Point.Y)
	case sdk.ActLongPress:
		ms := a.Duration.Milliseconds()
		if ms == 0 {
			ms = 800
		}
		cmd = fmt.Sprintf("input swipe %d %d %d %d %d", a.Point.X, a.Point.Y, a.Point.X, a.Point.Y, ms)
	case sdk.ActSwipe:
		ms := a.Duration.Milliseconds()
		if ms == 0 {
			ms = 300
		}
		cmd = fmt.Sprintf("input swipe %d %d %d %d %d", a.Point.X, a.Point.Y, a.To.X, a.To.Y, ms)
	case sdk.ActScroll:
		// A swipe, as through scrcpy: `input scroll` (Android 12 and later)
		// turns a mouse wheel, whose clicks are not a share of the screen.
		at := sdk.Point{X: w / 2, Y: h / 2}
		if a.HasPoint {
			at = a.Point
		}
		from, to, err := scrollSwipe(a, at, w, h)
		if err != nil {
			return "", err
		}
		cmd = fmt.Sprintf("input swipe %d %d %d %d %d", from.X, from.Y, to.X, to.Y, scrollMillis)
	case sdk.ActKey:
		code, ok := scrcpy.Keycode(a.Key)
		if !ok {
			return "", sdk.Invalid("key %q has no Android key code", a.Key)
		}
		cmd = fmt.Sprintf("input keyevent %d", code)
	case sdk.ActType:
		var parts []string
		if a.Replace {
			// To the end, then delete back: input has no select-all before
			// Android 13's keycombination.
			parts = append(parts, fmt.Sprintf("input keyevent %d", keyMoveEnd), "input keyevent"+strings.Repeat(fmt.Sprintf(" %d", keyDel), 100))
		}
		if a.Text != "" {
			t, ok := InputText(a.Text)
			if !ok {
				return "", errNotTypable
			}
			parts = append(parts, "input text "+t)
		}
		if a.Submit {
			parts = append(parts, fmt.Sprintf("input keyevent %d", keyEnter))
		}
		cmd = strings.Join(parts, "; ")
	case sdk.ActPinch:
		return "", sdk.Errorf(sdk.ErrUnsupported, "a pinch needs two fingers, which only the scrcpy server on this computer can put down (adb shell input has one)")
	default:
		return "", sdk.Invalid("action %q", a.Kind)
	}
	return cmd, nil
}

// shellScreen is the screen's size for adb shell input: wm size's, turned
// as dumpsys input's SurfaceOrientation says (the rotation Appium reads
// too).
func shellScreen(ctx context.Context, dev *adb.Device) (int, int, error) {
	out, err := shell(ctx, dev, "wm size; echo "+inputSep+"; dumpsys input")
	if err != nil {
		return 0, 0, err
	}
	wm, input, _ := bytes.Cut(out, []byte(inputSep))
	w, h, err := parseWmSize(wm)
	if err != nil {
		return 0, 0, sdk.Errorf(sdk.ErrInternal, "%s: %v", dev.Serial(), err)
	}
	if surfaceOrientation(input)%2 == 1 {
		w, h = h, w
	}
	return w, h, nil
}

// onShellScreen refuses an action of adb shell input at a point off the
// w×h screen, as the scrcpy session's does (input would touch nothing and
// say nothing).
func onShellScreen(a sdk.Action, w, h int) error {
	var points []sdk.Point
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress:
		points = []sdk.Point{a.Point}
	case sdk.ActScroll:
		if a.HasPoint {
			points = []sdk.Point{a.Point}
		}
	case sdk.ActSwipe:
		points = []sdk.Point{a.Point, a.To}
	}
	for _, p := range points {
		if p.X < 0 || p.Y < 0 || p.X >= w || p.Y >= h {
			return sdk.Invalid("point (%d,%d) is off the %dx%d screen", p.X, p.Y, w, h)
		}
	}
	return nil
}

// inputSep separates wm size's output from dumpsys input's.
const inputSep = "__PINKY_INPUT__"

// surfaceOrientation is the touchscreen's rotation in dumpsys input
// ("SurfaceOrientation: 1" is 90°), 0 when it says none.
func surfaceOrientation(out []byte) int {
	for line := range bytes.Lines(out) {
		if v, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("SurfaceOrientation:")); ok {
			if n, err := strconv.Atoi(string(bytes.TrimSpace(v))); err == nil {
				return n
			}
		}
	}
	return 0
}

// checkPackage refuses what is not an Android package name (it goes into a
// shell command).
func checkPackage(pkg string) error {
	if pkg == "" {
		return sdk.Invalid("app id is empty")
	}
	for _, r := range pkg {
		if !(r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return sdk.Invalid("app id %q is not an Android package name", pkg)
		}
	}
	return nil
}

// launch starts an app's launcher activity with monkey.
func launch(ctx context.Context, dev *adb.Device, pkg string) error {
	if err := checkPackage(pkg); err != nil {
		return err
	}
	out, err := shell(ctx, dev, "monkey --pct-syskeys 0 -p "+pkg+" -c android.intent.category.LAUNCHER 1")
	if err != nil && !strings.Contains(err.Error(), "No activities found") {
		return err
	}
	if err != nil || strings.Contains(string(out), "No activities found") || strings.Contains(string(out), "monkey aborted") {
		return sdk.Errorf(sdk.ErrAppNotFound, "no launchable app %q on %s", pkg, dev.Serial())
	}
	return nil
}

// openURL opens a URL with a VIEW intent.
func openURL(ctx context.Context, dev *adb.Device, url string) error {
	if url == "" || strings.ContainsAny(url, " \t\n'\"`$\\;&|<>") {
		return sdk.Invalid("URL %q", url)
	}
	out, err := shellAll(ctx, dev, "am start -a android.intent.action.VIEW -d '"+url+"'")
	if err != nil {
		return err
	}
	if said := amError(out); said != "" {
		return sdk.Errorf(sdk.ErrUnsupported, "no app on %s opens %s (am said: %s)", dev.Serial(), url, said)
	}
	return nil
}

// amError returns the error a real am prints when it starts nothing: am
// exits 0 then and writes "Error: …" (after "Error type 3" for a missing
// activity class) on stderr, or on stdout with -W. It returns "" when the
// output says nothing went wrong.
func amError(out []byte) string {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Error:") || strings.Contains(line, "unable to resolve Intent") {
			return line
		}
	}
	return ""
}

// Wake implements sdk.Waker with the wake-up key.
// The wake-up key goes through the phone's scrcpy session when one runs
// (milliseconds), else through adb shell input.
func (d *Driver) Wake(ctx context.Context, serial string) error {
	p, dev, err := d.phone(ctx, serial)
	if err != nil {
		return err
	}
	p.ctlMu.Lock()
	s := p.ctl
	p.ctlMu.Unlock()
	if s != nil && s.alive() && s.c.Key(keyWakeup) == nil {
		return nil
	}
	_, err = shell(ctx, dev, fmt.Sprintf("input keyevent %d", keyWakeup))
	return err
}

// Unlock implements sdk.Unlocker: wake, swipe up, type the PIN with key
// events, confirm, then check the lock state. The PIN is never logged.
func (d *Driver) Unlock(ctx context.Context, serial, pin string) error {
	if pin == "" || strings.Trim(pin, "0123456789") != "" {
		return sdk.Invalid("a PIN is digits")
	}
	_, dev, err := d.phone(ctx, serial)
	if err != nil {
		return err
	}
	state := func() (Lock, error) { return lockState(ctx, dev) }
	l, err := state()
	if err != nil {
		return err
	}
	if !l.Locked {
		return nil
	}
	w, h, err := screenSize(ctx, dev)
	if err != nil {
		return sdk.Errorf(sdk.ErrInternal, "%s: %v", serial, err)
	}
	cmd := fmt.Sprintf("input keyevent %d; input swipe %d %d %d %d 200; input text %s; input keyevent %d",
		keyWakeup, w/2, h*4/5, w/2, h/5, pin, keyEnter)
	if _, err := shell(ctx, dev, cmd); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), pin, "****"))
	}
	for range 10 {
		if l, err = state(); err != nil {
			return err
		}
		if !l.Locked {
			return nil
		}
		select {
		case <-ctx.Done():
			return mapErr(ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	return sdk.Errorf(sdk.ErrWrongPIN, "%s is still locked after the PIN", serial)
}

// lockState reads the lock and screen state.
func lockState(ctx context.Context, dev *adb.Device) (Lock, error) {
	out, err := shell(ctx, dev, "dumpsys window; echo; echo __PINKY_POWER__; dumpsys power")
	if err != nil {
		return Lock{}, err
	}
	window, power, _ := strings.Cut(string(out), stateSep)
	l := ParseLock([]byte(window), []byte(power))
	if !l.Known {
		return l, sdk.Errorf(sdk.ErrInternal, "%s: dumpsys says nothing of the lock", dev.Serial())
	}
	return l, nil
}

// Pinches reports that Act serves the pinch action: two fingers through
// scrcpy's touch injection. Without a scrcpy server the phones lack pinch
// (caps.go) and answer it with ErrUnsupported saying why.
func (d *Driver) Pinches() bool { return true }
