package wda

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Default deadlines and ports.
const (
	// DefaultTimeout bounds an ordinary request.
	DefaultTimeout = 5 * time.Second
	// DefaultSlowTimeout bounds the slow requests: /source, /screenshot,
	// creating a session, launching or activating an app, opening a URL
	// and unlocking. WDA itself gives a screenshot 20 s.
	DefaultSlowTimeout = 20 * time.Second
	// DefaultPort is WDA's HTTP port, used when the base URL names none.
	DefaultPort = 8100
	// DefaultMJPEGPort is WDA's MJPEG server port.
	DefaultMJPEGPort = 9100
)

// Limits on what a Client reads.
const (
	maxBody     = 4 << 20  // an ordinary answer
	maxSlowBody = 64 << 20 // a page source or a screenshot
	dialTimeout = 5 * time.Second
	// idleTimeout drops idle connections before WDA's HTTP server
	// (CocoaHTTPServer) closes them after 30 s, so a request is rarely
	// written into a connection the phone already gave up.
	idleTimeout = 20 * time.Second
	// typingTime is added to a /wda/keys deadline per character, well
	// above XCTest's pace (WDA's maxTypingFrequency, 60 a second by
	// default): a timeout halfway through would leave half a text typed.
	typingTime = 50 * time.Millisecond
)

// sessionCapabilities attach a session to whatever app is in front without
// relaunching it (forceAppLaunch defaults to true) and without waiting for
// the app to go idle.
const sessionCapabilities = `{"capabilities":{"alwaysMatch":{"forceAppLaunch":false,"shouldWaitForQuiescence":false,"shouldUseTestManagerForVisibilityDetection":false},"firstMatch":[{}]}}`

// Client talks to one WebDriverAgent. It is safe for concurrent use: no
// lock is held across a request, so a slow call does not hold up others
// (WDA itself runs commands one at a time on its main queue, though).
type Client struct {
	base        string // scheme://host:port[/prefix], no trailing slash
	hc          *http.Client
	timeout     time.Duration
	slowTimeout time.Duration
	log         *slog.Logger

	// excluded is the excluded_attributes query of Source, "" for none.
	excluded string

	mu       sync.Mutex     // guards sid, flight and settings
	sid      string         // the current session; "" when none
	flight   *creation      // the session being created, or nil
	settings map[string]any // applied to every new session
}

// creation is one POST /session that concurrent callers share. Its fields
// are written before done is closed and only read after.
type creation struct {
	done chan struct{}
	id   string
	err  error
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the Client send its requests through hc instead of
// its own. The Client's deadlines still apply to every request.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) {
		if hc != nil {
			c.hc = hc
		}
	}
}

// WithTimeout sets the deadline of an ordinary request (default 5 s).
// Gestures and typing get their own duration on top.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithSlowTimeout sets the deadline of the slow requests (default 20 s):
// /source, /screenshot, session creation, app launch and activation,
// opening a URL and unlocking.
func WithSlowTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.slowTimeout = d
		}
	}
}

// WithLogger sets the logger (default slog.Default()). The Client logs each
// request's method, endpoint, status and duration at debug level and
// session changes at info level; it never logs bodies.
func WithLogger(l *slog.Logger) Option {
	return func(c *Client) {
		if l != nil {
			c.log = l
		}
	}
}

// WithSettings makes the Client apply settings (POST
// /session/{id}/appium/settings) to every session it creates, before the
// session's first command: WebDriverAgent resets its settings to their
// defaults whenever a session is created (FBConfiguration
// resetSessionSettings), so settings set once would be lost when WDA
// restarts or another client takes the session over.
func WithSettings(settings map[string]any) Option {
	return func(c *Client) {
		for k, v := range settings {
			c.settings[k] = v
		}
	}
}

// WithExcludedAttributes makes Source ask WDA to leave attrs out of the
// page source (excluded_attributes: WDA computes no attribute it leaves
// out). Names are WDA's: "frame", "nativeFrame", "accessible", "visible"…
func WithExcludedAttributes(attrs ...string) Option {
	return func(c *Client) { c.excluded = strings.Join(attrs, ",") }
}

