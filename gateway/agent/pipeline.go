package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// Observe reads the screen: what changed since the agent's last read, or
// the whole screen with full.
func (s *Session) Observe(ctx context.Context, device string, full, screenshot bool) (*Observation, error) {
	return s.observe(ctx, device, "phone_observe", map[string]any{"device": device, "full": full, "screenshot": screenshot}, full, screenshot)
}

func (s *Session) observe(ctx context.Context, device, tool string, args map[string]any, full, screenshot bool) (*Observation, error) {
	return s.observeFrom(ctx, time.Now(), device, tool, args, full, screenshot)
}

// observeFrom is observe for a call that began at started.
func (s *Session) observeFrom(ctx context.Context, started time.Time, device, tool string, args map[string]any, full, screenshot bool) (*Observation, error) {
	l, drv, err := s.begin(ctx, started, device, tool, args)
	if err != nil {
		return nil, err
	}
	p := s.m.phone(device)
	view, err := s.read(ctx, drv, p, device)
	if err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	obs := s.show(l, view, full)
	obs.Settled = true
	if screenshot {
		img, err := s.m.still(ctx, p, drv, sdk.ScreenshotRequest{DeviceID: device, DisplayID: s.m.displayOf(p), Format: sdk.FormatJPEG, MaxSide: 1280, Quality: 75})
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, fromDriver(device, err, false), "")
		}
		if obs.Screenshot, err = s.cover(p, img); err != nil {
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
	}
	obs.Step = s.recordOK(ctx, l, tool, args, started, obs.Text)
	return obs, nil
}

// begin starts a tool call on a device: the session must hold it, and its
// driver must be there (that failure is recorded as the call's step). The
// driver it returns is bound to the lease: the person's stop ends a call
// that waits on it at once, and a take-over an action (calls.go).
func (s *Session) begin(ctx context.Context, started time.Time, device, tool string, args map[string]any) (*lease, sdk.Driver, error) {
	l, err := s.hold(device)
	if err != nil {
		return nil, nil, err
	}
	drv, err := s.driver(device)
	if err != nil {
		return nil, nil, s.record(ctx, l, tool, args, started, err, "")
	}
	return l, s.m.bind(l, drv), nil
}

// read reads a device's screen into its model.
func (s *Session) read(ctx context.Context, drv sdk.Driver, p *phone, device string) (*screen.View, error) {
	s.m.wake(ctx, drv, p, device)
	at := time.Now()
	display := s.m.displayOf(p)
	sc, err := drv.Screen(ctx, device, display)
	if errors.Is(err, sdk.ErrScreenOff) && s.m.wakeNow(ctx, drv, p, device) {
		// The screen went off since the last wake: wake it and read again.
		at = time.Now()
		sc, err = drv.Screen(ctx, device, display)
	}
	if err != nil {
		return nil, fromDriver(device, err, false)
	}
	v, err := s.see(p, device, at, sc)
	if err != nil {
		return nil, err
	}
	return v, s.m.outOfTask(device, v, false)
}

// see turns a driver's screen into what the agent may see. A blocked app's
// screen is not read at all; one-time codes and passwords are masked, and
// the rectangles to cover in screenshots are kept for the phone.
func (s *Session) see(p *phone, device string, at time.Time, sc *sdk.Screen) (*screen.View, error) {
	m := s.m
	m.seen(p, sc)
	if g := m.cfg.Guard; g != nil && sc.App.ID != "" && g.Blocked(sc.App.ID) {
		m.remember(p, sc) // a blind copy of its codes stays masked (hide.go)
		m.cfg.Watcher.ScreenRead(device, at, m.private(device, sc, 0))
		m.mu.Lock()
		p.blocked = true
		m.mu.Unlock()
		return nil, withheld(CodeBlockedApp, "the app in front of %s is blocked: you may not see or use it. Go home with phone_key, or ask the person with phone_ask_person", device)
	}
	masked, boxes := m.mask(p, device, sc, true) // blocked apps' notifications and copied codes too (hide.go)
	m.cfg.Watcher.ScreenRead(device, at, m.private(device, sc, len(boxes)))
	m.mu.Lock()
	p.blocked, p.boxes, p.boxSize = false, boxes, sdk.Point{X: sc.Width, Y: sc.Height}
	m.mu.Unlock()
	return p.model.Read(masked), nil
}

