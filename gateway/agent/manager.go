package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/lease"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/screen/marks"
)

// Drivers is what the agent side needs of the driver host.
type Drivers interface {
	Devices() []driverhost.Device
	Drivers() []driverhost.DriverStatus
	DriverForDevice(id string) (sdk.Full, string, error)
	// Serves reports whether a device serves a capability: as the device
	// says now, within what its driver declares.
	Serves(deviceID string, c sdk.Capability) bool
	// Missing returns why a device lacks a capability and how the person
	// can enable it, when the device says so (sdk.Device.Caps).
	Missing(deviceID string, c sdk.Capability) (sdk.MissingCap, bool)
	Subscribe() (<-chan driverhost.Event, func())
}

// Config configures a Manager.
type Config struct {
	Drivers Drivers
	Store   history.Store
	// MediaDir is the media folder, where approval cards' screenshots go;
	// empty takes none.
	MediaDir string
	// Media saves screenshots in the background; nil takes none.
	Media *history.MediaWriter
	// Leases is the lease table: who holds which phone, and the rules by
	// which leases start, move between sessions and end (package lease).
	// nil is a lease.Memory with IdleTimeout and OfflineGrace.
	Leases lease.Table
	// IdleTimeout ends a lease nobody used for this long, in the default
	// lease table (lease.DefaultIdleTimeout when zero).
	IdleTimeout time.Duration
	// OfflineGrace is how long a lease survives its phone being offline, in
	// the default lease table (lease.DefaultOfflineGrace when zero).
	OfflineGrace time.Duration
	// SettleCap bounds the wait for a screen to settle after an action (default 3 s).
	SettleCap time.Duration
	// Guard decides about actions before they run; nil allows everything.
	Guard Guard
	// Approvals holds what the guard asks the person; nil denies what it asks.
	Approvals *approval.Book
	// ApprovalWait is how long an acting call, or phone_approval, waits for
	// the person before it answers approval_pending (default and at most
	// MaxApprovalWait, and never above WaitCap).
	ApprovalWait time.Duration
	// WaitCap bounds the other waits of one call: phone_wait_for's timeout
	// and phone_ask_person's wait for the hand-back (default and at most
	// MaxWait). A call that reaches it answers how to go on.
	WaitCap time.Duration
	// ProgressEvery is how often a call that waits reports its progress
	// (default 5 s).
	ProgressEvery time.Duration
	// Events receives leases and steps for the person's event stream; nil drops them.
	Events *events.Log
	Logger *slog.Logger
	// WakeEvery is the least time between two wakes of a phone before an
	// agent reads or acts on it (default 5 s; wake.go).
	WakeEvery time.Duration
	// PINs gives the PIN saved for a phone, to unlock it when an agent's
	// action finds it locked (wake.go); nil keeps automatic unlock off.
	PINs PINSource
	// Watcher hears of tasks and screen reads (the recorder); nil hears nothing.
	Watcher Watcher
	// Files is $PINKY_HOME/files: each phone's files on the computer, in a
	// folder named after it (files.go); "" turns pull, push and upload off.
	Files string
}

func (c Config) withDefaults() Config {
	if c.SettleCap <= 0 {
		c.SettleCap = 3 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.WaitCap <= 0 || c.WaitCap > MaxWait {
		c.WaitCap = MaxWait
	}
	if c.ApprovalWait > MaxApprovalWait {
		c.Logger.Warn("the approval wait is cut: some agent hosts end a tool call at 60 s", "asked", c.ApprovalWait, "wait", MaxApprovalWait)
	}
	if c.ApprovalWait <= 0 {
		c.ApprovalWait = MaxApprovalWait
	}
	c.ApprovalWait = min(c.ApprovalWait, MaxApprovalWait, c.WaitCap)
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = defaultProgressEvery
	}
	if c.Leases == nil {
		c.Leases = lease.NewMemory(lease.Config{IdleTimeout: c.IdleTimeout, OfflineGrace: c.OfflineGrace, Logger: c.Logger})
	}
	if c.Watcher == nil {
		c.Watcher = noWatcher{}
	}
	if c.WakeEvery <= 0 {
		c.WakeEvery = defaultWakeEvery
	}
	return c
}