// New returns a client of the WDA at baseURL, e.g. "http://192.168.1.20:8100".
// The URL must be http with a host; without a port it means port 8100. A
// path is kept as a prefix (WDA behind a reverse proxy). New does not
// connect.
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("wda: base URL %q: %w", baseURL, err)
	}
	switch {
	case u.Scheme != "http":
		return nil, fmt.Errorf("wda: base URL %q: want an http:// URL", baseURL)
	case u.Hostname() == "":
		return nil, fmt.Errorf("wda: base URL %q: no host", baseURL)
	case u.User != nil:
		return nil, fmt.Errorf("wda: base URL %q: WDA takes no user name or password", baseURL)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("wda: base URL %q: no query or fragment allowed", baseURL)
	}
	if u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), fmt.Sprint(DefaultPort))
	}
	u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
	c := &Client{
		base:        u.String(), // re-escapes an IPv6 zone: [fe80::1%25en0]
		timeout:     DefaultTimeout,
		slowTimeout: DefaultSlowTimeout,
		log:         slog.Default(),
		settings:    map[string]any{},
	}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: newTransport(max(c.timeout, c.slowTimeout))}
	}
	return c, nil
}

// newTransport returns a transport for one phone on the local network.
func newTransport(longest time.Duration) *http.Transport {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 15 * time.Second}
	return &http.Transport{
		// No proxy: the phone is on the person's network, and a proxy from
		// the environment could not reach it.
		Proxy:               nil,
		DialContext:         d.DialContext,
		MaxIdleConns:        4,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     idleTimeout,
		// A backstop only: every request has a context deadline.
		ResponseHeaderTimeout: longest + 5*time.Second,
	}
}

// SessionID returns the current session's id, or "" when there is none.
func (c *Client) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sid
}

// Close deletes the current session, if any, after waiting for one being
// created. The Client remains usable: a later session-bound call starts a
// new session.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	f := c.flight
	c.mu.Unlock()
	if f != nil {
		select {
		case <-f.done:
		case <-ctx.Done():
			return fmt.Errorf("wda: close: %w", ctx.Err())
		}
	}
	c.mu.Lock()
	sid := c.sid
	c.sid = ""
	c.mu.Unlock()
	if sid == "" {
		return nil
	}
	c.log.Info("wda session deleted", "session", sid)
	_, err := c.do(ctx, request{method: http.MethodDelete, path: "", idempotent: true}, sid)
	if sessionGone(err) {
		return nil
	}
	return err
}

// request is one call to WDA.
type request struct {
	method string
	// path is the endpoint without the session prefix, e.g. "/wda/tap",
	// possibly with a query.
	path string
	// session makes the request session-bound: /session/{id}{path}.
	session bool
	// orBare falls back to the bare path when no session can be made.
	orBare bool
	// body is sent as JSON; nil sends "{}" on a POST and nothing otherwise.
	body any
	// slow uses the slow timeout and the larger body limit.
	slow bool
	// extra is added to the deadline: a gesture's own duration.
	extra time.Duration
	// idempotent marks a POST that is safe to repeat, so a lost answer
	// is not ErrUncertain.
	idempotent bool
	// secret is text the request carries that must not appear in errors
	// (WDA could echo it in a message).
	secret string
}

// answer is WDA's envelope: {"value": …, "sessionId": …}.
type answer struct {
	Value     json.RawMessage
	SessionID string // the session WDA considers active; "" when none
}

// call sends r, in the Client's session if r is session-bound, and returns
// WDA's answer. When WDA answers that the session is gone, call recreates
// it and sends r once more: WDA rejected the first request, so the retry
// cannot repeat an action.
func (c *Client) call(ctx context.Context, r request) (answer, error) {
	if !r.session {
		return c.do(ctx, r, "")
	}
	for retried := false; ; retried = true {
		sid, err := c.session(ctx)
		if err != nil {
			if r.orBare && ctx.Err() == nil {
				c.log.Debug("wda: no session; using the bare endpoint", "endpoint", r.path)
				return c.do(ctx, r, "")
			}
			return answer{}, err
		}
		v, err := c.do(ctx, r, sid)
		if retried || !sessionGone(err) {
			return v, err
		}
		c.forget(sid)
	}
}

