package wdad

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Gesture thresholds, in points and time.
const (
	moveSlop  = 8.0                    // a finger that moves further swipes
	longPress = 500 * time.Millisecond // a finger held this long long-presses
)

// num reads a numeric argument; ok is false when it is absent or null.
func (r *request) num(name string) (v float64, ok bool, err error) {
	raw, present := r.args[name]
	if !present || raw == nil {
		return 0, false, nil
	}
	f, isNum := raw.(float64)
	if !isNum || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, invalidArgument("'%s' must be a number", name)
	}
	return f, true, nil
}

// need reads numeric arguments that must all be there.
func (r *request) need(names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		v, ok, err := r.num(n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, invalidArgument("'%s' argument is mandatory", n)
		}
		out[i] = v
	}
	return out, nil
}

// pixel converts a point to the sim's pixels; in is false off the screen.
func (s *Server) pixel(x, y float64) (p sdk.Point, in bool) {
	p = sdk.Point{X: int(math.Round(x * s.scale)), Y: int(math.Round(y * s.scale))}
	return p, p.X >= 0 && p.Y >= 0 && p.X < s.width() && p.Y < s.height()
}

// clampPixel converts a point to pixels, kept on the screen.
func (s *Server) clampPixel(x, y float64) sdk.Point {
	p, _ := s.pixel(x, y)
	p.X = min(max(p.X, 0), s.width()-1)
	p.Y = min(max(p.Y, 0), s.height()-1)
	return p
}

// gesture performs a touch on the sim. A dark or locked screen takes a
// touch without effect, as a real one does, rather than failing.
func (s *Server) gesture(ctx context.Context, a sdk.Action) error {
	_, err := s.d.Act(ctx, s.id, a)
	if errors.Is(err, sdk.ErrLocked) || errors.Is(err, sdk.ErrScreenOff) {
		s.log.Debug("wdad: touch had no effect", "kind", a.Kind, "err", err)
		return nil
	}
	return err
}

// tapAt taps at a point; on the lock screen it drives the passcode pad.
func (s *Server) tapAt(ctx context.Context, x, y float64, kind sdk.ActionKind) error {
	p, in := s.pixel(x, y)
	if !in {
		s.log.Debug("wdad: tap off the screen", "x", x, "y", y)
		return nil
	}
	scr, err := s.screen(ctx)
	if err != nil {
		return err
	}
	if scr.ScreenOn && scr.LockState == sdk.LockLocked {
		if err := s.passcodeTap(ctx, scr, p); err != nil || kind != sdk.ActDoubleTap {
			return err
		}
		if scr, err = s.screen(ctx); err != nil {
			return err
		}
		return s.passcodeTap(ctx, scr, p)
	}
	return s.gesture(ctx, sdk.Action{Kind: kind, Point: p})
}

// passcodeTap taps the lock screen's pad as an iPhone's passcode pad works:
// the code is checked as soon as it has the PIN's length (a wrong one shows
// an error and clears), and the key the sim calls OK is Cancel, which clears
// the digits typed.
func (s *Server) passcodeTap(ctx context.Context, scr *sdk.Screen, p sdk.Point) error {
	var key string
	for i := len(scr.Elements) - 1; i >= 0; i-- {
		if e := scr.Elements[i]; e.Clickable && e.Visible && e.Bounds.Contains(p) {
			key = e.ContentDescription
			break
		}
	}
	switch {
	case len(key) == 1 && key[0] >= '0' && key[0] <= '9':
		if err := s.gesture(ctx, sdk.Action{Kind: sdk.ActTap, Point: p}); err != nil {
			return err
		}
		n, err := s.d.PINLength(ctx, s.id)
		if err != nil {
			return err
		}
		after, err := s.screen(ctx)
		if err != nil {
			return err
		}
		if n > 0 && entered(after) >= n {
			_, err = s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyEnter})
			if err == nil {
				_, err = s.screen(ctx)
			}
		}
		return err
	case key == "OK":
		for range entered(scr) {
			if _, err := s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyDelete}); err != nil {
				return err
			}
		}
		return nil
	}
	return s.gesture(ctx, sdk.Action{Kind: sdk.ActTap, Point: p})
}

// entered counts the digits on the passcode pad's entry.
func entered(scr *sdk.Screen) int {
	for _, e := range scr.Elements {
		if e.Password && e.Class == typePrefix+"SecureTextField" {
			return utf8.RuneCountInString(e.Text)
		}
	}
	return 0
}

