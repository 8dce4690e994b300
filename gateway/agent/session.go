package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// Session is one connected agent (one MCP connection). Its methods are the
// tools; each returns an *Error for what the agent should react to.
type Session struct {
	m         *Manager
	id        string
	agentID   string
	client    Client
	transport string
	started   time.Time
	recorded  bool   // the session is in the history; guarded by Manager.mu
	resumeKey string // who may take over its parked leases (resume.go); guarded by Manager.mu
	// waiting holds actions waiting for an approval, by approval id; guarded by Manager.mu.
	waiting map[string]waitingCall
}

// ID is the session's id in the history.
func (s *Session) ID() string { return s.id }

// Client is the agent program of the session.
func (s *Session) Client() Client { return s.client }

// holder is the session as the lease table knows it.
func (s *Session) holder() lease.Holder {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	return s.holderLocked()
}

// holderLocked is holder; the caller holds Manager.mu.
func (s *Session) holderLocked() lease.Holder {
	return lease.Holder{Session: s.id, Agent: s.client.Name, Version: s.client.Version, ResumeKey: s.resumeKey}
}

// SetClient records the agent's name and version once MCP's initialize
// has told them, and the session with them.
func (s *Session) SetClient(ctx context.Context, c Client) error {
	if c.Name == "" {
		c.Name = "unknown agent"
	}
	now := time.Now()
	s.m.mu.Lock()
	s.client = c
	s.agentID = c.Name + "@" + c.Version
	first := !s.recorded
	s.recorded = true
	h := s.holderLocked()
	s.m.mu.Unlock()
	s.m.leases.Update(h) // its leases show, and resume by, the agent's name
	err := s.m.cfg.Store.UpsertAgent(ctx, history.Agent{ID: s.agentID, Name: c.Name, Version: c.Version, FirstSeen: now, LastSeen: now})
	if err != nil {
		err = fmt.Errorf("recording the agent: %w", err)
	} else if first {
		if err = s.m.cfg.Store.StartSession(ctx, history.Session{ID: s.id, AgentID: s.agentID, Transport: s.transport, StartedAt: s.started}); err != nil {
			err = fmt.Errorf("recording the session: %w", err)
		}
	}
	if err != nil && first {
		// Not in the history after all (a full disk, say): the next
		// phone_connect tries again, rather than starting a task of a
		// session the history does not have.
		s.m.mu.Lock()
		s.recorded = false
		s.m.mu.Unlock()
	}
	return err
}

