package daemon

// MCP over Streamable HTTP, for agents on other hosts (`pinky daemon
// --http ADDR`): a bearer-token check in front of mcpserver's HTTP handler,
// and the agent sessions of its MCP sessions, whose leases wait for the
// agent for a grace period when a session ends.

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/mcpserver"
)

// MCPPath is the path of MCP over HTTP: agents use http://HOST:PORT/mcp.
const MCPPath = "/mcp"

// DefaultResumeGrace is how long the leases of an HTTP session that ended
// wait for a new session of the same agent (Config.HTTPResumeGrace).
const DefaultResumeGrace = 2 * time.Minute

// HTTP server limits. There is no ReadTimeout or WriteTimeout: a tool call
// may wait minutes (phone_ask_person, phone_approval) and a GET stream
// lasts as long as its session, and net/http would cut both. Headers must
// arrive promptly, and a body is read only once the token is checked (and
// then is capped by mcpserver).
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpIdleTimeout       = 2 * time.Minute
	httpMaxHeaderBytes    = 64 << 10
)

// CheckHTTPAddr checks the address of MCP over HTTP: HOST:PORT, on a
// loopback address (127.0.0.0/8, ::1, localhost) unless allowRemote. An
// address without a host (":8765") listens on every interface, so it is
// not loopback.
func CheckHTTPAddr(addr string, allowRemote bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("MCP over HTTP address %q: want HOST:PORT, e.g. 127.0.0.1:8765", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("MCP over HTTP address %q: the port must be a number from 0 to 65535", addr)
	}
	if allowRemote || isLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("MCP over HTTP at %q would be reachable from other computers, with the bearer token as its only "+
		"protection, sent in clear text over plain HTTP. Listen on a loopback address (e.g. 127.0.0.1:8765) with a "+
		"TLS-terminating proxy in front, or pass --allow-remote to accept the risk", addr)
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// compareTokens compares the hashes of two tokens in constant time; a
// variable so that a test can see every check go through it.
var compareTokens = subtle.ConstantTimeCompare

// authWarnEvery limits the warnings about refused requests: a scanner must
// not flood the log.
const authWarnEvery = 10 * time.Second

// tokenAuth checks the bearer token of each request. It re-reads the token
// file when the file changes (a new inode, size, modification time, mode
// or owner), so `pinky token --rotate` takes effect at the daemon's next
// request, and a token file made readable by others is refused from then
// on. Token values never reach the log; the file's errors do.
type tokenAuth struct {
	path string
	log  *slog.Logger

	mu      sync.Mutex
	fi      os.FileInfo       // of the token loaded; nil when none is
	sum     [sha256.Size]byte // SHA-256 of the token
	id      string            // who the token identifies, for resume keys
	loadErr error             // why there is no token

	warnMu     sync.Mutex
	warned     time.Time // last warning about a refused request
	suppressed int       // refusals since, not logged
}

// current returns the hash and identity of the current token.
func (a *tokenAuth) current() ([sha256.Size]byte, string, error) {
	fi, statErr := os.Stat(a.path)
	a.mu.Lock()
	defer a.mu.Unlock()
	if statErr == nil && a.fi != nil && home.SameTokenFile(fi, a.fi) {
		return a.sum, a.id, nil
	}
	tok, tfi, err := home.ReadToken(a.path)
	if err != nil {
		if a.loadErr == nil || a.loadErr.Error() != err.Error() {
			a.log.Error("MCP over HTTP refuses every request: no usable bearer token", "err", err)
		}
		a.fi, a.sum, a.id, a.loadErr = nil, [sha256.Size]byte{}, "", err
		return a.sum, "", err
	}
	sum := sha256.Sum256([]byte(tok))
	if (a.fi != nil && sum != a.sum) || a.loadErr != nil {
		a.log.Info("MCP over HTTP: the bearer token changed; the old one is refused from now on")
	}
	a.fi, a.sum, a.loadErr = tfi, sum, nil
	a.id = "token:" + hex.EncodeToString(a.sum[:8])
	return a.sum, a.id, nil
}

// authorize returns who the request's token identifies, or why it is
// refused.
func (a *tokenAuth) authorize(r *http.Request) (id, refusal string) {
	presented, ok := bearer(r.Header.Get("Authorization"))
	want, id, err := a.current()
	got := sha256.Sum256([]byte(presented))
	// Hashes of equal length compared in constant time: neither the
	// token's bytes nor its length show in the time a refusal takes.
	match := compareTokens(got[:], want[:]) == 1
	switch {
	case err != nil:
		return "", "no_token"
	case !ok:
		return "", "missing"
	case !match:
		return "", "wrong"
	}
	return id, ""
}

func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// refuse answers 401 and logs a warning, at most one per authWarnEvery.
func (a *tokenAuth) refuse(w http.ResponseWriter, r *http.Request, refusal string) {
	msg := "send the bearer token in an Authorization header: Authorization: Bearer <token>; `pinky token` prints it on the daemon's computer"
	challenge := `Bearer realm="pinky"`
	switch refusal {
	case "wrong":
		msg = "the bearer token is wrong or was rotated; `pinky token` prints the current one on the daemon's computer"
		challenge += `, error="invalid_token"`
	case "no_token":
		msg = "the daemon has no usable bearer token; run `pinky token --rotate` on its computer"
	}
	a.logRefusal(r, refusal)
	w.Header().Set("WWW-Authenticate", challenge)
	writeJSONError(w, http.StatusUnauthorized, "unauthorized", msg)
}

// logRefusal logs a refused request, at most one warning per
// authWarnEvery.
func (a *tokenAuth) logRefusal(r *http.Request, refusal string) {
	now := time.Now()
	a.warnMu.Lock()
	logIt := now.Sub(a.warned) >= authWarnEvery
	suppressed := a.suppressed
	if logIt {
		a.warned, a.suppressed = now, 0
	} else {
		a.suppressed++
	}
	a.warnMu.Unlock()
	if logIt {
		a.log.Warn("MCP over HTTP refused a request", "reason", refusal, "remote", r.RemoteAddr, "method", r.Method,
			"path", r.URL.Path, "origin", r.Header.Get("Origin"), "refused_since_last_warning", suppressed)
	}
}

// allowedOrigins returns the host:port pairs of the daemon's own origins
// for its listen addresses: each address's host, 127.0.0.1, [::1] and
// localhost, with its port.
func allowedOrigins(addrs []string) map[string]bool {
	out := map[string]bool{}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil || port == "0" {
			continue
		}
		for _, h := range []string{host, "localhost", "127.0.0.1", "::1"} {
			if h != "" {
				out[strings.ToLower(net.JoinHostPort(h, port))] = true
			}
		}
	}
	return out
}

