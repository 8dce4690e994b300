package agent

import (
	"context"
	"errors"
	"fmt"
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
	return s.observe(ctx, device, ToolObserve, map[string]any{"device": device, "full": full, "screenshot": screenshot}, full, screenshot)
}

func (s *Session) observe(ctx context.Context, device, tool string, args map[string]any, full, screenshot bool) (*Observation, error) {
	return s.observeFrom(ctx, time.Now(), device, tool, args, full, screenshot)
}

// observeAt is observe with every option of phone_observe.
func (s *Session) observeAt(ctx context.Context, device, tool string, args map[string]any, o ObserveOptions) (*Observation, error) {
	return s.observeOpts(ctx, time.Now(), device, tool, args, o)
}

// observeFrom is observe for a call that began at started.
func (s *Session) observeFrom(ctx context.Context, started time.Time, device, tool string, args map[string]any, full, screenshot bool) (*Observation, error) {
	return s.observeOpts(ctx, started, device, tool, args, ObserveOptions{Full: full, Screenshot: screenshot})
}

// observeOpts reads the screen for a call that began at started.
func (s *Session) observeOpts(ctx context.Context, started time.Time, device, tool string, args map[string]any, o ObserveOptions) (*Observation, error) {
	screenshot := o.Screenshot
	c, err := s.beginAt(ctx, started, device, tool, args, nil)
	if err != nil {
		return nil, err
	}
	view, err := c.read(ctx)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	obs := s.show(c.task, view, o.Full)
	obs.Settled = true
	shot, err := s.mark(ctx, c, view, obs, o.Marks)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if screenshot && !shot {
		img, err := s.m.still(ctx, c.p, c.drv, sdk.ScreenshotRequest{DeviceID: device, DisplayID: c.display(), Format: sdk.FormatJPEG, MaxSide: 1280, Quality: 75})
		switch {
		case blankedShot(img, err):
			protect(obs) // protected.go
		case err != nil:
			return nil, c.fail(ctx, fromDriver(device, err, false))
		default:
			if obs.Screenshot, err = s.cover(c.p, img); err != nil {
				return nil, c.fail(ctx, err)
			}
		}
	}
	obs.Step = c.done(ctx, obs.Text)
	return obs, nil
}

// read reads a device's screen into its model.
func (s *Session) read(ctx context.Context, drv sdk.Full, p *phone, device string) (*screen.View, error) {
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
	if (img.Width > img.Height) != (size.X > size.Y) && img.Width != img.Height {
		// The phone turned between the read and the picture: the boxes
		// are in the old frame and would cover the wrong places.
		return nil, Errorf(CodeStale, "the screen turned while its picture was taken; read it again with phone_observe")
	}
	return secrets.CoverJPEG(img.Data, size.X, size.Y, boxes, 75)
}

