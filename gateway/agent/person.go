package agent

import "fmt"

// Stop ends the lease on device at the person's word: the agent's next
// call on it answers not_leased, and its task ends as "stopped". A
// phone_ask_person wait on it ends too.
func (m *Manager) Stop(device string) error {
	m.mu.Lock()
	l, ok := m.leases[device]
	if ok {
		delete(m.leases, device)
	}
	if ch, asked := m.withHand[device]; asked {
		close(ch)
		delete(m.withHand, device)
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("no agent holds %s", device)
	}
	m.endTask(l, "stopped")
	return nil
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
