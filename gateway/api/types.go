package api

import (
	"encoding/json"
	"time"
)

// Methods of the control API. Params and results are the types below.
const (
	MethodStatus        = "status"           // → Status
	MethodDrivers       = "drivers.list"     // → []Driver
	MethodDriverRestart = "drivers.restart"  // DriverName → Driver
	MethodDriverAttach  = "drivers.attach"   // AttachParams → Driver
	MethodDevices       = "devices.list"     // → []Device
	MethodScreen        = "devices.screen"   // DeviceParams → sdk.Screen (package drivers/sdk)
	MethodStop          = "daemon.stop"      // → {}
	MethodTasks         = "tasks.list"       // TaskFilter → []Task
	MethodTask          = "tasks.show"       // TaskID → TaskDetail
	MethodLeases        = "leases.list"      // → []Lease
	MethodHandBack      = "devices.handback" // DeviceParams → {}
	MethodUnlock        = "devices.unlock"   // UnlockParams → {}
)

// Driver is one driver's status.
type Driver struct {
	Name         string    `json:"name"`
	Host         string    `json:"host,omitempty"` // the phone host whose link this is (source "remote")
	Version      string    `json:"version"`
	Path         string    `json:"path"`
	Source       string    `json:"source"`
	Pid          int       `json:"pid"`
	State        string    `json:"state"`
	Restarts     int       `json:"restarts"`
	Devices      int       `json:"devices"`
	Capabilities []string  `json:"capabilities"`
	LastError    string    `json:"last_error,omitempty"`
	Stderr       []string  `json:"stderr,omitempty"`
	StartedAt    time.Time `json:"started_at,omitzero"`
}

// Device is one phone.
type Device struct {
	ID           string `json:"id"`
	Driver       string `json:"driver"`
	Host         string `json:"host,omitempty"` // the phone host it is attached to; empty for this machine
	Online       bool   `json:"online"`
	Name         string `json:"name,omitempty"`
	Model        string `json:"model,omitempty"`
	Manufacturer string `json:"manufacturer,omitempty"`
	Platform     string `json:"platform"`
	OSVersion    string `json:"os_version,omitempty"`
	Connection   string `json:"connection"`
	State        string `json:"state"`
	LockState    string `json:"lock_state,omitempty"`
	Duplicate    bool   `json:"duplicate,omitempty"`
	// Detail says why a phone is not online and what to do, as its driver put it.
	Detail string `json:"detail,omitempty"`
	// Missing is what the phone's driver can do but this phone cannot now,
	// each with why and how the person can enable it, as the phone says;
	// empty when it says nothing (it can do all its driver declares).
	Missing []MissingCap `json:"missing,omitempty"`
	// NotOffered lists the capabilities (sdk.AllCapabilities' names, in
	// that order) that the phone lacks without saying why, because its
	// driver does not offer them at all: nothing the person can enable on
	// the phone. Empty when the phone lacks nothing beyond Missing, or
	// while its driver's capabilities are not known.
	NotOffered []string `json:"not_offered,omitempty"`
}

// MissingCap is a capability one phone lacks: why, and how the person can
// enable it (a sentence or a command; either may be empty).
type MissingCap struct {
	Capability string `json:"capability"`
	Reason     string `json:"reason,omitempty"`
	Fix        string `json:"fix,omitempty"`
}

// Status is the daemon's state at a glance.
type Status struct {
	Pid     int       `json:"pid"`
	Version string    `json:"version"`
	Home    string    `json:"home"`
	Socket  string    `json:"socket"`
	HTTP    string    `json:"http,omitempty"`    // MCP over HTTP (host:port, path /mcp); empty when off
	Console string    `json:"console,omitempty"` // the web console (host:port); empty when off
	Started time.Time `json:"started"`
	Drivers []Driver  `json:"drivers"`
	Devices []Device  `json:"devices"`
	Leases  []Lease   `json:"leases"`
	History History   `json:"history"`
	// Hosts are the phone hosts, when the daemon listens for them.
	Hosts *Hosts `json:"hosts,omitempty"`
}

