package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// PhoneApps lists the apps an agent may open.
func PhoneApps() Tool {
	return newTool(toolSpec{
		name:       agent.ToolApps,
		title:      "List apps",
		desc:       "List the apps on a phone that you may open, as label (id). Use the id or label with phone_launch.",
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"apps"},
			arrayParam("apps", "", objectParam("", "",
				stringParam("id", "", 0, 0).req(),
				stringParam("label", "", 0, 0),
			), 0),
		),
		codes: readCodes,
	}, func(ctx context.Context, c *call, a onDevice) (*mcp.CallToolResult, error) {
		apps, err := c.sess.Apps(ctx, a.Device)
		if err != nil {
			return nil, err
		}
		if apps == nil {
			apps = []agent.App{}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s · %d apps", a.Device, len(apps))
		for _, app := range apps {
			fmt.Fprintf(&b, "\n%s (%s)", app.Label, app.ID)
		}
		return textResult(b.String(), map[string]any{"apps": apps}), nil
	})
}

// PhoneNotifications lists a phone's notifications.
func PhoneNotifications() Tool {
	return newTool(toolSpec{
		name:  agent.ToolNotifications,
		title: "Read notifications",
		desc: "List a phone's notifications (app, title, text, time), newest first as the phone gives them, " +
			"e.g. to find a delivery update or a message without opening apps.",
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"notifications"},
			arrayParam("notifications", "", objectParam("", "",
				stringParam("app", "", 0, 0),
				stringParam("title", "", 0, 0),
				stringParam("text", "", 0, 0),
				stringParam("time", "", 0, 0),
			), 0),
		),
		codes: readCodes,
	}, func(ctx context.Context, c *call, a onDevice) (*mcp.CallToolResult, error) {
		ns, err := c.sess.Notifications(ctx, a.Device)
		if err != nil {
			return nil, err
		}
		if ns == nil {
			ns = []agent.Notification{}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s · %d notifications", a.Device, len(ns))
		for _, n := range ns {
			b.WriteByte('\n')
			if !n.Time.IsZero() {
				b.WriteString(n.Time.Format(time.DateTime) + " · ")
			}
			b.WriteString(n.App)
			if n.Title != "" {
				fmt.Fprintf(&b, " · %q", n.Title)
			}
			if n.Text != "" {
				fmt.Fprintf(&b, " · %q", n.Text)
			}
		}
		return textResult(b.String(), map[string]any{"notifications": ns}), nil
	})
}

