package lease

import (
	"sync"
	"time"
)

// Memory is the lease table in the daemon's memory. Its zero value is not
// ready; NewMemory makes one.
type Memory struct {
	cfg Config

	// mu guards the maps. It is taken only inside Memory's methods, and
	// nothing is called with it held but the logger.
	mu      sync.Mutex
	leases  map[string]*Lease    // by device
	offline map[string]time.Time // devices offline since
	stopped map[string]stop      // by device: whom the person stopped there last
	fences  map[string]int64     // by device: the last fence given
}

// stop is whom the person stopped on a phone: that session may not take
// the phone again for the same task.
type stop struct {
	session, task string
}

// NewMemory returns an empty table with cfg's rules.
func NewMemory(cfg Config) *Memory {
	return &Memory{
		cfg:     cfg.WithDefaults(),
		leases:  map[string]*Lease{},
		offline: map[string]time.Time{},
		stopped: map[string]stop{},
		fences:  map[string]int64{},
	}
}

// Take implements Table.
func (m *Memory) Take(l Lease) (Lease, error) {
	l = l.clone()
	l.LastUsed, l.ParkKey, l.ParkedUntil = l.Since, "", time.Time{}
	m.mu.Lock()
	defer m.mu.Unlock()
	if st, ok := m.stopped[l.Device]; ok && st.session == l.Holder.Session && st.task == l.Task {
		return Lease{}, &Error{Reason: ErrStopped, Device: l.Device, StoppedTask: st.task}
	}
	if held, ok := m.leases[l.Device]; ok {
		if held.Holder.Session == l.Holder.Session || m.takeOverLocked(l.Holder, held) {
			return Lease{}, &Error{Reason: ErrYours, Device: l.Device, Lease: held.clone()}
		}
		return Lease{}, &Error{Reason: ErrHeld, Device: l.Device, Lease: held.clone()}
	}
	l.Fence = m.nextFenceLocked(l.Device)
	m.leases[l.Device] = &l
	return l.clone(), nil
}

// Use implements Table.
func (m *Memory) Use(h Holder, device string) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, err := m.heldLocked(h, device)
	if err != nil {
		return Lease{}, err
	}
	l.LastUsed = m.cfg.Now()
	if since, off := m.offline[device]; off {
		return Lease{}, &Error{Reason: ErrOffline, Device: device, Lease: l.clone(), Since: since, Until: since.Add(m.cfg.OfflineGrace)}
	}
	return l.clone(), nil
}

// Touch implements Table.
func (m *Memory) Touch(taskID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.byTaskLocked(taskID); l != nil {
		l.LastUsed = m.cfg.Now()
	}
}

// Release implements Table.
func (m *Memory) Release(h Holder, device string) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, err := m.heldLocked(h, device)
	if err != nil {
		return Lease{}, err
	}
	delete(m.leases, device)
	return *l, nil
}

// Stop implements Table.
func (m *Memory) Stop(device string) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.leases[device]
	if !ok {
		return Lease{}, &Error{Reason: ErrNotHeld, Device: device}
	}
	delete(m.leases, device)
	m.stopped[device] = stop{session: l.Holder.Session, task: l.Task}
	return *l, nil
}

// Drop implements Table.
func (m *Memory) Drop(taskID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.byTaskLocked(taskID)
	if l != nil {
		delete(m.leases, l.Device)
	}
	return l != nil
}

// Close implements Table.
func (m *Memory) Close(session string) []Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Lease
	for device, l := range m.leases {
		if l.Holder.Session == session && !l.Parked() {
			delete(m.leases, device)
			out = append(out, *l)
		}
	}
	return out
}

// Park implements Table.
func (m *Memory) Park(h Holder, grace time.Duration) int {
	if h.ResumeKey == "" || grace <= 0 {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	until := m.cfg.Now().Add(grace)
	n := 0
	for _, l := range m.leases {
		if l.Holder.Session == h.Session {
			l.ParkKey, l.ParkedUntil = h.ResumeKey, until
			n++
		}
	}
	return n
}

// Resume implements Table.
func (m *Memory) Resume(h Holder) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, l := range m.leases {
		if l.Parked() && m.takeOverLocked(h, l) {
			n++
		}
	}
	return n
}

// Update implements Table.
func (m *Memory) Update(h Holder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, l := range m.leases {
		if l.Holder.Session == h.Session {
			l.Holder = h
		}
	}
}

// SetOnline implements Table.
func (m *Memory) SetOnline(device string, online bool, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if online {
		delete(m.offline, device)
		return
	}
	if _, ok := m.offline[device]; !ok {
		if at.IsZero() {
			at = m.cfg.Now()
		}
		m.offline[device] = at
	}
}

// Sweep implements Table.
func (m *Memory) Sweep(now time.Time) []Ended {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Ended
	for device, l := range m.leases {
		if outcome, due := m.cfg.Due(*l, m.offline[device], now); due {
			delete(m.leases, device)
			out = append(out, Ended{Lease: *l, Outcome: outcome})
		}
	}
	return out
}

// Get implements Table.
func (m *Memory) Get(device string) (Lease, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.leases[device]
	if !ok {
		return Lease{}, false
	}
	return l.clone(), true
}

// List implements Table.
func (m *Memory) List() []Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Lease, 0, len(m.leases))
	for _, l := range m.leases {
		out = append(out, l.clone())
	}
	return out
}

// heldLocked returns h's lease on device, taking it over when h may resume
// it, or why h holds none. m.mu is held.
func (m *Memory) heldLocked(h Holder, device string) (*Lease, error) {
	l, ok := m.leases[device]
	switch {
	case ok && (l.Holder.Session == h.Session || m.takeOverLocked(h, l)):
		return l, nil
	case ok:
		return nil, &Error{Reason: ErrHeld, Device: device, Lease: l.clone()}
	}
	if st, ok := m.stopped[device]; ok && st.session == h.Session {
		return nil, &Error{Reason: ErrStopped, Device: device, StoppedTask: st.task}
	}
	return nil, &Error{Reason: ErrNotHeld, Device: device}
}

// takeOverLocked moves l to h when h may resume it, and reports whether l
// is now h's. m.mu is held.
func (m *Memory) takeOverLocked(h Holder, l *Lease) bool {
	if !MayResume(h, *l, m.cfg.Now()) {
		return false
	}
	m.cfg.Logger.Info("lease resumed by a new session of its agent", "device", l.Device, "task", l.TaskID,
		"agent", h.Agent, "from", l.Holder.Session, "session", h.Session)
	l.Holder, l.ParkKey, l.ParkedUntil = h, "", time.Time{}
	l.Fence = m.nextFenceLocked(l.Device)
	return true
}

// nextFenceLocked returns a new fence for device, greater than every fence
// it had before. m.mu is held.
func (m *Memory) nextFenceLocked(device string) int64 {
	m.fences[device]++
	return m.fences[device]
}

// byTaskLocked returns the lease of a task, or nil. m.mu is held.
func (m *Memory) byTaskLocked(taskID string) *Lease {
	for _, l := range m.leases {
		if l.TaskID == taskID {
			return l
		}
	}
	return nil
}

// Interface guards.
var _ Table = (*Memory)(nil)
