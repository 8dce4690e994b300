package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// Argument size limits. The whole arguments object of a call is capped so
// that a runaway client cannot make the gateway hold megabytes of text;
// phone_upload has its own, larger cap for the file it carries.
const (
	maxArgsBytes   = 64 << 10
	maxUploadBytes = 10 << 20
	maxTypedText   = 4096
	maxWaitMillis  = 50_000 // agent.MaxWait
	maxPressMillis = 10_000
)

// Tool is one MCP tool: its static definition, which can be listed,
// snapshotted and documented without a gateway, and the code that runs a
// call against a Session.
type Tool struct {
	// Def is the definition clients see in tools/list.
	Def mcp.Tool
	// Codes are the error codes a call may answer with, for the docs.
	Codes []agent.Code

	params   []param
	maxBytes int // cap on the encoded arguments; 0 means maxArgsBytes
	run      runFunc
}

// ReadOnly reports whether the tool only reads, from its annotations.
func (t Tool) ReadOnly() bool {
	return t.Def.Annotations.ReadOnlyHint != nil && *t.Def.Annotations.ReadOnlyHint
}

// runFunc runs one call whose arguments passed checkArgs.
type runFunc func(ctx context.Context, c *call, args map[string]any) (*mcp.CallToolResult, error)

// call is one tool call: the session it runs on and how it reports
// progress.
type call struct {
	sess     Session
	progress agent.Progress // nil when the client sent no progress token
}

// AllTools is the inventory: every tool Pinky offers, sorted by name.
func AllTools() []Tool {
	tools := []Tool{
		PhoneList(),
		PhoneConnect(),
		PhoneRelease(),
		PhoneObserve(),
		PhoneTap(),
		PhoneLongPress(),
		PhoneSwipe(),
		PhonePinch(),
		PhoneScroll(),
		PhoneType(),
		PhoneKey(),
		PhoneApps(),
		PhoneLaunch(),
		PhoneStopApp(),
		PhoneOpenURL(),
		PhoneWaitFor(),
		PhoneNotifications(),
		PhoneFiles(),
		PhoneUpload(),
		PhoneUploadLink(),
		PhoneAskPerson(),
		PhoneApproval(),
	}
	slices.SortFunc(tools, func(a, b Tool) int {
		switch {
		case a.Def.Name < b.Def.Name:
			return -1
		case a.Def.Name > b.Def.Name:
			return 1
		}
		return 0
	})
	return tools
}

// Tools is the inventory filtered for a server: only the read-only tools
// when readOnly is set.
func Tools(readOnly bool) []Tool {
	var out []Tool
	for _, t := range AllTools() {
		if readOnly && !t.ReadOnly() {
			continue
		}
		out = append(out, t)
	}
	return out
}

// toolSpec is what each tool constructor fills in besides its arguments.
type toolSpec struct {
	name, title, desc string
	readOnly          bool
	destructive       bool
	idempotent        bool
	openWorld         bool
	output            mcp.ToolOutputSchema
	codes             []agent.Code
	maxBytes          int
}

// newTool is the tool s describes, whose arguments are the struct A (see
// args.go): run gets each call's arguments checked and decoded into it.
func newTool[A any](s toolSpec, run func(ctx context.Context, c *call, a A) (*mcp.CallToolResult, error)) Tool {
	params := paramsOf[A]()
	def := mcp.Tool{
		Name:        s.name,
		Title:       s.title,
		Description: s.desc,
		InputSchema: inputSchema(params),
		Annotations: mcp.ToolAnnotation{
			Title:           s.title,
			ReadOnlyHint:    mcp.ToBoolPtr(s.readOnly),
			DestructiveHint: mcp.ToBoolPtr(s.destructive),
			IdempotentHint:  mcp.ToBoolPtr(s.idempotent),
			OpenWorldHint:   mcp.ToBoolPtr(s.openWorld),
		},
		OutputSchema: s.output,
	}
	return Tool{Def: def, Codes: s.codes, params: params, maxBytes: s.maxBytes,
		run: func(ctx context.Context, c *call, args map[string]any) (*mcp.CallToolResult, error) {
			a, err := bind[A](args)
			if err != nil {
				return nil, err
			}
			return run(ctx, c, a)
		}}
}

// Handler is the mcp-go handler of t: it checks the arguments, finds the
// call's Session and runs the call, turning every failure into a tool
// result written for a model.
func (t Tool) Handler(sessions Sessions, log *slog.Logger) server.ToolHandlerFunc {
	if log == nil {
		log = slog.Default()
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (res *mcp.CallToolResult, _ error) {
		defer func() {
			if r := recover(); r != nil {
				res = errorResult(ctx, log, t.Def.Name, fmt.Errorf("panic: %v", r))
			}
		}()
		args, err := t.arguments(req)
		if err != nil {
			return invalidArgument(err), nil
		}
		sess, err := sessions.Session(ctx)
		if err != nil {
			return errorResult(ctx, log, t.Def.Name, err), nil
		}
		c := &call{sess: sess, progress: progressFor(ctx, req)}
		out, err := t.run(ctx, c, args)
		if err != nil {
			return errorResult(ctx, log, t.Def.Name, err), nil
		}
		return out, nil
	}
}

// arguments returns the call's arguments once they pass the size cap and
// the tool's parameters.
func (t Tool) arguments(req mcp.CallToolRequest) (map[string]any, error) {
	limit := t.maxBytes
	if limit == 0 {
		limit = maxArgsBytes
	}
	var args map[string]any
	switch a := req.Params.Arguments.(type) {
	case nil:
		args = map[string]any{}
	case map[string]any:
		args = a
	case json.RawMessage:
		if len(a) > limit {
			return nil, badArg("", "the arguments are %d bytes; the limit is %d", len(a), limit)
		}
		if err := json.Unmarshal(a, &args); err != nil || args == nil {
			return nil, badArg("", "the arguments must be a JSON object")
		}
	default:
		return nil, badArg("", "the arguments must be a JSON object, not %s", jsonType(a))
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, badArg("", "the arguments cannot be encoded as JSON")
	}
	if len(b) > limit {
		return nil, badArg("", "the arguments are %d bytes; the limit is %d", len(b), limit)
	}
	if err := checkArgs(t.params, args); err != nil {
		return nil, err
	}
	return args, nil
}

// invalidArgument is the result for arguments that fail their checks.
func invalidArgument(err error) *mcp.CallToolResult {
	var ae *argError
	msg := err.Error()
	if errors.As(err, &ae) {
		msg = ae.Error()
	}
	return mcp.NewToolResultError(fmt.Sprintf("%s: %s. Fix the arguments and call again.", agent.CodeInvalidArgument, msg))
}
