package history

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Errors returned by a Store, wrapped with context; test them with errors.Is.
var (
	// ErrNotFound means an ID, or an ID a record refers to, is unknown.
	ErrNotFound = errors.New("not found")
	// ErrExists means an ID, or a step's sequence number within its task,
	// is already taken.
	ErrExists = errors.New("already exists")
	// ErrEnded means a task or session has already ended; the first end
	// and its outcome are kept.
	ErrEnded = errors.New("already ended")
	// ErrInvalid means a record lacks a required field.
	ErrInvalid = errors.New("invalid")
	// ErrSchemaTooNew means the database was written by a newer Pinky.
	ErrSchemaTooNew = errors.New("database schema is newer than this pinky")
	// ErrUnwritable means a write failed because the history cannot be
	// written at all (a full disk, a read-only or damaged file), not because
	// of what was written; the error is a *WriteError that says why.
	ErrUnwritable = errors.New("history cannot be written")
	// ErrDamaged means Open found the database file damaged.
	ErrDamaged = errors.New("the history database is damaged")
)

// StepRunning is the outcome of a step whose action has begun and not yet
// ended: an acting tool call records its step so before it acts, and
// FinishStep records how the action ended.
const StepRunning = "running"

// DefaultTaskLimit is the number of tasks Tasks returns when the filter sets
// no limit.
const DefaultTaskLimit = 100

// A Store holds the history. Implementations are safe for concurrent use.
//
// Times are kept with millisecond precision and read back in UTC; a zero
// time means "not set" (an open task or session has a zero EndedAt). A record
// may leave an ID it refers to empty (a task with no device, say); a
// non-empty reference must exist, or the write fails with ErrNotFound.
type Store interface {
	// UpsertDevice records a device, or updates a known one. An update
	// keeps the FirstSeen of the first record and overwrites every other
	// field. A zero FirstSeen on insert takes LastSeen.
	UpsertDevice(ctx context.Context, d Device) error
	// Device returns the device with the given ID.
	Device(ctx context.Context, id string) (Device, error)
	// UpsertAgent records an agent, or updates a known one, like
	// UpsertDevice.
	UpsertAgent(ctx context.Context, a Agent) error
	// Agent returns the agent with the given ID.
	Agent(ctx context.Context, id string) (Agent, error)

	// StartSession records a new session; its EndedAt is ignored.
	StartSession(ctx context.Context, s Session) error
	// EndSession ends a session at the given time. Ending an ended session
	// fails with ErrEnded and keeps the first end.
	EndSession(ctx context.Context, id string, at time.Time) error
	// Session returns the session with the given ID.
	Session(ctx context.Context, id string) (Session, error)

	// StartTask records a new task; its EndedAt and Outcome are ignored.
	StartTask(ctx context.Context, t Task) error
	// EndTask ends a task at the given time with an outcome, which must not
	// be empty. Ending an ended task fails with ErrEnded and keeps the
	// first end and outcome.
	EndTask(ctx context.Context, id string, at time.Time, outcome string) error
	// Tasks lists tasks, newest first, with what a list needs to show.
	Tasks(ctx context.Context, f TaskFilter) ([]TaskSummary, error)
	// Task returns one task and its steps in sequence order.
	Task(ctx context.Context, id string) (TaskSummary, []Step, error)
	// OpenTasks returns the tasks that have not ended, oldest first.
	OpenTasks(ctx context.Context) ([]Task, error)
	// CloseOpen ends every open task with the outcome, and every open
	// session, at the given time, and reports how many tasks it ended. The
	// daemon calls it on start: what was open when it last stopped can no
	// longer go on.
	CloseOpen(ctx context.Context, at time.Time, outcome string) (int, error)

	// AddStep records a step of a task, ended or not. It returns once the
	// step is committed. A step's Seq is unique within its task. A step
	// whose Outcome is StepRunning is ended later by FinishStep.
	AddStep(ctx context.Context, s Step) error
	// FinishStep ends a running step: the given step's Outcome, Message,
	// Diff and Duration replace the running step's, found by ID; its other
	// fields are ignored. The Outcome must be neither empty nor StepRunning
	// (ErrInvalid). It fails with ErrNotFound for an unknown step, and with
	// ErrEnded for a step that has ended, keeping the first end.
	FinishStep(ctx context.Context, s Step) error
	// SettleSteps ends every running step with the outcome and message and
	// reports how many it ended. The daemon calls it on start: the action
	// of a step left running by a daemon that stopped may or may not have
	// happened, and nobody will learn which.
	SettleSteps(ctx context.Context, outcome, message string) (int, error)
	// SetStepMedia sets the media IDs of a step's screenshots; an empty
	// argument leaves that screenshot as it is.
	SetStepMedia(ctx context.Context, stepID, before, after string) error
	// CountSteps counts the steps of a task, or of all tasks when taskID
	// is empty.
	CountSteps(ctx context.Context, taskID string) (int, error)

	// AddMedia records a media file.
	AddMedia(ctx context.Context, m Media) error
	// Media returns the media record with the given ID.
	Media(ctx context.Context, id string) (Media, error)

	// UpsertApproval records an approval the person was asked for, or
	// updates a known one (its decision, say). An update keeps the
	// CreatedAt of the first record and overwrites every other field.
	// Status must be one of the Approval statuses.
	UpsertApproval(ctx context.Context, a Approval) error
	// Approvals returns a task's approvals, oldest first.
	Approvals(ctx context.Context, taskID string) ([]Approval, error)

	// PutRecording records the video of a task, or updates it: a task has
	// at most one recording, and an update overwrites every field. The
	// task must exist (ErrNotFound); TaskID, Path (a local path with
	// forward slashes), Codec and StartedAt are required (ErrInvalid).
	PutRecording(ctx context.Context, r Recording) error
	// Recording returns the recording of a task; ErrNotFound when the task
	// has none.
	Recording(ctx context.Context, taskID string) (Recording, error)

	// Prune deletes every ended task that ended strictly before the given
	// time, with its steps, approvals, media rows and recording row, and
	// then every ended session that ended before it and has no task left.
	// Open tasks and sessions stay whatever their age; devices and agents
	// stay. It is one transaction: when it fails, nothing is deleted. It
	// returns the counts and the files the deleted rows named, which the
	// caller deletes after it returns (see PruneFiles); it deletes no file.
	Prune(ctx context.Context, before time.Time) (Pruned, error)
	// NamedFiles returns the subset of the given paths that rows name:
	// media paths that a media row names, recording paths that a
	// recording row names. The orphan sweep uses it so that it never
	// deletes a file the history still refers to.
	NamedFiles(ctx context.Context, f Files) (Files, error)

	// Health says whether writes work, as the last writes found it.
	Health() Health

	// Close releases the store. It must not be used afterwards.
	Close() error
}