// session returns the current session, creating one if there is none.
// Concurrent callers share one creation; each waits only as long as its ctx
// allows, while the creation runs to its own deadline for the others.
func (c *Client) session(ctx context.Context) (string, error) {
	c.mu.Lock()
	if c.sid != "" {
		sid := c.sid
		c.mu.Unlock()
		return sid, nil
	}
	f := c.flight
	if f == nil {
		f = &creation{done: make(chan struct{})}
		c.flight = f
		go c.create(context.WithoutCancel(ctx), f)
	}
	c.mu.Unlock()
	select {
	case <-f.done:
		return f.id, f.err
	case <-ctx.Done():
		return "", fmt.Errorf("wda: waiting for a session: %w", ctxError(ctx.Err(), false))
	}
}

// create runs one POST /session for f. Creating a session ends the previous
// one, so there is never more than one creation at a time (c.flight).
func (c *Client) create(ctx context.Context, f *creation) {
	v, err := c.do(ctx, request{method: http.MethodPost, path: "/session", body: json.RawMessage(sessionCapabilities),
		slow: true, idempotent: true}, "")
	var id string
	if err == nil {
		var created struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(v.Value, &created)
		id = cmp.Or(created.SessionID, v.SessionID)
		if id == "" {
			err = fmt.Errorf("wda POST /session: answer has no sessionId: %w", ErrProtocol)
		}
	}
	if err == nil {
		c.applySettings(ctx, id)
	}
	c.mu.Lock()
	c.flight = nil
	if err == nil {
		c.sid = id
	}
	c.mu.Unlock()
	if err == nil {
		c.log.Info("wda session created", "session", id)
	}
	f.id, f.err = id, err
	close(f.done)
}

// applySettings sets the Client's settings in the new session sid. A
// refusal is logged and the session kept: WDA's defaults still give a
// correct tree, only a slower one (and a WDA that does not know a setting
// skips it without complaint).
func (c *Client) applySettings(ctx context.Context, sid string) {
	c.mu.Lock()
	settings := maps.Clone(c.settings)
	c.mu.Unlock()
	if len(settings) == 0 {
		return
	}
	body := struct {
		Settings map[string]any `json:"settings"`
	}{settings}
	if _, err := c.do(ctx, request{method: http.MethodPost, path: "/appium/settings", body: body, idempotent: true}, sid); err != nil {
		c.log.Warn("wda settings not applied; WebDriverAgent's defaults stay", "session", sid, "err", err)
	}
}

// forget drops sid after WDA said it is gone, unless another caller has
// already replaced it.
func (c *Client) forget(sid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sid == sid {
		c.sid = ""
		c.log.Warn("wda session lost; creating a new one", "session", sid)
	}
}