// cover hides the phone's secrets (as its last read found them) in a
// screenshot of it.
func (s *Session) cover(p *phone, img *sdk.Image) ([]byte, error) {
	s.m.mu.Lock()
	boxes, size := p.boxes, p.boxSize
	s.m.mu.Unlock()
	if len(boxes) == 0 {
		return img.Data, nil
	}
	return secrets.CoverJPEG(img.Data, size.X, size.Y, boxes, 75)
}

// show renders view for the lease's agent: the whole screen when asked,
// on the first read, or when another app came to the front; else the diff.
func (s *Session) show(l *lease, view *screen.View, full bool) *Observation {
	s.m.mu.Lock()
	prev := l.last
	l.last = view
	s.m.mu.Unlock()
	app := view.App.Label
	if app == "" {
		app = view.App.ID
	}
	obs := &Observation{Device: l.device, App: app, Locked: view.LockState == sdk.LockLocked}
	if full || prev == nil {
		obs.Text, obs.Full = view.Text(), true
	} else {
		obs.Text, obs.Full = screen.Render(prev, view)
	}
	return obs
}

// Act runs one action through the pipeline: lease and scope, policy,
// execute, settle, read and diff, record.
//
// The screen is read just before the action, and the action is judged and
// aimed on that read: the agent may have looked a while ago, and what
// counts is what the finger will touch now. Nothing is sent to the phone
// while a blocked app or an app outside the task is in front, but the way
// out (home, back, a launch).
func (s *Session) Act(ctx context.Context, device string, a Action, progress Progress) (*Observation, error) {
	started := time.Now()
	args := actionArgs(device, a)
	tool := toolName(a.Kind)
	l, drv, err := s.begin(ctx, started, device, tool, args)
	if err != nil {
		return nil, err
	}
	if err := s.m.personHas(device); err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	if book := s.m.cfg.Approvals; book != nil && a.ApprovalID == "" {
		// The phone takes no other action while an approval is open.
		if c, open := book.OpenFor(device); open {
			return nil, s.record(ctx, l, tool, args, started, Errorf(CodeApprovalPending,
				"an approval is open on %s (%s: %s); wait with phone_approval (id %s) before acting again", device, c.Tool, c.Target, c.ID), "")
		}
	}
	p := s.m.phone(device)
	p.act.Lock()
	defer p.act.Unlock()

	view, err := s.read(ctx, drv, p, device)
	if err != nil {
		if !leaves(a, err) {
			// A blocked app or an app outside the task is in front (or the
			// read failed): the action is not sent to the phone at all.
			redactTyped(args, a, nil, true)
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
		if leaveKey(a) {
			return s.leaveBlocked(ctx, l, drv, p, device, a, tool, args, started, progress)
		}
		view = &screen.View{} // a launch needs no view of the screen it covers
	}
	redactTyped(args, a, targetNode(view, a), false)
	if a.Kind != "key" && a.Kind != "launch" { // keys (power, home…) work on a lock screen
		if view, err = s.unlocked(ctx, drv, p, device, view); err != nil {
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
		redactTyped(args, a, targetNode(view, a), false)
	}
	if err := inScope(l, view, a); err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	if a.Kind == "launch" || a.Kind == "stop" {
		id, err := s.appID(ctx, drv, l, a.App)
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
		a.App = id
	}
	actions, err := s.plan(view, a)
	if err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	t := aimAt(view, a, actions, targetNode(view, a))
	if err := s.opensHidden(ctx, drv, p, l, view, t); err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	card, err := s.guard(ctx, l, view, t, a, args, progress)
	if err != nil {
		return nil, s.record(ctx, l, tool, args, started, err, "")
	}
	if card != nil {
		// The person decided on what the screen showed then: act only if it
		// still shows that, with the target where the agent aimed.
		now, err := s.read(ctx, drv, p, device)
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
		if !stillThere(card, view, now, t.start.node) {
			return nil, s.record(ctx, l, tool, args, started, Errorf(CodeStale,
				"the screen changed since the person decided (what they approved is no longer what it shows), so the action was not done; observe and ask again"), "")
		}
	}
	return s.perform(ctx, l, drv, p, device, a, actions, tool, args, started, progress)
}

// leaveBlocked presses home or back on a phone with a blocked app in front.
func (s *Session) leaveBlocked(ctx context.Context, l *lease, drv sdk.Driver, p *phone, device string, a Action, tool string, args map[string]any, started time.Time, progress Progress) (*Observation, error) {
	key := sdk.Action{Kind: sdk.ActKey, Key: sdk.Key(strings.ToLower(a.Key))}
	return s.perform(ctx, l, drv, p, device, a, []sdk.Action{key}, tool, args, started, progress)
}

// perform runs an action's driver actions, waits for the screen to settle,
// and records the step.
//
// The step is committed, as running, before anything reaches the phone: an
// action the history cannot take is not done (intent.go). The record or
// recordOK that ends each path ends that step.
func (s *Session) perform(ctx context.Context, l *lease, drv sdk.Driver, p *phone, device string, a Action, actions []sdk.Action, tool string, args map[string]any, started time.Time, progress Progress) (*Observation, error) {
	ctx, in, err := s.intend(ctx, l, tool, args, started)
	if err != nil {
		return nil, err
	}
	obs, err := func() (*Observation, error) {
		display := s.m.displayOf(p)
		for i, sa := range actions {
			sa.DisplayID = display
			if _, err := drv.Act(ctx, device, sa); err != nil {
				// The first action of a plan that fails for a reason the driver
				// knows did not happen; anything later, or unknown, may have.
				acting := i > 0 || !definite(err)
				return nil, s.record(ctx, l, tool, args, started, fromDriver(device, err, acting), "")
			}
		}
		if a.Kind == "scroll" && a.Until != "" {
			return s.scrollUntil(ctx, drv, p, l, a, progress, tool, args, started)
		}
		next, settled, err := s.settle(ctx, drv, p, device, progress)
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, fromDriver(device, err, true), "")
		}
		obs := s.show(l, next, false)
		obs.Settled = settled
		obs.Step = s.recordOK(ctx, l, tool, args, started, obs.Text)
		return obs, nil
	}()
	if lost := in.end(ctx, err); lost != nil && err == nil {
		return nil, lost // the action ran, but not into the history: no plain ok
	}
	return obs, err
}

