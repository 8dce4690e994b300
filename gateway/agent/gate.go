package agent

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// The gate's view of an action: every input an agent can cause is aimed on
// the screen as the phone shows it when the action is about to run (read
// just before), so what the guard judges is what the finger will touch:
// the element under each point, the on-screen keyboard's key, the focused
// field a key or a keyboard touch types into.

// touch is where one point of an action lands on the screen.
type touch struct {
	node *screen.Node // the element aimed at, or under the point; nil when none
	// under is the smallest element under the point when it is another
	// than node (a button inside the row the agent named, or an element
	// over it): the guard judges both, the stronger counts.
	under      *screen.Node
	onKeyboard bool   // the point is on the on-screen keyboard
	key        string // the keyboard's key under the point, "" when it names none
}

// aim is what an action touches on view: its start and, for a swipe or a
// scroll, where the finger lifts.
type aim struct {
	start, end touch
	// also are the elements other fingers go down on (a pinch's two),
	// judged as the start is: the stronger counts.
	also []*screen.Node
	// focused is the field that typing or a keyboard touch goes into.
	focused *screen.Node
}

// aimAt finds what the driver actions of a touch the phone (their points)
// land on in view; other actions aim at the target node.
func aimAt(view *screen.View, a Action, actions []sdk.Action, target *screen.Node) aim {
	var out aim
	if f, ok := view.Focused(); ok {
		out.focused = &f
	}
	out.start.node = target
	if len(actions) == 0 {
		return out
	}
	first := actions[0]
	switch first.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress:
		if a.Kind == "type" {
			// Typing taps its field to focus it, judged as typing; unless
			// that tap lands on the keyboard, where it works a key.
			if k, on := view.KeyAt(first.Point); on {
				out.start = touch{onKeyboard: true, key: k.Label}
			}
			return out
		}
		out.start = touchAt(view, first.Point, target)
	case sdk.ActSwipe:
		out.start = touchAt(view, first.Point, target)
		out.end = touchAt(view, first.To, nil)
	case sdk.ActPinch:
		// Two fingers go down around the centre, on one line through it
		// (sdk.Pinch places them as the drivers do). The centre is judged
		// as a touch there, where the agent aimed, and each finger on what
		// it lands on: a control under a finger may take the gesture for a
		// tap (a pinch of almost 100 % barely moves them). A finger on the
		// keyboard works a key.
		out.start = touchAt(view, first.Point, target)
		f := sdk.Pinch(first.Point, first.Scale, view.Width, view.Height)
		for _, p := range f.Start {
			t := touchAt(view, p, nil)
			switch {
			case t.onKeyboard && !out.end.onKeyboard:
				out.end = t
			case t.node != nil:
				out.also = append(out.also, t.node)
			}
		}
	case sdk.ActScroll:
		from := sdk.Point{X: view.Width / 2, Y: view.Height / 2}
		if first.HasPoint {
			from = first.Point
		}
		out.start = touchAt(view, from, target)
		out.end = touchAt(view, scrollEnd(view, from, first.Direction), nil)
	}
	return out
}

// touchAt is what lands at p: the keyboard's key when p is on the
// keyboard, else the element under p (the target itself when the action
// aimed at an element that holds p).
func touchAt(view *screen.View, p sdk.Point, target *screen.Node) touch {
	if k, on := view.KeyAt(p); on {
		return touch{onKeyboard: true, key: k.Label}
	}
	n, ok := view.ByPoint(p)
	switch {
	case target != nil && target.Bounds.Contains(p):
		t := touch{node: target}
		if ok && n.Ref != target.Ref {
			t.under = &n
		}
		return t
	case ok:
		return touch{node: &n}
	}
	return touch{node: target}
}

// scrollEnd is where a scroll from p lifts the finger, as SPEC.md's default
// amount (60 % of the screen) moves it: content scrolls down as the finger
// moves up.
func scrollEnd(view *screen.View, p sdk.Point, dir sdk.ScrollDirection) sdk.Point {
	dx, dy := view.Width*6/10, view.Height*6/10
	switch dir {
	case sdk.ScrollDown:
		p.Y -= dy
	case sdk.ScrollUp:
		p.Y += dy
	case sdk.ScrollRight:
		p.X -= dx
	case sdk.ScrollLeft:
		p.X += dx
	}
	p.X = min(max(p.X, 0), max(view.Width-1, 0))
	p.Y = min(max(p.Y, 0), max(view.Height-1, 0))
	return p
}

// keyboardTouch reports whether the action touches the on-screen keyboard
// at any of its points.
func (t aim) keyboardTouch() bool { return t.start.onKeyboard || t.end.onKeyboard }

// leaveKey reports whether a is home or back: the way out of a screen the
// agent may not see, which needs no view of it and commits nothing.
func leaveKey(a Action) bool {
	k := strings.ToLower(a.Key)
	return a.Kind == "key" && (k == "home" || k == "back")
}

