package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// Defaults of the event store: how long and how much of each session's
// SSE events are kept for a client whose stream dropped to resume with
// Last-Event-ID.
const (
	// DefaultEventKeep is how long an event stays replayable: longer than
	// any call waits (they return before 55 s) plus a client's reconnect.
	DefaultEventKeep = 5 * time.Minute
	// DefaultEventSessionBytes caps one session's kept events; a result
	// with a screenshot is a few hundred kilobytes.
	DefaultEventSessionBytes = 16 << 20
	// DefaultEventTotalBytes caps every session's events together.
	DefaultEventTotalBytes = 128 << 20
)

// eventStore is the server.EventStore of MCP over HTTP: every message sent
// on an SSE stream (a POST answered with progress, then its result; the
// session's GET stream) is kept, numbered, so that a client whose stream
// dropped gets what it missed by sending a GET with Last-Event-ID. Events
// are kept for keep, and within a byte budget per session and in all,
// the oldest going first: an event no longer kept cannot be resumed from,
// and the client is told so (HTTP 400, "Unknown Last-Event-ID").
type eventStore struct {
	keep              time.Duration
	perSession, total int
	now               func() time.Time

	mu       sync.Mutex
	seq      int64
	bytes    int
	sessions map[string]*eventLog
	order    []eventRef // every kept event, oldest first (with holes)
}

// eventLog is one session's kept events, oldest first.
type eventLog struct {
	events []storedEvent
	bytes  int
}

type storedEvent struct {
	seq    int64
	stream string
	msg    json.RawMessage
	at     time.Time
}

type eventRef struct {
	session string
	seq     int64
}

var _ server.EventStore = (*eventStore)(nil)

func newEventStore(keep time.Duration, perSession, total int) *eventStore {
	return &eventStore{keep: keep, perSession: perSession, total: total, now: time.Now, sessions: map[string]*eventLog{}}
}

// StoreEvent implements server.EventStore.
func (s *eventStore) StoreEvent(_ context.Context, sessionID, streamID string, message json.RawMessage) (string, error) {
	msg := append(json.RawMessage(nil), message...)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	s.seq++
	l := s.sessions[sessionID]
	if l == nil {
		l = &eventLog{}
		s.sessions[sessionID] = l
	}
	l.events = append(l.events, storedEvent{seq: s.seq, stream: streamID, msg: msg, at: now})
	l.bytes += len(msg)
	s.bytes += len(msg)
	s.order = append(s.order, eventRef{session: sessionID, seq: s.seq})
	// The newest event always stays, whatever its size: it is what the
	// client is owed next.
	for l.bytes > s.perSession && len(l.events) > 1 {
		s.dropOldest(sessionID, l)
	}
	for s.bytes > s.total && len(s.order) > 1 {
		s.popOrder()
	}
	return strconv.FormatInt(s.seq, 10), nil
}

// ReplayEventsAfter implements server.EventStore.
func (s *eventStore) ReplayEventsAfter(_ context.Context, sessionID, lastEventID string, send func(eventID string, message json.RawMessage) error) (string, error) {
	seq, err := strconv.ParseInt(lastEventID, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: %q", server.ErrUnknownEventID, lastEventID)
	}
	s.mu.Lock()
	s.expire(s.now())
	l := s.sessions[sessionID]
	if l == nil {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %q", server.ErrUnknownEventID, lastEventID)
	}
	i := sort.Search(len(l.events), func(i int) bool { return l.events[i].seq >= seq })
	if i == len(l.events) || l.events[i].seq != seq {
		s.mu.Unlock()
		return "", fmt.Errorf("%w: %q (events are kept %s)", server.ErrUnknownEventID, lastEventID, s.keep)
	}
	stream := l.events[i].stream
	var tail []storedEvent
	for _, ev := range l.events[i+1:] {
		if ev.stream == stream {
			tail = append(tail, ev)
		}
	}
	s.mu.Unlock()
	for _, ev := range tail {
		if err := send(strconv.FormatInt(ev.seq, 10), ev.msg); err != nil {
			return "", err
		}
	}
	return stream, nil
}

// PurgeSession implements server.EventStore.
func (s *eventStore) PurgeSession(_ context.Context, sessionID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l := s.sessions[sessionID]; l != nil {
		s.bytes -= l.bytes
		delete(s.sessions, sessionID)
	}
	return nil
}

// expire drops the events older than keep.
func (s *eventStore) expire(now time.Time) {
	for len(s.order) > 0 {
		ref := s.order[0]
		l := s.sessions[ref.session]
		if l != nil && len(l.events) > 0 && l.events[0].seq == ref.seq && now.Sub(l.events[0].at) < s.keep {
			return
		}
		s.popOrder()
	}
}

// popOrder drops the oldest entry of order, and its event if it is still
// kept (an entry whose event went with its session's budget or purge is a
// hole).
func (s *eventStore) popOrder() {
	ref := s.order[0]
	s.order = s.order[1:]
	if len(s.order) == 0 {
		s.order = nil // let the backing array go
	}
	if l := s.sessions[ref.session]; l != nil && len(l.events) > 0 && l.events[0].seq == ref.seq {
		s.dropOldest(ref.session, l)
	}
}

// dropOldest drops session's oldest event.
func (s *eventStore) dropOldest(session string, l *eventLog) {
	n := len(l.events[0].msg)
	l.events[0] = storedEvent{}
	l.events = l.events[1:]
	l.bytes -= n
	s.bytes -= n
	if len(l.events) == 0 {
		delete(s.sessions, session)
	}
}

// stats reports what the store keeps, for tests.
func (s *eventStore) stats() (sessions, events, bytes int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.sessions {
		events += len(l.events)
	}
	return len(s.sessions), events, s.bytes
}