// inScope keeps a task that named its apps to them: with another app in
// front only home, back and launches (checked by appID) work, so the agent
// can find its way back.
func inScope(l *lease, view *screen.View, a Action) error {
	if len(l.apps) == 0 || leaveKey(a) || a.Kind == "launch" || a.Kind == "stop" {
		return nil
	}
	app := view.App
	if app.System || app.ID == "" || inList(l.apps, app.ID, app.Label) {
		return nil // the home and lock screens belong to every task
	}
	return Errorf(CodeScopeDenied, "the task %q may only use %s, and %s is in front; go back with phone_key (back or home) or launch one of them", l.task, strings.Join(l.apps, ", "), app.Label)
}

// appID resolves an app id or label to the id, and keeps a task to the
// apps it named at connect.
func (s *Session) appID(ctx context.Context, drv sdk.Driver, l *lease, app string) (string, error) {
	if app == "" {
		return "", Errorf(CodeInvalidArgument, "app is required: an app id or label from phone_apps")
	}
	id := app
	if lister, ok := drv.(sdk.AppLister); ok {
		apps, err := lister.ListApps(ctx, l.device)
		if err != nil && !errors.Is(err, sdk.ErrUnsupported) {
			return "", fromDriver(l.device, err, false)
		}
		found := false
		for _, a := range apps {
			if a.ID == app || strings.EqualFold(a.Label, app) {
				id, found = a.ID, true
				break
			}
		}
		if !found && err == nil {
			return "", Errorf(CodeNotFound, "no app %q on %s; phone_apps lists them", app, l.device)
		}
	}
	if len(l.apps) > 0 && !inList(l.apps, id, app) {
		return "", Errorf(CodeScopeDenied, "the task %q may only use %s; %s is not one of them", l.task, strings.Join(l.apps, ", "), app)
	}
	return id, nil
}

