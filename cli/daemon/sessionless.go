package daemon

// Sessionless clients over HTTP. Some hosted agents send every request
// without an Mcp-Session-Id, and some send a new initialize before each
// call. Pinky's leases belong to sessions, so rather than refusing such a
// client it keeps a session for it: one per client, the token it presents
// and its User-Agent together. A request without a session id goes into
// that session, its id put in the header as if the client had sent it.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
)

// maxSessionlessClients caps the clients kept; the one unused longest is
// forgotten first (its session then ends when it idles out, as any).
const maxSessionlessClients = 256

// DefaultSessionlessName is the client name of a sessionless client that
// never sent initialize, when it sends no User-Agent either.
const DefaultSessionlessName = "sessionless HTTP client"

// sessionless keeps the session of each client that sends no session id.
type sessionless struct {
	// serve is the MCP handler that requests, the client's own and those
	// made for it, go to.
	serve    http.Handler
	sessions *httpSessions

	mu      sync.Mutex
	clients map[string]*slClient
	minted  map[string]string // session id → client key, of the sessions made for id-less requests
}

// slClient is one sessionless client's sessions.
type slClient struct {
	key  string
	name string // for a session made for it, when it never initialized
	mu   sync.Mutex
	// current is the session its id-less requests go to.
	current string
	// newest is the session of its newest initialize sent without a
	// session id, until a request claims it (sends its id) or it becomes
	// current.
	newest string
	used   time.Time
}

func newSessionless(serve http.Handler, sessions *httpSessions) *sessionless {
	return &sessionless{serve: serve, sessions: sessions, clients: map[string]*slClient{}, minted: map[string]string{}}
}

// clientKey is who a request without a session id comes from: the token it
// presents (its principal) and its User-Agent.
func clientKey(r *http.Request) string {
	return principal(r.Context()) + "\x00" + r.Header.Get("User-Agent")
}

// client returns the kept client of key, making it when new.
func (s *sessionless) client(key, userAgent string) *slClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.clients[key]
	if c == nil {
		if len(s.clients) >= maxSessionlessClients {
			s.forgetOldestLocked()
		}
		c = &slClient{key: key, name: clientName(userAgent)}
		s.clients[key] = c
	}
	c.used = time.Now()
	return c
}

func (s *sessionless) forgetOldestLocked() {
	var oldest *slClient
	for _, c := range s.clients {
		if oldest == nil || c.used.Before(oldest.used) {
			oldest = c
		}
	}
	if oldest != nil {
		delete(s.clients, oldest.key)
	}
}

// clientName is the name a sessionless client that never initialized is
// known by: its User-Agent's first word, printable and short.
func clientName(userAgent string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(userAgent), " ")
	name = strings.Map(func(r rune) rune {
		if unicode.IsPrint(r) && r < unicode.MaxASCII {
			return r
		}
		return -1
	}, name)
	if len(name) > 64 {
		name = name[:64]
	}
	if name == "" {
		return DefaultSessionlessName
	}
	return name
}

// claim notes a request that carries session id sid: a session of an
// id-less initialize whose id the client then sent is the client's own,
// no longer one for its id-less requests.
func (s *sessionless) claim(sid string) {
	if c := s.owner(sid, false); c != nil {
		c.mu.Lock()
		if c.newest == sid {
			c.newest = ""
		}
		c.mu.Unlock()
	}
}

// forget drops a session that ended (mcpserver's OnSessionClosed).
func (s *sessionless) forget(sid string) {
	if c := s.owner(sid, true); c != nil {
		c.mu.Lock()
		if c.current == sid {
			c.current = ""
		}
		if c.newest == sid {
			c.newest = ""
		}
		c.mu.Unlock()
	}
}

// owner returns the client for whose id-less requests session sid was
// made, or nil; drop forgets that it was.
func (s *sessionless) owner(sid string, drop bool) *slClient {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, ok := s.minted[sid]
	if !ok {
		return nil
	}
	if drop {
		delete(s.minted, sid)
	}
	return s.clients[key]
}

