package ios

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Act implements sdk.Driver.
func (d *Driver) Act(ctx context.Context, deviceID string, a sdk.Action) (sdk.ActResult, error) {
	p, err := d.phone(deviceID)
	if err != nil {
		return sdk.ActResult{}, err
	}
	if a.DisplayID != 0 {
		return sdk.ActResult{}, sdk.Invalid("display %d: an iPhone has display 0 only", a.DisplayID)
	}
	scale, err := p.pixels(ctx)
	if err != nil {
		return sdk.ActResult{}, mapErr(deviceID, err)
	}
	return sdk.ActResult{}, mapErr(deviceID, p.act(ctx, scale, a))
}

// act performs a, whose points are pixels, through WDA, which takes points.
func (p *phone) act(ctx context.Context, scale float64, a sdk.Action) error {
	pt := func(q sdk.Point) (float64, float64) { return float64(q.X) / scale, float64(q.Y) / scale }
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress, sdk.ActSwipe, sdk.ActPinch:
		if err := p.onScreen(a.Point, scale); err != nil {
			return err
		}
	}
	switch a.Kind {
	case sdk.ActTap:
		x, y := pt(a.Point)
		return p.wda.Tap(ctx, x, y)
	case sdk.ActDoubleTap:
		x, y := pt(a.Point)
		return p.wda.DoubleTap(ctx, x, y)
	case sdk.ActLongPress:
		x, y := pt(a.Point)
		dur := a.Duration
		if dur == 0 {
			dur = time.Second
		}
		return p.wda.TouchAndHold(ctx, x, y, dur)
	case sdk.ActSwipe:
		if err := p.onScreen(a.To, scale); err != nil {
			return err
		}
		x1, y1 := pt(a.Point)
		x2, y2 := pt(a.To)
		dur := a.Duration
		if dur == 0 {
			dur = 300 * time.Millisecond
		}
		return p.wda.Swipe(ctx, x1, y1, x2, y2, dur)
	case sdk.ActPinch:
		w, h := p.screenSize(scale)
		f := sdk.Pinch(a.Point, a.Scale, w, h)
		var from, to [2][2]float64
		for i := range 2 {
			from[i][0], from[i][1] = pt(f.Start[i])
			to[i][0], to[i][1] = pt(f.End[i])
		}
		dur := a.Duration
		if dur == 0 {
			dur = 500 * time.Millisecond
		}
		return p.wda.Pinch(ctx, from, to, dur)
	case sdk.ActScroll:
		x1, y1, x2, y2, err := p.scrollLine(a, scale)
		if err != nil {
			return err
		}
		return p.wda.Swipe(ctx, x1, y1, x2, y2, 300*time.Millisecond)
	case sdk.ActType:
		return p.typeText(ctx, a)
	case sdk.ActKey:
		return p.key(ctx, a.Key)
	case sdk.ActLaunch:
		return appErr(a.AppID, p.wda.Activate(ctx, a.AppID))
	case sdk.ActStop:
		_, err := p.wda.Terminate(ctx, a.AppID)
		return appErr(a.AppID, err)
	case sdk.ActOpenURL:
		return p.wda.OpenURL(ctx, a.URL)
	}
	return sdk.Invalid("action %q", a.Kind)
}

// onScreen checks that q, in pixels, is on the screen as last read (or,
// before any read, as WDA gives its size).
func (p *phone) onScreen(q sdk.Point, scale float64) error {
	w, h := p.screenSize(scale)
	if q.X < 0 || q.Y < 0 || q.X >= w || q.Y >= h {
		return sdk.Invalid("point (%d,%d) is off the %dx%d screen", q.X, q.Y, w, h)
	}
	return nil
}

// screenSize is the screen in the pixels agents see: as last shown, else
// WDA's size in points times scale.
func (p *phone) screenSize(scale float64) (w, h int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	w, h = p.shown[0], p.shown[1]
	if w == 0 || h == 0 {
		w, h = int(math.Round(p.size[0]*scale)), int(math.Round(p.size[1]*scale))
	}
	return w, h
}

