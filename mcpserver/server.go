package mcpserver

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// Options configures an MCP server.
type Options struct {
	// Version is the server version reported to clients.
	Version string
	// ReadOnly registers only the tools whose annotations say they only read.
	ReadOnly bool
	// Logger receives infrastructure faults; nil means slog.Default().
	Logger *slog.Logger
	// OnInitialize is called once per MCP session when the client has said
	// who it is (after initialize, or with the first request of a client on
	// the stateless protocol). ctx carries the session: SessionID(ctx).
	OnInitialize func(ctx context.Context, c agent.Client)
	// OnSessionClosed is called when an MCP session ends: its stream closed,
	// or over HTTP the client deleted it or it sat idle too long. The daemon
	// ends the agent session (and its leases' grace) here.
	OnSessionClosed func(sessionID string)
	// HTTPIdleTimeout closes an HTTP session idle this long (NewHTTPHandler
	// only); zero means DefaultHTTPIdleTimeout. A call still running counts
	// as activity only when it starts, so keep it above the longest wait.
	HTTPIdleTimeout time.Duration
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// Instructions is what the server tells a client about itself at
// initialize: the essentials of docs/SKILL.md.
const Instructions = `Pinky lets you use the person's phones. The person sees and records everything you do, and may have to approve some actions.
1. phone_list, then phone_connect with a one-sentence task (device optional when one phone is free). phone_release when done.
2. The screen is text: an app line, then one line per element with a ref, e.g. [3] button "Send". Aim by ref (ref: 3); else by text (+ occurrence); x,y only as a last resort.
3. Every action returns only what changed (+ added, - gone, ~ changed). phone_observe with full: true re-reads the whole screen.
4. uncertain means the action may or may not have happened: observe before repeating it.
5. approval_pending: call phone_approval with the id; do not repeat the action. If refused, do not work around it.
6. Never type passwords or one-time codes and never decide for the person: use phone_ask_person.
7. Wait with phone_wait_for, not by polling.`

// New returns an MCP server with Pinky's tools, whose calls go to the
// Session that sessions finds for them.
func New(sessions Sessions, opts Options) *server.MCPServer {
	return newServer(sessions, opts)
}

// newServer is New with extra mcp-go options, for tests.
func newServer(sessions Sessions, opts Options, extra ...server.ServerOption) *server.MCPServer {
	log := opts.logger()
	hooks := &server.Hooks{}
	var seen sync.Map // session id → struct{}: OnInitialize was called
	report := func(ctx context.Context) {
		if opts.OnInitialize == nil {
			return
		}
		sess := server.ClientSessionFromContext(ctx)
		if sess == nil {
			return
		}
		withInfo, ok := sess.(server.SessionWithClientInfo)
		if !ok {
			return
		}
		info := withInfo.GetClientInfo()
		if info.Name == "" && info.Version == "" {
			return
		}
		if _, loaded := seen.LoadOrStore(sess.SessionID(), struct{}{}); loaded {
			return
		}
		opts.OnInitialize(ctx, agentClient(info))
	}
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, _ *mcp.InitializeResult) {
		report(ctx)
	})
	// Clients on the stateless protocol (2026-07-28) never send initialize;
	// their identity comes with each request and mcp-go stores it on the
	// session before any hook runs.
	hooks.AddBeforeAny(func(ctx context.Context, _ any, method mcp.MCPMethod, _ any) {
		if method != mcp.MethodInitialize {
			report(ctx)
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		seen.Delete(sess.SessionID())
		if opts.OnSessionClosed != nil {
			opts.OnSessionClosed(sess.SessionID())
		}
	})

	serverOpts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithInstructions(Instructions),
		server.WithTitle("Pinky"),
		server.WithHooks(hooks),
		// Each session is answered as its protocol version says: no
		// output schemas or structured content before 2025-06-18
		// (versions.go).
		server.WithToolFilter(outputSchemasFor),
		server.WithToolHandlerMiddleware(structuredContentFor),
	}
	serverOpts = append(serverOpts, extra...)
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s := server.NewMCPServer("pinky", version, serverOpts...)
	for _, t := range Tools(opts.ReadOnly) {
		s.AddTool(t.Def, t.Handler(sessions, log))
	}
	return s
}

// SessionID returns the MCP session id of a tool call or hook, or "" when
// ctx carries none. Over HTTP it is the Mcp-Session-Id; over a stream, an
// id ServeStream made for the connection.
func SessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// ClientInfo returns who the client of ctx's MCP session said it is.
func ClientInfo(ctx context.Context) (agent.Client, bool) {
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return agent.Client{}, false
	}
	info := s.GetClientInfo()
	if info.Name == "" && info.Version == "" {
		return agent.Client{}, false
	}
	return agentClient(info), true
}

// maxClientName caps, in characters, the name and the version an agent
// gives itself at initialize.
const maxClientName = 100

// agentClient is who an agent says it is, as the gateway keeps it. The
// name is shown to the person everywhere (approval cards, status,
// history) and the agent chooses it, so it is cleaned here, once: every
// control character, bidirectional control and invalid byte becomes a
// visible escape (safetext.Line: "evil\x1b[2J\nfake"), surrounding spaces
// go, and it is cut to maxClientName characters. The session stays
// usable, the person sees that the name was tampered with, and since the
// cleaning depends on the name alone, the same client always gets the
// same name: resuming leases by name (gateway/agent/resume.go) keeps
// working.
func agentClient(info mcp.Implementation) agent.Client {
	return agent.Client{Name: cleanName(info.Name), Version: cleanName(info.Version)}
}

func cleanName(s string) string {
	s = safetext.Line(strings.TrimSpace(s))
	if r := []rune(s); len(r) > maxClientName {
		s = string(r[:maxClientName-1]) + "…"
	}
	return s
}