// originAllowed reports whether an Origin header names one of allowed,
// over http or https. A browser sends an Origin with every request a web
// page makes; agents (MCP client libraries, curl) send none. A page of
// another site must not reach the daemon through the person's browser
// (DNS rebinding, a token pasted into a web tool), so a request with an
// Origin is served only when it is the daemon's own; "null" (a sandboxed
// frame, a file) never is.
func originAllowed(origin string, allowed map[string]bool) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return false
	}
	port := u.Port()
	switch {
	case u.Scheme == "http" && port == "":
		port = "80"
	case u.Scheme == "https" && port == "":
		port = "443"
	case u.Scheme != "http" && u.Scheme != "https":
		return false
	}
	return allowed[strings.ToLower(net.JoinHostPort(u.Hostname(), port))]
}

// quoteOrigin quotes an Origin header for a message, its control
// characters escaped.
func quoteOrigin(s string) string {
	if len(s) > 200 {
		s = s[:200]
	}
	return strconv.Quote(s)
}

func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "message": msg}) //nolint:errcheck // the client went away
}

type principalKey struct{}

// principal is who the request's token identifies ("" when unknown).
func principal(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

// httpConfig configures MCP over HTTP.
type httpConfig struct {
	Agents    *agent.Manager
	TokenPath string
	// Grace is how long the leases of an ended session wait for its agent;
	// zero means DefaultResumeGrace.
	Grace time.Duration
	// IdleTimeout ends an MCP session idle this long (mcpserver's default
	// when zero).
	IdleTimeout time.Duration
	Logger      *slog.Logger
	// Addrs are the addresses MCP over HTTP listens on, as configured and
	// as bound: a browser's Origin naming one of them (or a loopback name
	// with its port) is the daemon's own. See originAllowed.
	Addrs []string
	// Base ends every call when it ends (the daemon stops); nil means
	// never. A call does not end with its client's connection.
	Base context.Context
}

// httpMCP is the daemon's HTTP handler: the Origin and token checks, then
// MCP at MCPPath.
type httpMCP struct {
	auth        *tokenAuth
	sessions    *httpSessions
	sessionless *sessionless
	mcp         *mcpserver.HTTPHandler
	mux         *http.ServeMux
	origins     map[string]bool // host:port of the origins allowed
	base        context.Context // the daemon's: a call ends with it
}

func newHTTPMCP(cfg httpConfig) *httpMCP {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	grace := cfg.Grace
	if grace <= 0 {
		grace = DefaultResumeGrace
	}
	sessions := &httpSessions{agents: cfg.Agents, grace: grace, log: log, byID: map[string]*agent.Session{}, uploads: newUploadLinks()}
	base := cfg.Base
	if base == nil {
		base = context.Background()
	}
	h := &httpMCP{
		auth:     &tokenAuth{path: cfg.TokenPath, log: log},
		sessions: sessions,
		mux:      http.NewServeMux(),
		origins:  allowedOrigins(cfg.Addrs),
		base:     base,
	}
	h.sessionless = newSessionless(http.HandlerFunc(h.serve), sessions)
	h.mcp = mcpserver.NewHTTPHandler(sessions, mcpserver.Options{
		Version: Version, Logger: log, HTTPIdleTimeout: cfg.IdleTimeout,
		OnInitialize: sessions.initialized,
		OnSessionClosed: func(id string) {
			sessions.closed(id)
			h.sessionless.forget(id)
		},
	})
	h.mux.Handle(MCPPath, http.HandlerFunc(h.serveMCP))
	h.mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusNotFound, "not_found", "MCP is served at "+MCPPath)
	})
	return h
}