// scrollLine is the finger's path, in points, for a scroll: a scroll down
// shows what is below, so the finger goes up.
func (p *phone) scrollLine(a sdk.Action, scale float64) (x1, y1, x2, y2 float64, err error) {
	p.mu.Lock()
	w, h := p.size[0], p.size[1]
	if p.shown[0] > 0 && p.shown[1] > 0 {
		w, h = float64(p.shown[0])/scale, float64(p.shown[1])/scale
	}
	p.mu.Unlock()
	at := [2]float64{w / 2, h / 2}
	if a.HasPoint {
		if err := p.onScreen(a.Point, scale); err != nil {
			return 0, 0, 0, 0, err
		}
		at = [2]float64{float64(a.Point.X) / scale, float64(a.Point.Y) / scale}
	}
	amount := a.Amount
	if amount == 0 {
		amount = 600
	}
	dx, dy := w*float64(amount)/2000, h*float64(amount)/2000
	cx := func(v float64) float64 { return math.Min(math.Max(v, 1), w-2) }
	cy := func(v float64) float64 { return math.Min(math.Max(v, 1), h-2) }
	switch a.Direction {
	case sdk.ScrollDown:
		return at[0], cy(at[1] + dy), at[0], cy(at[1] - dy), nil
	case sdk.ScrollUp:
		return at[0], cy(at[1] - dy), at[0], cy(at[1] + dy), nil
	case sdk.ScrollRight:
		return cx(at[0] + dx), at[1], cx(at[0] - dx), at[1], nil
	case sdk.ScrollLeft:
		return cx(at[0] - dx), at[1], cx(at[0] + dx), at[1], nil
	}
	return 0, 0, 0, 0, sdk.Invalid("scroll direction %q", a.Direction)
}

// WDA's keys: XCUIKeyboardKeyDelete and XCUIKeyboardKeyReturn.
const (
	keyDelete = "\b"
	keyReturn = "\n"
)

// typeText types into the focused field; Replace first deletes what the
// field holds, Submit presses return after.
func (p *phone) typeText(ctx context.Context, a sdk.Action) error {
	if a.Replace {
		n, err := p.focusedLength(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			if err := p.wda.Keys(ctx, strings.Repeat(keyDelete, n)); err != nil {
				return err
			}
		}
	}
	text := a.Text
	if a.Submit {
		text += keyReturn
	}
	if text == "" {
		return nil
	}
	return p.wda.Keys(ctx, text)
}

// focusedLength is how many characters the focused field holds; a field
// showing only its placeholder holds none.
func (p *phone) focusedLength(ctx context.Context) (int, error) {
	src, err := p.wda.Source(ctx)
	if err != nil {
		return 0, err
	}
	s, err := dump.ParseWDA(src)
	if err != nil {
		return 0, sdk.Errorf(sdk.ErrInternal, "%v", err)
	}
	for _, e := range s.Elements {
		if e.Focused && e.Editable {
			if e.Text == "" || e.Text == e.Hint {
				return 0, nil
			}
			return len([]rune(e.Text)), nil
		}
	}
	return 0, sdk.Errorf(sdk.ErrNoFocus, "no text field has the focus: tap one first")
}

// key presses k: the buttons an iPhone has, and the keyboard's delete and
// return.
func (p *phone) key(ctx context.Context, k sdk.Key) error {
	switch k {
	case sdk.KeyHome:
		return p.wda.Home(ctx)
	case sdk.KeyVolumeUp:
		return p.wda.PressButton(ctx, "volumeUp")
	case sdk.KeyVolumeDown:
		return p.wda.PressButton(ctx, "volumeDown")
	case sdk.KeyEnter:
		return p.wda.Keys(ctx, keyReturn)
	case sdk.KeyDelete:
		return p.wda.Keys(ctx, keyDelete)
	case sdk.KeyTab:
		return p.wda.Keys(ctx, "\t")
	case sdk.KeyPower, sdk.KeySleep:
		p.setWoken(false)
		return p.wda.Lock(ctx)
	case sdk.KeyWake:
		return p.wake(ctx)
	case sdk.KeyBack:
		return sdk.Errorf(sdk.ErrUnsupported, "an iPhone has no back key: tap the app's back button, or swipe from the left edge")
	}
	return sdk.Errorf(sdk.ErrUnsupported, "key %q: an iPhone has home, volume up/down, power, and the keyboard's return and delete", k)
}