// A Device is a phone seen through a driver.
type Device struct {
	ID        string
	Driver    string // the driver's name, as in pinky-driver-<name>
	Name      string
	Model     string
	Platform  string // "android", "ios"…
	FirstSeen time.Time
	LastSeen  time.Time
}

// An Agent is an MCP client, as it names itself. Its ID is the caller's
// choice (name@version, or a generated ID).
type Agent struct {
	ID        string
	Name      string
	Version   string
	FirstSeen time.Time
	LastSeen  time.Time
}

// A Session is one connection of an agent to the gateway.
type Session struct {
	ID        string
	AgentID   string
	Transport string // "stdio", "http"
	StartedAt time.Time
	EndedAt   time.Time // zero while open
}

// A Task is what an agent does on one device under one lease, from the
// moment it takes the device until it lets go.
type Task struct {
	ID        string
	SessionID string
	AgentID   string
	DeviceID  string
	Text      string   // what the agent said it would do
	Apps      []string // the apps the task may use
	StartedAt time.Time
	EndedAt   time.Time // zero while open
	// Outcome says how the task ended: "released", "expired",
	// "session_closed", "offline", "stopped", "daemon_restarted"…;
	// empty while open.
	Outcome string
}

// A Step is one tool call of an agent within a task.
type Step struct {
	ID      string
	TaskID  string
	Seq     int    // 1, 2, 3… within the task
	Tool    string // the MCP tool's name
	Args    string // the arguments as JSON, already redacted
	Outcome string // a code: "ok", "uncertain", "device_offline"…
	Message string // what the agent was told besides the diff
	Diff    string // the screen text the agent saw
	// StartedAt is when the call began; Duration how long it took.
	StartedAt time.Time
	Duration  time.Duration
	// Before and After are the media IDs of the screenshots around the
	// step. They may be empty, and are usually set later by SetStepMedia.
	Before string
	After  string
	// VideoAt is where the step begins in the task's recording: StartedAt
	// less the recording's StartedAt, or 0 for a step that began before
	// the recording did, and never past the recording's end (a step at the
	// very end of a task may round a millisecond past it). It is -1 when
	// the task has no recording with bytes in it. Task fills it in;
	// AddStep ignores it.
	VideoAt time.Duration
}

