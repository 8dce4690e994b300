package wdad

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

// Config says which phone a Server serves and how.
type Config struct {
	// Driver is the sim driver (in process).
	Driver *sim.Driver
	// DeviceID names the phone; empty picks the world's first iOS phone.
	DeviceID string
	// Scale is how many pixels make a point; 0 means 3, an iPhone 15 Pro's.
	Scale int
	// MJPEG also serves WebDriverAgent's MJPEG screen stream on a second
	// listener (MJPEGAddr), on the same host and a free port.
	MJPEG bool
	// WorldDir is the folder of the world file: captured WebDriverAgent
	// sources that the world's dump: entries name are read from there to be
	// served byte for byte. Empty is the working directory; a file that
	// cannot be read makes /source fall back to a built tree.
	WorldDir string
	// Logger gets debug and error logs; nil discards them.
	Logger *slog.Logger
	// Timing is how long the page source, gestures and screenshots take;
	// the zero value answers at once (timing.Phone takes a real phone's time).
	Timing timing.Profile
}

// Server is an emulated WebDriverAgent for one virtual iPhone, listening on
// HTTP like the real one on port 8100.
type Server struct {
	cfg    Config
	d      *sim.Driver
	id     string
	dev    sdk.Device
	log    *slog.Logger
	scale  float64
	natW   int // the phone's screen in pixels, upright (orientation.go)
	natH   int
	ln     net.Listener
	srv    *http.Server
	mjpeg  *mjpegServer // nil without Config.MJPEG
	done   chan struct{}
	ctx    context.Context // every request's base; Close cancels it
	cancel context.CancelFunc

	// closeMu orders handlers starting (Add under RLock) before Close
	// waits for them (after setting closing under Lock).
	closeMu  sync.RWMutex
	closing  bool
	inflight sync.WaitGroup
	closed   sync.Once
	closeErr error

	hang  atomic.Bool
	delay atomic.Int64 // time.Duration

	mu       sync.Mutex // guards the fields below
	session  *session
	running  map[string]*appRun // apps seen running, by bundle id
	settings map[string]any
	sources  map[string][]byte // captured sources read from WorldDir, by path
}

// session is a WebDriverAgent session: at most one lives at a time.
type session struct {
	id string
	// bundleID is the app under test ("" when the session attached to
	// whatever was in front); terminate says whether deleting the session
	// terminates it (the shouldTerminateApp capability, default true).
	bundleID  string
	terminate bool
	// quiescence says XCTest waits for the app to be idle before each
	// event (the shouldWaitForQuiescence capability, for a session with
	// an app under test).
	quiescence bool
}

// appRun is what WebDriverAgent knows of a running app.
type appRun struct {
	args []string
	env  map[string]string
}

