package api

import "time"

// Statuses of an approval: Card.Status, and Approval.Status in the history.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
)

// Card is an approval as the person sees it to decide: what an agent wants
// to do, on which phone and task, and why the policy asks.
type Card struct {
	ID       string `json:"id"`
	Agent    string `json:"agent"`
	TaskText string `json:"task"`
	Device   string `json:"device"`
	Tool     string `json:"tool"`
	Args     string `json:"args"`
	Commit   string `json:"commit"`   // the detected commit kind
	Rule     string `json:"rule"`     // the policy rule that asked
	Target   string `json:"target"`   // e.g. [12] button "Send"
	Evidence string `json:"evidence"` // why it is a commit
	// Summary is one sentence read from the screen: what the person
	// approves (the message and its recipient, the amount and the payee).
	Summary string `json:"summary"`
	// Counterpart is who or what the commit goes to, "" when the screen
	// names nobody; "allow for this task" covers only this counterpart.
	Counterpart string `json:"counterpart"`
	// ForTaskCovers says what "allow for this task" would cover.
	ForTaskCovers string `json:"for_task_covers"`
	Screen        string `json:"screen"`     // the screen text when it opened
	Screenshot    string `json:"screenshot"` // media id, may be empty
	// ScreenshotPath is the screenshot's file in the media folder.
	ScreenshotPath string    `json:"screenshot_path,omitempty"`
	Status         string    `json:"status"` // ApprovalPending, ApprovalApproved…
	OpenedAt       time.Time `json:"opened_at"`
	ExpiresAt      time.Time `json:"expires_at"`
	DecidedAt      time.Time `json:"decided_at"`
	Reason         string    `json:"reason"`   // the person's reason for a deny
	ForTask        bool      `json:"for_task"` // the allow covers the task's later actions of this kind and target
	TaskID         string    `json:"task_id"`
}

// Lease is an agent's lease on a phone.
type Lease struct {
	Device     string    `json:"device"`
	Agent      string    `json:"agent"`
	Task       string    `json:"task"`
	TaskID     string    `json:"task_id"`
	Since      time.Time `json:"since"`
	LastUsed   time.Time `json:"last_used"`
	Steps      int       `json:"steps"`
	WithPerson bool      `json:"with_person"` // the person took the phone over
	// Display is the background display the task runs on; 0 is the
	// phone's own screen.
	Display int `json:"display,omitempty"`
	// ParkedUntil is set while the agent's session has closed and the lease
	// waits for the agent to come back in a new one.
	ParkedUntil time.Time `json:"parked_until,omitzero"`
	// Fence is the lease's fencing token, when gateways share the lease
	// table (their history in one PostgreSQL database).
	Fence int64 `json:"fence,omitempty"`
}

// Event is one entry of the daemon's event log: an approval, a take-over,
// a lease, a step or a phone that came or went.
type Event struct {
	Seq    uint64            `json:"seq"`
	Time   time.Time         `json:"time"`
	Kind   string            `json:"kind"`
	Device string            `json:"device,omitempty"`
	Agent  string            `json:"agent,omitempty"` // the agent's name
	Task   string            `json:"task,omitempty"`  // the task's id in the history
	Data   map[string]string `json:"data,omitempty"`
}

// EventPage is one read of the event log (MethodEvents).
type EventPage struct {
	// Events are the events after the client's number, oldest first; with
	// Gap, the first is a gap marker.
	Events []Event `json:"events"`
	// Next is the number to read after next time.
	Next uint64 `json:"next"`
	// Gap says that events were lost before these.
	Gap bool `json:"gap,omitempty"`
	// Last is the newest event's number; a client that wants only live
	// events starts after it.
	Last uint64 `json:"last"`
	// Closed says the daemon is stopping: no more events will come.
	Closed bool `json:"closed,omitempty"`
}

// Settings are the person's choices for the daemon (MethodSettings).
type Settings struct {
	// Recording records each agent task's screen as a video.
	Recording bool `json:"recording"`
	// RetentionDays deletes tasks that ended more than this many days ago,
	// with their screenshots and recordings; 0 keeps everything.
	RetentionDays int `json:"retention_days"`
	// ReadOnly lets agents read the phones but not act on them.
	ReadOnly bool `json:"read_only"`
}

// SettingsChange is what MethodSetSettings changes: a field left out (or
// null) keeps its value. Settings sent whole are a change of every field.
type SettingsChange struct {
	Recording     *bool `json:"recording,omitempty"`
	RetentionDays *int  `json:"retention_days,omitempty"`
	ReadOnly      *bool `json:"read_only,omitempty"`
}