// tapRoute answers POST /wda/tap {x, y}; without both it taps the middle of
// the app, with only one it fails.
func (s *Server) tapRoute(r *request) (any, error) {
	x, hasX, err := r.num("x")
	if err != nil {
		return nil, err
	}
	y, hasY, err := r.num("y")
	if err != nil {
		return nil, err
	}
	switch {
	case hasX != hasY:
		return nil, invalidArgument("Both x and y coordinates must be provided")
	case !hasX:
		x, y = s.points(s.width())/2, s.points(s.height())/2
	}
	return nil, s.tapAt(r.ctx, x, y, sdk.ActTap)
}

// doubleTap answers POST /wda/doubleTap {x, y}.
func (s *Server) doubleTap(r *request) (any, error) {
	p, err := r.need("x", "y")
	if err != nil {
		return nil, err
	}
	return nil, s.tapAt(r.ctx, p[0], p[1], sdk.ActDoubleTap)
}

// touchAndHold answers POST /wda/touchAndHold {x, y, duration} (seconds).
func (s *Server) touchAndHold(r *request) (any, error) {
	p, err := r.need("x", "y", "duration")
	if err != nil {
		return nil, err
	}
	px, in := s.pixel(p[0], p[1])
	if !in {
		return nil, nil
	}
	return nil, s.gesture(r.ctx, sdk.Action{Kind: sdk.ActLongPress, Point: px, Duration: seconds(p[2])})
}

// drag answers POST /wda/dragfromtoforduration.
func (s *Server) drag(r *request) (any, error) {
	p, err := r.need("fromX", "fromY", "toX", "toY", "duration")
	if err != nil {
		return nil, err
	}
	return nil, s.swipe(r.ctx, p[0], p[1], p[2], p[3], seconds(p[4]))
}

// swipe drags a finger from one point to another.
func (s *Server) swipe(ctx context.Context, fx, fy, tx, ty float64, d time.Duration) error {
	if _, in := s.pixel(fx, fy); !in {
		s.log.Debug("wdad: swipe starts off the screen", "x", fx, "y", fy)
		return nil
	}
	return s.gesture(ctx, sdk.Action{Kind: sdk.ActSwipe, Point: s.clampPixel(fx, fy), To: s.clampPixel(tx, ty), Duration: d})
}

// swipeRoute answers POST /wda/swipe {direction}: XCUIElement's swipe on
// the app, across the middle of the screen.
func (s *Server) swipeRoute(r *request) (any, error) {
	dir, _ := r.args["direction"].(string)
	w, h := s.points(s.width()), s.points(s.height())
	cx, cy := w/2, h/2
	var dx, dy float64
	switch dir {
	case "up":
		dy = -h / 4
	case "down":
		dy = h / 4
	case "left":
		dx = -w / 3
	case "right":
		dx = w / 3
	default:
		return nil, invalidArgument("Unsupported swipe direction '%s'. Only up, down, left and right are supported", dir)
	}
	return nil, s.swipe(r.ctx, cx-dx, cy-dy, cx+dx, cy+dy, 300*time.Millisecond)
}

func seconds(f float64) time.Duration {
	return time.Duration(max(f, 0) * float64(time.Second))
}

// keys answers POST /wda/keys {"value": [...]}: the strings joined are typed
// into the focused field. "\n" presses return, "\b" deletes.
func (s *Server) keys(r *request) (any, error) {
	list, ok := r.args["value"].([]any)
	if !ok {
		return nil, invalidArgument("'value' must be an array of strings")
	}
	var b strings.Builder
	for _, v := range list {
		str, ok := v.(string)
		if !ok {
			return nil, invalidArgument("'value' must be an array of strings")
		}
		b.WriteString(str)
	}
	return nil, s.typeText(r.ctx, b.String())
}

// typeText types text as XCTest's typeText does, keys and all.
func (s *Server) typeText(ctx context.Context, text string) error {
	if text == "" {
		return nil
	}
	scr, err := s.screen(ctx)
	if err != nil {
		return err
	}
	if !scr.KeyboardShown {
		return invalidElementState(nsError("The on-screen keyboard must be present to send keys"))
	}
	var run strings.Builder
	flush := func() error {
		if run.Len() == 0 {
			return nil
		}
		_, err := s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActType, Text: run.String()})
		run.Reset()
		return err
	}
	for _, c := range text {
		var key sdk.Key
		switch c {
		case '\n', '\r', '\uE006', '\uE007':
			key = sdk.KeyEnter
		case '\b', '\u007f', '\uE003':
			key = sdk.KeyDelete
		default:
			run.WriteRune(c)
			continue
		}
		if err := flush(); err != nil {
			return s.typingErr(err)
		}
		if _, err := s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: key}); err != nil {
			return err
		}
	}
	return s.typingErr(flush())
}