// appErr says that an app WDA does not know is not installed.
func appErr(id string, err error) error {
	var we *wda.Error
	if errors.As(err, &we) && (we.HTTPStatus == 400 || we.HTTPStatus == 500) &&
		(strings.Contains(strings.ToLower(we.Message), "not installed") || strings.Contains(strings.ToLower(we.Message), "cannot be found") ||
			strings.Contains(strings.ToLower(we.Message), "unknown bundle") || strings.Contains(strings.ToLower(we.Message), "no app")) {
		return sdk.Errorf(sdk.ErrAppNotFound, "%s is not installed", id)
	}
	return err
}

// Wake implements sdk.Waker: a locked iPhone's screen lights up with a press
// of home; an unlocked one is awake already.
func (d *Driver) Wake(ctx context.Context, deviceID string) error {
	p, err := d.phone(deviceID)
	if err != nil {
		return err
	}
	return mapErr(deviceID, p.wake(ctx))
}

func (p *phone) wake(ctx context.Context) error {
	locked, err := p.wda.Locked(ctx)
	if err != nil || !locked {
		return err
	}
	if err := p.wda.PressButton(ctx, "home"); err != nil {
		return err
	}
	p.setWoken(true)
	return nil
}

// Unlock implements sdk.Unlocker. Without a PIN it is WDA's unlock, which
// works on a phone without a passcode. With one, a press of home wakes the
// phone, the driver taps the PIN's digits on the passcode pad (swiping up
// first when the lock screen hides it) and checks the lock state. WDA's own
// unlock is not used then: with a passcode it waits seconds and fails.
func (d *Driver) Unlock(ctx context.Context, deviceID, pin string) error {
	p, err := d.phone(deviceID)
	if err != nil {
		return err
	}
	return mapErr(deviceID, p.unlock(ctx, pin))
}