// Listen starts serving cfg's phone on addr ("127.0.0.1:0" picks a port).
func Listen(addr string, cfg Config) (*Server, error) {
	if cfg.Driver == nil {
		return nil, errors.New("wdad: Config.Driver is required")
	}
	if cfg.Scale < 0 {
		return nil, fmt.Errorf("wdad: scale %d: want 0 (3) or more", cfg.Scale)
	}
	if cfg.Scale == 0 {
		cfg.Scale = 3
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Server{
		cfg: cfg, d: cfg.Driver, log: cfg.Logger, scale: float64(cfg.Scale), done: make(chan struct{}),
		running: map[string]*appRun{}, settings: defaultSettings(), sources: map[string][]byte{},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.findDevice(ctx); err != nil {
		return nil, err
	}
	scr, err := s.d.Screen(ctx, s.id, 0)
	if err != nil {
		return nil, fmt.Errorf("wdad: device %q: %w", s.id, err)
	}
	s.natW, s.natH = scr.Width, scr.Height
	if cur, _, err := s.d.Rotation(ctx, s.id, 0); err == nil && cur%2 == 1 {
		s.natW, s.natH = scr.Height, scr.Width
	}
	s.observe(scr)

	s.ln, err = net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wdad: %w", err)
	}
	if cfg.MJPEG {
		host, _, _ := net.SplitHostPort(s.ln.Addr().String())
		s.mjpeg, err = listenMJPEG(net.JoinHostPort(host, "0"), s)
		if err != nil {
			s.ln.Close()
			return nil, fmt.Errorf("wdad: mjpeg: %w", err)
		}
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.srv = &http.Server{
		Handler:           http.HandlerFunc(s.serveHTTP),
		BaseContext:       func(net.Listener) context.Context { return s.ctx },
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("wdad: serve", "err", err)
		}
	}()
	s.log.Debug("wdad: listening", "addr", s.ln.Addr().String(), "device", s.id)
	return s, nil
}

// findDevice picks the phone from the driver's device list.
func (s *Server) findDevice(ctx context.Context) error {
	devs, err := sdk.ListDevices(ctx, s.d)
	if err != nil {
		return fmt.Errorf("wdad: list devices: %w", err)
	}
	for _, dev := range devs {
		if dev.ID == s.cfg.DeviceID || (s.cfg.DeviceID == "" && dev.Platform == sdk.PlatformIOS) {
			s.dev, s.id = dev, dev.ID
			return nil
		}
	}
	if s.cfg.DeviceID == "" {
		return fmt.Errorf("wdad: the driver has no iOS phone: %w", sdk.ErrDeviceNotFound)
	}
	return fmt.Errorf("wdad: device %q: %w", s.cfg.DeviceID, sdk.ErrDeviceNotFound)
}

// Addr is the address the WebDriverAgent HTTP server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// MJPEGAddr is the address of the MJPEG stream, nil without Config.MJPEG.
func (s *Server) MJPEGAddr() net.Addr {
	if s.mjpeg == nil {
		return nil
	}
	return s.mjpeg.ln.Addr()
}

// Device is the driver's id of the phone served.
func (s *Server) Device() string { return s.id }

// Close stops listening, drops every connection, ends the requests in
// flight (their contexts end) and waits for them and the MJPEG stream.
// Calling it again returns the first call's error.
func (s *Server) Close() error {
	s.closed.Do(func() {
		s.closeMu.Lock()
		s.closing = true
		s.closeMu.Unlock()
		s.cancel()
		err := s.srv.Close()
		<-s.done
		s.inflight.Wait()
		if s.mjpeg != nil {
			if e := s.mjpeg.close(); err == nil {
				err = e
			}
		}
		s.closeErr = err
	})
	return s.closeErr
}

// Restart forgets every session, as when WebDriverAgent is relaunched:
// requests with an old session id then fail with "invalid session id".
// Apps keep running.
func (s *Server) Restart() {
	s.mu.Lock()
	s.session = nil
	s.mu.Unlock()
	s.log.Debug("wdad: restarted; sessions forgotten")
}

// HangSource makes /source (with or without a session) never answer until
// its request is cancelled, like a page source of a busy app that never
// settles; other routes still answer.
func (s *Server) HangSource(on bool) { s.hang.Store(on) }

// SetDelay delays every HTTP response by d (0: none).
func (s *Server) SetDelay(d time.Duration) { s.delay.Store(int64(d)) }

// sessionID is the active session's id, "" without one.
func (s *Server) sessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.session == nil {
		return ""
	}
	return s.session.id
}

// request is one HTTP request on its way to a handler.
type request struct {
	ctx   context.Context
	path  string // the route's path, without /session/{id}
	query url.Values
	args  map[string]any // the JSON body; empty without one
	sess  *session       // the session of a /session/{id}/... route
}

// handler serves one route; the value goes into the envelope's "value".
type handler func(s *Server, r *request) (any, error)

// route is one WebDriverAgent route. Like FBRoute, a route needs a session
// unless bare: with session it is served under /session/{id}, with bare at
// its bare path; many are both.
type route struct {
	method, path  string
	session, bare bool
	h             handler
}

// rawJSON is a handler's value that is already the whole response body.
type rawJSON []byte

