package mcpserver

// JSON-RPC batches over HTTP. Protocol version 2025-03-26 lets a client
// POST an array of messages; 2025-06-18 dropped batches. mcp-go takes one
// message per request, so a batch of a 2025-03-26 session is served here,
// each message as a request of its own, and the answers are gathered into
// one array.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// batchBody returns a request body readied as a batch (white space and a
// byte-order mark dropped), when it is one: a JSON array nested no deeper
// than MaxNesting.
func batchBody(body []byte) ([]byte, bool) {
	body = bytes.TrimSpace(body)
	if rest, ok := bytes.CutPrefix(body, bom); ok {
		body = bytes.TrimSpace(rest)
	}
	if len(body) == 0 || body[0] != '[' || tooDeep(body, MaxNesting) || !json.Valid(body) {
		return nil, false
	}
	return body, true
}

type batchKey struct{}

// isBatch reports whether PrepareRequest readied r's body as a batch.
func isBatch(r *http.Request) bool {
	b, _ := r.Context().Value(batchKey{}).(bool)
	return b
}

// sessionVersions is the protocol version each HTTP session negotiated at
// initialize, kept by hooks until the session ends.
type sessionVersions struct{ m sync.Map } // session id → version

func (s *sessionVersions) hook(h *server.Hooks) {
	h.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if id := SessionID(ctx); id != "" && res != nil {
			s.m.Store(id, res.ProtocolVersion)
		}
	})
	h.AddOnUnregisterSession(func(_ context.Context, sess server.ClientSession) {
		s.m.Delete(sess.SessionID())
	})
}

func (s *sessionVersions) of(id string) (string, bool) {
	v, ok := s.m.Load(id)
	if !ok {
		return "", false
	}
	return v.(string), true
}

// serveBatch serves a batch. In a session of 2025-03-26 every message is
// served at once as a request of its own (JSON-RPC lets a batch's answers
// come in any order), and the answers come back as one JSON array, or as
// 202 Accepted when no message was a request. Any other session is refused
// with a JSON-RPC error, and so is a batch without a session: initialize
// may not be part of one.
func (h *HTTPHandler) serveBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	id := r.Header.Get("Mcp-Session-Id")
	version, known := h.versions.of(id)
	switch {
	case id == "":
		writeRPCError(w, batchWithoutSession())
		return
	case !known:
		// As mcp-go answers one message of a session it does not know.
		http.Error(w, "Invalid session ID", http.StatusNotFound)
		return
	case version != batchVersion:
		writeRPCError(w, rpcError(nil, mcp.INVALID_REQUEST, fmt.Sprintf("Invalid Request: this is a JSON-RPC batch, and this session speaks "+
			"protocol version %s, which has none (MCP dropped batches in 2025-06-18): send each message as a request of its own", version)))
		return
	}
	var msgs []json.RawMessage
	if err := json.Unmarshal(body, &msgs); err != nil || len(msgs) == 0 {
		writeRPCError(w, rpcError(nil, mcp.INVALID_REQUEST, "Invalid Request: an empty batch"))
		return
	}
	answers := make([]json.RawMessage, len(msgs))
	var wg sync.WaitGroup
	for i, msg := range msgs {
		wg.Go(func() { answers[i] = h.serveBatched(r, msg) })
	}
	wg.Wait()
	var out []json.RawMessage
	for _, a := range answers {
		if a != nil {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(out) //nolint:errcheck // the client went away
}

// serveBatched serves one message of a batch as a POST of its own and
// returns its answer: nil for a notification or a response the client
// sent, a JSON-RPC response for a request.
func (h *HTTPHandler) serveBatched(r *http.Request, msg json.RawMessage) json.RawMessage {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(msg, &head); err != nil {
		return rpcErrorJSON(nil, mcp.INVALID_REQUEST, "Invalid Request: each message of a batch is a JSON-RPC object")
	}
	isRequest := head.Method != "" && len(head.ID) > 0 && !bytes.Equal(head.ID, []byte("null"))
	if head.Method == string(mcp.MethodInitialize) {
		return rpcErrorJSON(head.ID, mcp.INVALID_REQUEST, "Invalid Request: initialize may not be part of a JSON-RPC batch: send it as a request of its own")
	}
	one := r.Clone(r.Context())
	one.Body = io.NopCloser(bytes.NewReader(msg))
	one.ContentLength = int64(len(msg))
	rec := &batchRecorder{header: http.Header{}, status: http.StatusOK}
	h.http.ServeHTTP(rec, one)
	answer := bytes.TrimSpace(rec.body.Bytes())
	var probe struct {
		JSONRPC string `json:"jsonrpc"`
	}
	switch {
	case rec.status == http.StatusAccepted || !isRequest:
		return nil
	case json.Unmarshal(answer, &probe) == nil && probe.JSONRPC == mcp.JSONRPC_VERSION:
		return answer
	}
	// mcp-go refused the message at the HTTP level (plain text): the
	// request still gets an answer, with what it said.
	return rpcErrorJSON(head.ID, mcp.INVALID_REQUEST, fmt.Sprintf("Invalid Request: HTTP %d: %s", rec.status, clip(string(answer), 200)))
}

// batchRecorder keeps the answer to one message of a batch. It cannot
// flush, so mcp-go answers with JSON and never switches to an event
// stream: the progress of a batched call is not sent.
type batchRecorder struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (b *batchRecorder) Header() http.Header { return b.header }

func (b *batchRecorder) WriteHeader(status int) {
	if !b.wroteHeader {
		b.status, b.wroteHeader = status, true
	}
}

func (b *batchRecorder) Write(p []byte) (int, error) {
	b.wroteHeader = true
	return b.body.Write(p)
}

// batchWithoutSession refuses a batch sent without a session id.
func batchWithoutSession() mcp.JSONRPCError {
	return rpcError(nil, mcp.INVALID_REQUEST, "Invalid Request: this is a JSON-RPC batch, which is served only in a session of protocol version "+
		batchVersion+", and initialize may not be part of one: send initialize as a request of its own, then the batch with its Mcp-Session-Id")
}

func rpcError(id any, code int, msg string) mcp.JSONRPCError {
	return mcp.NewJSONRPCError(mcp.NewRequestId(id), code, msg, nil)
}

// rpcErrorJSON is a JSON-RPC error for the request whose raw id is id
// (nil: null).
func rpcErrorJSON(id json.RawMessage, code int, msg string) json.RawMessage {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string                  `json:"jsonrpc"`
		ID      json.RawMessage         `json:"id"`
		Error   mcp.JSONRPCErrorDetails `json:"error"`
	}{mcp.JSONRPC_VERSION, id, mcp.JSONRPCErrorDetails{Code: code, Message: msg}})
	return b
}
