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
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// Drivers is what the agent side needs of the driver host.
type Drivers interface {
	Devices() []driverhost.Device
	Drivers() []driverhost.DriverStatus
	DriverForDevice(id string) (sdk.Full, string, error)
	// Serves reports whether the driver of a device serves a capability,
	// as the driver declares it.
	Serves(deviceID string, c sdk.Capability) bool
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
	// IdleTimeout ends a lease nobody used for this long (default 10 min).
	IdleTimeout time.Duration
	// OfflineGrace is how long a lease survives its phone being offline (default 60 s).
	OfflineGrace time.Duration
	// SettleCap bounds the wait for a screen to settle after an action (default 3 s).
	SettleCap time.Duration
	// Guard decides about actions before they run; nil allows everything.
	Guard Guard
	// Approvals holds what the guard asks the person; nil denies what it asks.
	Approvals *approval.Book
	// ApprovalWait is how long an acting call waits for the person before it
	// answers approval_pending (default 45 s).
	ApprovalWait time.Duration
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
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = 10 * time.Minute
	}
	if c.OfflineGrace <= 0 {
		c.OfflineGrace = 60 * time.Second
	}
	if c.SettleCap <= 0 {
		c.SettleCap = 3 * time.Second
	}
	if c.ApprovalWait <= 0 {
		c.ApprovalWait = 45 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Watcher == nil {
		c.Watcher = noWatcher{}
	}
	if c.WakeEvery <= 0 {
		c.WakeEvery = defaultWakeEvery
	}
	return c
}

// Manager is the agent side of the gateway: it owns the leases, the screen
// model of each phone, and the sessions of connected agents.
//
// Locking: mu guards leases, phones and sessions. It is never held across a
// driver call or a store write. A phone's act mutex serializes its actions;
// it is taken before mu when both are needed, never after.
type Manager struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	leases   map[string]*task  // by device id
	phones   map[string]*phone // by device id, created on first use
	sessions map[string]*Session
	offline  map[string]time.Time     // devices offline since
	withHand map[string]chan struct{} // phones the person has in hand, closed on hand-back
	stopped  map[string]stopInfo      // by device: the session the person stopped there
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

// task is the state of one leased task: what its calls share. For now it
// holds the lease's rules too (who holds it, since when, its last use,
// parked or not).
type task struct {
	device   string
	session  *Session
	id       string // the task's id in the history
	text     string // what the agent said it does
	apps     []string
	since    time.Time
	lastUsed time.Time
	display  int          // the background display the task runs on; 0 is the phone's own screen
	seq      int          // steps recorded so far
	last     *screen.View // the view the agent saw last
	shotView *screen.View // the view of the task's latest screenshot
	// parkKey and parkedUntil are set while the lease waits for its agent
	// to come back in a new session (resume.go).
	parkKey     string
	parkedUntil time.Time
	// calls ends the driver calls made for the lease when it ends (calls.go).
	calls leaseCalls
}

// NewManager returns a Manager; Run must run for leases to expire.
func NewManager(cfg Config) *Manager {
	cfg = cfg.withDefaults()
	return &Manager{
		cfg: cfg, log: cfg.Logger,
		leases: map[string]*task{}, phones: map[string]*phone{}, sessions: map[string]*Session{},
		offline: map[string]time.Time{}, withHand: map[string]chan struct{}{}, stopped: map[string]stopInfo{},
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

func (m *Manager) deviceEvent(ev driverhost.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch ev.Kind {
	case driverhost.EventOffline, driverhost.EventRemoved:
		if _, ok := m.offline[ev.Device.ID]; !ok {
			m.offline[ev.Device.ID] = time.Now()
		}
	case driverhost.EventOnline, driverhost.EventAdded:
		if ev.Device.Online {
			delete(m.offline, ev.Device.ID)
		}
	case driverhost.EventResync:
		online := map[string]bool{}
		for _, d := range m.cfg.Drivers.Devices() {
			online[d.ID] = online[d.ID] || d.Online
		}
		for id := range m.leases {
			if online[id] {
				delete(m.offline, id)
			} else if _, ok := m.offline[id]; !ok {
				m.offline[id] = time.Now()
			}
		}
	}
}

// sweep ends leases idle for IdleTimeout or offline for OfflineGrace, and
// parked leases whose agent did not come back within their grace.
func (m *Manager) sweep(now time.Time) {
	var ended []*task
	var outcomes []string
	m.mu.Lock()
	for id, l := range m.leases {
		outcome := ""
		if since, ok := m.offline[id]; ok && now.Sub(since) >= m.cfg.OfflineGrace {
			outcome = "offline"
		} else if now.Sub(l.lastUsed) >= m.cfg.IdleTimeout {
			outcome = "expired"
		} else if l.parkExpired(now) {
			outcome = "session_closed"
		}
		if outcome != "" {
			delete(m.leases, id)
			ended = append(ended, l)
			outcomes = append(outcomes, outcome)
		}
	}
	m.mu.Unlock()
	for i, l := range ended {
		m.endTask(l, outcomes[i])
	}
}

func (m *Manager) endTask(tk *task, outcome string) {
	m.endCalls(tk, outcome) // first: a call waiting on the driver returns now
	m.log.Info("lease ended", "device", tk.device, "task", tk.id, "outcome", outcome)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := m.cfg.Store.EndTask(ctx, tk.id, time.Now(), outcome); err != nil {
		m.log.Error("ending a task in the history", "task", tk.id, "err", err)
	}
	m.cfg.Watcher.TaskEnded(tk.device, tk.id)
	if tk.display != 0 {
		m.removeDisplay(tk)
	}
	m.cfg.Events.Publish(events.Event{Kind: events.LeaseEnded, Device: tk.device, Agent: tk.session.client.Name, Task: tk.id, Data: map[string]string{"outcome": outcome}})
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
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]LeaseStatus, 0, len(m.leases))
	for _, l := range m.leases {
		_, withPerson := m.withHand[l.device]
		out = append(out, LeaseStatus{
			Device: l.device, Agent: l.session.client.Name, Task: l.text, TaskID: l.id,
			Since: l.since, LastUsed: l.lastUsed, Steps: l.seq, WithPerson: withPerson, ParkedUntil: l.parkedUntil, Display: l.display,
		})
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
}

// newID returns a random id with a prefix, e.g. "t_3f9a…".
func newID(prefix string) string {
	b := make([]byte, 8)
	rand.Read(b) //nolint:errcheck // never fails
	return prefix + "_" + hex.EncodeToString(b)
}
