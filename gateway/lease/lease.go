// Package lease keeps the rules of who may use which phone. An agent
// session leases a phone for a task, uses it and releases it; the person
// may stop it, and the session stopped there may not take the phone again
// for the same task; a lease nobody used for the idle timeout ends, and so
// does one whose phone stayed offline past the offline grace; the leases of
// a session that closed may wait, parked, for a new session of the same
// agent to take them over (a client that opens a session per call, or lost
// its connection).
//
// [Table] states those rules as a small interface. [Memory] keeps the table
// in the daemon's memory, and [Postgres] in a PostgreSQL database that
// several gateways share; package leasetest is the suite every Table
// passes, so that both keep the same rules. The pure parts of the rules, [MayResume] and
// [Config.Due], are functions that any table uses.
//
// Each lease carries a fencing token, [Lease.Fence], that grows every time
// the phone's lease starts or changes holder; only a table that several
// gateways share ([Shared]) makes it worth sending to a phone's host.
//
// A table holds only the rules' state: who holds each phone, for which
// task, since when, when it was last used, whether it is parked and until
// when, whom the person stopped on each phone, and which phones are offline
// since when. What the agent side keeps of a task (the screen the agent saw
// last, its steps, the contexts of its driver calls) stays with the agent
// side, keyed by the lease's task id.
//
// # Locking
//
// A table is safe for concurrent use, and never calls back into its
// caller. A caller must not hold a lock of its own across a call to the
// table: a shared table's call is a write to its store. Memory has one
// mutex, taken only inside its methods.
package lease

import (
	"errors"
	"slices"
	"time"
)

// Holder is an agent session as the table knows it: the session that holds
// a lease, or asks for one.
type Holder struct {
	// Session is the session's id, unique among sessions.
	Session string
	// Agent and Version name the agent program (MCP's clientInfo): a lease
	// moves only between sessions of the same program and version.
	Agent, Version string
	// ResumeKey says who may take the session's leases over in another
	// session (it is built from the credential the agent connected with
	// and its program); "" neither takes over nor lets take over.
	ResumeKey string
}

// Lease is a phone leased to a session for a task.
type Lease struct {
	Device string
	Holder Holder
	// TaskID is the task's id in the history; Task is what the agent said
	// it does there, shown to the person.
	TaskID, Task string
	// Apps are the only apps the task may use; empty allows any.
	Apps []string
	// Since is when the lease was taken, LastUsed when its session last
	// used the phone (or waited for the person on it).
	Since, LastUsed time.Time
	// ParkKey and ParkedUntil are set while the lease is parked: its
	// session closed, and the lease waits until ParkedUntil for a session
	// with that resume key.
	ParkKey     string
	ParkedUntil time.Time
	// Fence is the lease's fencing token: each time a phone's lease starts
	// or moves to another session, it gets a fence greater than every fence
	// that phone had before in the table. A host that has seen a fence
	// refuses actions that carry a lower one, so that a gateway that lost
	// its lease (paused, cut off) cannot act on the phone any more.
	Fence int64
}

// Parked reports whether l waits for its agent to come back.
func (l Lease) Parked() bool { return !l.ParkedUntil.IsZero() }

// clone returns l with its own copy of Apps.
func (l Lease) clone() Lease {
	l.Apps = slices.Clone(l.Apps)
	return l
}

// Outcome is how a lease ended: its task's outcome in the history.
type Outcome string

// Outcomes.
const (
	Released      Outcome = "released"       // its session released it
	Stopped       Outcome = "stopped"        // the person stopped it
	Expired       Outcome = "expired"        // nobody used it for the idle timeout
	Offline       Outcome = "offline"        // its phone stayed offline past the grace
	SessionClosed Outcome = "session_closed" // its session closed and did not park it, or the parked lease's grace passed
)

// Ended is a lease that ended, and how.
type Ended struct {
	Lease
	Outcome Outcome
}

// The reasons a table refuses a request: the Reason of an [*Error].
var (
	// ErrHeld: another session holds the phone.
	ErrHeld = errors.New("the phone is leased to another session")
	// ErrYours: the session holds the phone already (Take).
	ErrYours = errors.New("the session holds the phone already")
	// ErrNotHeld: nobody holds the phone.
	ErrNotHeld = errors.New("nobody holds the phone")
	// ErrStopped: the person stopped the session on the phone.
	ErrStopped = errors.New("the person stopped the session on the phone")
	// ErrOffline: the phone is offline; its lease holds until the grace
	// passes.
	ErrOffline = errors.New("the phone is offline")
)

