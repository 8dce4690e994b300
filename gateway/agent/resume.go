package agent

import "time"

// Resuming leases across sessions.
//
// Some MCP clients open a new session for every call, or lose theirs to a
// network hiccup or an idle timeout; their leases must not end with the
// session that took them. A session with a resume key (SetResumeKey) can be
// parked instead of closed: its leases stay held, parked under the key, for
// a grace period. A later session with the same key and the same client
// (name and version) takes them over, with the same task, its steps and the
// screen the agent saw last, either all at once (Resume, when it starts) or
// one by one, as soon as it uses a parked phone. Any other session sees the
// phone held, as before. A parked lease nobody takes over ends when its
// grace passes, like a lease of a closed session.
//
// The key says who may resume: the gateway builds it from what identifies
// an agent beyond its name (the credential it connected with) and the
// client's name and version. An empty key never resumes anything.
//
// The rules are the lease table's (lease.MayResume, Table.Park and
// Table.Resume); a lease taken over keeps its task id, so the new session
// finds the task's agent side (its steps, the screen seen last) under it.

// SetResumeKey sets the key under which Park keeps the session's leases
// and with which the session takes over parked ones; empty turns resuming
// off.
func (s *Session) SetResumeKey(key string) {
	s.m.mu.Lock()
	s.resumeKey = key
	h := s.holderLocked()
	s.m.mu.Unlock()
	s.m.leases.Update(h) // its live leases resume by the new key
}

// Park closes s but keeps its leases for grace, for a session with the same
// resume key and client to take over. It reports how many leases it
// parked. Without a resume key, or with a grace of zero, it is Close.
func (m *Manager) Park(s *Session, grace time.Duration) int {
	h := s.holder()
	n := m.leases.Park(h, grace)
	if n > 0 {
		m.log.Info("agent session closed; its leases wait for it", "session", s.id, "agent", h.Agent, "leases", n, "grace", grace)
	}
	s.Close() // ends the session and any lease it did not park
	return n
}

// Resume takes over every lease parked for s (same resume key and client,
// grace not passed) and reports how many.
func (s *Session) Resume() int {
	return s.m.leases.Resume(s.holder())
}