func (p *phone) unlock(ctx context.Context, pin string) error {
	locked, err := p.wda.Locked(ctx)
	if err != nil || !locked {
		return err
	}
	if pin == "" {
		if err := p.wda.Unlock(ctx); err != nil {
			var we *wda.Error
			if errors.As(err, &we) {
				return sdk.Errorf(sdk.ErrLocked, "the phone has a passcode: a PIN is needed")
			}
			return err
		}
		return nil
	}
	if err := p.wake(ctx); err != nil {
		return err
	}
	keys, err := p.passcodePad(ctx)
	if err != nil {
		return err
	}
	scale, err := p.pixels(ctx)
	if err != nil {
		return err
	}
	for _, r := range pin {
		k, ok := keys[r]
		if !ok {
			return sdk.Invalid("the PIN may hold digits only")
		}
		if err := p.wda.Tap(ctx, k[0]/scale, k[1]/scale); err != nil {
			return err
		}
	}
	// iOS unlocks as the last digit lands; give it a moment to check.
	for i := 0; i < 10; i++ {
		if locked, err = p.wda.Locked(ctx); err != nil || !locked {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
	}
	return sdk.Errorf(sdk.ErrWrongPIN, "the phone stayed locked after the PIN")
}

// passcodePad finds the passcode pad's digit keys (their centres, in
// pixels); when the lock screen does not show it yet, a swipe up does.
func (p *phone) passcodePad(ctx context.Context) (map[rune][2]float64, error) {
	for try := 0; try < 2; try++ {
		src, err := p.wda.Source(ctx)
		if err != nil {
			return nil, err
		}
		s, err := dump.ParseWDA(src)
		if err != nil {
			return nil, sdk.Errorf(sdk.ErrInternal, "%v", err)
		}
		scale, err := p.pixels(ctx)
		if err != nil {
			return nil, err
		}
		scaleScreen(s, scale)
		keys := map[rune][2]float64{}
		for _, e := range s.Elements {
			if !e.Clickable {
				continue
			}
			label := strings.TrimSpace(e.Text)
			if label == "" {
				label = strings.TrimSpace(e.ContentDescription)
			}
			// A pad key's label is its digit, sometimes followed by letters ("2 ABC").
			if r := []rune(label); len(r) >= 1 && r[0] >= '0' && r[0] <= '9' && (len(r) == 1 || r[1] == ' ') {
				b := e.Bounds
				keys[r[0]] = [2]float64{float64(b.Left+b.Right) / 2, float64(b.Top+b.Bottom) / 2}
			}
		}
		if len(keys) == 10 {
			return keys, nil
		}
		if try == 0 {
			p.mu.Lock()
			w, h := p.size[0], p.size[1]
			p.mu.Unlock()
			if err := p.wda.Swipe(ctx, w/2, h*0.95, w/2, h*0.3, 250*time.Millisecond); err != nil {
				return nil, err
			}
		}
	}
	return nil, sdk.Errorf(sdk.ErrUnsupported, "the passcode pad is not reachable through WebDriverAgent on this phone: ask the person to unlock it")
}

// builtinApps are iOS's own apps, which every iPhone has (WDA cannot list
// installed apps).
var builtinApps = []sdk.App{
	{ID: "com.apple.AppStore", Label: "App Store"},
	{ID: "com.apple.mobilecal", Label: "Calendar"},
	{ID: "com.apple.camera", Label: "Camera"},
	{ID: "com.apple.mobiletimer", Label: "Clock"},
	{ID: "com.apple.MobileAddressBook", Label: "Contacts"},
	{ID: "com.apple.facetime", Label: "FaceTime"},
	{ID: "com.apple.DocumentsApp", Label: "Files"},
	{ID: "com.apple.Health", Label: "Health"},
	{ID: "com.apple.mobilemail", Label: "Mail"},
	{ID: "com.apple.Maps", Label: "Maps"},
	{ID: "com.apple.MobileSMS", Label: "Messages"},
	{ID: "com.apple.Music", Label: "Music"},
	{ID: "com.apple.mobilenotes", Label: "Notes"},
	{ID: "com.apple.mobilephone", Label: "Phone"},
	{ID: "com.apple.mobileslideshow", Label: "Photos"},
	{ID: "com.apple.reminders", Label: "Reminders"},
	{ID: "com.apple.mobilesafari", Label: "Safari"},
	{ID: "com.apple.Preferences", Label: "Settings"},
	{ID: "com.apple.shortcuts", Label: "Shortcuts"},
	{ID: "com.apple.weather", Label: "Weather"},
}

// ListApps implements sdk.AppLister: iOS's own apps, the apps the phone
// list names, and apps the driver has seen in front.
func (d *Driver) ListApps(ctx context.Context, deviceID string) ([]sdk.App, error) {
	p, err := d.phone(deviceID)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	var apps []sdk.App
	add := func(a sdk.App) {
		if i, ok := seen[a.ID]; ok {
			if a.Label != "" && !a.System {
				apps[i].Label = a.Label
			}
			return
		}
		seen[a.ID] = len(apps)
		apps = append(apps, a)
	}
	for _, a := range builtinApps {
		a.System = true
		add(a)
	}
	for _, a := range p.cfg.Apps {
		label := a.Label
		if label == "" {
			label = a.ID[strings.LastIndexByte(a.ID, '.')+1:]
		}
		add(sdk.App{ID: a.ID, Label: label})
	}
	p.mu.Lock()
	for id, name := range p.names {
		add(sdk.App{ID: id, Label: name})
	}
	p.mu.Unlock()
	return apps, nil
}

// StreamVideo implements sdk.Streamer with the broadcast's H.264. A phone
// serves video only while its broadcast is connected (caps.go): else it
// answers ErrUnsupported with the reason and the fix. A stream that runs
// when the broadcast drops waits for it to connect again.
func (d *Driver) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	p, err := d.phone(req.DeviceID)
	if err != nil {
		return err
	}
	if req.DisplayID != 0 {
		return sdk.Invalid("display %d: an iPhone has display 0 only", req.DisplayID)
	}
	if req.Codec != "" && req.Codec != sdk.CodecH264 {
		return sdk.Invalid("codec %q: the broadcast sends h264", req.Codec)
	}
	if err := p.lacks(sdk.CapVideo); err != nil {
		return err
	}
	p.mu.Lock()
	if p.streaming {
		p.mu.Unlock()
		return sdk.Errorf(sdk.ErrBusy, "%s: a video stream runs already (the gateway shares one per screen)", req.DeviceID)
	}
	p.streaming = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.streaming = false
		p.mu.Unlock()
	}()
	return p.rx.Subscribe(ctx, send)
}