// History says whether the history can be written. While it cannot,
// agents' actions are refused (nothing reaches the phone) and reads go on.
type History struct {
	Path     string `json:"path"` // the database file
	Writable bool   `json:"writable"`
	// Cause is why the last write failed and Fix what to do about it; Since
	// is when writes began to fail, Last the last failure, Failures how many
	// writes failed since; all empty while writes work and never failed.
	Cause    string    `json:"cause,omitempty"`
	Fix      string    `json:"fix,omitempty"`
	Since    time.Time `json:"since,omitzero"`
	Last     time.Time `json:"last,omitzero"`
	Failures int       `json:"failures,omitempty"`
	// Recovered is when writes last worked again after failing.
	Recovered time.Time `json:"recovered,omitzero"`
}

// DriverName names a driver.
type DriverName struct {
	Name string `json:"name"`
}

// AttachParams attaches a driver started by hand.
type AttachParams struct {
	Name    string `json:"name"`
	Network string `json:"network"`
	Addr    string `json:"addr"`
	Pid     int    `json:"pid"`
}

// DeviceParams names a device.
type DeviceParams struct {
	Device string `json:"device"`
}

// TaskFilter selects tasks for MethodTasks.
type TaskFilter struct {
	Device string `json:"device,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// TaskID names a task.
type TaskID struct {
	ID string `json:"id"`
}

// Task is one agent task in the history.
type Task struct {
	ID           string    `json:"id"`
	Agent        string    `json:"agent"`
	AgentVersion string    `json:"agent_version"`
	Device       string    `json:"device"`
	DeviceName   string    `json:"device_name,omitempty"`
	Text         string    `json:"text"`
	Apps         []string  `json:"apps,omitempty"`
	StartedAt    time.Time `json:"started_at"`
	EndedAt      time.Time `json:"ended_at,omitzero"`
	Outcome      string    `json:"outcome,omitempty"`
	Steps        int       `json:"steps"`
	LastOutcome  string    `json:"last_outcome,omitempty"`
	Recording    bool      `json:"recording,omitempty"` // the task has a screen recording
}

// TaskDetail is a task with its steps and the approvals it asked for.
type TaskDetail struct {
	Task
	// RecordingMS is how long the task's recording lasts so far (it grows
	// until the recording is closed, shortly after the task ends).
	RecordingMS int64      `json:"recording_ms,omitempty"`
	StepList    []Step     `json:"step_list"`
	Approvals   []Approval `json:"approvals,omitempty"`
}

// Approval is what became of an action the policy asked the person about,
// as the history keeps it.
type Approval struct {
	ID        string          `json:"id"`
	Step      string          `json:"step,omitempty"` // the step's id, when known
	Tool      string          `json:"tool"`
	Args      json.RawMessage `json:"args,omitempty"` // redacted
	Commit    string          `json:"commit,omitempty"`
	Rule      string          `json:"rule,omitempty"`
	Target    string          `json:"target,omitempty"`
	Status    string          `json:"status"` // pending, approved, denied, expired
	CreatedAt time.Time       `json:"created_at"`
	DecidedAt time.Time       `json:"decided_at,omitzero"`
	DecidedBy string          `json:"decided_by,omitempty"` // person, expiry
	Reason    string          `json:"reason,omitempty"`
	ForTask   bool            `json:"for_task,omitempty"`
	// Summary is the card's sentence: what the person was asked to approve.
	Summary     string `json:"summary,omitempty"`
	Counterpart string `json:"counterpart,omitempty"`
	Screenshot  string `json:"screenshot,omitempty"` // the media id of the card's screenshot
}

// Step is one tool call of a task.
type Step struct {
	Seq        int             `json:"seq"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args"`
	Outcome    string          `json:"outcome"`
	Message    string          `json:"message,omitempty"`
	Diff       string          `json:"diff,omitempty"`
	StartedAt  time.Time       `json:"started_at"`
	DurationMS int64           `json:"duration_ms"`
	Before     string          `json:"before,omitempty"`
	After      string          `json:"after,omitempty"`
	// VideoAtMS is where the step starts in the task's recording, in
	// milliseconds; -1 when the task has none.
	VideoAtMS int64 `json:"video_at_ms"`
}

// UnlockParams unlocks a phone with its PIN, for the person.
type UnlockParams struct {
	Device string `json:"device"`
	PIN    string `json:"pin"`
}