// show renders view for the lease's agent: the whole screen when asked,
// on the first read, or when another app came to the front; else the diff.
func (s *Session) show(tk *task, view *screen.View, full bool) *Observation {
	s.m.mu.Lock()
	prev := tk.last
	tk.last = view
	s.m.mu.Unlock()
	app := view.App.Label
	if app == "" {
		app = view.App.ID
	}
	obs := &Observation{Device: tk.device, App: app, Locked: view.LockState == sdk.LockLocked}
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
	c, err := s.begin(ctx, device, a.Tool, a.args(device), progress)
	if err != nil {
		return nil, err
	}
	// Until the target is known, nothing typed is kept: it may be a password.
	refuse := func(err error) (*Observation, error) {
		redactTyped(c.args, a, nil, true)
		return nil, c.fail(ctx, err)
	}
	if err := s.m.personHas(device); err != nil {
		return refuse(err)
	}
	if book := s.m.cfg.Approvals; book != nil && a.ApprovalID == "" {
		// The phone takes no other action while an approval is open.
		if card, open := book.OpenFor(device); open {
			return refuse(Errorf(CodeApprovalPending,
				"an approval is open on %s (%s: %s); wait with phone_approval (id %s) before acting again", device, card.Tool, card.Target, card.ID))
		}
	}
	if a.Kind == "pinch" && !s.m.serves(c.p, sdk.CapPinch) {
		// An older driver would read a pinch as a request with no action:
		// the capability it declared is the one answer to trust.
		return refuse(s.m.unsupported(c.p, device, sdk.CapPinch,
			"the driver of "+device+" cannot pinch (it has no two-finger gestures); zoom with the app's own controls, such as a zoom button or a double tap"))
	}
	c.p.act.Lock()
	defer c.p.act.Unlock()

	view, err := c.read(ctx)
	if err != nil {
		if !leaves(a, err) {
			// A blocked app or an app outside the task is in front (or the
			// read failed): the action is not sent to the phone at all.
			return refuse(err)
		}
		if leaveKey(a) {
			return s.perform(ctx, c, a, []sdk.Action{{Kind: sdk.ActKey, Key: sdk.Key(strings.ToLower(a.Key))}})
		}
		view = &screen.View{} // a launch needs no view of the screen it covers
	}
	if a.Kind != "key" && a.Kind != "launch" { // keys (power, home…) work on a lock screen
		if view, err = s.unlocked(ctx, c, view); err != nil {
			return refuse(err)
		}
	}
	if err := inScope(c.task, view, a); err != nil {
		return refuse(err)
	}
	if a.Target.Mark != 0 {
		// A mark names the centre of its cell on the screen the agent saw;
		// from here on it is a tap at that point, judged on what is there.
		if a.Target, err = s.markTarget(c.task, view, a.Target); err != nil {
			return refuse(err)
		}
		c.args["x"], c.args["y"] = a.Target.X, a.Target.Y
	}
	if a.Kind == "launch" || a.Kind == "stop" {
		id, err := s.appID(ctx, c, a.App)
		if err != nil {
			return refuse(err)
		}
		a.App = id
	}
	actions, target, err := plan(view, a)
	if err != nil {
		return refuse(err)
	}
	redactTyped(c.args, a, target, false)
	t := aimAt(view, a, actions, target)
	if err := s.opensHidden(ctx, c, view, t); err != nil {
		return nil, c.fail(ctx, err)
	}
	card, err := s.guard(ctx, c, view, t, a)
	if err != nil {
		return nil, c.fail(ctx, err)
	}
	if card != nil {
		// The person decided on what the screen showed then: act only if it
		// still shows that, with the target where the agent aimed.
		now, err := c.read(ctx)
		if err != nil {
			return nil, c.fail(ctx, err)
		}
		if !stillThere(card, view, now, t.start.node) {
			return nil, c.fail(ctx, Errorf(CodeStale,
				"the screen changed since the person decided (what they approved is no longer what it shows), so the action was not done; observe and ask again"))
		}
	}
	return s.perform(ctx, c, a, actions)
}

// perform runs an action's driver actions, waits for the screen to settle,
// and records the step.
//
// The step is committed, as running, before anything reaches the phone: an
// action the history cannot take is not done (intent.go). The fail or done
// that ends each path ends that step.
func (s *Session) perform(ctx context.Context, c *call, a Action, actions []sdk.Action) (*Observation, error) {
	if err := c.intend(ctx); err != nil {
		return nil, err
	}
	obs, err := func() (*Observation, error) {
		for i, sa := range actions {
			sa.DisplayID = c.display()
			if _, err := c.drv.Act(ctx, c.device, sa); err != nil {
				// The first action of a plan that fails for a reason the driver
				// knows did not happen; anything later, or unknown, may have.
				acting := i > 0 || !definite(err)
				return nil, c.fail(ctx, fromDriver(c.device, err, acting))
			}
		}
		if a.Kind == "scroll" && a.Until != "" {
			return s.scrollUntil(ctx, c, a)
		}
		next, settled, err := s.settle(ctx, c, c.progress)
		if err != nil {
			return nil, c.fail(ctx, fromDriver(c.device, err, true))
		}
		obs := s.show(c.task, next, false)
		obs.Settled = settled
		if _, err := s.mark(ctx, c, next, obs, false); err != nil {
			// The action is done: a screen that could not be photographed
			// is read without its marks.
			s.m.log.Warn("marks: no screenshot after an action", "device", c.device, "err", err)
		}
		obs.Step = c.done(ctx, obs.Text)
		return obs, nil
	}()
	if lost := c.in.end(ctx, err); lost != nil && err == nil {
		return nil, lost // the action ran, but not into the history: no plain ok
	}
	return obs, err
}