// do sends r once, in session sid if sid is not empty, and returns WDA's
// answer.
func (c *Client) do(ctx context.Context, r request, sid string) (answer, error) {
	op := r.method + " " + r.path
	if r.path == "" {
		op = r.method + " /session/{id}"
	}
	timeout, limit := c.timeout, int64(maxBody)
	if r.slow {
		timeout, limit = c.slowTimeout, maxSlowBody
	}
	rctx, cancel := context.WithTimeout(ctx, timeout+r.extra)
	defer cancel()

	var body io.Reader
	switch {
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return answer{}, fmt.Errorf("wda %s: %w", op, err)
		}
		body = bytes.NewReader(b)
	case r.method == http.MethodPost:
		body = strings.NewReader("{}")
	}
	target := c.base + r.path
	if sid != "" {
		target = c.base + "/session/" + url.PathEscape(sid) + r.path
	}
	var wrote atomic.Bool
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			if info.Err == nil {
				wrote.Store(true)
			}
		},
	})
	req, err := http.NewRequestWithContext(rctx, r.method, target, body)
	if err != nil {
		return answer{}, fmt.Errorf("wda %s: %w", op, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json;charset=UTF-8")
	}

	start := time.Now()
	resp, err := c.hc.Do(req)
	var data []byte
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
		resp.Body.Close()
	}
	if err != nil {
		mutating := r.method != http.MethodGet && !r.idempotent
		err = transportError(ctx, rctx, err, mutating && wrote.Load())
		c.log.Debug("wda request failed", "op", op, "elapsed", time.Since(start), "err", category(err))
		return answer{}, fmt.Errorf("wda %s: %w", op, err)
	}
	c.log.Debug("wda request", "op", op, "status", resp.StatusCode, "elapsed", time.Since(start))
	if int64(len(data)) > limit {
		return answer{}, fmt.Errorf("wda %s: answer larger than %d bytes: %w", op, limit, ErrProtocol)
	}
	v, err := decode(resp.StatusCode, data)
	if err != nil {
		return answer{}, fmt.Errorf("wda %s: %w", op, redact(err, r.secret))
	}
	return v, nil
}

// decode reads WDA's envelope and returns it, or the *Error it carries.
func decode(status int, data []byte) (answer, error) {
	var env struct {
		Value     json.RawMessage `json:"value"`
		SessionID *string         `json:"sessionId"` // null when none
	}
	if err := json.Unmarshal(data, &env); err != nil {
		return answer{}, notJSON(status, data)
	}
	if status < 200 || status > 299 {
		var w3c struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Value, &w3c) != nil {
			// Not an error object: a bare string, or nothing.
			var s string
			json.Unmarshal(env.Value, &s)
			w3c.Message = s
		}
		return answer{}, newError(status, w3c.Error, w3c.Message)
	}
	if env.Value == nil {
		return answer{}, &Error{HTTPStatus: status, Message: "answer has no value", kind: ErrProtocol}
	}
	a := answer{Value: env.Value}
	if env.SessionID != nil {
		a.SessionID = *env.SessionID
	}
	return a, nil
}

// redact removes secret from an *Error's message. Texts shorter than four
// bytes (a return, a delete, a letter) are no secret and would cut words.
func redact(err error, secret string) error {
	var e *Error
	if len(secret) < 4 || !errors.As(err, &e) {
		return err
	}
	e.Message = strings.ReplaceAll(e.Message, secret, "[redacted]")
	// A prefix of a long secret can survive truncation.
	if len(secret) > 8 {
		e.Message = strings.ReplaceAll(e.Message, secret[:cut([]byte(secret), 8)], "[redacted]")
	}
	return err
}

// transportError classifies a failed exchange. uncertain says the request
// was written and repeating it could repeat an action.
func transportError(ctx, rctx context.Context, err error, uncertain bool) error {
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return ctxError(ctx.Err(), uncertain)
	case isDialError(err):
		if rctx.Err() != nil {
			return fmt.Errorf("%w: %w: %v", ErrUnreachable, ErrTimeout, err)
		}
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	case rctx.Err() != nil || isTimeout(err):
		return ctxError(context.DeadlineExceeded, uncertain)
	case uncertain:
		return fmt.Errorf("%w: %w", ErrUncertain, err)
	}
	return err
}

// ctxError returns the error for a context that ended: ErrTimeout for a
// deadline, the context's error otherwise; with ErrUncertain when the
// request was written.
func ctxError(err error, uncertain bool) error {
	if errors.Is(err, context.DeadlineExceeded) {
		err = ErrTimeout
	}
	if uncertain {
		return fmt.Errorf("%w: %w", ErrUncertain, err)
	}
	return err
}

// isDialError reports whether err happened before a connection existed.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// category names an error's category for the log, which must not carry
// WDA's messages.
func category(err error) string {
	for _, c := range []struct {
		err  error
		name string
	}{
		{ErrUncertain, "uncertain"},
		{ErrUnreachable, "unreachable"},
		{ErrTimeout, "timeout"},
		{context.Canceled, "canceled"},
	} {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	return "transport"
}