// Approval statuses.
const (
	ApprovalPending  = "pending"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
)

// An Approval is an action of a task the policy asked the person about,
// and what became of it.
type Approval struct {
	ID     string
	TaskID string
	StepID string // the step that asked; may be empty
	Tool   string // the MCP tool's name
	Args   string // the arguments as JSON, already redacted
	Commit string // the detected commit kind, e.g. "send_message"
	Rule   string // the policy rule that asked
	Target string // what the action was on, e.g. [12] button "Send"
	Status string // ApprovalPending, ApprovalApproved…
	// CreatedAt is when the approval opened; DecidedAt when it was
	// decided or expired, zero while pending.
	CreatedAt time.Time
	DecidedAt time.Time
	DecidedBy string // "person" or "expiry"; empty while pending
	Reason    string // the person's reason for a deny
	ForTask   bool   // the allow covers the task's later actions of this kind and target
	// Summary is the card's sentence, read from the screen: what the
	// person approved ("Send "hello" to Ben Okafor").
	Summary     string
	Counterpart string // who or what the commit went to, "" when the screen named nobody
	// Screenshot is the media id of the card's screenshot (the task's
	// media row ApprovalMediaID), "" when none was kept. It is read, never
	// written: the row says.
	Screenshot string
}

// Media is a file in the media folder, such as a step's screenshot.
type Media struct {
	ID        string
	TaskID    string
	StepID    string // empty for media of the whole task
	Kind      string // "before", "after"
	Path      string // relative to the media folder, with forward slashes
	Width     int
	Height    int
	Bytes     int64
	CreatedAt time.Time
}

// A TaskFilter selects tasks. Zero fields select everything.
type TaskFilter struct {
	Device string // device ID
	Agent  string // agent ID
	// Limit caps the number of tasks; zero or less means
	// DefaultTaskLimit.
	Limit int
	// Before keeps tasks started strictly before it; to page, pass the
	// StartedAt of the last task of the previous page.
	Before time.Time
}

// A TaskSummary is a task with what a list of tasks shows about it.
type TaskSummary struct {
	Task
	AgentName    string
	AgentVersion string
	DeviceName   string
	Steps        int    // the number of steps
	LastOutcome  string // the outcome of the last step; empty without steps
	Recording    bool   // the task has a recording with bytes in it
}

// Recording codecs.
const (
	CodecH264 = "h264"
	CodecH265 = "h265"
)

// A Recording is the video of a task's screen: a file in the recordings
// folder ($PINKY_HOME/recordings), one per task, that grows while the task
// runs. The recorder records it when it starts and updates Duration, Bytes
// and UpdatedAt as it writes.
type Recording struct {
	TaskID string
	Path   string // relative to the recordings folder, with forward slashes: "<task>.mp4"
	Codec  string // CodecH264 or CodecH265
	Width  int
	Height int
	// StartedAt is the wall time of the video's time 0; a step's place in
	// the video is its StartedAt less this.
	StartedAt time.Time
	Duration  time.Duration // kept to the millisecond
	Bytes     int64         // the file's size; 0 until the first frame is written
	UpdatedAt time.Time
}

// Files are paths of files the history names, relative to their folder and
// with forward slashes.
type Files struct {
	Media      []string // relative to the media folder
	Recordings []string // relative to the recordings folder
}