// wdaError is a W3C error as WebDriverAgent answers it.
type wdaError struct {
	status int
	code   string
	msg    string
}

func (e *wdaError) Error() string { return e.code + ": " + e.msg }

func invalidArgument(format string, args ...any) *wdaError {
	return &wdaError{http.StatusBadRequest, "invalid argument", fmt.Sprintf(format, args...)}
}

func unknownError(msg string) *wdaError {
	return &wdaError{http.StatusInternalServerError, "unknown error", msg}
}

func invalidElementState(msg string) *wdaError {
	return &wdaError{http.StatusBadRequest, "invalid element state", msg}
}

func sessionNotCreated(msg string) *wdaError {
	return &wdaError{http.StatusInternalServerError, "session not created", msg}
}

var errNoSession = &wdaError{http.StatusNotFound, "invalid session id", "Session does not exist"}

// nsError formats msg the way WebDriverAgent's error messages show an
// NSError's description.
func nsError(msg string) string {
	return fmt.Sprintf("Error Domain=com.facebook.WebDriverAgent Code=1 %q UserInfo={NSLocalizedDescription=%s}", msg, msg)
}

func (s *Server) serveHTTP(w http.ResponseWriter, hr *http.Request) {
	s.closeMu.RLock()
	if s.closing {
		s.closeMu.RUnlock()
		return
	}
	s.inflight.Add(1)
	s.closeMu.RUnlock()
	defer s.inflight.Done()
	start := time.Now()
	ctx := hr.Context()
	if d := time.Duration(s.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
	v, err := s.dispatch(ctx, hr)
	if ctx.Err() != nil {
		// The client is gone (or the server closing): nobody reads an answer.
		s.log.Debug("wdad: request abandoned", "method", hr.Method, "path", hr.URL.Path)
		return
	}
	status := http.StatusOK
	var body []byte
	switch v := v.(type) {
	case rawJSON:
		if err == nil {
			body = v
			break
		}
		body, status = s.envelope(nil, err)
	default:
		body, status = s.envelope(v, err)
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	w.Write(body)
	s.log.Debug("wdad: request", "method", hr.Method, "path", hr.URL.Path, "status", status, "took", time.Since(start))
}

// dispatch finds the route and runs it.
func (s *Server) dispatch(ctx context.Context, hr *http.Request) (any, error) {
	p := hr.URL.Path
	r := &request{ctx: ctx, path: p, query: hr.URL.Query()}
	var sid string
	withSession := false
	if rest, ok := strings.CutPrefix(p, "/session/"); ok && rest != "" {
		id, sub, _ := strings.Cut(rest, "/")
		if sub != "" {
			sub = "/" + sub
		}
		sid, r.path, withSession = id, sub, true
	}
	rt := findRoute(hr.Method, r.path, withSession)
	if rt == nil {
		return nil, &wdaError{http.StatusNotFound, "unknown command",
			fmt.Sprintf("Unhandled endpoint: %s with parameters {\n}", p)}
	}
	if withSession {
		s.mu.Lock()
		sess := s.session
		s.mu.Unlock()
		if sess == nil || sess.id != sid {
			return nil, errNoSession
		}
		r.sess = sess
	}
	if hr.Method == http.MethodPost {
		data, err := io.ReadAll(io.LimitReader(hr.Body, 64<<20))
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &r.args); err != nil || r.args == nil {
				return nil, invalidArgument("The request body is not a JSON object: %v", err)
			}
		}
	}
	if r.args == nil {
		r.args = map[string]any{}
	}
	event := isEvent(rt.path)
	if event && r.sess != nil && r.sess.quiescence {
		// XCTest waits for quiescence before it synthesizes an event,
		// up to waitForIdleTimeout (XCUIApplicationProcess+FBQuiescence).
		if err := s.waitStable(r.ctx, s.seconds("waitForIdleTimeout")); err != nil {
			return nil, s.wdaErr(err)
		}
	}
	if err := s.cost(rt.path).Wait(r.ctx); err != nil {
		return nil, s.wdaErr(err)
	}
	v, err := rt.h(s, r)
	if err != nil {
		return nil, s.wdaErr(err)
	}
	if rt.path == "/actions" {
		// fb_performW3CActions waits for the app to be stable after the
		// actions, up to animationCoolOffTimeout, whatever the session's
		// quiescence (XCUIApplication+FBTouchAction).
		if err := s.waitStable(r.ctx, s.seconds("animationCoolOffTimeout")); err != nil {
			return nil, s.wdaErr(err)
		}
	}
	return v, nil
}