// inScope keeps a task that named its apps to them: with another app in
// front only home, back and launches (checked by appID) work, so the agent
// can find its way back.
func inScope(tk *task, view *screen.View, a Action) error {
	if len(tk.apps) == 0 || leaveKey(a) || a.Kind == "launch" || a.Kind == "stop" {
		return nil
	}
	app := view.App
	if app.System || app.ID == "" || inList(tk.apps, app.ID, app.Label) {
		return nil // the home and lock screens belong to every task
	}
	return Errorf(CodeScopeDenied, "the task %q may only use %s, and %s is in front; go back with phone_key (back or home) or launch one of them", tk.text, strings.Join(tk.apps, ", "), app.Label)
}

// appID resolves an app id or label to the id, and keeps a task to the
// apps it named at connect.
func (s *Session) appID(ctx context.Context, c *call, app string) (string, error) {
	tk := c.task
	if app == "" {
		return "", Errorf(CodeInvalidArgument, "app is required: an app id or label from phone_apps")
	}
	id := app
	if s.m.serves(c.p, sdk.CapApps) {
		apps, err := c.drv.ListApps(ctx, tk.device)
		if err != nil && !errors.Is(err, sdk.ErrUnsupported) {
			return "", fromDriver(tk.device, err, false)
		}
		found := false
		for _, a := range apps {
			if a.ID == app || strings.EqualFold(a.Label, app) {
				id, found = a.ID, true
				break
			}
		}
		if !found && err == nil {
			return "", Errorf(CodeNotFound, "no app %q on %s; phone_apps lists them", app, tk.device)
		}
	}
	if len(tk.apps) > 0 && !inList(tk.apps, id, app) {
		return "", Errorf(CodeScopeDenied, "the task %q may only use %s; %s is not one of them", tk.text, strings.Join(tk.apps, ", "), app)
	}
	return id, nil
}

// unlocked returns the screen to act on, which must not be the lock
// screen. The agent may have last seen the lock screen after the person
// unlocked the phone, so a locked view is read again; a phone that is
// still locked is unlocked with the saved PIN when the person turned that
// on (wake.go); otherwise the action is refused with device_locked.
func (s *Session) unlocked(ctx context.Context, c *call, view *screen.View) (*screen.View, error) {
	device := c.device
	if c.display() != 0 {
		return view, nil // a background display shows its app whatever the lock: never unlock for it
	}
	if view.LockState != sdk.LockLocked {
		return view, nil
	}
	view, err := c.read(ctx)
	if err != nil || view.LockState != sdk.LockLocked {
		return view, err
	}
	fresh, err := s.autoUnlock(ctx, c.drv, c.p, device)
	if err != nil {
		return nil, err
	}
	if fresh != nil && fresh.LockState != sdk.LockLocked {
		return fresh, nil
	}
	return nil, Errorf(CodeDeviceLocked,
		"%s is locked; ask the person to unlock it with phone_ask_person (they run pinky unlock %s, or unlock it in hand)", device, device)
}