// ServeHTTP checks the Origin of every request, then the bearer token,
// before anything else, except an upload link's token: its link is its
// credential (upload.go).
func (h *httpMCP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, h.origins) {
		h.auth.logRefusal(r, "foreign_origin")
		writeJSONError(w, http.StatusForbidden, "forbidden_origin", "MCP over HTTP refuses requests from web pages of other sites "+
			"(Origin "+quoteOrigin(o)+"): an agent sends no Origin header, or one naming this daemon's own address")
		return
	}
	if strings.HasPrefix(r.URL.Path, UploadPath) {
		h.serveUpload(w, r)
		return
	}
	id, refusal := h.auth.authorize(r)
	if refusal != "" {
		h.auth.refuse(w, r, refusal)
		return
	}
	h.mux.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, id)))
}

func (h *httpMCP) serveMCP(w http.ResponseWriter, r *http.Request) {
	// The body is readied (a byte-order mark dropped, deep nesting
	// refused) before it is read to see whether it is initialize.
	r, ok := mcpserver.PrepareRequest(w, r)
	if !ok {
		return
	}
	if r.Header.Get("Mcp-Session-Id") == "" {
		if h.sessionless.serveHTTP(w, r) {
			return
		}
	} else {
		h.sessionless.claim(r.Header.Get("Mcp-Session-Id"))
	}
	h.serve(w, r)
}

// serve hands a request to MCP. A POST's call goes on when its client's
// connection drops (a stream cut in the middle of an approval wait): its
// progress and result are kept, for the client to resume the stream with
// Last-Event-ID (mcpserver's event store). It still ends when the daemon
// stops.
func (h *httpMCP) serve(w http.ResponseWriter, r *http.Request) {
	ctx := withUploadBase(r.Context(), r)
	if r.Method == http.MethodPost {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		defer context.AfterFunc(h.base, cancel)()
	}
	h.mcp.ServeHTTP(w, r.WithContext(ctx))
}

// Close ends every MCP session and its leases: the daemon is stopping, so
// nothing waits for an agent to come back.
func (h *httpMCP) Close(ctx context.Context) error {
	h.sessions.stop()
	err := h.mcp.Close(ctx)
	h.sessions.closeAll()
	return err
}

// httpSessions is mcpserver.Sessions over HTTP: one agent session per MCP
// session id, opened at initialize with the client's name and version.
// When an MCP session ends (DELETE, idle timeout), its agent session is
// parked: its leases wait for grace, and a new session of the same agent
// (same token, clientInfo name and version) takes them over. A client
// that names itself nothing never resumes: nameless clients cannot be told
// apart.
type httpSessions struct {
	agents *agent.Manager
	grace  time.Duration
	log    *slog.Logger

	mu       sync.Mutex
	byID     map[string]*agent.Session // by MCP session id
	stopping bool                      // the daemon stops: close, never park

	uploads *uploadLinks // one-time upload links of the sessions
}

var _ mcpserver.Sessions = (*httpSessions)(nil)

// resumeKey is who may resume an agent's leases: the token it connected
// with, and its name and version.
func resumeKey(principal string, c agent.Client) string {
	if principal == "" || c.Name == "" {
		return ""
	}
	return principal + "\x00" + c.Name + "\x00" + c.Version
}

// Session implements mcpserver.Sessions.
func (h *httpSessions) Session(ctx context.Context) (mcpserver.Session, error) {
	id := mcpserver.SessionID(ctx)
	if id == "" {
		return nil, errors.New("an MCP call over HTTP without a session")
	}
	h.mu.Lock()
	s := h.byID[id]
	h.mu.Unlock()
	if s == nil {
		// The client did not say who it is at initialize: a session of an
		// unknown agent.
		var err error
		if s, err = h.open(ctx, id, agent.Client{}); err != nil {
			return nil, err
		}
	}
	return httpSession{Session: s, mcpID: id, h: h}, nil
}