// leaves reports whether a may run although the read before it found a
// screen the agent may not see (a blocked app, an app outside the task):
// home and back leave it, and a launch opens another app over it (the
// launch is checked on its own: blocked apps and the task's list).
func leaves(a Action, err error) bool {
	e, ok := AsError(err)
	if !ok || !e.withheld {
		return false
	}
	return leaveKey(a) || a.Kind == "launch"
}

// withheld is the error of a read whose screen the agent may not see.
func withheld(code Code, format string, args ...any) *Error {
	e := Errorf(code, format, args...)
	e.withheld = true
	return e
}

// outOfTask reports, for a read of device, an app in front that its task
// did not name: the agent sees nothing of it and is told to go back.
// after says whether the read follows the agent's own action (which did
// happen).
func (m *Manager) outOfTask(device string, view *screen.View, after bool) error {
	l, ok := m.leases.Get(device)
	var apps []string
	var task string
	if ok {
		apps, task = l.Apps, l.Task
	}
	app := view.App
	if len(apps) == 0 || app.System || app.ID == "" || view.LockState == sdk.LockLocked || inList(apps, app.ID, app.Label) {
		return nil
	}
	name := app.Label
	if name == "" {
		name = app.ID
	}
	done := ""
	if after {
		done = "your action was done, and "
	}
	return withheld(CodeScopeDenied, "%s%s is in front, and the task %q may only use %s: you see nothing of it. Go back with phone_key (back or home), or launch one of them",
		done, name, task, strings.Join(apps, ", "))
}

// mayUpload asks the guard about an upload (read-only mode refuses it): an
// upload writes on the computer, and waits for nobody, so a rule that asks
// refuses it too.
func (s *Session) mayUpload(tk *task, path string) error {
	g := s.m.cfg.Guard
	if g == nil {
		return nil
	}
	v := g.Check(Check{Agent: s.client.Name, Device: tk.device, Action: Action{Kind: "upload", Path: path}, View: &screen.View{}})
	switch v.Decision {
	case Allow:
		return nil
	case Ask:
		return Errorf(CodeDenied, "the policy asks the person before uploads (rule %q), and phone_upload cannot wait for them: ask them with phone_ask_person", v.Rule)
	}
	code := v.Code
	if code == "" {
		code = CodeDenied
	}
	return &Error{Code: code, Message: v.Reason}
}

// opensHidden refuses a touch on a system screen (the launcher, the shade,
// the lock screen, recents) that would open an app the agent may not use:
// a blocked app's icon or notification, or an app outside the task's list.
// A read after it would show nothing of that app anyway; this keeps the
// app shut.
func (s *Session) opensHidden(ctx context.Context, c *call, view *screen.View, t aim) error {
	tk := c.task
	if !view.App.System && view.LockState != sdk.LockLocked {
		return nil
	}
	for _, n := range []*screen.Node{t.start.node, t.start.under} {
		if n == nil {
			continue
		}
		if strings.Contains(n.Label, secrets.HiddenNotice) {
			return Errorf(CodeBlockedApp, "that notification is a blocked app's: opening it is refused. Ask the person with phone_ask_person")
		}
		app, ok := s.m.appNamed(ctx, c.drv, c.p, tk.device, n.Label)
		if !ok {
			continue
		}
		if g := s.m.cfg.Guard; g != nil && g.Blocked(app.ID) {
			return Errorf(CodeBlockedApp, "%q would open %s, which is blocked: you may not see or use it. Ask the person with phone_ask_person", n.Label, app.Label)
		}
		if len(tk.apps) > 0 && !inList(tk.apps, app.ID, app.Label) {
			return Errorf(CodeScopeDenied, "%q would open %s, and the task %q may only use %s; launch one of them", n.Label, app.Label, tk.text, strings.Join(tk.apps, ", "))
		}
	}
	return nil
}

// appNamed finds the installed app that a launcher icon or a notification
// row names: its label alone ("Bank"), or first ("Bank · now · …").
func (m *Manager) appNamed(ctx context.Context, drv sdk.Full, p *phone, device, label string) (sdk.App, bool) {
	l := fold(label)
	if l == "" {
		return sdk.App{}, false
	}
	for _, a := range m.installed(ctx, drv, p, device) {
		for _, name := range labelsOf(a, m.appName) {
			if l == name || strings.HasPrefix(l, name+" ") || strings.HasPrefix(l, name+":") {
				return a, true
			}
		}
	}
	return sdk.App{}, false
}

// installed is the phone's app list, as the hide state keeps it (listed
// again when older than appsFor).
func (m *Manager) installed(ctx context.Context, drv sdk.Full, p *phone, device string) []sdk.App {
	h := &p.hide
	h.mu.Lock()
	apps, at, unable := h.apps, h.appsAt, h.noApps
	fresh := h.appsOK && time.Since(at) < appsFor
	h.mu.Unlock()
	if fresh || unable {
		return apps
	}
	if !m.serves(p, sdk.CapApps) {
		return apps
	}
	lctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	got, err := drv.ListApps(lctx, device)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err == nil:
		h.apps, h.appsAt, h.appsOK = got, time.Now(), true
	case errors.Is(err, sdk.ErrUnsupported):
		h.noApps = true
	}
	return h.apps
}