// typingErr reports typing that found no field (a submit may have closed it).
func (s *Server) typingErr(err error) error {
	if errors.Is(err, sdk.ErrNoFocus) || errors.Is(err, sdk.ErrInvalidArgument) || errors.Is(err, sdk.ErrLocked) {
		return invalidElementState(nsError("The on-screen keyboard must be present to send keys"))
	}
	return err
}

// dismissKeys are key names that close an iPhone's keyboard.
var dismissKeys = map[string]bool{
	"done": true, "return": true, "go": true, "search": true, "next": true, "hide keyboard": true, "enter": true,
}

// dismissKeyboard answers POST /wda/keyboard/dismiss {keyNames?}. An
// iPhone's keyboard has no key that always hides it, so as WebDriverAgent
// does there, it takes a key name (such as "Done" or "return") to succeed.
func (s *Server) dismissKeyboard(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil || !scr.KeyboardShown {
		return nil, err
	}
	names, _ := r.args["keyNames"].([]any)
	for _, n := range names {
		if name, ok := n.(string); ok && dismissKeys[strings.ToLower(name)] {
			_, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack})
			return nil, err
		}
	}
	return nil, invalidElementState(nsError("Did not know how to dismiss the keyboard. Try to dismiss it in the way supported by your application under test."))
}

// w3cSource is one input source of a W3C actions request.
type w3cSource struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	Parameters struct {
		PointerType string `json:"pointerType"`
	} `json:"parameters"`
	Actions []w3cAction `json:"actions"`
}

// w3cAction is one tick of an input source.
type w3cAction struct {
	Type     string          `json:"type"`
	Duration *float64        `json:"duration"`
	X        *float64        `json:"x"`
	Y        *float64        `json:"y"`
	Origin   json.RawMessage `json:"origin"`
	Value    string          `json:"value"`
}

// touch is one gesture a pointer source makes.
type touch struct {
	kind     sdk.ActionKind // tap, long press or swipe
	fx, fy   float64
	tx, ty   float64
	duration time.Duration
}