// redactTyped keeps a password or a code typed into its field out of the
// history, even for a call that is refused. blind says the field cannot be
// known (the screen was not shown): then nothing typed is kept.
func redactTyped(args map[string]any, a Action, target *screen.Node, blind bool) {
	if a.Kind != "type" {
		return
	}
	if blind || (target != nil && (target.Password || secrets.IsPasswordField(target.Element) || secrets.IsCodeField(target.Element))) {
		args["text"] = "[redacted]"
	}
}

// unlocked returns the screen to act on, which must not be the lock
// screen. The agent may have last seen the lock screen after the person
// unlocked the phone, so a locked view is read again; a phone that is
// still locked is unlocked with the saved PIN when the person turned that
// on (wake.go); otherwise the action is refused with device_locked.
func (s *Session) unlocked(ctx context.Context, drv sdk.Driver, p *phone, device string, view *screen.View) (*screen.View, error) {
	if s.m.displayOf(p) != 0 {
		return view, nil // a background display shows its app whatever the lock: never unlock for it
	}
	if view.LockState != sdk.LockLocked {
		return view, nil
	}
	view, err := s.read(ctx, drv, p, device)
	if err != nil || view.LockState != sdk.LockLocked {
		return view, err
	}
	fresh, err := s.autoUnlock(ctx, drv, p, device)
	if err != nil {
		return nil, err
	}
	if fresh != nil && fresh.LockState != sdk.LockLocked {
		return fresh, nil
	}
	return nil, Errorf(CodeDeviceLocked,
		"%s is locked; ask the person to unlock it with phone_ask_person (they run pinky unlock %s, or unlock it in hand)", device, device)
}

