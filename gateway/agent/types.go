// Package agent is the agent's side of the gateway: sessions (one per MCP
// connection), the tasks they lease phones for, and the one pipeline every
// acting tool passes: lease and scope → policy and approval → execute
// through the driver → settle → read and diff → record.
//
// The lease rules live in package lease: who holds which phone, the idle
// timeout, the offline grace, parked leases and who may resume them, and
// the person's stop. A Manager asks its lease.Table (Config.Leases) at
// every connect, call, release, stop, park and sweep, and turns the
// table's refusals into the agent's errors. What it keeps of a task, under
// the lease's task id, is the agent side's: the screen the agent saw last,
// the steps recorded, the background display, and the contexts that end
// the task's driver calls with the lease.
package agent

import "time"

// Client names the agent program, from MCP's clientInfo.
type Client struct {
	Name    string
	Version string
}

// Phone is a phone as an agent sees it in phone_list.
type Phone struct {
	ID       string `json:"id"`
	Name     string `json:"name,omitempty"`
	Model    string `json:"model,omitempty"`
	Platform string `json:"platform"`
	Online   bool   `json:"online"`
	Locked   bool   `json:"locked"`
	// Lease is who holds the phone; nil when it is free.
	Lease *LeaseInfo `json:"lease,omitempty"`
}

// LeaseInfo says who holds a phone and for what.
type LeaseInfo struct {
	Agent  string    `json:"agent"`
	Task   string    `json:"task"`
	Yours  bool      `json:"yours"`
	Since  time.Time `json:"since"`
	TaskID string    `json:"task_id,omitempty"` // only for the holder
}

// ConnectRequest leases a phone for a task.
type ConnectRequest struct {
	Device string   // empty: the only free online phone
	Task   string   // REQUIRED: what the agent is doing, shown to the person
	Apps   []string // OPTIONAL: the only apps the task may use
	// Background runs the task on a background display of the phone that
	// the gateway makes for it (the driver's displays capability), so the
	// person keeps using the phone's own screen; the gateway then never
	// wakes or unlocks the phone for it.
	Background bool
}

// Target says which element or point an action aims at. Exactly one of
// Ref, Text, Point and Mark is set; a Mark is turned into the Point of its
// cell (grid.go) before the action is planned, and keeps its number for
// the history.
type Target struct {
	Ref        int    // a ref from the last read, e.g. 12 for [12]
	Text       string // visible text or description of the element
	Occurrence int    // 1-based, when Text matches several elements; 0 means it must be unique
	X, Y       int
	HasPoint   bool
	Mark       int // a numbered mark of the grid on the last read's screenshot
}

// Action is one acting tool call. It carries the tool it came from, which
// names its step in the history and its approval, and it renders what the
// history keeps of its arguments (args, in plan.go).
type Action struct {
	Tool      string // the tool called: ToolTap, ToolStopApp… (names.go)
	Kind      string // tap, long_press, swipe, pinch, scroll, type, key, launch, stop, open_url
	Target    Target // tap, long_press; type (optional: the field); scroll (optional: the container); pinch (optional: the centre)
	To        Target // swipe: where the finger ends; Target is where it starts
	Duration  time.Duration
	Direction string // scroll: up, down, left, right
	Scale     int    // pinch: how far apart the fingers end, in thousandths of the start (above 1000 zooms in)
	Until     string // scroll: keep scrolling until this text shows (bounded)
	Text      string // type
	Replace   bool   // type
	Submit    bool   // type
	Key       string // key
	App       string // launch, stop: app id or label
	URL       string // open_url
	Path      string // files_push: the file, relative to the Pinky folder
	// ApprovalID repeats a call that answered approval_pending, with its id.
	ApprovalID string
}

// Observation is what an agent reads after a read or an action.
type Observation struct {
	Device string `json:"device"`
	// Text is the compact screen: the whole screen, or after an action only
	// what changed (Full says which).
	Text string `json:"text"`
	Full bool   `json:"full"`
	// App is the app in front; Locked the lock state.
	App    string `json:"app"`
	Locked bool   `json:"locked"`
	// Settled is false when the screen was still changing at the 3 s cap.
	Settled bool `json:"settled"`
	// Screenshot is a JPEG when asked for, or when marks are shown.
	Screenshot []byte `json:"-"`
	// Marks is how many numbered marks the screenshot's grid has, 0 when
	// it has none (grid.go); the text's first line says how they go.
	Marks int `json:"marks,omitempty"`
	// Protected says that the app in front blocks screenshots (a secure
	// window): the screenshot asked for is left out, and the text's first
	// line says so (protected.go).
	Protected bool `json:"protected,omitempty"`
	// Step is the history step recorded for this call.
	Step string `json:"step,omitempty"`
	// TaskID is the task's id in the history (phone_connect only).
	TaskID string `json:"task_id,omitempty"`
	// WithPerson says that phone_ask_person answered at its cap while the
	// person still has the phone: no screen was read, and Text says how to
	// go on.
	WithPerson bool `json:"with_person,omitempty"`
}

// Progress reports that a waiting call is still waiting; nil is allowed.
type Progress func(done, total float64, message string)

// App is an installed app an agent may launch.
type App struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// WaitRequest waits for a text or a ref to appear or go.
type WaitRequest struct {
	Text    string
	Ref     int
	Gone    bool          // wait until it is gone rather than shown
	Timeout time.Duration // at least 1 s, at most Config.WaitCap (MaxWait)
}

// Notification is one notification on a phone.
type Notification struct {
	App   string    `json:"app"`
	Title string    `json:"title"`
	Text  string    `json:"text"`
	Time  time.Time `json:"time,omitzero"`
}

// File is an entry of the phone's Pinky folder or of its folder on the
// computer ($PINKY_HOME/files/<device>).
type File struct {
	Name     string    `json:"name"`
	Size     int64     `json:"size"`
	Dir      bool      `json:"dir"`
	Modified time.Time `json:"modified,omitzero"`
	// Where is both, phone, computer, or differs (a file on both sides
	// with different sizes).
	Where string `json:"where"`
}

// Where a file is.
const (
	WhereBoth     = "both"
	WherePhone    = "phone"
	WhereComputer = "computer"
	WhereDiffers  = "differs"
)

// FilesRequest is one phone_files call.
type FilesRequest struct {
	Action string // list (default), pull or push
	Path   string // relative to the Pinky folder; "" is the folder itself (list only)
	// ApprovalID repeats a push that answered approval_pending, with its id.
	ApprovalID string
}

// FilesResult is what a phone_files call did.
type FilesResult struct {
	Action string `json:"action"`
	Path   string `json:"path"`
	Files  []File `json:"files,omitempty"` // list
	Size   int64  `json:"size,omitempty"`  // pull, push: the bytes copied
	Step   string `json:"step,omitempty"`
}