// settle waits until the screen stops changing, up to SettleCap: the
// driver's idle signal when it has one, then one read (the signal already
// says the screen stands still: a second read would only repeat it); else
// reads until two match.
//
// The signal serves a task on a background display too. The contract's
// WaitIdle names no display, so a driver waits until none of the phone's
// displays changes (the sim's and the Android driver's do): the person's
// use of display 0 can keep a background task's wait to its cap, which
// still costs one read, where the two-read loop costs two at the least.
func (s *Session) settle(ctx context.Context, c *call, progress Progress) (*screen.View, bool, error) {
	drv, p, device := c.drv, c.p, c.device
	cap := s.m.cfg.SettleCap
	start := time.Now()
	if progress != nil {
		progress(0, cap.Seconds(), "waiting for the screen to settle")
	}
	display := s.m.displayOf(p)
	if s.m.serves(p, sdk.CapWaitIdle) {
		idle, err := drv.WaitIdle(ctx, device, cap)
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

// scrollUntil scrolls, at most ten times, until text shows.
func (s *Session) scrollUntil(ctx context.Context, c *call, a Action) (*Observation, error) {
	const most = 10
	tk := c.task
	s.m.mu.Lock()
	first := tk.last
	s.m.mu.Unlock()
	// show renders v against what the agent saw before the first scroll.
	show := func(v *screen.View) *Observation {
		s.m.mu.Lock()
		tk.last = first
		s.m.mu.Unlock()
		obs := s.show(tk, v, false)
		obs.Settled = true
		return obs
	}
	for i := 1; ; i++ {
		v, _, err := s.settle(ctx, c, nil)
		if err != nil {
			return nil, c.fail(ctx, fromDriver(c.device, err, true))
		}
		if _, err := v.ByText(a.Until, 1); err == nil || i == most {
			obs := show(v)
			if err != nil {
				obs.Text = fmt.Sprintf("%q did not show after %d scrolls.\n%s", a.Until, most, obs.Text)
			}
			obs.Step = c.done(ctx, obs.Text)
			return obs, nil
		}
		c.report(float64(i), most, fmt.Sprintf("scrolled %d times looking for %q", i, a.Until))
		next := Action{Kind: "scroll", Direction: a.Direction, Target: a.Target}
		acts, target, err := plan(v, next)
		if err != nil {
			return nil, c.fail(ctx, err)
		}
		if why, stop := s.wouldStop(c, v, next, acts, target); stop {
			// Each scroll passes the gate: one that would start or end on
			// a control that commits is left to the agent to ask for.
			obs := show(v)
			obs.Text = fmt.Sprintf("Stopped after %d scrolls without finding %q: the next scroll %s. Scroll again with phone_scroll to ask for it.\n%s", i, a.Until, why, obs.Text)
			obs.Step = c.done(ctx, obs.Text)
			return obs, nil
		}
		acts[0].DisplayID = c.display()
		if _, err := c.drv.Act(ctx, c.device, acts[0]); err != nil {
			return nil, c.fail(ctx, fromDriver(c.device, err, true))
		}
	}
}

// wouldStop reports whether the guard would not simply allow a, planned as
// acts on v, and why: a scroll of scrollUntil's that needs the person.
func (s *Session) wouldStop(c *call, v *screen.View, a Action, acts []sdk.Action, target *screen.Node) (string, bool) {
	g := s.m.cfg.Guard
	if g == nil {
		return "", false
	}
	verdict := g.Check(s.check(c.task, v, a, aimAt(v, a, acts, target)))
	if verdict.Decision == Allow {
		return "", false
	}
	why := verdict.Evidence
	if why == "" {
		why = verdict.Reason
	}
	return "would need the person (" + why + ")", true
}

// screenChanged reports whether the screen the agent last saw differs from
// the last one photographed for the task: an unchanged screen needs no new
// screenshot (the earlier one shows it), which keeps the CPU for the agent.
func (s *Session) screenChanged(tk *task) bool {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if tk.last == nil || (tk.shotView != nil && screen.Same(tk.shotView, tk.last)) {
		return false
	}
	tk.shotView = tk.last
	return true
}

// addStep commits the call's step before the tool returns (an
// acknowledged step survives a crash of the daemon) and takes its
// screenshot in the background: the agent never waits for it. In an acting
// call it ends the step the call began with (intent.go); otherwise it adds
// one. It returns the step's id, or "" and why when the history could not
// take it.
func (s *Session) addStep(ctx context.Context, c *call, code, msg, diff string) (string, error) {
	m, tk := s.m, c.task
	wctx, cancel := stepContext(ctx)
	defer cancel()
	var step history.Step
	var err error
	if in := c.in; in != nil && !in.ended {
		in.ended = true
		step = in.step
		step.Outcome, step.Message, step.Diff, step.Duration = code, secrets.Scrub(msg), diff, time.Since(c.started)
		if err = m.cfg.Store.FinishStep(wctx, step); err != nil {
			in.lostEnd = err
		}
	} else {
		step = c.newStep(code, msg, diff)
		err = m.cfg.Store.AddStep(wctx, step)
	}
	if err != nil {
		m.log.Error("recording a step", "task", tk.id, "tool", c.tool, "err", err)
	}
	s.published(tk, c.tool, code, step.Seq)
	if err != nil {
		return "", err
	}
	if m.cfg.Media != nil && code == "ok" && s.screenChanged(tk) {
		s.shoot(tk, step.ID)
	}
	return step.ID, nil
}
