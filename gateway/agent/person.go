package agent

import "fmt"

// Stop ends the lease on device at the person's word: its task ends as
// "stopped", and the agent's calls on it answer stopped, from the next one
// and at once for one that waits: on the driver, however long it hangs
// (calls.go), for an approval (its card is denied), or in phone_ask_person.
func (m *Manager) Stop(device string) error {
	m.mu.Lock()
	l, ok := m.leases[device]
	if ok {
		delete(m.leases, device)
		m.stopped[device] = stopInfo{session: l.session, task: l.text}
	}
	if ch, asked := m.withHand[device]; asked {
		close(ch)
		delete(m.withHand, device)
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("no agent holds %s", device)
	}
	m.endCalls(l, "stopped") // before the history is written: waiting calls return now
	m.denyOpen(l)
	m.endTask(l, "stopped")
	return nil
}

// denyOpen denies the approvals that l's task still waits for: the agent
// was stopped, so nothing it asked may run. Its waiting call wakes and
// answers stopped.
func (m *Manager) denyOpen(tk *task) {
	book := m.cfg.Approvals
	if book == nil {
		return
	}
	for _, c := range book.List(true) {
		if c.TaskID == tk.id {
			book.Decide(c.ID, false, false, "the person stopped the agent") //nolint:errcheck // decided meanwhile: nothing to end
		}
	}
}

// StopAll ends every lease, as Stop does, and reports how many it ended.
func (m *Manager) StopAll() int {
	m.mu.Lock()
	devices := make([]string, 0, len(m.leases))
	for d := range m.leases {
		devices = append(devices, d)
	}
	m.mu.Unlock()
	n := 0
	for _, d := range devices {
		if m.Stop(d) == nil {
			n++
		}
	}
	return n
}

// stopInfo remembers whom the person stopped on a phone: that session may
// not take the phone again for the same task.
type stopInfo struct {
	session *Session
	task    string
}

// TakeOver gives the phone to the person: the agent's actions on it answer
// person_in_control until HandBack, and one waiting on the driver ends at
// once (calls.go); reads still work.
func (m *Manager) TakeOver(device string) error {
	m.mu.Lock()
	if _, ok := m.withHand[device]; ok {
		m.mu.Unlock()
		return fmt.Errorf("%s is already with the person", device)
	}
	m.withHand[device] = make(chan struct{})
	m.takeOverCallsLocked(device)
	m.mu.Unlock()
	m.cfg.Watcher.ScreenHidden(device, "the person took the phone")
	return nil
}

// personHas reports whether the person has the phone in hand (taken over,
// or given by phone_ask_person), as an error for an acting call.
func (m *Manager) personHas(device string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.withHand[device]; ok {
		return Errorf(CodePersonInControl, "the person is using %s; reads work, actions wait until they hand it back. Observe later", device)
	}
	return nil
}

// WithPerson reports whether the person has the phone in hand (taken over,
// or given by phone_ask_person): then the console's input acts on it.
func (m *Manager) WithPerson(device string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.withHand[device]
	return ok
}
