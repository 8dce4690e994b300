package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	mcp      *server.MCPServer
	http     *server.StreamableHTTPServer
	versions *sessionVersions // for batches (versions.go)
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
		// Every message on an SSE stream gets an event id and is kept a
		// while, so a client whose stream dropped (in the middle of an
		// approval wait, say) resumes it with Last-Event-ID and gets the
		// progress and the result it missed.
		server.WithEventStore(newEventStore(DefaultEventKeep, DefaultEventSessionBytes, DefaultEventTotalBytes)),
		server.WithStreamableHTTPProtocolVersions(HTTPProtocolVersions...),
	)
	versions := &sessionVersions{}
	versions.hook(srv.GetHooks())
	srv.GetHooks().AddBeforeInitialize(offerHTTPVersions)
	return &HTTPHandler{mcp: srv, http: h, versions: versions}
}

// ServeHTTP serves one MCP request; bodies over the message cap are
// refused, and a POST's body is readied by PrepareRequest. A batch is
// served by serveBatch; an unsupported MCP-Protocol-Version is refused.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r, ok := PrepareRequest(w, r)
	if !ok || refuseVersionHeader(w, r) {
		return
	}
	if isBatch(r) {
		if r.Header.Get("Mcp-Session-Id") == "" {
			writeRPCError(w, batchWithoutSession())
			return
		}
		body, _ := io.ReadAll(r.Body) // readied in memory by PrepareRequest
		h.serveBatch(w, r, body)
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxMessageBytes)
	}
	h.http.ServeHTTP(w, r)
}

type preparedKey struct{}

// PrepareRequest reads the body of a POST, at most MaxMessageBytes, and
// readies it with PrepareMessage: a leading byte-order mark is dropped,
// and a message nested deeper than MaxNesting is answered here with its
// parse error (HTTP 400), as a body that is no JSON is. A batch (a JSON
// array) is passed on for ServeHTTP to serve or refuse by its session's
// protocol version (or for having no session). It returns the
// request to serve, or false when it answered. A request it readied once
// is passed on as it is, so the daemon may call it before its own checks
// of the body and ServeHTTP again after them.
func PrepareRequest(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.Context().Value(preparedKey{}) != nil {
		return r, true
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxMessageBytes))
	if err != nil {
		msg := "Parse error: could not read the request body"
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			msg = fmt.Sprintf("Parse error: the message is larger than %d bytes", maxMessageBytes)
		}
		writeRPCError(w, mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.PARSE_ERROR, msg, nil))
		return nil, false
	}
	if batch, ok := batchBody(body); ok {
		// Its session id may come later: the daemon puts in that of a
		// client that sends none (cli/daemon's sessionless.go).
		r = r.WithContext(context.WithValue(context.WithValue(r.Context(), preparedKey{}, true), batchKey{}, true))
		r.Body = io.NopCloser(bytes.NewReader(batch))
		r.ContentLength = int64(len(batch))
		return r, true
	}
	msg, refused := PrepareMessage(body)
	if refused != nil {
		writeRPCError(w, *refused)
		return nil, false
	}
	r = r.WithContext(context.WithValue(r.Context(), preparedKey{}, true))
	r.Body = io.NopCloser(bytes.NewReader(msg))
	r.ContentLength = int64(len(msg))
	return r, true
}

// writeRPCError answers a JSON-RPC error with HTTP 400.
func writeRPCError(w http.ResponseWriter, e mcp.JSONRPCError) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(e) //nolint:errcheck // the client went away
}

// Close ends every session (calling OnSessionClosed for each) and stops
// the idle sweeper.
func (h *HTTPHandler) Close(ctx context.Context) error {
	return h.http.Shutdown(ctx)
}
