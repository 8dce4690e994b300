package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// uncertainAdvice is what an agent must do after an action whose outcome
// is unknown.
const uncertainAdvice = "It may or may not have happened; observe before repeating it."

// internalMessage is all an agent learns of an infrastructure fault; the
// detail goes to the log.
const internalMessage = "Pinky hit an internal error and could not finish this call. Try again; if it keeps failing, tell the person."

// errorResult turns a failed call into a tool result for a model: an
// *agent.Error keeps its code and sentence, a bad argument becomes
// invalid_argument, and anything else becomes internal with the detail
// logged, never shown.
func errorResult(ctx context.Context, log *slog.Logger, tool string, err error) *mcp.CallToolResult {
	if e, ok := agent.AsError(err); ok {
		return mcp.NewToolResultError(agentErrorText(e))
	}
	var ae *argError
	if errors.As(err, &ae) {
		return invalidArgument(ae)
	}
	if ctx.Err() != nil {
		// The client cancelled the call or it ran out of time; nobody may
		// read this answer, but an action may have been cut short.
		log.Debug("mcp tool call ended by its context", "tool", tool, "err", err)
		return mcp.NewToolResultError(fmt.Sprintf("%s: the call was cancelled before it finished. %s", agent.CodeUncertain, uncertainAdvice))
	}
	log.Error("mcp tool call failed", "tool", tool, "err", err)
	return mcp.NewToolResultError(fmt.Sprintf("%s: %s", agent.CodeInternal, internalMessage))
}

func agentErrorText(e *agent.Error) string {
	msg := strings.TrimSpace(e.Message)
	switch {
	case msg == "" && e.Code == agent.CodeInternal:
		msg = internalMessage
	case msg == "":
		msg = "the call failed."
	}
	if e.Code == agent.CodeUncertain && !strings.Contains(strings.ToLower(msg), "observe") {
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
		msg += " " + uncertainAdvice
	}
	return string(e.Code) + ": " + msg
}

// observationResult is the result of a call that returns the screen: a
// header line, the screen text, the observation as structured content and
// the screenshot when there is one.
func observationResult(o *agent.Observation) *mcp.CallToolResult {
	if o == nil {
		o = &agent.Observation{}
	}
	var b strings.Builder
	b.WriteString(o.Device)
	if o.Full {
		b.WriteString(" · whole screen")
	} else {
		app := o.App
		if app == "" {
			app = "no app"
		}
		lock := "unlocked"
		if o.Locked {
			lock = "locked"
		}
		fmt.Fprintf(&b, " · %s · %s · changes since your last read", app, lock)
	}
	if !o.Settled {
		b.WriteString(" · still changing (read again for the end state)")
	}
	b.WriteByte('\n')
	text := strings.TrimRight(o.Text, "\n")
	if text == "" && !o.Full {
		text = "(nothing changed)"
	}
	b.WriteString(text)

	res := &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(b.String())},
		StructuredContent: o,
	}
	if len(o.Screenshot) > 0 {
		res.Content = append(res.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(o.Screenshot), "image/jpeg"))
	}
	return res
}

// textResult is a result with text for a model and structured content.
func textResult(text string, structured any) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{mcp.NewTextContent(text)},
		StructuredContent: structured,
	}
}

// progressFor returns a Progress that sends notifications/progress for the
// request's progress token, or nil when the client sent none.
func progressFor(ctx context.Context, req mcp.CallToolRequest) agent.Progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	token := req.Params.Meta.ProgressToken
	var (
		mu   sync.Mutex
		last float64
		sent bool
	)
	return func(done, total float64, message string) {
		mu.Lock()
		defer mu.Unlock()
		// Progress must never go backwards (MCP requires it to increase).
		if sent && done < last {
			done = last
		}
		last, sent = done, true
		params := map[string]any{"progressToken": token, "progress": done}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		// A full notification queue only loses a progress report; the call
		// goes on.
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", params)
	}
}
