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

// maxWait caps phone_wait_for.
const maxWait = 60 * time.Second

// Apps lists the apps the agent may launch: all of them, or the task's list.
func (s *Session) Apps(ctx context.Context, device string) ([]App, error) {
	args := map[string]any{"device": device}
	c, err := s.begin(ctx, device, ToolApps, args, nil)
	if err != nil {
		return nil, err
	}
	if !s.m.serves(c.p, sdk.CapApps) {
		return nil, c.fail(ctx, Errorf(CodeUnsupported, "%s cannot list its apps", device))
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
// capped timeout, with progress.
func (s *Session) WaitFor(ctx context.Context, device string, req WaitRequest, progress Progress) (*Observation, error) {
	args := map[string]any{"device": device, "text": req.Text, "ref": req.Ref, "gone": req.Gone, "timeout_ms": req.Timeout.Milliseconds()}
	c, err := s.begin(ctx, device, ToolWaitFor, args, progress)
	if err != nil {
		return nil, err
	}
	if (req.Text == "") == (req.Ref == 0) {
		return nil, c.fail(ctx, Errorf(CodeInvalidArgument, "give either text or ref"))
	}
	timeout := min(max(req.Timeout, time.Second), maxWait)
	deadline := time.Now().Add(timeout)
	for {
		v, err := c.read(ctx)
		if err != nil {
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
			what := fmt.Sprintf("%q", req.Text)
			if req.Ref != 0 {
				what = fmt.Sprintf("[%d]", req.Ref)
			}
			verb := "did not show"
			if req.Gone {
				verb = "is still there"
			}
			err := Errorf(CodeTimeout, "%s %s within %s; observe to see the screen, then wait again or act", what, verb, timeout)
			return nil, c.fail(ctx, err)
		}
		c.report(time.Since(c.started).Seconds(), timeout.Seconds(), "waiting")
		select {
		case <-ctx.Done():
			return nil, c.fail(ctx, Errorf(CodeTimeout, "the wait was cancelled"))
		case <-time.After(250 * time.Millisecond):
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
		return nil, c.fail(ctx, Errorf(CodeUnsupported, "%s cannot list notifications", device))
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
// back (pinky hand-back DEVICE), then returns the whole screen.
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
	back := make(chan struct{})
	m.mu.Lock()
	m.withHand[device] = back
	m.mu.Unlock()
	m.cfg.Watcher.ScreenHidden(device, "an agent asked for the person")
	defer m.cfg.Watcher.ScreenHidden(device, "the person handed the phone back")
	m.log.Warn("an agent asks for the person", "device", device, "agent", s.client.Name, "message", message)
	defer func() {
		m.mu.Lock()
		if m.withHand[device] == back {
			delete(m.withHand, device)
		}
		m.mu.Unlock()
	}()
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-back:
			m.leases.Touch(l.id)
			return s.observeFrom(ctx, started, device, ToolAskPerson, args, true, false)
		case <-ctx.Done():
			return nil, c.fail(ctx, Errorf(CodeTimeout, "the wait for the person was cancelled; they may still be using the phone"))
		case <-tick.C:
			m.leases.Touch(l.id) // waiting for the person is not idling
			if progress != nil {
				progress(time.Since(started).Seconds(), 0, "waiting for the person to hand the phone back")
			}
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
