package agent

import (
	"fmt"

	"github.com/pinky-gateway/pinky/gateway/lease"
)

// Stop ends the lease on device at the person's word: its task ends as
// "stopped", and the agent's calls on it answer stopped, from the next one
// and at once for one that waits: on the driver, however long it hangs
// (calls.go), for an approval (its card is denied), or in phone_ask_person.
//
// The table ends the lease, and holds its session off the phone for the
// task (lease.Table.Stop), before an agent waiting in phone_ask_person
// wakes: it reads the stop.
func (m *Manager) Stop(device string) error {
	l, err := m.leases.Stop(device)
	m.mu.Lock()
	if ch, asked := m.withHand[device]; asked {
		close(ch)
		delete(m.withHand, device)
	}
	var tk *task
	if err == nil {
		tk = m.tasks[l.TaskID]
	}
	m.mu.Unlock()
	if _, refused := lease.AsError(err); refused {
		return fmt.Errorf("no agent holds %s", device)
	} else if err != nil {
		return fmt.Errorf("stopping the lease on %s: %w", device, err)
	}
	if tk != nil {
		m.endCalls(tk, lease.Stopped) // before the history is written: waiting calls return now
	}
	m.denyOpen(l.TaskID)
	m.endTask(l, lease.Stopped)
	return nil
}

// denyOpen denies the approvals that a task still waits for: the agent
// was stopped, so nothing it asked may run. Its waiting call wakes and
// answers stopped.
func (m *Manager) denyOpen(taskID string) {
	book := m.cfg.Approvals
	if book == nil {
		return
	}
	for _, c := range book.List(true) {
		if c.TaskID == taskID {
			book.Decide(c.ID, false, false, "the person stopped the agent") //nolint:errcheck // decided meanwhile: nothing to end
		}
	}
}

// StopAll ends every lease, as Stop does, and reports how many it ended.
func (m *Manager) StopAll() int {
	n := 0
	for _, l := range m.leases.List() {
		if m.Stop(l.Device) == nil {
			n++
		}
	}
	return n
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

// giveToPerson hands tk's phone to the person for phone_ask_person, and
// returns the channel that closes when they hand it back (or the person
// stops the agent). When the person has the phone already (an earlier
// phone_ask_person that answered at its cap, or a take-over), the wait
// goes on on that hand-off, and fresh is false.
//
// A hand-off made here ends with tk at the latest (endTask): nobody would
// be left to hand the phone back to, and the person's clients show who has
// a phone by its lease.
func (m *Manager) giveToPerson(tk *task) (back <-chan struct{}, fresh bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch, ok := m.withHand[tk.device]; ok {
		return ch, false
	}
	ch := make(chan struct{})
	m.withHand[tk.device] = ch
	tk.hand = ch
	return ch, true
}

// takeBackLocked ends the hand-off that tk's phone_ask_person made, if the
// person still has the phone by it. m.mu is held.
func (m *Manager) takeBackLocked(tk *task) {
	if ch, ok := m.withHand[tk.device]; ok && tk.hand != nil && ch == tk.hand {
		close(ch)
		delete(m.withHand, tk.device)
	}
	tk.hand = nil
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
