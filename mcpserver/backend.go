package mcpserver

import (
	"context"
	"time"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// Session is the gateway's agent side for one MCP session: what the tools
// call. Failures an agent should react to are *agent.Error (a code and a
// sentence for a model); any other error is an infrastructure fault.
type Session interface {
	// Phones lists the phones the agent may see, with who holds each.
	Phones(ctx context.Context) ([]agent.Phone, error)
	// Connect leases a phone for a task and returns its whole screen.
	Connect(ctx context.Context, req agent.ConnectRequest) (*agent.Observation, error)
	// Release ends the lease (and its task).
	Release(ctx context.Context, device string) error
	// ObserveWith reads the screen: what changed since the agent's last
	// read, or the whole screen with Full; a JPEG screenshot with
	// Screenshot, with the grid of numbered marks with Marks (or when the
	// screen has no useful tree).
	ObserveWith(ctx context.Context, device string, o agent.ObserveOptions) (*agent.Observation, error)
	// Act runs one action through the pipeline and returns what changed.
	Act(ctx context.Context, device string, a agent.Action, progress agent.Progress) (*agent.Observation, error)
	// Apps lists the apps the agent may launch.
	Apps(ctx context.Context, device string) ([]agent.App, error)
	// WaitFor waits until a text or ref shows (or goes), up to a capped timeout.
	WaitFor(ctx context.Context, device string, req agent.WaitRequest, progress agent.Progress) (*agent.Observation, error)
	// Notifications lists the phone's notifications.
	Notifications(ctx context.Context, device string) ([]agent.Notification, error)
	// Files lists a folder of the phone's Pinky folder and of its folder
	// on the computer, pulls a file phone → computer, or pushes one
	// computer → phone (asking the person, like an acting tool).
	Files(ctx context.Context, device string, req agent.FilesRequest, progress agent.Progress) (*agent.FilesResult, error)
	// Upload saves a file into the phone's folder on the computer, for a push.
	Upload(ctx context.Context, device, path string, data []byte) (int64, error)
	// AskPerson hands the phone to the person with a message and waits
	// until they hand it back; then it returns the screen.
	AskPerson(ctx context.Context, device, message string, progress agent.Progress) (*agent.Observation, error)
	// Approval waits on a pending approval and returns the outcome of the
	// approved action.
	Approval(ctx context.Context, id string, progress agent.Progress) (*agent.Observation, error)
}

// Sessions finds the agent session of a tool call. Over stdio there is one
// per connection; over HTTP, one per MCP session id.
type Sessions interface {
	Session(ctx context.Context) (Session, error)
}

// MaxUploadLinkBytes caps the file of one upload link.
const MaxUploadLinkBytes = 100 << 20

// UploadLink is a one-time link an agent sends a file to with one PUT.
type UploadLink struct {
	URL       string
	Method    string // always PUT
	ExpiresAt time.Time
}

// UploadLinker is what a Session over HTTP adds: one-time upload links for
// files too large for phone_upload. Over stdio there is no HTTP server to
// send a file to, so sessions there do not implement it.
type UploadLinker interface {
	// UploadLink makes a link that accepts one PUT of at most size bytes
	// (MaxUploadLinkBytes when size is 0), written to path in device's
	// folder on the computer. It checks the lease and the path first.
	UploadLink(ctx context.Context, device, path string, size int64) (*UploadLink, error)
}
