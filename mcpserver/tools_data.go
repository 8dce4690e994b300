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
		name:       "phone_apps",
		title:      "List apps",
		desc:       "List the apps on a phone that you may open, as label (id). Use the id or label with phone_launch.",
		params:     []param{deviceParam()},
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"apps"},
			arrayParam("apps", "The apps.", objectParam("", "",
				stringParam("id", "", 0, 0).req(),
				stringParam("label", "", 0, 0),
			), 0),
		),
		codes: readCodes,
		run: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			var a struct {
				Device string `json:"device"`
			}
			if err := c.bind(&a); err != nil {
				return nil, err
			}
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
		},
	})
}

// PhoneNotifications lists a phone's notifications.
func PhoneNotifications() Tool {
	return newTool(toolSpec{
		name:  "phone_notifications",
		title: "Read notifications",
		desc: "List a phone's notifications (app, title, text, time), newest first as the phone gives them, " +
			"e.g. to find a delivery update or a message without opening apps.",
		params:     []param{deviceParam()},
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"notifications"},
			arrayParam("notifications", "The notifications.", objectParam("", "",
				stringParam("app", "", 0, 0),
				stringParam("title", "", 0, 0),
				stringParam("text", "", 0, 0),
				stringParam("time", "", 0, 0),
			), 0),
		),
		codes: readCodes,
		run: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			var a struct {
				Device string `json:"device"`
			}
			if err := c.bind(&a); err != nil {
				return nil, err
			}
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
		},
	})
}

// pathParam is a path inside the phone's Pinky folder.
func pathParam(desc string, minLen int) param {
	return stringParam("path", desc, minLen, 1024)
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

// PhoneFiles lists a folder of the phone's Pinky folder.
func PhoneFiles() Tool {
	return newTool(toolSpec{
		name:  "phone_files",
		title: "List files",
		desc: "List a folder inside the phone's Pinky folder, the only place on the phone you can read or write files " +
			"(photos and downloads you want to use must be shared or saved there). Leave out path for the folder itself.",
		params:     []param{deviceParam(), pathParam(`A folder relative to the Pinky folder, e.g. "receipts".`, 0)},
		readOnly:   true,
		idempotent: true,
		output: outputSchema([]string{"path", "files"},
			stringParam("path", "The folder listed.", 0, 0),
			arrayParam("files", "The folder's entries.", objectParam("", "",
				stringParam("name", "", 0, 0).req(),
				param{name: "size", typ: "integer"},
				boolParam("dir", ""),
				stringParam("modified", "", 0, 0),
			), 0),
		),
		codes: readCodes,
		run: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			var a struct {
				Device string `json:"device"`
				Path   string `json:"path"`
			}
			if err := c.bind(&a); err != nil {
				return nil, err
			}
			if err := checkPath(a.Path); err != nil {
				return nil, err
			}
			files, err := c.sess.Files(ctx, a.Device, a.Path)
			if err != nil {
				return nil, err
			}
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
					fmt.Fprintf(&b, "\n%s/", f.Name)
					continue
				}
				fmt.Fprintf(&b, "\n%s · %d bytes", f.Name, f.Size)
				if !f.Modified.IsZero() {
					b.WriteString(" · " + f.Modified.Format(time.DateTime))
				}
			}
			return textResult(b.String(), map[string]any{"path": a.Path, "files": files}), nil
		},
	})
}

// maxUploadBase64 is the length of maxUploadBytes in padded base64.
const maxUploadBase64 = (maxUploadBytes + 2) / 3 * 4

// PhoneUpload writes a file into the phone's Pinky folder.
func PhoneUpload() Tool {
	return newTool(toolSpec{
		name:  "phone_upload",
		title: "Upload a file",
		desc: "Write a file (up to 10 MiB) into the phone's Pinky folder, e.g. a photo or document an app should attach; " +
			"then pick it from that folder in the app. An existing file at the path is replaced.",
		params: []param{
			deviceParam(),
			pathParam(`The file's path relative to the Pinky folder, e.g. "menu.pdf".`, 1).req(),
			stringParam("content_base64", "The file's bytes in standard, padded base64.", 0, maxUploadBase64).req(),
		},
		destructive: true,
		idempotent:  true,
		maxBytes:    maxUploadBase64 + maxArgsBytes,
		output: outputSchema([]string{"path", "size"},
			stringParam("path", "Where the file was written.", 0, 0),
			param{name: "size", typ: "integer", desc: "The bytes written."},
		),
		codes: readCodes,
		run: func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
			var a struct {
				Device  string `json:"device"`
				Path    string `json:"path"`
				Content string `json:"content_base64"`
			}
			if err := c.bind(&a); err != nil {
				return nil, err
			}
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
			return textResult(fmt.Sprintf("Wrote %d bytes to %s in %s's Pinky folder.", n, a.Path, a.Device),
				map[string]any{"path": a.Path, "size": n}), nil
		},
	})
}