// checkPath refuses paths that try to leave the Pinky folder. The gateway
// confines paths as well; this answers the agent sooner and more plainly.
func checkPath(p string) error {
	if strings.ContainsRune(p, 0) || strings.Contains(p, `\`) {
		return badArg("path", "must not contain NUL or backslashes")
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return badArg("path", "must stay inside the phone's Pinky folder (no ..)")
		}
	}
	return nil
}

// FileActions are what phone_files does.
var FileActions = []string{"list", "pull", "push"}

// fileAction is one of FileActions.
type fileAction string

func (fileAction) enum() []string { return FileActions }

// PhoneFiles lists, pulls and pushes files between the phone's Pinky folder
// and its folder on the computer.
func PhoneFiles() Tool {
	return newTool(toolSpec{
		name:  agent.ToolFiles,
		title: "Phone files",
		desc: "Files of the phone's Pinky folder, the only place on the phone you can read or write files " +
			"(photos and downloads you want to use must be shared or saved there), and of its folder on the computer. " +
			"list (default) lists a folder on both sides, saying where each entry is (differs: on both, with other sizes). " +
			"pull copies a file phone → computer; push copies a file computer → phone and asks the person first " +
			"(put files on the computer with phone_upload).",
		idempotent: true,
		output: outputSchema([]string{"action", "path"},
			stringParam("action", "", 0, 0),
			stringParam("path", "", 0, 0),
			arrayParam("files", "", objectParam("", "",
				stringParam("name", "", 0, 0).req(),
				param{name: "size", typ: "integer"},
				boolParam("dir", ""),
				stringParam("modified", "", 0, 0),
				enumParam("where", "", agent.WhereBoth, agent.WherePhone, agent.WhereComputer, agent.WhereDiffers),
			), 0),
			param{name: "size", typ: "integer"},
		),
		codes: append(append([]agent.Code{}, readCodes...), agent.CodeUncertain, agent.CodeTimeout,
			agent.CodeApprovalPending, agent.CodeDenied, agent.CodePersonInControl),
	}, func(ctx context.Context, c *call, a filesArgs) (*mcp.CallToolResult, error) {
		if a.Action == "" {
			a.Action = "list"
		}
		if err := checkPath(a.Path); err != nil {
			return nil, err
		}
		if a.Action != "list" && strings.Trim(a.Path, "/") == "" {
			return nil, badArg("path", "is required to %s: a file relative to the Pinky folder", a.Action)
		}
		r, err := c.sess.Files(ctx, a.Device, agent.FilesRequest{Action: string(a.Action), Path: a.Path, ApprovalID: a.ApprovalID}, c.progress)
		if err != nil {
			return nil, err
		}
		switch a.Action {
		case "pull":
			return textResult(fmt.Sprintf("Pulled %s (%d bytes) from %s to the computer.", a.Path, r.Size, a.Device),
				map[string]any{"action": a.Action, "path": a.Path, "size": r.Size}), nil
		case "push":
			return textResult(fmt.Sprintf("Pushed %s (%d bytes) to %s's Pinky folder.", a.Path, r.Size, a.Device),
				map[string]any{"action": a.Action, "path": a.Path, "size": r.Size}), nil
		}
		files := r.Files
		if files == nil {
			files = []agent.File{}
		}
		var b strings.Builder
		where := a.Path
		if where == "" {
			where = "the Pinky folder"
		}
		fmt.Fprintf(&b, "%s · %s · %d entries", a.Device, where, len(files))
		for _, f := range files {
			if f.Dir {
				fmt.Fprintf(&b, "\n%s/ · %s", f.Name, f.Where)
				continue
			}
			fmt.Fprintf(&b, "\n%s · %d bytes · %s", f.Name, f.Size, f.Where)
			if !f.Modified.IsZero() {
				b.WriteString(" · " + f.Modified.Format(time.DateTime))
			}
		}
		return textResult(b.String(), map[string]any{"action": a.Action, "path": a.Path, "files": files}), nil
	})
}

// filesArgs are phone_files's arguments.
type filesArgs struct {
	onDevice
	Action     fileAction `json:"action" default:"list"`
	Path       string     `json:"path" desc:"A folder to list (absent: the Pinky folder itself) or a file to pull or push, relative to the Pinky folder, e.g. \"receipts/may.pdf\"." check:"len=0..1024" schema:"unlisted"`
	ApprovalID string     `json:"approval_id" desc:"Only to repeat, unchanged, a push that answered approval_pending: its id." check:"len=1..128" schema:"unlisted"`
}

// maxUploadBase64 is the length of maxUploadBytes in padded base64.
const maxUploadBase64 = (maxUploadBytes + 2) / 3 * 4

// PhoneUpload saves a file into the phone's folder on the computer.
func PhoneUpload() Tool {
	return newTool(toolSpec{
		name:  agent.ToolUpload,
		title: "Upload a file",
		desc: "Save a file (up to 10 MiB) into the phone's folder on the computer, e.g. a photo or document an app should attach; " +
			"then copy it to the phone with phone_files action push (the person is asked), and pick it from the Pinky folder in the app. " +
			"Names in the path use only A-Z a-z 0-9 . _ - and space (1 to 128 each). An existing file at the path is replaced.",
		destructive: true,
		idempotent:  true,
		maxBytes:    maxUploadBase64 + maxArgsBytes,
		output: outputSchema([]string{"path", "size"},
			stringParam("path", "", 0, 0),
			param{name: "size", typ: "integer"},
		),
		codes: readCodes,
	}, func(ctx context.Context, c *call, a uploadArgs) (*mcp.CallToolResult, error) {
		if err := checkPath(a.Path); err != nil {
			return nil, err
		}
		if strings.HasSuffix(a.Path, "/") {
			return nil, badArg("path", "must name a file, not a folder")
		}
		data, err := base64.StdEncoding.DecodeString(a.Content)
		if err != nil {
			return nil, badArg("content_base64", "is not valid base64 (standard alphabet, padded)")
		}
		if len(data) > maxUploadBytes {
			return nil, badArg("content_base64", "decodes to %d bytes; the limit is %d", len(data), maxUploadBytes)
		}
		n, err := c.sess.Upload(ctx, a.Device, a.Path, data)
		if err != nil {
			return nil, err
		}
		return textResult(fmt.Sprintf("Saved %d bytes as %s on the computer; push it to %s with phone_files.", n, a.Path, a.Device),
			map[string]any{"path": a.Path, "size": n}), nil
	})
}

// uploadArgs are phone_upload's arguments.
type uploadArgs struct {
	onDevice
	Path    string `json:"path" desc:"Relative to the Pinky folder, e.g. \"menu.pdf\"." check:"required,len=1..1024" schema:"unlisted"`
	Content string `json:"content_base64" desc:"The file's bytes in standard, padded base64." check:"required,len=0..{maxUploadBase64}" schema:"unlisted"`
}

// PhoneUploadLink makes a one-time upload link, over MCP over HTTP, for a
// file too large for phone_upload.
func PhoneUploadLink() Tool {
	return newTool(toolSpec{
		name:  agent.ToolUploadLink,
		title: "Upload link for a large file",
		desc: "Only over MCP over HTTP, for files too large for phone_upload: a one-time link to send a file (up to 100 MiB) " +
			"into the phone's folder on the computer. PUT the file's bytes as the body to url before expires_at (a few minutes), " +
			"e.g. curl -T file.pdf URL; the link is the credential, no header is needed. It answers 201 with {path, size}. " +
			"The link works once, only while you hold the phone; then push the file with phone_files. " +
			"Path names as for phone_upload; an existing file at the path is replaced.",
		destructive: true,
		output: outputSchema([]string{"url", "method", "expires_at"},
			stringParam("url", "", 0, 0),
			stringParam("method", "", 0, 0),
			stringParam("expires_at", "RFC 3339.", 0, 0),
		),
		codes: readCodes,
	}, func(ctx context.Context, c *call, a uploadLinkArgs) (*mcp.CallToolResult, error) {
		if err := checkPath(a.Path); err != nil {
			return nil, err
		}
		if strings.HasSuffix(a.Path, "/") {
			return nil, badArg("path", "must name a file, not a folder")
		}
		linker, ok := c.sess.(UploadLinker)
		if !ok {
			return nil, agent.Errorf(agent.CodeUnsupported,
				"upload links exist only over MCP over HTTP; send the content with phone_upload (up to 10 MiB)")
		}
		link, err := linker.UploadLink(ctx, a.Device, a.Path, a.Size)
		if err != nil {
			return nil, err
		}
		exp := link.ExpiresAt.UTC().Format(time.RFC3339)
		return textResult(fmt.Sprintf("PUT the file's bytes to %s before %s (once, no other header needed); it is saved as %s on the computer. "+
			"Then push it to %s with phone_files.", link.URL, exp, a.Path, a.Device),
			map[string]any{"url": link.URL, "method": link.Method, "expires_at": exp}), nil
	})
}

// uploadLinkArgs are phone_upload_link's arguments.
type uploadLinkArgs struct {
	onDevice
	Path string `json:"path" desc:"Relative to the Pinky folder, e.g. \"video.mp4\"." check:"required,len=1..1024" schema:"unlisted"`
	Size int64  `json:"size" desc:"The file's size in bytes, if known: a larger body is refused. 0 or absent: up to 100 MiB." check:"range=0..{MaxUploadLinkBytes}"`
}
