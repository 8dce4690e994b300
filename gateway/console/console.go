package console

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Packets is one viewer's place in a phone screen's live stream.
type Packets interface {
	// Next returns the next packet, or why the stream ended.
	Next(ctx context.Context) (sdk.VideoPacket, error)
	// Close leaves the stream.
	Close()
}

// Config is what the console needs from the daemon. Call is required; a
// nil Mirror, Still, Media, Recording or Export makes its route answer 404.
type Config struct {
	// Addr is HOST:PORT to listen on. HOST must be a loopback address
	// (127.0.0.1, ::1 or localhost); port 0 picks a free one.
	Addr string
	// Call runs one of the daemon's local API methods and returns its
	// result, which is marshalled to JSON, or an error whose message may be
	// shown to the person.
	Call func(ctx context.Context, method string, params json.RawMessage) (any, error)
	// Mirror joins a phone screen's live stream.
	Mirror func(ctx context.Context, device string, display int) (Packets, error)
	// Still takes a JPEG of a phone screen now, for a mirror without video
	// (no broadcast on an iPhone yet, or a driver without video).
	Still func(ctx context.Context, device string, display int) ([]byte, error)
	// Media returns the file (JPEG or PNG) of a screenshot's media id.
	Media func(ctx context.Context, id string) (path string, err error)
	// Recording returns a task's recording (.mp4), or an error when it has none.
	Recording func(ctx context.Context, task string) (path string, err error)
	// Export writes a self-contained report of the tasks into dir, which
	// must not exist or be empty.
	Export func(ctx context.Context, tasks []string, dir string) error
	// Logger receives the console's log; nil discards it.
	Logger *slog.Logger
}

// Methods are the daemon methods POST /api/call runs; others are refused.
var Methods = []string{
	"status",
	"drivers.checks",
	"devices.list",
	"devices.takeover",
	"devices.handback",
	"devices.unlock",
	"devices.input",
	"leases.list",
	"leases.stop",
	"approvals.list",
	"approvals.decide",
	"tasks.list",
	"tasks.show",
	"events.since",
	"settings.get",
	"settings.set",
}

// Limits.
const (
	LinkTTL      = 2 * time.Minute // how long a login link is valid
	maxCallBody  = 1 << 20         // bytes of a POST /api/call body
	cookiePrefix = "pinky_console_"
	wsWriteLimit = 10 * time.Second // a viewer that takes longer to take a packet is dropped
	stillLimit   = 10 * time.Second // a still the phone takes longer to give is not shown
)

//go:embed web
var webFS embed.FS

// Server is the web console. Its methods are safe for concurrent use.
type Server struct {
	cfg     Config
	log     *slog.Logger
	host    string // the loopback host of Config.Addr, "localhost" mapped to 127.0.0.1
	methods map[string]bool
	static  http.Handler
	now     func() time.Time

	ctx    context.Context // ends every request, WebSocket and long poll on Close
	cancel context.CancelFunc

	mu       sync.Mutex
	addr     string                 // HOST:PORT once listening
	tokens   map[[32]byte]time.Time // login tokens (hashed) → expiry
	sessions map[[32]byte]bool      // session cookies (hashed)
	srv      *http.Server
}

// ErrNotLoopback is returned by New for an address other people could reach.
var ErrNotLoopback = errors.New("the console listens on a loopback address only (127.0.0.1, ::1 or localhost)")

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config) (*Server, error) {
	if cfg.Call == nil {
		return nil, errors.New("console: Config.Call is required")
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("console: address %q: %w", cfg.Addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("console: address %q: %w", cfg.Addr, ErrNotLoopback)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sub, err := fs.Sub(webFS, "web")
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:      cfg,
		log:      log,
		host:     host,
		methods:  make(map[string]bool, len(Methods)),
		static:   http.FileServerFS(sub),
		now:      time.Now,
		tokens:   make(map[[32]byte]time.Time),
		sessions: make(map[[32]byte]bool),
	}
	for _, m := range Methods {
		s.methods[m] = true
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Start listens on Config.Addr and serves in the background. It returns the
// address it listens on.
func (s *Server) Start() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return "", errors.New("console: already started")
	}
	if s.ctx.Err() != nil {
		return "", errors.New("console: closed")
	}
	_, port, _ := net.SplitHostPort(s.cfg.Addr)
	ln, err := net.Listen("tcp", net.JoinHostPort(s.host, port))
	if err != nil {
		return "", fmt.Errorf("console: %w", err)
	}
	s.addr = ln.Addr().String()
	s.srv = &http.Server{
		Handler:           s.handler(),
		ReadHeaderTimeout: 10 * time.Second,
		// No WriteTimeout: long polls, videos and the mirror run long. They
		// end with their request's context, which Close cancels.
		BaseContext: func(net.Listener) context.Context { return s.ctx },
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	srv := s.srv
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("console stopped", "err", err)
		}
	}()
	s.log.Info("console listening", "addr", s.addr)
	return s.addr, nil
}

// Addr returns the address the server listens on, "" before Start.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Close stops the server and ends every open request, long poll and
// WebSocket at once. Sessions are forgotten.
func (s *Server) Close() error {
	s.cancel()
	s.mu.Lock()
	srv := s.srv
	s.sessions = make(map[[32]byte]bool)
	s.tokens = make(map[[32]byte]time.Time)
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	// Close does not end hijacked connections (WebSockets); cancelling
	// s.ctx above does, through their request contexts.
	return srv.Close()
}

// handler returns the console's HTTP handler with every security check in
// front of the routes.
func (s *Server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", s.handleLogin)
	mux.HandleFunc("POST /api/call", s.handleCall)
	mux.HandleFunc("GET /media/{id}", s.handleMedia)
	mux.HandleFunc("GET /recordings/{file}", s.handleRecording)
	mux.HandleFunc("GET /export", s.handleExport)
	mux.HandleFunc("GET /ws/mirror/{device}", s.handleMirror)
	mux.HandleFunc("GET /still/{device}", s.handleStill)
	mux.HandleFunc("GET /{$}", s.handleIndex)
	mux.Handle("GET /static/", http.StripPrefix("/static", s.static))
	return s.guard(mux)
}

func (s *Server) handleIndex(w http.ResponseWriter, r *http.Request) {
	b, err := webFS.ReadFile("web/index.html")
	if err != nil {
		http.Error(w, "missing page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b) //nolint:errcheck // the client went away
}
