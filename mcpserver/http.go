package mcpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// DefaultHTTPIdleTimeout is how long an HTTP MCP session may sit idle
// before it is closed (and OnSessionClosed called), when
// Options.HTTPIdleTimeout is zero.
const DefaultHTTPIdleTimeout = 30 * time.Minute

// HTTPHandler serves MCP over Streamable HTTP. The daemon mounts it (at
// /mcp) behind its bearer-token check.
type HTTPHandler struct {
	mcp  *server.MCPServer
	http *server.StreamableHTTPServer
}

// NewHTTPHandler returns a Streamable HTTP handler for Pinky's tools.
//
// Each MCP session (the Mcp-Session-Id minted at initialize) is one agent
// session: sessions maps SessionID(ctx) to the gateway's agent session,
// OnInitialize tells the daemon who the client is, and OnSessionClosed
// tells it the session ended (DELETE, idle timeout, Close). Session ids are
// checked: an id the handler did not mint, or one that ended, is refused.
//
// Leases belong to sessions, so only the protocol versions with sessions
// (up to 2025-11-25) are offered; the stateless 2026-07-28 core has no
// session to hold a lease.
func NewHTTPHandler(sessions Sessions, opts Options) *HTTPHandler {
	idleTimeout := opts.HTTPIdleTimeout
	if idleTimeout <= 0 {
		idleTimeout = DefaultHTTPIdleTimeout
	}
	srv := New(sessions, opts)
	h := server.NewStreamableHTTPServer(srv,
		server.WithStateful(true),
		server.WithSessionIdleTTL(idleTimeout),
		server.WithStreamableHTTPLogger(opts.logger()),
		server.WithStreamableHTTPProtocolVersions(
			mcp.ProtocolVersion20251125,
			mcp.ProtocolVersion20250618,
			mcp.ProtocolVersion20250326,
		),
	)
	return &HTTPHandler{mcp: srv, http: h}
}

// ServeHTTP serves one MCP request; bodies over the message cap are refused.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxMessageBytes)
	}
	h.http.ServeHTTP(w, r)
}

// Close ends every session (calling OnSessionClosed for each) and stops
// the idle sweeper.
func (h *HTTPHandler) Close(ctx context.Context) error {
	return h.http.Shutdown(ctx)
}