// RequestKeyFrame implements sdk.Streamer. While the broadcast is not
// connected the phone does not serve video, and it answers ErrUnsupported.
func (d *Driver) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	p, err := d.phone(deviceID)
	if err != nil {
		return err
	}
	if err := p.lacks(sdk.CapVideo); err != nil {
		return err
	}
	if err := p.rx.RequestKeyFrame(); err != nil && !errors.Is(err, video.ErrNoBroadcast) {
		return mapErr(deviceID, err)
	}
	return nil // without a broadcast no stream runs: nothing to do (SPEC.md 5.7)
}

// inputState is the mirror's finger between down and up.
type inputState struct {
	down     bool
	from, at sdk.Point
	since    time.Time
}

// Input implements sdk.Inputter for the person's mirror: a finger's down
// and up become a tap, a long press or a swipe (WDA has no raw touch
// stream); keys and text go as in Act.
func (d *Driver) Input(ctx context.Context, next func() (sdk.InputEvent, error)) (int64, error) {
	var n int64
	for {
		ev, err := next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			return n, err
		}
		p, err := d.phone(ev.DeviceID)
		if err != nil {
			return n, err
		}
		if err := p.input(ctx, ev); err != nil {
			return n, mapErr(ev.DeviceID, err)
		}
		n++
	}
}

func (p *phone) input(ctx context.Context, ev sdk.InputEvent) error {
	scale, err := p.pixels(ctx)
	if err != nil {
		return err
	}
	switch {
	case ev.Text != "":
		return p.wda.Keys(ctx, ev.Text)
	case ev.Key != nil:
		if ev.Key.Action != sdk.KeyUp {
			return nil
		}
		return p.key(ctx, ev.Key.Key)
	case ev.Pointer != nil:
		pe := ev.Pointer
		if pe.Action != sdk.PointerCancel {
			if err := p.onScreen(pe.Point, scale); err != nil {
				return err
			}
		}
		p.mu.Lock()
		st := p.inputs
		switch pe.Action {
		case sdk.PointerDown:
			p.inputs = inputState{down: true, from: pe.Point, at: pe.Point, since: time.Now()}
			p.mu.Unlock()
			return nil
		case sdk.PointerMove:
			p.inputs.at = pe.Point
			p.mu.Unlock()
			return nil
		case sdk.PointerCancel:
			p.inputs = inputState{}
			p.mu.Unlock()
			return nil
		}
		p.inputs = inputState{}
		p.mu.Unlock()
		if !st.down {
			return nil
		}
		held := time.Since(st.since)
		dx, dy := pe.Point.X-st.from.X, pe.Point.Y-st.from.Y
		moved := math.Hypot(float64(dx), float64(dy)) > 12*scale
		switch {
		case !moved && held >= 500*time.Millisecond:
			return p.act(ctx, scale, sdk.Action{Kind: sdk.ActLongPress, Point: st.from, Duration: held})
		case !moved:
			return p.act(ctx, scale, sdk.Action{Kind: sdk.ActTap, Point: st.from})
		}
		return p.act(ctx, scale, sdk.Action{Kind: sdk.ActSwipe, Point: st.from, To: pe.Point, Duration: min(max(held, 100*time.Millisecond), 2*time.Second)})
	}
	return nil
}

var (
	_ sdk.Waker         = (*Driver)(nil)
	_ sdk.Unlocker      = (*Driver)(nil)
	_ sdk.AppLister     = (*Driver)(nil)
	_ sdk.Streamer      = (*Driver)(nil)
	_ sdk.FrameCapturer = (*Driver)(nil)
	_ sdk.Inputter      = (*Driver)(nil)
	_ sdk.LockEventer   = (*Driver)(nil)
)