// actions answers POST /actions: W3C pointer actions become taps, long
// presses and swipes on the sim, key actions typing. Two fingers that each
// touch once make a pinch; more fingers than that are not served.
func (s *Server) actions(r *request) (any, error) {
	raw, err := json.Marshal(r.args["actions"])
	if err != nil {
		return nil, invalidArgument("'actions' must be an array")
	}
	var srcs []w3cSource
	if err := json.Unmarshal(raw, &srcs); err != nil || len(srcs) == 0 {
		return nil, invalidArgument("'actions' must be a non-empty array of input sources")
	}
	var touches []touch
	var typed strings.Builder
	var pair [][]touch // each finger's gestures, for a pinch
	fingers := 0
	for i, src := range srcs {
		switch src.Type {
		case "pointer":
			if src.Parameters.PointerType != "" && src.Parameters.PointerType != "touch" && src.Parameters.PointerType != "mouse" && src.Parameters.PointerType != "pen" {
				return nil, invalidArgument("actions[%d]: pointerType %q: want touch", i, src.Parameters.PointerType)
			}
			t, err := pointerTouches(i, src.Actions)
			if err != nil {
				return nil, err
			}
			if len(t) > 0 {
				fingers++
				touches = append(touches, t...)
				pair = append(pair, t)
			}
		case "key":
			for _, a := range src.Actions {
				if a.Type == "keyDown" {
					typed.WriteString(a.Value)
				}
			}
		case "none":
		default:
			return nil, invalidArgument("actions[%d]: type %q: want pointer, key or none", i, src.Type)
		}
	}
	if fingers == 2 && len(pair[0]) == 1 && len(pair[1]) == 1 {
		if err := s.pinchOf(r.ctx, pair[0][0], pair[1][0]); err != nil {
			return nil, err
		}
		return nil, s.typeText(r.ctx, typed.String())
	}
	if fingers > 1 {
		return nil, &wdaError{http.StatusInternalServerError, "unsupported operation", "The virtual phone takes one finger, or two that each touch once (a pinch)"}
	}
	for _, t := range touches {
		var err error
		switch t.kind {
		case sdk.ActTap:
			err = s.tapAt(r.ctx, t.fx, t.fy, sdk.ActTap)
		case sdk.ActLongPress:
			if p, in := s.pixel(t.fx, t.fy); in {
				err = s.gesture(r.ctx, sdk.Action{Kind: sdk.ActLongPress, Point: p, Duration: t.duration})
			}
		case sdk.ActSwipe:
			err = s.swipe(r.ctx, t.fx, t.fy, t.tx, t.ty, t.duration)
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, s.typeText(r.ctx, typed.String())
}

// pinchOf performs two fingers' touches, a and b, as a pinch: centred
// between where they went down, scaled by how far apart they end over how
// far apart they began.
func (s *Server) pinchOf(ctx context.Context, a, b touch) error {
	end := func(t touch) (float64, float64) {
		if t.kind == sdk.ActSwipe {
			return t.tx, t.ty
		}
		return t.fx, t.fy
	}
	ax, ay := end(a)
	bx, by := end(b)
	from := math.Hypot(a.fx-b.fx, a.fy-b.fy)
	if from < 1 {
		return invalidArgument("a pinch's two fingers must go down apart")
	}
	scale := int(math.Round(math.Hypot(ax-bx, ay-by) / from * 1000))
	scale = min(max(scale, sdk.MinPinchScale), sdk.MaxPinchScale)
	if scale == 1000 {
		return nil // the fingers kept their distance: nothing zooms
	}
	center, in := s.pixel((a.fx+b.fx)/2, (a.fy+b.fy)/2)
	if !in {
		return invalidArgument("the pinch's centre is outside the screen")
	}
	return s.gesture(ctx, sdk.Action{Kind: sdk.ActPinch, Point: center, Scale: scale, Duration: max(a.duration, b.duration)})
}

// pointerTouches turns one pointer source's ticks into gestures.
func pointerTouches(src int, acts []w3cAction) ([]touch, error) {
	var out []touch
	var x, y, fx, fy float64
	var t, downAt time.Duration
	placed, down, moved := false, false, false
	dur := func(a w3cAction) (time.Duration, error) {
		if a.Duration == nil {
			return 0, nil
		}
		if *a.Duration < 0 {
			return 0, invalidArgument("actions[%d]: duration %v: want 0 or more milliseconds", src, *a.Duration)
		}
		return time.Duration(*a.Duration * float64(time.Millisecond)), nil
	}
	for j, a := range acts {
		switch a.Type {
		case "pause":
			d, err := dur(a)
			if err != nil {
				return nil, err
			}
			t += d
		case "pointerMove":
			if a.X == nil || a.Y == nil {
				return nil, invalidArgument("actions[%d].actions[%d]: pointerMove needs x and y", src, j)
			}
			nx, ny := *a.X, *a.Y
			var origin any
			if len(a.Origin) > 0 {
				json.Unmarshal(a.Origin, &origin)
			}
			switch o := origin.(type) {
			case nil:
			case string:
				switch o {
				case "viewport":
				case "pointer":
					nx, ny = x+nx, y+ny
				default:
					return nil, invalidArgument("actions[%d].actions[%d]: origin %q: want viewport or pointer", src, j, o)
				}
			default:
				return nil, invalidArgument("actions[%d].actions[%d]: element origins are not supported: the virtual phone's source has no element references", src, j)
			}
			d, err := dur(a)
			if err != nil {
				return nil, err
			}
			t += d
			x, y, placed = nx, ny, true
			if down && math.Hypot(x-fx, y-fy) > moveSlop {
				moved = true
			}
		case "pointerDown":
			if !placed {
				return nil, invalidArgument("actions[%d].actions[%d]: pointerDown must come after a pointerMove that places the pointer", src, j)
			}
			down, moved, fx, fy, downAt = true, false, x, y, t
		case "pointerUp":
			if !down {
				continue
			}
			held := t - downAt
			switch {
			case moved && math.Hypot(x-fx, y-fy) > moveSlop:
				out = append(out, touch{kind: sdk.ActSwipe, fx: fx, fy: fy, tx: x, ty: y, duration: held})
			case held >= longPress:
				out = append(out, touch{kind: sdk.ActLongPress, fx: fx, fy: fy, duration: held})
			default:
				out = append(out, touch{kind: sdk.ActTap, fx: fx, fy: fy})
			}
			down = false
		case "pointerCancel":
			down = false
		default:
			return nil, invalidArgument("actions[%d].actions[%d]: %s: not a pointer action", src, j, fmt.Sprint(a.Type))
		}
	}
	return out, nil
}