// Error is a request the table refused: why, and what the caller needs to
// tell the agent.
type Error struct {
	// Reason is one of ErrHeld, ErrYours, ErrNotHeld, ErrStopped and
	// ErrOffline.
	Reason error
	Device string
	// Lease is the lease on the phone: another session's (ErrHeld), or the
	// caller's own (ErrYours, ErrOffline).
	Lease Lease
	// StoppedTask is the task the person stopped the session in
	// (ErrStopped).
	StoppedTask string
	// Since is when the phone went offline, and Until when the lease ends
	// unless it comes back (ErrOffline).
	Since, Until time.Time
}

func (e *Error) Error() string { return e.Device + ": " + e.Reason.Error() }

// Unwrap returns the reason, for errors.Is.
func (e *Error) Unwrap() error { return e.Reason }

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Shared reports whether t is shared by several gateways (a table in a
// database), so that its fences must reach the phones' hosts. A table in
// one daemon's memory restarts its fences with the daemon: a host that saw
// the old ones would refuse the new, so they are not sent.
func Shared(t Table) bool {
	s, ok := t.(interface{ Shared() bool })
	return ok && s.Shared()
}

// Table is the lease table: at most one lease per phone, and the rules by
// which leases start, move between sessions and end. Every method is safe
// for concurrent use; each is one step of the rules, done at once (a
// shared table does each in one transaction).
//
// A session "holds" a lease when it is the lease's holder, or when it may
// resume it (MayResume): then the request takes the lease over first, and
// the lease is the session's from then on.
type Table interface {
	// Take leases l.Device to l.Holder for l's task, from l.Since (its last
	// use too), and returns the lease. It refuses with ErrStopped when the
	// person stopped the same session on the phone in a task of the same
	// text, with ErrYours when the session holds the phone already, and
	// with ErrHeld when another session does.
	Take(l Lease) (Lease, error)
	// Use returns h's lease on device and marks it used now. It refuses
	// with ErrHeld when another session holds the phone, ErrStopped when
	// nobody does and the person stopped h there, and ErrNotHeld otherwise;
	// and with ErrOffline while the phone is offline (the lease is marked
	// used all the same).
	Use(h Holder, device string) (Lease, error)
	// Touch marks the lease of a task used now, whoever holds it: an agent
	// waiting for the person is not idle. A task with no lease is ignored.
	Touch(taskID string)
	// Release ends h's lease on device and returns it; it refuses as Use
	// does, but for ErrOffline.
	Release(h Holder, device string) (Lease, error)
	// Stop ends the lease on device at the person's word and returns it:
	// its session may not take the phone again for the same task (Take),
	// and answers ErrStopped for the phone (Use, Release) until another
	// stop there names another. It refuses with ErrNotHeld when nobody
	// holds the phone.
	Stop(device string) (Lease, error)
	// Drop removes the lease of a task that could not start, with no
	// outcome: nothing happened in it. It reports whether there was one.
	Drop(taskID string) bool
	// Close ends the leases of a session that are not parked, and returns
	// them; they end with SessionClosed.
	Close(session string) []Lease
	// Park parks h's leases until grace from now, for a session with h's
	// resume key to take over, and says how many it parked: none without a
	// resume key, or with a grace of zero.
	Park(h Holder, grace time.Duration) int
	// Resume takes over every parked lease h may resume, and says how
	// many.
	Resume(h Holder) int
	// Update records h's agent and resume key on the leases of its
	// session, parked or not.
	Update(h Holder)
	// SetOnline records that device is online again, or offline since at
	// (the first time only, until it is online again). It holds for any
	// device, leased or not.
	SetOnline(device string, online bool, at time.Time)
	// Sweep ends the leases due at now (Config.Due) and returns them.
	Sweep(now time.Time) []Ended
	// Get returns the lease on device.
	Get(device string) (Lease, bool)
	// List returns every lease, in no order.
	List() []Lease
}