// Close ends the session and the leases it holds, except those Park kept.
func (s *Session) Close() {
	m := s.m
	m.mu.Lock()
	delete(m.sessions, s.id)
	m.mu.Unlock()
	for _, l := range m.leases.Close(s.id) {
		m.endTask(l, lease.SessionClosed)
	}
	m.mu.Lock()
	recorded := s.recorded
	m.mu.Unlock()
	if !recorded {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.cfg.Store.EndSession(ctx, s.id, time.Now()); err != nil {
		m.log.Error("ending a session in the history", "session", s.id, "err", err)
	}
}

// Phones lists every phone with who holds it.
func (s *Session) Phones(ctx context.Context) ([]Phone, error) {
	m := s.m
	devs := m.cfg.Drivers.Devices()
	held := map[string]lease.Lease{}
	for _, l := range m.leases.List() {
		held[l.Device] = l
	}
	h, now := s.holder(), time.Now()
	seen := map[string]bool{}
	var out []Phone
	for _, d := range devs {
		if d.Duplicate || seen[d.ID] {
			continue
		}
		seen[d.ID] = true
		p := Phone{ID: d.ID, Name: d.Name, Model: d.Model, Platform: string(d.Platform), Online: d.Online, Locked: d.LockState == sdk.LockLocked}
		if l, ok := held[d.ID]; ok {
			yours := l.Holder.Session == s.id || lease.MayResume(h, l, now)
			p.Lease = &LeaseInfo{Agent: l.Holder.Agent, Task: l.Task, Yours: yours, Since: l.Since}
			if yours {
				p.Lease.TaskID = l.TaskID
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// Connect leases a phone for a task and returns its whole screen.
func (s *Session) Connect(ctx context.Context, req ConnectRequest) (*Observation, error) {
	m := s.m
	text := strings.TrimSpace(req.Task)
	if text == "" {
		return nil, Errorf(CodeInvalidArgument, "task is required: say in a sentence what you are doing on the phone; the person sees it")
	}
	m.mu.Lock()
	recorded, client := s.recorded, s.client
	m.mu.Unlock()
	if !recorded {
		if err := s.SetClient(ctx, client); err != nil {
			return nil, unrecorded(err, "the phone was not connected. Tell the person: pinky status says what to fix")
		}
	}
	device, err := s.pickDevice(req.Device)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	l := &task{id: newID("t"), device: device, text: text, apps: slices.Clone(req.Apps)}
	// The task is known before its lease is: a call that the table lets
	// use the phone finds its task.
	m.mu.Lock()
	m.tasks[l.id] = l
	m.mu.Unlock()
	taken, err := m.leases.Take(lease.Lease{Device: device, Holder: s.holder(), TaskID: l.id, Task: text, Apps: l.apps, Since: now})
	if err != nil {
		m.forget(l)
		return nil, s.connectError(device, text, err)
	}
	m.setFence(l, taken.Fence)
	if req.Background {
		drv, err := s.driver(device)
		if err == nil {
			err = s.background(ctx, drv, m.phone(device), l)
		}
		if err != nil {
			m.drop(l)
			return nil, err
		}
	}

	var name, model string
	for _, d := range m.cfg.Drivers.Devices() {
		if d.ID == device {
			name, model = d.Name, d.Model
			if err := m.cfg.Store.UpsertDevice(ctx, history.Device{ID: d.ID, Driver: d.Driver, Name: d.Name, Model: d.Model, Platform: string(d.Platform), FirstSeen: now, LastSeen: now}); err != nil {
				m.log.Error("recording a device", "device", device, "err", err)
			}
			break
		}
	}
	_ = model
	if err := m.cfg.Store.StartTask(ctx, history.Task{ID: l.id, SessionID: s.id, AgentID: s.agentID, DeviceID: device, Text: text, Apps: l.apps, StartedAt: now}); err != nil {
		m.drop(l)
		m.log.Error("recording the task", "task", l.id, "err", err)
		return nil, unrecorded(err, "the phone was not connected. Tell the person: pinky status says what to fix")
	}
	m.log.Info("lease", "device", device, "name", name, "agent", s.client.Name, "task", l.id)
	m.cfg.Watcher.TaskStarted(device, l.id, l.display)
	m.cfg.Events.Publish(events.Event{Kind: events.LeaseStarted, Device: device, Agent: s.client.Name, Task: l.id, Data: map[string]string{"text": secrets.Scrub(text)}})
	args := map[string]any{"device": device, "task": text, "apps": req.Apps}
	if req.Background {
		args["background"] = true
	}
	obs, err := s.observe(ctx, device, ToolConnect, args, true, false)
	if e, ok := AsError(err); ok && e.withheld {
		// The lease is held; only the screen is not the agent's to see (a
		// blocked app, an app outside the task): say so, and how to leave it.
		obs, err = &Observation{Device: device, Text: "Connected, but you may not see the screen: " + e.Message}, nil
	}
	if obs != nil {
		obs.TaskID = l.id
	}
	return obs, err
}

// forget removes a task that never got its lease.
func (m *Manager) forget(tk *task) {
	m.mu.Lock()
	delete(m.tasks, tk.id)
	m.mu.Unlock()
}

// drop removes a task that got its lease but could not start: nothing
// happened in it, so it ends with no outcome.
func (m *Manager) drop(tk *task) {
	m.leases.Drop(tk.id)
	m.forget(tk)
}

// connectError is the agent's error for the lease table's refusal of a
// phone_connect for the task text.
func (s *Session) connectError(device, text string, err error) error {
	e, ok := lease.AsError(err)
	switch {
	case ok && e.Reason == lease.ErrStopped:
		return Errorf(CodeStopped, "the person stopped you on %s for the task %q; do not take it again for this task", device, text)
	case ok && e.Reason == lease.ErrYours:
		return Errorf(CodeInvalidArgument, "you already hold %s for the task %q; release it first to start another task", device, e.Lease.Task)
	}
	return s.leaseError(err)
}

// leaseError is the agent's error for the lease table's refusal to let the
// session use or release a phone. An error that is not a refusal (a shared
// table's store failing) is the gateway's, not the agent's.
func (s *Session) leaseError(err error) error {
	e, ok := lease.AsError(err)
	if !ok {
		return fmt.Errorf("the lease table: %w", err)
	}
	switch e.Reason {
	case lease.ErrHeld, lease.ErrYours:
		return heldError(e.Device, e.Lease)
	case lease.ErrStopped:
		return Errorf(CodeStopped, "the person stopped you on %s (task %q); do not use it for this task. Tell the user", e.Device, e.StoppedTask)
	case lease.ErrOffline:
		return s.offlineError(e.Device, e.Since, e.Until)
	}
	if _, _, err := s.m.cfg.Drivers.DriverForDevice(e.Device); err != nil {
		return Errorf(CodeNotFound, "there is no phone %q; phone_list lists the phones", e.Device)
	}
	return Errorf(CodeNotLeased, "you do not hold %s; connect to it first with phone_connect", e.Device)
}

// pickDevice returns the requested phone, or the only free online one.
func (s *Session) pickDevice(want string) (string, error) {
	m := s.m
	devs := m.cfg.Drivers.Devices()
	if want != "" {
		for _, d := range devs {
			if d.ID == want {
				return want, nil
			}
		}
		return "", Errorf(CodeNotFound, "there is no phone %q; phone_list shows the phones", want)
	}
	held := map[string]bool{}
	for _, l := range m.leases.List() {
		held[l.Device] = true
	}
	var free []string
	for _, d := range devs {
		if d.Online && !held[d.ID] && !d.Duplicate && !slices.Contains(free, d.ID) {
			free = append(free, d.ID)
		}
	}
	switch len(free) {
	case 0:
		return "", Errorf(CodeNotFound, "no phone is free and online; phone_list shows who holds each")
	case 1:
		return free[0], nil
	}
	return "", Errorf(CodeInvalidArgument, "%d phones are free (%s): name one in device", len(free), strings.Join(free, ", "))
}

// heldError is the agent's error for a phone another session holds.
func heldError(device string, l lease.Lease) *Error {
	return Errorf(CodeLeaseHeld, "%s is in use by %q for the task %q; pick another phone with phone_list, or wait until it is released", device, l.Holder.Agent, l.Task)
}

// Release ends the lease and its task.
func (s *Session) Release(ctx context.Context, device string) error {
	m := s.m
	l, err := m.leases.Release(s.holder(), device)
	if err != nil {
		return s.leaseError(err)
	}
	if tk := m.task(l.TaskID); tk != nil {
		(&call{s: s, task: tk, device: device, tool: ToolRelease, args: map[string]any{"device": device}, started: time.Now()}).record(ctx, nil, "")
	}
	m.endTask(l, lease.Released)
	return nil
}

// hold returns the task of the session's lease on device, marks the lease
// used, and checks that the phone can be used now.
func (s *Session) hold(device string) (*task, error) {
	m := s.m
	h := s.holder()
	for try := 0; ; try++ {
		l, err := m.leases.Use(h, device)
		if err != nil {
			return nil, s.leaseError(err)
		}
		if tk := m.task(l.TaskID); tk != nil {
			m.setFence(tk, l.Fence) // a take-over gives a new one
			return tk, nil
		}
		if try > 0 {
			// Held in the table, but not a task of this gateway's: a shared
			// table's lease taken elsewhere.
			return nil, Errorf(CodeNotLeased, "you do not hold %s; connect to it first with phone_connect", device)
		}
		// The lease ended between the two (the person's stop, a sweep):
		// the table says why on the next try.
	}
}

// offlineError is the agent's error for a held phone that is offline
// since since; its lease ends at until unless it comes back.
func (s *Session) offlineError(device string, since, until time.Time) *Error {
	for _, d := range s.m.cfg.Drivers.Drivers() {
		if d.State == driverhost.StateRestarting || d.State == driverhost.StateStarting {
			for _, dev := range s.m.cfg.Drivers.Devices() {
				if dev.ID == device && dev.Driver == d.Name {
					return Errorf(CodeDriverRestarting, "the driver of %s is restarting; try again in a few seconds, then observe before repeating an action", device)
				}
			}
		}
	}
	left := time.Until(until)
	return Errorf(CodeDeviceOffline, "%s is offline since %s; your lease is kept for %s more. Wait, then observe", device, since.Format(time.TimeOnly), left.Round(time.Second))
}

// driver returns the driver of a held device.
func (s *Session) driver(device string) (sdk.Full, error) {
	d, _, err := s.m.cfg.Drivers.DriverForDevice(device)
	if err != nil {
		return nil, Errorf(CodeDeviceOffline, "%s is not reachable now; wait, then observe", device)
	}
	return d, nil
}