// Pruned says what a Prune deleted.
type Pruned struct {
	// The number of rows deleted, per kind.
	Tasks, Steps, Approvals, Media, Recordings, Sessions int
	// Files are the files the deleted rows named, sorted, each once.
	Files Files
	// Removed and Orphans are set by PruneFiles only: the number of files
	// it deleted that the pruned rows named, and the number of orphan
	// files (named by no row) it swept.
	Removed, Orphans int
}

func (f TaskFilter) limit() int {
	if f.Limit <= 0 {
		return DefaultTaskLimit
	}
	return f.Limit
}

// Checks shared by both implementations, so that they fail alike.

func checkID(what, id string) error {
	if id == "" {
		return fmt.Errorf("%s: empty id: %w", what, ErrInvalid)
	}
	return nil
}

func checkStep(s Step) error {
	if err := checkID("step", s.ID); err != nil {
		return err
	}
	if s.TaskID == "" {
		return fmt.Errorf("step %q: empty task id: %w", s.ID, ErrInvalid)
	}
	return nil
}

// checkFinish checks the step given to FinishStep.
func checkFinish(s Step) error {
	if err := checkID("step", s.ID); err != nil {
		return err
	}
	if s.Outcome == "" || s.Outcome == StepRunning {
		return fmt.Errorf("step %q: outcome %q does not end it: %w", s.ID, s.Outcome, ErrInvalid)
	}
	return nil
}

func checkMedia(m Media) error {
	if err := checkID("media", m.ID); err != nil {
		return err
	}
	if m.TaskID == "" {
		return fmt.Errorf("media %q: empty task id: %w", m.ID, ErrInvalid)
	}
	return nil
}

func checkApproval(a Approval) error {
	if err := checkID("approval", a.ID); err != nil {
		return err
	}
	if a.TaskID == "" {
		return fmt.Errorf("approval %q: empty task id: %w", a.ID, ErrInvalid)
	}
	switch a.Status {
	case ApprovalPending, ApprovalApproved, ApprovalDenied, ApprovalExpired:
		return nil
	}
	return fmt.Errorf("approval %q: status %q: %w", a.ID, a.Status, ErrInvalid)
}

func checkRecording(r Recording) error {
	if r.TaskID == "" {
		return fmt.Errorf("recording: empty task id: %w", ErrInvalid)
	}
	if !localPath(r.Path) {
		return fmt.Errorf("recording of task %q: path %q must be relative to the recordings folder, "+
			"with forward slashes: %w", r.TaskID, r.Path, ErrInvalid)
	}
	if r.Codec != CodecH264 && r.Codec != CodecH265 {
		return fmt.Errorf("recording of task %q: codec %q: %w", r.TaskID, r.Codec, ErrInvalid)
	}
	if r.StartedAt.IsZero() {
		return fmt.Errorf("recording of task %q: zero start time: %w", r.TaskID, ErrInvalid)
	}
	if r.Bytes < 0 || r.Duration < 0 {
		return fmt.Errorf("recording of task %q: negative size or duration: %w", r.TaskID, ErrInvalid)
	}
	return nil
}

// localPath reports whether p is a path as the history keeps them: relative,
// with forward slashes, inside its folder (no "..", no backslash).
func localPath(p string) bool {
	return p != "" && !strings.ContainsAny(p, `\`+"\x00") && filepath.IsLocal(filepath.FromSlash(p)) &&
		path.Clean(p) == p
}

// videoAt is a step's place in its task's recording, for Step.VideoAt;
// rec is nil when the task has no recording with bytes.
func videoAt(step time.Time, rec *Recording) time.Duration {
	if rec == nil {
		return -1
	}
	if step.IsZero() || step.Before(rec.StartedAt) {
		return 0
	}
	at := step.Sub(rec.StartedAt)
	if rec.Duration > 0 {
		at = min(at, rec.Duration)
	}
	return at
}

func checkOutcome(what, id, outcome string) error {
	if outcome == "" {
		return fmt.Errorf("%s %q: empty outcome: %w", what, id, ErrInvalid)
	}
	return nil
}

// ms rounds t down to the millisecond, in UTC, as the database keeps it.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

func checkAt(what, id string, at time.Time) error {
	if at.IsZero() {
		return fmt.Errorf("%s %q: zero end time: %w", what, id, ErrInvalid)
	}
	return nil
}
