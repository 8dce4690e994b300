// Package events is the gateway's event log for the person's clients: an
// append-only stream of what happens (approvals opened and decided, the
// person taking over and handing back, leases, steps, phones coming and
// going), each event numbered from 1 in the order it happened.
//
// The log lives in memory and keeps the newest events only (DefaultSize).
// Clients read it by long polling: Wait returns the events after the last
// sequence number a client saw, at once when there are some, else as soon
// as one is published (or when its wait ends). A client that reconnects
// with the last number it saw gets what it missed, then live events; one
// that fell further behind than the log keeps gets a Gap marker first, and
// should reload the state it shows.
//
// Nothing a client does can slow the gateway: Publish appends under a
// mutex and never waits for a reader, and a slow client simply polls less
// often (and may find a gap).
//
// Events carry no secrets: no action arguments, no typed text, no screen
// text. A step says its tool and its outcome code, nothing more.
package events

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Kinds of events.
const (
	ApprovalOpened  = "approval.opened"  // an action waits for the person; Data: id, tool, commit, rule
	ApprovalDecided = "approval.decided" // Data: id, tool, commit, rule, status (approved, denied, expired), for_task
	LeaseStarted    = "lease.started"    // an agent leased a phone for a task; Data: text (the task as the agent put it)
	LeaseEnded      = "lease.ended"      // Data: outcome (released, stopped, expired, offline, session_closed, …)
	Step            = "step"             // an agent's call on a leased phone; Data: tool, outcome, step (its number in the task)
	DeviceAdded     = "device.added"     // Data: driver, name
	DeviceOnline    = "device.online"    // Data: driver, name
	DeviceOffline   = "device.offline"   // Data: driver, name
	DeviceRemoved   = "device.removed"   // Data: driver, name
	DeviceCaps      = "device.caps"      // what a phone lacks changed; Data: driver, name, missing (its capability names, comma-separated)
	PersonTakeover  = "person.takeover"  // the person took a phone in hand
	PersonHandback  = "person.handback"  // the person gave it back to the agent
	// Gap is not an event but a marker, first in a Page: events after the
	// client's sequence number were lost (Data: reason, lost). The client
	// should reload the state it shows, then go on with the events after it.
	Gap = "gap"
)

// Reasons of a Gap.
const (
	GapOverflow = "overflow"    // the log dropped events the client had not read
	GapUnknown  = "unknown_seq" // the number is not of this daemon's run (it restarted)
)

// Limits of the log and of one read.
const (
	DefaultSize = 10000            // events kept
	MaxWait     = 30 * time.Second // the longest a read waits
	DefaultMax  = 500              // events in a page when the client names no max
	MaxMax      = 5000             // the most events in a page
)

// Event is one thing that happened. Seq is its number, strictly increasing
// from 1 in each run of the daemon.
type Event struct {
	Seq    uint64            `json:"seq"`
	Time   time.Time         `json:"time"`
	Kind   string            `json:"kind"`
	Device string            `json:"device,omitempty"`
	Agent  string            `json:"agent,omitempty"` // the agent's name
	Task   string            `json:"task,omitempty"`  // the task's id in the history
	Data   map[string]string `json:"data,omitempty"`
}

// Page is one read of the log.
type Page struct {
	// Events are the events after the client's number, oldest first; with
	// Gap, the first is a Gap marker.
	Events []Event `json:"events"`
	// Next is the number to read after next time.
	Next uint64 `json:"next"`
	// Gap says that events were lost before these (see the Gap marker).
	Gap bool `json:"gap,omitempty"`
	// Last is the newest event's number; a client that wants only live
	// events starts after it.
	Last uint64 `json:"last"`
	// Closed says the daemon is stopping: no more events will come.
	Closed bool `json:"closed,omitempty"`
}

// Log is the event log. It is safe for concurrent use; a nil *Log drops
// what is published to it.
type Log struct {
	mu     sync.Mutex
	ring   []Event // len is the capacity; ring[head] is the oldest kept
	head   int
	n      int    // events kept
	next   uint64 // the number of the next event
	wake   chan struct{}
	closed bool
}

// New returns an empty log that keeps the newest size events (DefaultSize
// when size is not positive).
func New(size int) *Log {
	if size <= 0 {
		size = DefaultSize
	}
	return &Log{ring: make([]Event, size), next: 1, wake: make(chan struct{})}
}

// Publish appends e, numbered and (when e.Time is zero) timed now, and
// returns its number. It never blocks on a reader. The log keeps e.Data:
// do not change it afterwards.
func (l *Log) Publish(e Event) uint64 {
	if l == nil {
		return 0
	}
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq = l.next
	l.next++
	if l.n < len(l.ring) {
		l.ring[(l.head+l.n)%len(l.ring)] = e
		l.n++
	} else { // full: the oldest goes
		l.ring[l.head] = e
		l.head = (l.head + 1) % len(l.ring)
	}
	// Wake every waiting reader; the next ones wait on a new channel.
	close(l.wake)
	l.wake = make(chan struct{})
	return e.Seq
}

// Close wakes every waiting reader and makes later reads return at once,
// with Closed set: the daemon is stopping. Publish still appends.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.wake)
		l.wake = make(chan struct{})
	}
}

// Since returns up to max events after the number after, without waiting
// (max ≤ 0 is DefaultMax).
func (l *Log) Since(after uint64, max int) Page {
	return l.Wait(context.Background(), after, max, 0)
}

// Wait returns up to max events after the number after (max ≤ 0 is
// DefaultMax). When there are none yet it waits for the next one, for up
// to wait (at most MaxWait), until ctx ends or the log closes; then the
// page may be empty.
func (l *Log) Wait(ctx context.Context, after uint64, max int, wait time.Duration) Page {
	if max <= 0 {
		max = DefaultMax
	}
	max = min(max, MaxMax)
	wait = min(wait, MaxWait)
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		l.mu.Lock()
		p := l.sinceLocked(after, max)
		wake := l.wake
		l.mu.Unlock()
		if len(p.Events) > 0 || p.Closed || timeout == nil {
			return p
		}
		select {
		case <-wake:
		case <-timeout:
			return p
		case <-ctx.Done():
			return p
		}
	}
}

func (l *Log) sinceLocked(after uint64, max int) Page {
	last := l.next - 1
	oldest := l.next - uint64(l.n) // the number of the oldest kept (next when empty)
	p := Page{Next: after, Last: last, Closed: l.closed}
	from := after + 1
	switch {
	case after > last:
		p.Gap, from = true, oldest
		p.Events = append(p.Events, gapMarker(oldest, GapUnknown, 0))
	case from < oldest:
		p.Gap = true
		p.Events = append(p.Events, gapMarker(oldest, GapOverflow, oldest-from))
		from = oldest
	}
	for seq := from; seq <= last && max > 0; seq++ {
		p.Events = append(p.Events, l.ring[(l.head+int(seq-oldest))%len(l.ring)])
		max--
	}
	if len(p.Events) > 0 {
		p.Next = p.Events[len(p.Events)-1].Seq
	}
	return p
}

// gapMarker is the marker of lost events, numbered just before the oldest kept
// so that a page's numbers still increase. lost counts them when known.
func gapMarker(oldest uint64, reason string, lost uint64) Event {
	e := Event{Seq: oldest - 1, Time: time.Now(), Kind: Gap, Data: map[string]string{"reason": reason}}
	if lost > 0 {
		e.Data["lost"] = strconv.FormatUint(lost, 10)
	}
	return e
}