// serveHTTP serves a request that carries no session id, and reports
// whether it did (false: the request is not one it handles, such as a
// POST of another method than MCP's).
func (s *sessionless) serveHTTP(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet, http.MethodDelete:
		c := s.client(clientKey(r), r.Header.Get("User-Agent"))
		var sid string
		var err error
		c.mu.Lock()
		current := c.current
		c.mu.Unlock()
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-ID") != "" && current != "" {
			// A resume is of a stream of the session it has: a newer
			// initialize must not end that session first.
			sid = current
		} else if r.Method == http.MethodDelete {
			// A DELETE ends the client's session, if it has one.
			sid = current
			if sid == "" {
				writeJSONError(w, http.StatusNotFound, "no_session", "this client has no session to end")
				return true
			}
		} else if sid, err = s.session(r, c); err != nil {
			writeJSONError(w, http.StatusInternalServerError, "internal", "could not open a session for this client: "+err.Error())
			return true
		}
		r.Header.Set("Mcp-Session-Id", sid)
		w.Header().Set("Mcp-Session-Id", sid)
		s.serve.ServeHTTP(w, r)
		return true
	default:
		return false
	}
	body, err := readBody(r)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "bad_request", "could not read the request body")
		return true
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	json.Unmarshal(body, &msg) //nolint:errcheck // a batch or bad JSON: served as any request
	switch {
	case msg.Method == "initialize":
		// Served as it is; its session becomes the one the client's next
		// id-less request goes into, unless a request claims it first.
		rec := &sidWriter{ResponseWriter: w}
		s.serve.ServeHTTP(rec, r)
		if sid := rec.Header().Get("Mcp-Session-Id"); sid != "" && rec.status < 300 {
			c := s.client(clientKey(r), r.Header.Get("User-Agent"))
			s.mu.Lock()
			s.minted[sid] = c.key
			s.mu.Unlock()
			c.mu.Lock()
			c.newest = sid
			c.mu.Unlock()
		}
		return true
	case msg.Method == "notifications/initialized" && len(msg.ID) == 0:
		// The session it would confirm is initialized already.
		w.WriteHeader(http.StatusAccepted)
		return true
	}
	sid, err := s.session(r, s.client(clientKey(r), r.Header.Get("User-Agent")))
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "internal", "could not open a session for this client: "+err.Error())
		return true
	}
	// The answer names the session, for a client that wants to send it
	// from now on (and a GET with Last-Event-ID and no id resumes in it
	// all the same).
	r.Header.Set("Mcp-Session-Id", sid)
	w.Header().Set("Mcp-Session-Id", sid)
	s.serve.ServeHTTP(w, r)
	return true
}

// session returns the session c's id-less requests go into: its newest
// unclaimed initialize's, else the one it has, else one made for it now.
// When a newer initialize's session takes over, the older session ends,
// and its leases move to the newer as they do for any new session of the
// same agent.
func (s *sessionless) session(r *http.Request, c *slClient) (string, error) {
	c.mu.Lock()
	if c.newest != "" && c.newest != c.current {
		old := c.current
		c.current, c.newest = c.newest, ""
		cur := c.current
		c.mu.Unlock()
		if old != "" {
			// Ending old calls forget, which takes c.mu: not held here.
			s.end(r, old)
			s.sessions.resume(cur)
		}
		return cur, nil
	}
	defer c.mu.Unlock()
	if c.current != "" {
		return c.current, nil
	}
	// c.mu stays held while the session is made, so that two id-less
	// requests at once make one.
	sid, err := s.open(r, c.name)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.minted[sid] = c.key
	s.mu.Unlock()
	c.current = sid
	return sid, nil
}

// open makes a session for a client that never initialized: an initialize
// with name as its clientInfo, at the oldest protocol version Pinky
// speaks (what a request without MCP-Protocol-Version is read as), then
// its notifications/initialized.
func (s *sessionless) open(r *http.Request, name string) (string, error) {
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":"pinky-sessionless","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":%q,"version":""}}}`, name)
	rec := newRecorder()
	s.serve.ServeHTTP(rec, internalPost(r, init, ""))
	sid := rec.header.Get("Mcp-Session-Id")
	if rec.status != http.StatusOK || sid == "" {
		return "", fmt.Errorf("initialize: HTTP %d: %s", rec.status, strings.TrimSpace(rec.body.String()))
	}
	rec = newRecorder()
	s.serve.ServeHTTP(rec, internalPost(r, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid))
	if rec.status >= 300 {
		return "", fmt.Errorf("notifications/initialized: HTTP %d", rec.status)
	}
	return sid, nil
}

// end ends session sid, as the client's DELETE would.
func (s *sessionless) end(r *http.Request, sid string) {
	req, _ := http.NewRequestWithContext(internalContext(r), http.MethodDelete, MCPPath, nil)
	req.Host, req.RemoteAddr = r.Host, r.RemoteAddr
	req.Header.Set("Mcp-Session-Id", sid)
	s.serve.ServeHTTP(newRecorder(), req)
}

// internalPost is a POST of body, made by the daemon for the client of r:
// who its token names, its Host and remote address. Nothing else of r's
// context goes with it (what PrepareRequest noted of r's own body).
func internalPost(r *http.Request, body, sid string) *http.Request {
	req, _ := http.NewRequestWithContext(internalContext(r), http.MethodPost, MCPPath, strings.NewReader(body))
	req.Host, req.RemoteAddr = r.Host, r.RemoteAddr
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return req
}

// internalContext is the context of a request the daemon makes for r's
// client: who r's token names, and nothing else of r's.
func internalContext(r *http.Request) context.Context {
	return context.WithValue(context.Background(), principalKey{}, principal(r.Context()))
}

// readBody reads a POST's body (capped already by mcpserver's
// PrepareRequest) and puts it back for the handler.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(data))
	return data, nil
}

// sidWriter remembers the status a handler answered with.
type sidWriter struct {
	http.ResponseWriter
	status int
}

func (w *sidWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *sidWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *sidWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *sidWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// recorder is a ResponseWriter kept in memory, for the requests the daemon
// makes for a client.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Flush() {}
