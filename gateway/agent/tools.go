package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// Apps lists the apps the agent may launch: all of them, or the task's list.
func (s *Session) Apps(ctx context.Context, device string) ([]App, error) {
	args := map[string]any{"device": device}
	c, err := s.begin(ctx, device, ToolApps, args, nil)
	if err != nil {
		return nil, err
	}
	if !s.m.serves(c.p, sdk.CapApps) {
		return nil, c.fail(ctx, s.m.unsupported(c.p, device, sdk.CapApps, device+" cannot list its apps"))
	}
	apps, err := c.drv.ListApps(ctx, device)
	if err != nil {
		return nil, c.fail(ctx, fromDriver(device, err, false))
	}
	var out []App
	for _, a := range apps {
		if g := s.m.cfg.Guard; g != nil && g.Blocked(a.ID) {
			continue // blocked apps are hidden from agents
		}
		if len(c.task.apps) == 0 || inList(c.task.apps, a.ID, a.Label) {
			out = append(out, App{ID: a.ID, Label: a.Label})
		}
	}
	c.done(ctx, fmt.Sprintf("%d apps", len(out)))
	return out, nil
}

func inList(list []string, id, label string) bool {
	for _, x := range list {
		if strings.EqualFold(x, id) || strings.EqualFold(x, label) {
			return true
		}
	}
	return false
}

// WaitFor reads the screen until a text or ref shows (or goes), up to a
// timeout capped at Config.WaitCap, with progress. A read still running at
// the deadline is cut soon after it (readGrace), so that the call answers
// timeout before the agent's host gives up on it.
func (s *Session) WaitFor(ctx context.Context, device string, req WaitRequest, progress Progress) (*Observation, error) {
	args := map[string]any{"device": device, "text": req.Text, "ref": req.Ref, "gone": req.Gone, "timeout_ms": req.Timeout.Milliseconds()}
	c, err := s.begin(ctx, device, ToolWaitFor, args, progress)
	if err != nil {
		return nil, err
	}
	if (req.Text == "") == (req.Ref == 0) {
		return nil, c.fail(ctx, Errorf(CodeInvalidArgument, "give either text or ref"))
	}
	timeout := min(max(req.Timeout, time.Second), s.m.cfg.WaitCap)
	deadline := c.started.Add(timeout)
	rctx, cancel := context.WithDeadline(ctx, deadline.Add(readGrace))
	defer cancel()
	what := fmt.Sprintf("%q", req.Text)
	if req.Ref != 0 {
		what = fmt.Sprintf("[%d]", req.Ref)
	}
	verb := "did not show"
	if req.Gone {
		verb = "is still there"
	}
	late := Errorf(CodeTimeout, "%s %s within %s; observe to see the screen, then wait again or act", what, verb, timeout)
	for {
		v, err := c.read(rctx)
		if err != nil {
			if ctx.Err() == nil && rctx.Err() != nil {
				return nil, c.fail(ctx, late) // the read ran past the deadline
			}
			return nil, c.fail(ctx, err)
		}
		var found bool
		if req.Ref != 0 {
			_, ferr := v.ByRef(req.Ref)
			found = ferr == nil
		} else {
			_, ferr := v.ByText(req.Text, 1)
			found = ferr == nil
		}
		if found != req.Gone {
			obs := s.show(c.task, v, false)
			obs.Settled = true
			obs.Step = c.done(ctx, obs.Text)
			return obs, nil
		}
		if time.Now().After(deadline) {
			return nil, c.fail(ctx, late)
		}
		c.report(time.Since(c.started).Seconds(), timeout.Seconds(), "waiting")
		select {
		case <-ctx.Done():
			return nil, c.fail(ctx, Errorf(CodeTimeout, "the wait was cancelled"))
		case <-time.After(min(250*time.Millisecond, time.Until(deadline)+time.Millisecond)):
		}
	}
}

// Notifications lists the phone's notifications.
func (s *Session) Notifications(ctx context.Context, device string) ([]Notification, error) {
	args := map[string]any{"device": device}
	c, err := s.begin(ctx, device, ToolNotifications, args, nil)
	if err != nil {
		return nil, err
	}
	if !s.m.serves(c.p, sdk.CapNotifications) {
		return nil, c.fail(ctx, s.m.unsupported(c.p, device, sdk.CapNotifications, device+" cannot list notifications"))
	}
	ns, err := c.drv.ListNotifications(ctx, device)
	if err != nil {
		return nil, c.fail(ctx, fromDriver(device, err, false))
	}
	out := make([]Notification, 0, len(ns))
	for _, n := range ns {
		if g := s.m.cfg.Guard; g != nil && n.AppID != "" && g.Blocked(n.AppID) {
			continue // a blocked app's notifications are not the agent's
		}
		n = secrets.MaskNotification(n)
		out = append(out, Notification{App: n.AppID, Title: n.Title, Text: n.Text, Time: n.Posted})
	}
	c.done(ctx, fmt.Sprintf("%d notifications", len(out)))
	return out, nil
}