// Manager is the agent side of the gateway: the sessions of connected
// agents, the agent side of each leased task, and the screen model of each
// phone. Who holds which phone, and the rules by which leases end, are the
// lease table's (Config.Leases): the Manager asks it, and keeps nothing of
// those rules itself.
//
// Locking: mu guards tasks, phones, sessions and withHand. It is never held
// across a driver call, a store write or a call to the lease table (a
// shared table's call is a store write). A phone's act mutex serializes its
// actions; it is taken before mu when both are needed, never after.
type Manager struct {
	cfg    Config
	log    *slog.Logger
	leases lease.Table

	mu       sync.Mutex
	tasks    map[string]*task  // by task id (lease.Lease.TaskID)
	phones   map[string]*phone // by device id, created on first use
	sessions map[string]*Session
	withHand map[string]chan struct{} // phones the person has in hand, closed on hand-back
	pinKey   []byte                   // keys the hash of refused PINs (wake.go)
}

// phone is the gateway's state of one device.
type phone struct {
	id    string
	act   sync.Mutex // one action at a time per phone
	model *screen.Model
	// Guarded by Manager.mu.
	blocked bool       // a blocked app was in front at the last read
	boxes   []sdk.Rect // what to cover in screenshots, from the last read
	boxSize sdk.Point  // the screen size the boxes are in
	display int        // the display its lease's task runs on; 0 is the phone's own screen
	// Blocked apps' notifications and the codes seen here (hide.go); it has its own lock.
	hide hideState
	// Waking and automatic unlock (wake.go).
	lastWake    time.Time // when the gateway last woke the phone
	unlockTried bool      // an automatic unlock was tried on the current lock
	refusedPIN  []byte    // keyed hash of the saved PIN the phone refused
}

// task is the agent side of one leased task: what its calls share. The
// lease itself (who holds it, since when, its last use, parked or not) is
// the lease table's; a task lives in Manager.tasks, under its lease's task
// id, from just before the table takes the lease until the lease ends.
//
// id, device, text and apps are the task's own: set when it starts and
// never changed, the same as the lease's TaskID, Device, Task and Apps,
// so that its calls need not ask the table for them. The other fields are
// guarded by Manager.mu.
type task struct {
	id       string // the task's id in the history
	device   string
	text     string // what the agent said it does
	apps     []string
	display  int          // the background display the task runs on; 0 is the phone's own screen
	seq      int          // steps recorded so far
	last     *screen.View // the view the agent saw last
	shotView *screen.View // the view of the task's latest screenshot
	grid     *marks.Grid  // the marks shown with the last read, nil when none (grid.go)
	// calls ends the driver calls made for the lease when it ends (calls.go).
	calls leaseCalls
	// hand is the hand-off to the person that the task's phone_ask_person
	// made, while the person may still have the phone by it (person.go);
	// nil when none. Guarded by Manager.mu.
	hand chan struct{}
	// fence is the lease's fencing token as the table gave it last (Take,
	// Use); the calls that act on the phone carry it to the phone's host
	// when the table is shared (calls.go). Guarded by Manager.mu.
	fence int64
}

// NewManager returns a Manager; Run must run for leases to expire.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	return &Manager{
		cfg: cfg, log: cfg.Logger, leases: cfg.Leases,
		tasks: map[string]*task{}, phones: map[string]*phone{}, sessions: map[string]*Session{},
		withHand: map[string]chan struct{}{},
	}
}

// Run follows device events and ends leases that idled or stayed offline
// too long, until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	events, cancel := m.cfg.Drivers.Subscribe()
	defer cancel()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				return
			}
			m.deviceEvent(ev)
		case now := <-tick.C:
			m.sweep(now)
		}
	}
}

// deviceEvent tells the lease table which phones are offline: their
// leases end once the offline grace passes.
func (m *Manager) deviceEvent(ev driverhost.Event) {
	switch ev.Kind {
	case driverhost.EventOffline, driverhost.EventRemoved:
		m.leases.SetOnline(ev.Device.ID, false, time.Now())
	case driverhost.EventOnline, driverhost.EventAdded:
		if ev.Device.Online {
			m.leases.SetOnline(ev.Device.ID, true, time.Time{})
		}
	case driverhost.EventResync:
		online := map[string]bool{}
		for _, d := range m.cfg.Drivers.Devices() {
			online[d.ID] = online[d.ID] || d.Online
		}
		now := time.Now()
		shared := lease.Shared(m.leases)
		for _, l := range m.leases.List() {
			if shared && m.task(l.TaskID) == nil {
				continue // another gateway's lease, on a phone this one may not serve
			}
			m.leases.SetOnline(l.Device, online[l.Device], now)
		}
	}
}

// sweep ends the leases the table finds due at now: idle for the idle
// timeout, offline past the grace, or parked past theirs.
func (m *Manager) sweep(now time.Time) {
	for _, e := range m.leases.Sweep(now) {
		m.endTask(e.Lease, e.Outcome)
	}
}

// task returns the agent side of a lease's task, or nil when it has ended
// (or the lease is not this Manager's: another gateway's, in a shared
// table).
func (m *Manager) task(id string) *task {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tasks[id]
}