// definite reports whether a driver error means the action did not run.
func definite(err error) bool {
	for _, e := range []error{sdk.ErrInvalidArgument, sdk.ErrDeviceNotFound, sdk.ErrUnsupported, sdk.ErrLocked, sdk.ErrScreenOff, sdk.ErrAppNotFound, sdk.ErrWrongPIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ae *Error
	return errors.As(err, &ae)
}

// plan turns an agent's action into driver actions, resolving its target
// on the screen the agent last saw.
func (s *Session) plan(view *screen.View, a Action) ([]sdk.Action, error) {
	switch a.Kind {
	case "tap", "long_press":
		pt, err := resolve(view, a.Target, true)
		if err != nil {
			return nil, err
		}
		kind := sdk.ActTap
		if a.Kind == "long_press" {
			kind = sdk.ActLongPress
		}
		return []sdk.Action{{Kind: kind, Point: pt, Duration: a.Duration}}, nil
	case "swipe":
		from, err := resolve(view, a.Target, true)
		if err != nil {
			return nil, err
		}
		to, err := resolve(view, a.To, true)
		if err != nil {
			return nil, err
		}
		return []sdk.Action{{Kind: sdk.ActSwipe, Point: from, To: to, Duration: a.Duration}}, nil
	case "scroll":
		dir := sdk.ScrollDirection(a.Direction)
		if !slices.Contains([]sdk.ScrollDirection{sdk.ScrollUp, sdk.ScrollDown, sdk.ScrollLeft, sdk.ScrollRight}, dir) {
			return nil, Errorf(CodeInvalidArgument, "direction %q: want up, down, left or right", a.Direction)
		}
		sa := sdk.Action{Kind: sdk.ActScroll, Direction: dir}
		if a.Target != (Target{}) {
			pt, err := resolve(view, a.Target, false)
			if err != nil {
				return nil, err
			}
			sa.Point, sa.HasPoint = pt, true
		}
		return []sdk.Action{sa}, nil
	case "type":
		var out []sdk.Action
		if a.Target != (Target{}) {
			pt, err := resolve(view, a.Target, false)
			if err != nil {
				return nil, err
			}
			out = append(out, sdk.Action{Kind: sdk.ActTap, Point: pt})
		}
		return append(out, sdk.Action{Kind: sdk.ActType, Text: a.Text, Replace: a.Replace, Submit: a.Submit}), nil
	case "key":
		k := sdk.Key(strings.ToLower(a.Key))
		if !slices.Contains(sdk.AllKeys, k) {
			names := make([]string, len(sdk.AllKeys))
			for i, k := range sdk.AllKeys {
				names[i] = string(k)
			}
			return nil, Errorf(CodeInvalidArgument, "key %q: want one of %s", a.Key, strings.Join(names, ", "))
		}
		return []sdk.Action{{Kind: sdk.ActKey, Key: k}}, nil
	case "launch", "stop":
		if a.App == "" {
			return nil, Errorf(CodeInvalidArgument, "app is required: an app id or label from phone_apps")
		}
		kind := sdk.ActLaunch
		if a.Kind == "stop" {
			kind = sdk.ActStop
		}
		return []sdk.Action{{Kind: kind, AppID: a.App}}, nil
	case "open_url":
		return []sdk.Action{{Kind: sdk.ActOpenURL, URL: a.URL}}, nil
	}
	return nil, Errorf(CodeInvalidArgument, "unknown action %q", a.Kind)
}

// resolve finds the point an action aims at. needed says whether a target
// is required.
func resolve(view *screen.View, t Target, needed bool) (sdk.Point, error) {
	switch {
	case t.HasPoint:
		return sdk.Point{X: t.X, Y: t.Y}, nil
	case t.Ref != 0:
		n, err := view.ByRef(t.Ref)
		if err != nil {
			return sdk.Point{}, Errorf(CodeNotFound, "%v", err)
		}
		return n.Center(), nil
	case t.Text != "":
		n, err := view.ByText(t.Text, t.Occurrence)
		if err != nil {
			return sdk.Point{}, Errorf(CodeNotFound, "%v", err)
		}
		return n.Center(), nil
	}
	if needed {
		return sdk.Point{}, Errorf(CodeInvalidArgument, "say where: a ref from the screen (ref), a visible text (text), or a point (x and y)")
	}
	return sdk.Point{}, nil
}

// settle waits until the screen stops changing, up to SettleCap: the
// driver's idle signal when it has one, else reads until two match.
func (s *Session) settle(ctx context.Context, drv sdk.Driver, p *phone, device string, progress Progress) (*screen.View, bool, error) {
	cap := s.m.cfg.SettleCap
	start := time.Now()
	if progress != nil {
		progress(0, cap.Seconds(), "waiting for the screen to settle")
	}
	display := s.m.displayOf(p)
	if w, ok := drv.(sdk.IdleWaiter); ok && display == 0 && s.m.canWaitIdle(p, drv) {
		idle, err := w.WaitIdle(ctx, device, cap)
		if err == nil {
			v, err := s.read(ctx, drv, p, device)
			if e, ok := AsError(err); ok && e.withheld && e.Code == CodeScopeDenied {
				err = s.m.outOfTask(device, v, true)
			}
			return v, idle, err
		}
		if !errors.Is(err, sdk.ErrUnsupported) {
			return nil, false, err
		}
	}
	var prev *sdk.Screen
	for {
		at := time.Now()
		sc, err := drv.Screen(ctx, device, display)
		if err != nil {
			return nil, false, err
		}
		if prev != nil && screen.SameScreen(prev, sc) {
			v, err := s.settled(p, device, at, sc)
			return v, true, err
		}
		prev = sc
		if time.Since(start) >= cap {
			v, err := s.settled(p, device, at, sc)
			return v, false, err
		}
		if progress != nil {
			progress(time.Since(start).Seconds(), cap.Seconds(), "waiting for the screen to settle")
		}
		select {
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// settled is see for the read that ends an action's settling: an app
// outside the task that the action brought to the front is not shown.
func (s *Session) settled(p *phone, device string, at time.Time, sc *sdk.Screen) (*screen.View, error) {
	v, err := s.see(p, device, at, sc)
	if err != nil {
		return nil, err
	}
	return v, s.m.outOfTask(device, v, true)
}

// canWaitIdle reports whether the phone's driver serves WaitIdle.
func (m *Manager) canWaitIdle(p *phone, drv sdk.Driver) bool {
	return m.serves(p, drv, sdk.CapWaitIdle)
}

// scrollUntil scrolls, at most ten times, until text shows.
func (s *Session) scrollUntil(ctx context.Context, drv sdk.Driver, p *phone, l *lease, a Action, progress Progress, tool string, args map[string]any, started time.Time) (*Observation, error) {
	const most = 10
	s.m.mu.Lock()
	first := l.last
	s.m.mu.Unlock()
	for i := 1; ; i++ {
		v, _, err := s.settle(ctx, drv, p, l.device, nil)
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, fromDriver(l.device, err, true), "")
		}
		if _, err := v.ByText(a.Until, 1); err == nil || i == most {
			s.m.mu.Lock()
			l.last = first
			s.m.mu.Unlock()
			obs := s.show(l, v, false)
			obs.Settled = true
			if err != nil {
				obs.Text = fmt.Sprintf("%q did not show after %d scrolls.\n%s", a.Until, most, obs.Text)
			}
			obs.Step = s.recordOK(ctx, l, tool, args, started, obs.Text)
			return obs, nil
		}
		if progress != nil {
			progress(float64(i), most, fmt.Sprintf("scrolled %d times looking for %q", i, a.Until))
		}
		next := Action{Kind: "scroll", Direction: a.Direction, Target: a.Target}
		acts, err := s.plan(v, next)
		if err != nil {
			return nil, s.record(ctx, l, tool, args, started, err, "")
		}
		if why, stop := s.wouldStop(l, v, next, acts); stop {
			// Each scroll passes the gate: one that would start or end on
			// a control that commits is left to the agent to ask for.
			s.m.mu.Lock()
			l.last = first
			s.m.mu.Unlock()
			obs := s.show(l, v, false)
			obs.Settled = true
			obs.Text = fmt.Sprintf("Stopped after %d scrolls without finding %q: the next scroll %s. Scroll again with phone_scroll to ask for it.\n%s", i, a.Until, why, obs.Text)
			obs.Step = s.recordOK(ctx, l, tool, args, started, obs.Text)
			return obs, nil
		}
		acts[0].DisplayID = s.m.displayOf(p)
		if _, err := drv.Act(ctx, l.device, acts[0]); err != nil {
			return nil, s.record(ctx, l, tool, args, started, fromDriver(l.device, err, true), "")
		}
	}
}

// wouldStop reports whether the guard would not simply allow a, planned as
// acts on v, and why: a scroll of scrollUntil's that needs the person.
func (s *Session) wouldStop(l *lease, v *screen.View, a Action, acts []sdk.Action) (string, bool) {
	g := s.m.cfg.Guard
	if g == nil {
		return "", false
	}
	t := aimAt(v, a, acts, targetNode(v, a))
	verdict := g.Check(s.check(l, v, a, t))
	if verdict.Decision == Allow {
		return "", false
	}
	why := verdict.Evidence
	if why == "" {
		why = verdict.Reason
	}
	return "would need the person (" + why + ")", true
}

// actionArgs is what the history keeps of an action's arguments.
func actionArgs(device string, a Action) map[string]any {
	args := map[string]any{"device": device}
	t := func(name string, t Target) {
		text := name + "text"
		if a.Kind == "type" {
			text = "field" // "text" is what is typed
		}
		switch {
		case t.Ref != 0:
			args[name+"ref"] = t.Ref
		case t.Text != "":
			args[text] = t.Text
			if t.Occurrence > 0 {
				args[name+"occurrence"] = t.Occurrence
			}
		case t.HasPoint:
			args[name+"x"], args[name+"y"] = t.X, t.Y
		}
	}
	t("", a.Target)
	if a.Kind == "swipe" {
		t("to_", a.To)
	}
	for k, v := range map[string]any{
		"duration_ms": a.Duration.Milliseconds(), "direction": a.Direction, "until": a.Until, "replace": a.Replace,
		"submit": a.Submit, "key": a.Key, "app": a.App, "url": a.URL,
	} {
		switch x := v.(type) {
		case string:
			if x != "" {
				args[k] = x
			}
		case bool:
			if x {
				args[k] = x
			}
		case int64:
			if x != 0 {
				args[k] = x
			}
		}
	}
	if a.Kind == "type" {
		args["text"] = a.Text
	}
	return args
}

// record writes a failed step and returns err for the caller to return,
// whether or not the history took the step: what the agent must learn is
// err (an acting call's intent, ended here, handles the rest).
func (s *Session) record(ctx context.Context, l *lease, tool string, args map[string]any, started time.Time, err error, diff string) error {
	code, msg := "ok", ""
	if err != nil {
		code, msg = string(CodeInternal), err.Error()
		if e, ok := AsError(err); ok {
			code, msg = string(e.Code), e.Message
		}
	}
	s.addStep(ctx, l, tool, args, started, code, msg, diff)
	return err
}

// recordOK writes a successful step and returns its id, or "" when the
// history could not take it: no agent is given the id of a step that is
// not there.
func (s *Session) recordOK(ctx context.Context, l *lease, tool string, args map[string]any, started time.Time, diff string) string {
	id, _ := s.addStep(ctx, l, tool, args, started, "ok", "", diff)
	return id
}

// screenChanged reports whether the screen the agent last saw differs from
// the last one photographed for the task: an unchanged screen needs no new
// screenshot (the earlier one shows it), which keeps the CPU for the agent.
func (s *Session) screenChanged(l *lease) bool {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if l.last == nil || (l.shotView != nil && screen.Same(l.shotView, l.last)) {
		return false
	}
	l.shotView = l.last
	return true
}

// addStep commits a step before the tool returns (an acknowledged step
// survives a crash of the daemon) and takes its screenshot in the
// background: the agent never waits for it. In an acting call it ends the
// step the call began with (intent.go); otherwise it adds one. It returns
// the step's id, or "" and why when the history could not take it.
func (s *Session) addStep(ctx context.Context, l *lease, tool string, args map[string]any, started time.Time, code, msg, diff string) (string, error) {
	m := s.m
	wctx, cancel := stepContext(ctx)
	defer cancel()
	var step history.Step
	var err error
	if in := intentOf(ctx); in != nil && !in.ended {
		in.ended = true
		step = in.step
		step.Outcome, step.Message, step.Diff, step.Duration = code, secrets.Scrub(msg), diff, time.Since(started)
		if err = m.cfg.Store.FinishStep(wctx, step); err != nil {
			in.lostEnd = err
		}
	} else {
		step = s.newStep(l, tool, args, started, code, msg, diff)
		err = m.cfg.Store.AddStep(wctx, step)
	}
	if err != nil {
		m.log.Error("recording a step", "task", l.taskID, "tool", tool, "err", err)
	}
	s.published(l, tool, code, step.Seq)
	if err != nil {
		return "", err
	}
	if m.cfg.Media != nil && code == "ok" && s.screenChanged(l) {
		s.shoot(l, step.ID)
	}
	return step.ID, nil
}