// isEvent reports whether a route synthesizes touch or key events.
func isEvent(path string) bool {
	switch path {
	case "/wda/tap", "/wda/doubleTap", "/wda/touchAndHold", "/wda/dragfromtoforduration", "/wda/swipe", "/actions", "/wda/keys":
		return true
	}
	return false
}

// waitStable models fb_waitUntilStableWithTimeout: XCTest's quiescence
// check (Timing.Quiescence, what it costs on an idle app), then the rest of
// any animation the virtual phone is in, up to timeout. A timeout of 0
// skips it, as WebDriverAgent does. It is part of the timing model: with a
// zero Quiescence (the fast profile) nothing waits, so the fast profile
// answers as it always did.
func (s *Server) waitStable(ctx context.Context, timeout time.Duration) error {
	if timeout <= 0 || s.cfg.Timing.Quiescence == (timing.Range{}) {
		return nil
	}
	if err := s.cfg.Timing.Quiescence.Wait(ctx); err != nil {
		return err
	}
	_, err := s.d.WaitIdle(ctx, s.id, timeout)
	return err
}

// cost is how long a route takes under the timing profile (Config.Timing):
// page sources, gestures and screenshots take a real phone's time; the rest
// answer at once.
func (s *Server) cost(path string) timing.Range {
	t := s.cfg.Timing
	switch path {
	case "/source":
		return t.Source
	case "/screenshot":
		return t.Screenshot
	case "/wda/tap", "/wda/doubleTap", "/wda/touchAndHold", "/wda/dragfromtoforduration", "/wda/swipe", "/actions":
		return t.Tap
	}
	return timing.Range{}
}

func findRoute(method, path string, withSession bool) *route {
	for i := range routes {
		rt := &routes[i]
		if rt.method == method && rt.path == path && ((withSession && rt.session) || (!withSession && rt.bare)) {
			return rt
		}
	}
	return nil
}

// wdaErr turns a driver error into the W3C error WebDriverAgent would give.
func (s *Server) wdaErr(err error) error {
	var we *wdaError
	switch {
	case errors.As(err, &we):
		return we
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	case errors.Is(err, sdk.ErrInvalidArgument):
		return invalidArgument("%s", err.Error())
	}
	s.log.Debug("wdad: driver error", "err", err)
	return unknownError(err.Error())
}

// envelope is WebDriverAgent's response body: {"value": …, "sessionId": …},
// or the W3C error in value, pretty-printed as NSJSONSerialization does.
func (s *Server) envelope(v any, err error) ([]byte, int) {
	status := http.StatusOK
	if err != nil {
		we, ok := err.(*wdaError)
		if !ok {
			we = unknownError(err.Error())
		}
		status = we.status
		v = map[string]any{"error": we.code, "message": we.msg, "traceback": ""}
	}
	var sid any
	if id := s.sessionID(); id != "" {
		sid = id
	}
	return marshal(map[string]any{"value": v, "sessionId": sid}), status
}

// marshal encodes v as NSJSONSerialization's pretty printing does: two
// spaces of indent and " : " between keys and values.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		// Only values built here are encoded; they always encode.
		panic(fmt.Sprintf("wdad: encode response: %v", err))
	}
	out := make([]byte, 0, buf.Len()+buf.Len()/16)
	inString, escaped := false, false
	for _, c := range bytes.TrimRight(buf.Bytes(), "\n") {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && c == ':':
			out = append(out, ' ')
		}
		out = append(out, c)
	}
	return out
}