// current reports whether s is still the agent session of the MCP session
// id: an upload link dies with the session that made it.
func (h *httpSessions) current(id string, s *agent.Session) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.byID[id] == s
}

// initialized is mcpserver's OnInitialize: the agent session starts, and
// takes over the leases its agent's last session left parked.
func (h *httpSessions) initialized(ctx context.Context, c agent.Client) {
	id := mcpserver.SessionID(ctx)
	if id == "" {
		return
	}
	s, err := h.open(ctx, id, c)
	if err != nil {
		h.log.Error("opening an agent session", "err", err)
		return
	}
	n := s.Resume()
	h.log.Info("agent connected", "agent", c.Name, "version", c.Version, "session", s.ID(), "transport", "http", "resumed_leases", n)
}

// open returns the agent session of an MCP session, opening it when new,
// and names its agent when c does.
func (h *httpSessions) open(ctx context.Context, id string, c agent.Client) (*agent.Session, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.byID[id]
	if s == nil {
		var err error
		if s, err = h.agents.Open(ctx, agent.Client{}, "http"); err != nil {
			return nil, err
		}
		h.byID[id] = s
	}
	if c.Name != "" || c.Version != "" {
		if err := s.SetClient(ctx, c); err != nil {
			return nil, err
		}
		s.SetResumeKey(resumeKey(principal(ctx), c))
	}
	return s, nil
}

// resume hands the agent session of MCP session id the leases its agent's
// last session left parked, as a new session's initialize does.
func (h *httpSessions) resume(id string) {
	h.mu.Lock()
	s := h.byID[id]
	h.mu.Unlock()
	if s == nil {
		return
	}
	if n := s.Resume(); n > 0 {
		h.log.Info("agent's leases moved to its newest session", "agent", s.Client().Name, "session", s.ID(), "transport", "http", "resumed_leases", n)
	}
}

// closed is mcpserver's OnSessionClosed.
func (h *httpSessions) closed(id string) {
	h.mu.Lock()
	s := h.byID[id]
	delete(h.byID, id)
	stopping := h.stopping
	h.mu.Unlock()
	h.uploads.dropSession(id)
	if s == nil {
		return
	}
	if stopping {
		s.Close()
		return
	}
	n := h.agents.Park(s, h.grace)
	h.log.Info("agent disconnected", "agent", s.Client().Name, "session", s.ID(), "transport", "http", "leases_waiting", n)
}

func (h *httpSessions) stop() {
	h.mu.Lock()
	h.stopping = true
	h.mu.Unlock()
}

// closeAll closes the sessions mcpserver did not report closed.
func (h *httpSessions) closeAll() {
	h.mu.Lock()
	ss := h.byID
	h.byID = map[string]*agent.Session{}
	h.mu.Unlock()
	for _, s := range ss {
		s.Close()
	}
}

// startHTTP serves MCP over HTTP at cfg.HTTPAddr until the returned stop
// is called. Calls in flight end with ctx.
func (g *Gateway) startHTTP(ctx context.Context) (stop func(), err error) {
	if _, err := home.EnsureToken(g.cfg.Dirs.Token()); err != nil {
		return nil, fmt.Errorf("MCP over HTTP: %w", err)
	}
	lis, err := net.Listen("tcp", g.cfg.HTTPAddr)
	if err != nil {
		return nil, fmt.Errorf("MCP over HTTP: %w", err)
	}
	h := newHTTPMCP(httpConfig{Agents: g.agents, TokenPath: g.cfg.Dirs.Token(), Grace: g.cfg.HTTPResumeGrace, Logger: g.log,
		Addrs: []string{g.cfg.HTTPAddr, lis.Addr().String()}, Base: ctx})
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(g.log.Handler(), slog.LevelDebug),
	}
	g.httpAddr = lis.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(lis); !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("MCP over HTTP stopped", "err", err)
		}
	}()
	host, _, _ := net.SplitHostPort(g.httpAddr)
	g.log.Info("MCP over HTTP", "url", "http://"+g.httpAddr+MCPPath, "loopback_only", isLoopbackHost(host), "token_file", g.cfg.Dirs.Token())
	return func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Close(sctx); err != nil {
			g.log.Warn("closing the MCP sessions over HTTP", "err", err)
		}
		if err := srv.Shutdown(sctx); err != nil {
			srv.Close()
		}
		<-done
	}, nil
}