// endTask ends the task of a lease the table has ended: its calls, its
// display, its history and the person's event.
func (m *Manager) endTask(l lease.Lease, outcome lease.Outcome) {
	m.mu.Lock()
	tk := m.tasks[l.TaskID]
	delete(m.tasks, l.TaskID)
	display := 0
	if tk != nil {
		display = tk.display
		m.takeBackLocked(tk)
	}
	m.mu.Unlock()
	if tk != nil {
		m.endCalls(tk, outcome) // first: a call waiting on the driver returns now
	}
	m.log.Info("lease ended", "device", l.Device, "task", l.TaskID, "outcome", outcome)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.cfg.Store.EndTask(ctx, l.TaskID, time.Now(), string(outcome)); err != nil {
		m.log.Error("ending a task in the history", "task", l.TaskID, "err", err)
	}
	m.cfg.Watcher.TaskEnded(l.Device, l.TaskID)
	if display != 0 {
		m.removeDisplay(tk)
	}
	m.cfg.Events.Publish(events.Event{Kind: events.LeaseEnded, Device: l.Device, Agent: l.Holder.Agent, Task: l.TaskID, Data: map[string]string{"outcome": string(outcome)}})
}

func (m *Manager) phone(id string) *phone {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.phones[id]
	if !ok {
		p = &phone{id: id, model: screen.NewModel()}
		m.phones[id] = p
	}
	return p
}

// Open starts the session of a newly connected agent. The client may be
// unknown until MCP's initialize names it (SetClient); the session enters
// the history with its agent then, or at its first lease.
func (m *Manager) Open(ctx context.Context, client Client, transport string) (*Session, error) {
	s := &Session{m: m, id: newID("s"), client: client, transport: transport, started: time.Now(), waiting: map[string]waitingCall{}}
	if client.Name != "" {
		if err := s.SetClient(ctx, client); err != nil {
			return nil, err
		}
	}
	m.mu.Lock()
	m.sessions[s.id] = s
	m.mu.Unlock()
	return s, nil
}

// HandBack gives the phone back to the agent: it ends a take-over, or a
// phone_ask_person wait.
func (m *Manager) HandBack(device string) error {
	m.mu.Lock()
	ch, ok := m.withHand[device]
	if !ok {
		m.mu.Unlock()
		return fmt.Errorf("%s is not with the person: nobody took it over and no agent asked", device)
	}
	// What the person did is not kept, even if a later read vouches for
	// the screen: dropped before an agent waiting in phone_ask_person wakes
	// and reads.
	m.cfg.Watcher.ScreenHidden(device, "the person handed the phone back")
	close(ch)
	delete(m.withHand, device)
	m.mu.Unlock()
	return nil
}

// Leases describes the current leases, for the person's clients.
func (m *Manager) Leases() []LeaseStatus {
	ls := m.leases.List()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]LeaseStatus, 0, len(ls))
	for _, l := range ls {
		_, withPerson := m.withHand[l.Device]
		st := LeaseStatus{
			Device: l.Device, Agent: l.Holder.Agent, Task: l.Task, TaskID: l.TaskID,
			Since: l.Since, LastUsed: l.LastUsed, WithPerson: withPerson, ParkedUntil: l.ParkedUntil,
		}
		if lease.Shared(m.leases) {
			st.Fence = l.Fence
		}
		if tk, ok := m.tasks[l.TaskID]; ok {
			st.Steps, st.Display = tk.seq, tk.display
		}
		out = append(out, st)
	}
	return out
}

// LeaseStatus is one lease as the person sees it.
type LeaseStatus struct {
	Device     string    `json:"device"`
	Agent      string    `json:"agent"`
	Task       string    `json:"task"`
	TaskID     string    `json:"task_id"`
	Since      time.Time `json:"since"`
	LastUsed   time.Time `json:"last_used"`
	Steps      int       `json:"steps"`
	WithPerson bool      `json:"with_person"`
	// Display is the background display the task runs on; 0 is the
	// phone's own screen.
	Display int `json:"display,omitempty"`
	// ParkedUntil is set while the agent's session has closed and the lease
	// waits for the agent to come back in a new one.
	ParkedUntil time.Time `json:"parked_until,omitzero"`
	// Fence is the lease's fencing token when the lease table is shared
	// with other gateways (zero in a table of this gateway alone).
	Fence int64 `json:"fence,omitempty"`
}

// newID returns a random id with a prefix, e.g. "t_3f9a…".
func newID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b) //nolint:errcheck // never fails
	return prefix + "_" + hex.EncodeToString(b)
}