// AskPerson hands the phone to the person and waits until they hand it
// back (pinky hand-back DEVICE), then returns the whole screen. It waits at
// most Config.WaitCap: then it answers, as a result and not a failure, that
// the person still has the phone (Observation.WithPerson). The phone stays
// with the person until they hand it back, the person stops the agent or
// the task ends; calling AskPerson again waits on for the same hand-back,
// as it does when the person took the phone over. A cancelled wait leaves
// the phone with the person too: they may be halfway through.
func (s *Session) AskPerson(ctx context.Context, device, message string, progress Progress) (*Observation, error) {
	args := map[string]any{"device": device, "message": message}
	c, err := s.held(time.Now(), device, ToolAskPerson, args)
	if err != nil {
		return nil, err
	}
	l, started := c.task, c.started
	if strings.TrimSpace(message) == "" {
		return nil, c.fail(ctx, Errorf(CodeInvalidArgument, "message is required: tell the person what you need them to do"))
	}
	m := s.m
	back, fresh := m.giveToPerson(l)
	if fresh {
		m.cfg.Watcher.ScreenHidden(device, "an agent asked for the person")
		m.log.Warn("an agent asks for the person", "device", device, "agent", s.client.Name, "message", message)
	} else {
		m.log.Info("an agent waits on for the person", "device", device, "agent", s.client.Name, "message", message)
	}
	wait := m.cfg.WaitCap
	report := func() {
		if progress != nil {
			progress(time.Since(started).Seconds(), wait.Seconds(), "waiting for the person to hand the phone back")
		}
	}
	report() // at once: the host learns that this call waits
	capped := time.NewTimer(wait - time.Since(started))
	defer capped.Stop()
	tick := time.NewTicker(m.cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-back:
			m.cfg.Watcher.ScreenHidden(device, "the person handed the phone back")
			m.leases.Touch(l.id)
			return s.observeFrom(ctx, started, device, ToolAskPerson, args, true, false)
		case <-ctx.Done():
			return nil, c.fail(ctx, Errorf(CodeTimeout, "the wait for the person was cancelled; they still have %s. Call phone_ask_person again to wait until they hand it back, or observe later", device))
		case <-capped.C:
			m.leases.Touch(l.id)
			obs := &Observation{Device: device, WithPerson: true, Settled: true, Text: fmt.Sprintf(
				"The person still has %s: they have not handed it back within %s. "+
					"Call phone_ask_person again (the same message is fine) to keep waiting, or phone_observe later; "+
					"reads work meanwhile, and actions wait until they hand it back.", device, wait)}
			obs.Step = c.done(ctx, fmt.Sprintf("the person still has the phone after %s", wait))
			return obs, nil
		case <-tick.C:
			m.leases.Touch(l.id) // waiting for the person is not idling
			report()
		}
	}
}

// shoot takes the step's screenshot in the background and files it as the
// step's "after". A step's "before" is the previous step's "after": the
// screen does not change between two steps of one agent on a leased phone.
func (s *Session) shoot(tk *task, stepID string) {
	m := s.m
	go func() {
		drv, _, err := m.cfg.Drivers.DriverForDevice(tk.device)
		if err != nil {
			return
		}
		m.mu.Lock()
		blocked := s.m.phones[tk.device] != nil && s.m.phones[tk.device].blocked
		m.mu.Unlock()
		if blocked {
			return // never a picture of a blocked app
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// 960 px on the longer side reads well in the history and costs a
		// phone (or the sim) a third of a full-size capture.
		img, err := s.m.still(ctx, s.m.phone(tk.device), drv, sdk.ScreenshotRequest{DeviceID: tk.device, DisplayID: tk.display, Format: sdk.FormatJPEG, MaxSide: 960, Quality: 70})
		if err != nil {
			m.log.Debug("step screenshot", "device", tk.device, "err", err)
			return
		}
		data, err := s.cover(s.m.phone(tk.device), img)
		if err != nil {
			m.log.Error("covering secrets in a step screenshot; not saved", "device", tk.device, "err", err)
			return
		}
		m.cfg.Media.Save(history.Shot{TaskID: tk.id, StepID: stepID, Kind: history.KindAfter, JPEG: data, Width: img.Width, Height: img.Height})
	}()
}
