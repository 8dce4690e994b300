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

// SetResumeKey sets the key under which Park keeps the session's leases
// and with which the session takes over parked ones; empty turns resuming
// off.
func (s *Session) SetResumeKey(key string) {
	s.m.mu.Lock()
	s.resumeKey = key
	s.m.mu.Unlock()
}

// Park closes s but keeps its leases for grace, for a session with the same
// resume key and client to take over. It reports how many leases it
// parked. Without a resume key, or with a grace of zero, it is Close.
func (m *Manager) Park(s *Session, grace time.Duration) int {
	n := 0
	m.mu.Lock()
	if key := s.resumeKey; key != "" && grace > 0 {
		until := time.Now().Add(grace)
		for _, l := range m.leases {
			if l.session == s {
				l.parkKey, l.parkedUntil = key, until
				n++
			}
		}
	}
	m.mu.Unlock()
	if n > 0 {
		m.log.Info("agent session closed; its leases wait for it", "session", s.id, "agent", s.client.Name, "leases", n, "grace", grace)
	}
	s.Close() // ends the session and any lease it did not park
	return n
}

// Resume takes over every lease parked for s (same resume key and client,
// grace not passed) and reports how many.
func (s *Session) Resume() int {
	m := s.m
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, l := range m.leases {
		if !l.parkedUntil.IsZero() && s.takeOver(l) {
			n++
		}
	}
	return n
}

// mayResume says whether s may take over l: a lease parked by an earlier
// session of the same agent, or held by another session of the same agent
// that is still open — a client that opens a session per call and never
// closes the last one must still reach its lease. The caller holds m.mu.
func (s *Session) mayResume(tk *task) bool {
	if tk == nil || tk.session == s || s.resumeKey == "" || tk.session.client != s.client {
		return false
	}
	if !tk.parkedUntil.IsZero() {
		return tk.parkKey == s.resumeKey && time.Now().Before(tk.parkedUntil)
	}
	return tk.session.resumeKey == s.resumeKey
}

// takeOver moves l to s when s may resume it, and reports whether l is now
// s's. Resume takes only parked leases at a session's start; a live
// session's lease moves when the new session uses the phone. The caller
// holds m.mu.
func (s *Session) takeOver(tk *task) bool {
	if !s.mayResume(tk) {
		return false
	}
	s.m.log.Info("lease resumed by a new session of its agent", "device", tk.device, "task", tk.id,
		"agent", s.client.Name, "from", tk.session.id, "session", s.id)
	tk.session, tk.parkKey, tk.parkedUntil = s, "", time.Time{}
	return true
}

// parkExpired says whether l was parked and its grace has passed. The
// caller holds m.mu.
func (tk *task) parkExpired(now time.Time) bool {
	return !tk.parkedUntil.IsZero() && !now.Before(tk.parkedUntil)
}
