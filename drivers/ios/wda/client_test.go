package wda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// release returns a channel closed when the test ends, before the fake
// server closes, so that hanging handlers can return.
func release(t *testing.T) <-chan struct{} {
	ch := make(chan struct{})
	t.Cleanup(func() { close(ch) })
	return ch
}

// hang blocks a handler until the client gives up or the test ends, and
// closes entered (if not nil) when it starts.
func hang(done <-chan struct{}, entered chan<- struct{}) http.HandlerFunc {
	var once sync.Once
	return func(w http.ResponseWriter, r *http.Request) {
		if entered != nil {
			once.Do(func() { close(entered) })
		}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}
}

// cut closes the connection after the request was read, without answering.
func cutConn(w http.ResponseWriter, r *http.Request) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // a reset, like a phone leaving Wi-Fi
	}
	conn.Close()
}

func TestNew(t *testing.T) {
	tests := []struct {
		url     string
		want    string // base; "" for an error
		wantErr bool
	}{
		{url: "http://192.168.1.20:8100", want: "http://192.168.1.20:8100"},
		{url: "http://192.168.1.20:8100/", want: "http://192.168.1.20:8100"},
		{url: "http://192.168.1.20", want: "http://192.168.1.20:8100"},
		{url: "http://[fe80::1%25en0]:8100", want: "http://[fe80::1%25en0]:8100"},
		{url: "http://phone.local:8200/wda/", want: "http://phone.local:8200/wda"},
		{url: "", wantErr: true},
		{url: "192.168.1.20:8100", wantErr: true},
		{url: "https://192.168.1.20:8100", wantErr: true},
		{url: "ftp://192.168.1.20", wantErr: true},
		{url: "http://", wantErr: true},
		{url: "http://:8100", wantErr: true},
		{url: "http://u:p@192.168.1.20:8100", wantErr: true},
		{url: "http://192.168.1.20:8100?x=1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			c, err := New(tt.url)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New(%q) = %q; want an error", tt.url, c.base)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q): %v", tt.url, err)
			}
			if c.base != tt.want {
				t.Errorf("New(%q).base = %q; want %q", tt.url, c.base, tt.want)
			}
		})
	}
}

func TestSessionCreatedOnceAndReused(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	if got := c.SessionID(); got != "" {
		t.Fatalf("SessionID before any call = %q; want none", got)
	}
	for i := range 10 {
		calls := []func() error{
			func() error { return c.Tap(ctx, 10, float64(i)) },
			func() error { return c.Keys(ctx, "a") },
			func() error { _, err := c.Source(ctx); return err },
			func() error { return c.Swipe(ctx, 1, 2, 3, 4, 0) },
		}
		for _, call := range calls {
			if err := call(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := f.creations(); got != 1 {
		t.Errorf("POST /session count = %d; want 1", got)
	}
	if got := c.SessionID(); got != "S1" {
		t.Errorf("SessionID() = %q; want S1", got)
	}
	for _, r := range f.seen("POST /wda/tap") {
		if r.Session != "S1" {
			t.Errorf("tap sent in session %q; want S1", r.Session)
		}
	}

	// The capabilities attach to the app in front and relaunch nothing.
	var got any
	if err := json.Unmarshal(f.caps[0], &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"capabilities": map[string]any{
		"alwaysMatch": map[string]any{
			"forceAppLaunch":                             false,
			"shouldWaitForQuiescence":                    false,
			"shouldUseTestManagerForVisibilityDetection": false,
		},
		"firstMatch": []any{map[string]any{}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capabilities (-want +got):\n%s", diff)
	}
	if bytes.Contains(f.caps[0], []byte("bundleId")) {
		t.Errorf("capabilities %s name a bundleId", f.caps[0])
	}
}

func TestSessionlessCallsCreateNoSession(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	c.Status(ctx)
	c.Screen(ctx)
	c.ActiveApp(ctx)
	c.DeviceInfo(ctx)
	c.Locked(ctx)
	c.Screenshot(ctx)
	c.Home(ctx)
	c.Lock(ctx)
	c.SetPasteboard(ctx, "x")
	c.GetPasteboard(ctx)
	if got := f.creations(); got != 0 {
		t.Errorf("POST /session count = %d; want 0", got)
	}
}

func TestSessionRecreatedAfterRestart(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	if err := c.Tap(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	f.restart()
	if err := c.Tap(ctx, 2, 2); err != nil {
		t.Fatalf("Tap after a restart: %v", err)
	}
	if got := f.creations(); got != 2 {
		t.Errorf("POST /session count = %d; want 2", got)
	}
	var sessions []string
	for _, r := range f.seen("POST /wda/tap") {
		sessions = append(sessions, r.Session)
	}
	// The first tap, the rejected one, the retry.
	if diff := cmp.Diff([]string{"S1", "S1", "S2"}, sessions); diff != "" {
		t.Errorf("tap sessions (-want +got):\n%s", diff)
	}
	if got := c.SessionID(); got != "S2" {
		t.Errorf("SessionID() = %q; want S2", got)
	}
}

func TestSessionLostTwiceSurfaces(t *testing.T) {
	f := newFake(t)
	f.handle("POST /wda/tap", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 404, "invalid session id", "Session does not exist")
	})
	c := f.client()
	err := c.Tap(context.Background(), 1, 1)
	if !errors.Is(err, ErrInvalidSession) {
		t.Fatalf("Tap = %v; want ErrInvalidSession", err)
	}
	if got := len(f.seen("POST /wda/tap")); got != 2 {
		t.Errorf("tap sent %d times; want 2 (one retry)", got)
	}
	if got := f.creations(); got != 2 {
		t.Errorf("POST /session count = %d; want 2", got)
	}
}

func TestSessionGoneOn404WithoutCode(t *testing.T) {
	f := newFake(t)
	n := 0
	f.handle("POST /wda/tap", func(w http.ResponseWriter, r *http.Request) {
		n++
		if n == 1 {
			writeJSON(w, 404, map[string]any{"value": nil, "sessionId": nil})
			return
		}
		ok(w, nil)
	})
	c := f.client()
	if err := c.Tap(context.Background(), 1, 1); err != nil {
		t.Fatalf("Tap = %v; want success after one retry", err)
	}
	if got := f.creations(); got != 2 {
		t.Errorf("POST /session count = %d; want 2", got)
	}
}

func TestConcurrentCallersShareOneRecreation(t *testing.T) {
	const n = 16
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	if err := c.Tap(ctx, 0, 0); err != nil {
		t.Fatal(err)
	}
	f.restart()

	// Hold every rejection until all n callers have sent their tap in the
	// dead session, so that they all race to recreate it.
	var mu sync.Mutex
	stale := 0
	allIn := make(chan struct{})
	end := release(t)
	f.mu.Lock()
	f.onStale = func() {
		mu.Lock()
		stale++
		if stale == n {
			close(allIn)
		}
		mu.Unlock()
		select {
		case <-allIn:
		case <-end:
		}
	}
	f.mu.Unlock()

	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = c.Tap(ctx, float64(i), 0) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Tap %d: %v", i, err)
		}
	}
	if got := f.creations(); got != 2 {
		t.Errorf("POST /session count = %d; want 2 (one recreation)", got)
	}
	retried := 0
	for _, r := range f.seen("POST /wda/tap") {
		if r.Session == "S2" {
			retried++
		}
	}
	if retried != n {
		t.Errorf("taps retried in S2 = %d; want %d", retried, n)
	}
}

func TestCreationOutlivesFirstCaller(t *testing.T) {
	f := newFake(t)
	entered, proceed := make(chan struct{}), make(chan struct{})
	end := release(t)
	f.handle("POST /session", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		select {
		case <-proceed:
		case <-end:
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.createSession(w, body)
	})
	c := f.client()
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() { first <- c.Tap(ctx, 1, 1) }()
	<-entered
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first Tap = %v; want context.Canceled", err)
	}
	// The creation goes on for the next caller, who joins it.
	second := make(chan error, 1)
	go func() { second <- c.Tap(context.Background(), 2, 2) }()
	close(proceed)
	if err := <-second; err != nil {
		t.Fatalf("second Tap = %v; want success", err)
	}
	if got := f.creations(); got != 1 {
		t.Errorf("POST /session count = %d; want 1", got)
	}
}

func TestErrorMapping(t *testing.T) {
	sentinels := []error{ErrInvalidSession, ErrNoSuchElement, ErrUnknownCommand, ErrUnreachable, ErrTimeout, ErrUncertain, ErrProtocol}
	w3c := func(code, msg string) string {
		b, _ := json.Marshal(map[string]any{"value": map[string]any{"error": code, "message": msg, "traceback": "…"}, "sessionId": nil})
		return string(b)
	}
	tests := []struct {
		name    string
		status  int
		body    string
		want    error  // the one sentinel it matches, or nil for none
		wantErr *Error // compared when set
		quote   string // text the error must contain
	}{
		{name: "invalid session id", status: 404, body: w3c("invalid session id", "Session does not exist"),
			want: ErrInvalidSession, wantErr: &Error{HTTPStatus: 404, Code: "invalid session id", Message: "Session does not exist"}},
		{name: "session message only", status: 500, body: w3c("unknown error", "Session does not exist"), want: ErrInvalidSession},
		{name: "no such element", status: 404, body: w3c("no such element", "An element could not be located"),
			want: ErrNoSuchElement, wantErr: &Error{HTTPStatus: 404, Code: "no such element", Message: "An element could not be located"}},
		{name: "unknown command", status: 404, body: w3c("unknown command", "Unhandled endpoint: /wda/foo"), want: ErrUnknownCommand},
		{name: "unknown method", status: 405, body: w3c("unknown method", "Method is not implemented"), want: ErrUnknownCommand},
		{name: "unsupported operation", status: 500, body: w3c("unsupported operation", "volumeUp is not supported on Simulator"), want: ErrUnknownCommand},
		{name: "404 without code", status: 404, body: `{"value":null,"sessionId":null}`, want: ErrUnknownCommand},
		{name: "WDA timeout", status: 408, body: w3c("timeout", "An operation did not complete before its timeout expired"), want: ErrTimeout},
		{name: "unknown error", status: 500, body: w3c("unknown error", "Cannot take a screenshot"),
			wantErr: &Error{HTTPStatus: 500, Code: "unknown error", Message: "Cannot take a screenshot"}},
		{name: "invalid argument", status: 400, body: w3c("invalid argument", "x is missing"), wantErr: &Error{HTTPStatus: 400, Code: "invalid argument", Message: "x is missing"}},
		{name: "value is a string", status: 500, body: `{"value":"boom","sessionId":null}`, wantErr: &Error{HTTPStatus: 500, Message: "boom"}},
		{name: "HTML error page", status: 502, body: "<html><body>Bad Gateway</body></html>", want: ErrProtocol, quote: `"<html><body>Bad Gateway</body></html>"`},
		{name: "plain text on 200", status: 200, body: "I-AM-ALIVE", want: ErrProtocol, quote: `"I-AM-ALIVE"`},
		{name: "long binary body", status: 200, body: strings.Repeat("\x00\xff", 500), want: ErrProtocol, quote: `"\x00\xff`},
		{name: "no value", status: 200, body: `{"sessionId":null}`, want: ErrProtocol},
		{name: "value of the wrong type", status: 200, body: `{"value":"yes","sessionId":null}`, want: ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			c, err := New(srv.URL, WithLogger(discard()))
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Locked(context.Background())
			if err == nil {
				t.Fatal("Locked succeeded; want an error")
			}
			for _, s := range sentinels {
				if got := errors.Is(err, s); got != (s == tt.want) {
					t.Errorf("errors.Is(%v, %v) = %v; want %v", err, s, got, !got)
				}
			}
			if tt.wantErr != nil {
				var e *Error
				if !errors.As(err, &e) {
					t.Fatalf("error %v is not an *Error", err)
				}
				if diff := cmp.Diff(tt.wantErr, e, cmp.Comparer(func(a, b *Error) bool {
					return a.HTTPStatus == b.HTTPStatus && a.Code == b.Code && a.Message == b.Message
				})); diff != "" {
					t.Errorf("*Error (-want +got):\n%s", diff)
				}
			}
			if tt.quote != "" && !strings.Contains(err.Error(), tt.quote) {
				t.Errorf("error %q does not quote %s", err, tt.quote)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long; want a short prefix of the body", len(err.Error()))
			}
		})
	}
}

func TestHungSourceDoesNotBlockTap(t *testing.T) {
	f := newFake(t)
	entered := make(chan struct{})
	f.handle("GET /source", hang(release(t), entered))
	c := f.client(WithSlowTimeout(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := c.Tap(ctx, 1, 1); err != nil { // the session exists
		t.Fatal(err)
	}
	srcErr := make(chan error, 1)
	go func() {
		_, err := c.Source(ctx)
		srcErr <- err
	}()
	<-entered
	if err := c.Tap(context.Background(), 2, 2); err != nil {
		t.Fatalf("Tap while /source hangs: %v", err)
	}
	select {
	case err := <-srcErr:
		t.Fatalf("Source returned (%v) before it was cancelled", err)
	default:
	}
	cancel()
	if err := <-srcErr; !errors.Is(err, context.Canceled) {
		t.Errorf("Source after cancel = %v; want context.Canceled", err)
	}
}

func TestSlowTimeoutBoundsSource(t *testing.T) {
	f := newFake(t)
	f.handle("GET /source", hang(release(t), nil))
	// The ordinary timeout is long, so only the slow one can end the call.
	c := f.client(WithTimeout(time.Hour), WithSlowTimeout(100*time.Millisecond))
	err := within(t, func() error { _, err := c.Source(context.Background()); return err })
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Source = %v; want ErrTimeout and context.DeadlineExceeded", err)
	}
	if errors.Is(err, ErrUncertain) {
		t.Errorf("Source = %v; a read is never uncertain", err)
	}
}

// within runs call and fails the test if it has not returned after 30 s: a
// deadline of a fraction of a second was not applied. It is a safety net,
// not a measure of speed.
func within(t *testing.T, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the call is still running after 30 s")
		return nil
	}
}

func TestTimeoutOnPostIsUncertain(t *testing.T) {
	f := newFake(t)
	f.handle("POST /wda/tap", hang(release(t), nil))
	c := f.client(WithTimeout(100*time.Millisecond), WithSlowTimeout(time.Hour))
	err := within(t, func() error { return c.Tap(context.Background(), 1, 1) })
	for _, want := range []error{ErrUncertain, ErrTimeout, context.DeadlineExceeded} {
		if !errors.Is(err, want) {
			t.Errorf("Tap = %v; want it to match %v", err, want)
		}
	}
}

func TestCancelReturnsPromptly(t *testing.T) {
	t.Run("request", func(t *testing.T) {
		f := newFake(t)
		entered := make(chan struct{})
		f.handle("POST /wda/tap", hang(release(t), entered))
		c := f.client(WithTimeout(time.Hour), WithSlowTimeout(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		err := c.Tap(ctx, 1, 1)
		if !errors.Is(err, context.Canceled) || !errors.Is(err, ErrUncertain) {
			t.Errorf("Tap = %v; want context.Canceled and ErrUncertain", err)
		}
	})
	t.Run("waiting for the session", func(t *testing.T) {
		f := newFake(t)
		entered := make(chan struct{})
		f.handle("POST /session", hang(release(t), entered))
		c := f.client(WithTimeout(time.Hour), WithSlowTimeout(time.Hour))
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-entered; cancel() }()
		err := c.Tap(ctx, 1, 1)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUncertain) {
			t.Errorf("Tap = %v; want context.Canceled, not uncertain", err)
		}
		if got := len(f.seen("POST /wda/tap")); got != 0 {
			t.Errorf("tap sent %d times; want 0", got)
		}
	})
}

func TestConnectionCut(t *testing.T) {
	f := newFake(t)
	f.handle("POST /wda/tap", cutConn)
	f.handle("GET /wda/locked", cutConn)
	f.handle("POST /wda/apps/state", cutConn)
	c := f.client()
	ctx := context.Background()

	err := c.Tap(ctx, 1, 1)
	if !errors.Is(err, ErrUncertain) {
		t.Errorf("Tap with the connection cut = %v; want ErrUncertain", err)
	}
	if errors.Is(err, ErrUnreachable) || errors.Is(err, ErrTimeout) {
		t.Errorf("Tap with the connection cut = %v; want neither unreachable nor timeout", err)
	}
	if _, err := c.Locked(ctx); err == nil || errors.Is(err, ErrUncertain) {
		t.Errorf("Locked with the connection cut = %v; want an error that is not ErrUncertain", err)
	}
	if _, err := c.AppState(ctx, "com.apple.Preferences"); err == nil || errors.Is(err, ErrUncertain) {
		t.Errorf("AppState with the connection cut = %v; want an error that is not ErrUncertain", err)
	}
}

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := New("http://"+addr, WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Status(ctx); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Status = %v; want ErrUnreachable", err)
	}
	err = c.Tap(ctx, 1, 1)
	if !errors.Is(err, ErrUnreachable) || errors.Is(err, ErrUncertain) {
		t.Errorf("Tap = %v; want ErrUnreachable, not uncertain", err)
	}
}

func TestKeysArriveWhole(t *testing.T) {
	f := newFake(t)
	c := f.client()
	if err := c.Keys(context.Background(), "héllo 👋🏽 日本"); err != nil {
		t.Fatal(err)
	}
	reqs := f.seen("POST /wda/keys")
	if len(reqs) != 1 {
		t.Fatalf("keys sent %d times; want 1", len(reqs))
	}
	var got struct{ Value []string }
	if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"h", "é", "l", "l", "o", " ", "👋🏽", " ", "日", "本"}
	if diff := cmp.Diff(want, got.Value); diff != "" {
		t.Errorf("keys value (-want +got):\n%s", diff)
	}
}

func TestSplitGraphemes(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"abc", []string{"a", "b", "c"}},
		{"e\u0301t\u00e9", []string{"e\u0301", "t", "\u00e9"}},       // decomposed and composed é
		{"👋🏽!", []string{"👋🏽", "!"}},                                 // skin tone
		{"👨‍👩‍👧x", []string{"👨‍👩‍👧", "x"}},                           // ZWJ family
		{"🇯🇵🇫🇷🇩", []string{"🇯🇵", "🇫🇷", "🇩"}},                         // flags pair up
		{"1️⃣2", []string{"1️⃣", "2"}},                               // keycap
		{"❤️‍🔥", []string{"❤️‍🔥"}},                                   // heart on fire
		{"🏴󠁧󠁢󠁳󠁣󠁴󠁿", []string{"🏴󠁧󠁢󠁳󠁣󠁴󠁿"}},                             // subdivision flag (tags)
		{"a\r\nb\n", []string{"a", "\r\n", "b", "\n"}},               // CR LF
		{"\b\b\b", []string{"\b", "\b", "\b"}},                       // deletes stay apart
		{"\u1100\u1161\u11a8가", []string{"\u1100\u1161\u11a8", "가"}}, // jamo syllable
		{"नमस्ते", []string{"न", "म", "स्", "ते"}},                   // marks stay with their letter
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, splitGraphemes(tt.in)); diff != "" {
			t.Errorf("splitGraphemes(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestGestureActions(t *testing.T) {
	move := func(d, x, y float64) map[string]any {
		return map[string]any{"type": "pointerMove", "duration": d, "x": x, "y": y}
	}
	down := map[string]any{"type": "pointerDown", "button": 0.0}
	up := map[string]any{"type": "pointerUp", "button": 0.0}
	pause := func(d float64) map[string]any { return map[string]any{"type": "pause", "duration": d} }
	source := func(id string, steps ...any) any {
		return map[string]any{"type": "pointer", "id": id, "parameters": map[string]any{"pointerType": "touch"}, "actions": steps}
	}
	finger := func(steps ...any) any {
		return map[string]any{"actions": []any{source("finger1", steps...)}}
	}
	tests := []struct {
		name string
		do   func(*Client) error
		want any
	}{
		{"swipe", func(c *Client) error {
			return c.Swipe(context.Background(), 100, 600.5, 100, 200, 300*time.Millisecond)
		},
			finger(move(0, 100, 600.5), down, pause(25), move(300, 100, 200), up)},
		{"drag", func(c *Client) error {
			return c.Drag(context.Background(), 50, 60, 250, 60, 800*time.Millisecond, time.Second)
		}, finger(move(0, 50, 60), down, pause(800), move(1000, 250, 60), up)},
		{"swipe to the origin", func(c *Client) error { return c.Swipe(context.Background(), 10, 10, 0, 0, 0) },
			finger(move(0, 10, 10), down, pause(25), move(0, 0, 0), up)},
		{"pinch", func(c *Client) error {
			return c.Pinch(context.Background(), [2][2]float64{{90, 300}, {110, 300}}, [2][2]float64{{50, 300}, {150, 300}}, 400*time.Millisecond)
		}, map[string]any{"actions": []any{
			source("finger1", move(0, 90, 300), down, pause(25), move(400, 50, 300), up),
			source("finger2", move(0, 110, 300), down, pause(25), move(400, 150, 300), up),
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if err := tt.do(f.client()); err != nil {
				t.Fatal(err)
			}
			reqs := f.seen("POST /actions")
			if len(reqs) != 1 {
				t.Fatalf("actions sent %d times; want 1", len(reqs))
			}
			var got any
			if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("actions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCommandBodies(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		do      func(*Client) error
		key     string
		session bool
		want    string
	}{
		{"tap", func(c *Client) error { return c.Tap(ctx, 12.5, 30) }, "POST /wda/tap", true, `{"x":12.5,"y":30}`},
		{"double tap", func(c *Client) error { return c.DoubleTap(ctx, 1, 2) }, "POST /wda/doubleTap", true, `{"x":1,"y":2}`},
		{"touch and hold", func(c *Client) error { return c.TouchAndHold(ctx, 1, 2, 1500*time.Millisecond) },
			"POST /wda/touchAndHold", true, `{"x":1,"y":2,"duration":1.5}`},
		{"press button", func(c *Client) error { return c.PressButton(ctx, "volumeUp") }, "POST /wda/pressButton", true, `{"name":"volumeUp"}`},
		{"home", func(c *Client) error { return c.Home(ctx) }, "POST /wda/homescreen", false, `{}`},
		{"lock", func(c *Client) error { return c.Lock(ctx) }, "POST /wda/lock", false, `{}`},
		{"unlock", func(c *Client) error { return c.Unlock(ctx) }, "POST /wda/unlock", false, `{}`},
		{"launch", func(c *Client) error { return c.Launch(ctx, "com.apple.Maps") }, "POST /wda/apps/launch", true, `{"bundleId":"com.apple.Maps"}`},
		{"activate", func(c *Client) error { return c.Activate(ctx, "com.apple.Maps") }, "POST /wda/apps/activate", true, `{"bundleId":"com.apple.Maps"}`},
		{"open URL", func(c *Client) error { return c.OpenURL(ctx, "maps://?q=café") }, "POST /url", true, `{"url":"maps://?q=café"}`},
		{"set pasteboard", func(c *Client) error { return c.SetPasteboard(ctx, "héllo") }, "POST /wda/setPasteboard", false,
			`{"content":"` + base64.StdEncoding.EncodeToString([]byte("héllo")) + `","contentType":"plaintext"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			if err := tt.do(f.client()); err != nil {
				t.Fatal(err)
			}
			reqs := f.seen(tt.key)
			if len(reqs) != 1 {
				t.Fatalf("%s sent %d times; want 1", tt.key, len(reqs))
			}
			if got := reqs[0].Session != ""; got != tt.session {
				t.Errorf("%s in session %q; want session-bound %v", tt.key, reqs[0].Session, tt.session)
			}
			var got, want any
			if err := json.Unmarshal(reqs[0].Body, &got); err != nil {
				t.Fatalf("body %q: %v", reqs[0].Body, err)
			}
			json.Unmarshal([]byte(tt.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReads(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()

	st, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSt := Status{Ready: true, Message: "WebDriverAgent is ready to accept commands",
		OS: OSInfo{Name: "iOS", Version: "17.5.1", SDKVersion: "17.5"}, IP: "192.168.1.20", Device: "iphone",
		BuildVersion: "16.7.0", BundleID: "com.facebook.WebDriverAgentRunner"}
	if diff := cmp.Diff(wantSt, st); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
	si, err := c.Screen(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (ScreenInfo{Width: 390, Height: 844, Scale: 3}); si != want {
		t.Errorf("Screen = %+v; want %+v", si, want)
	}
	app, err := c.ActiveApp(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (AppInfo{BundleID: "com.apple.Preferences", Name: "Settings", PID: 4321}); app != want {
		t.Errorf("ActiveApp = %+v; want %+v", app, want)
	}
	di, err := c.DeviceInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := (DeviceInfo{Name: "Ben's iPhone", Model: "iPhone", UUID: "0000-1111", Locale: "fr_FR", TimeZone: "Europe/Paris"}); di != want {
		t.Errorf("DeviceInfo = %+v; want %+v", di, want)
	}
	if locked, err := c.Locked(ctx); err != nil || !locked {
		t.Errorf("Locked = %v, %v; want true", locked, err)
	}
	png, err := c.Screenshot(ctx)
	if err != nil || string(png) != "\x89PNG\r\n\x1a\nfake" {
		t.Errorf("Screenshot = %q, %v; want the decoded PNG", png, err)
	}
	if stopped, err := c.Terminate(ctx, "com.apple.Maps"); err != nil || !stopped {
		t.Errorf("Terminate = %v, %v; want true", stopped, err)
	}
	if state, err := c.AppState(ctx, "com.apple.Maps"); err != nil || state != AppStateRunningForeground {
		t.Errorf("AppState = %v, %v; want %d", state, err, AppStateRunningForeground)
	}
	if err := c.SetPasteboard(ctx, "héllo 👋"); err != nil {
		t.Fatal(err)
	}
	if text, err := c.GetPasteboard(ctx); err != nil || text != "héllo 👋" {
		t.Errorf("GetPasteboard = %q, %v; want %q", text, err, "héllo 👋")
	}

	src, err := c.Source(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tree struct{ Type, Name string }
	if err := json.Unmarshal(src, &tree); err != nil || tree.Type != "Application" {
		t.Errorf("Source = %s (%v); want the tree object", src, err)
	}
	reqs := f.seen("GET /source")
	if r := reqs[len(reqs)-1]; r.Session != "S1" || r.Query != "format=json" {
		t.Errorf("source asked in session %q with query %q; want S1, format=json", r.Session, r.Query)
	}
}

func TestSourceFallsBackToBare(t *testing.T) {
	f := newFake(t)
	f.handle("POST /session", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 500, "session not created", "A new session could not be created")
	})
	c := f.client()
	if _, err := c.Source(context.Background()); err != nil {
		t.Fatalf("Source without a session: %v", err)
	}
	reqs := f.seen("GET /source")
	if len(reqs) != 1 || reqs[0].Session != "" || reqs[0].Query != "format=json" {
		t.Errorf("source requests = %+v; want one bare /source?format=json", reqs)
	}
	// A command that needs the session says why it failed.
	var e *Error
	if err := c.Tap(context.Background(), 1, 1); !errors.As(err, &e) || e.Code != "session not created" {
		t.Errorf("Tap = %v; want the session not created error", err)
	}
}

func TestClose(t *testing.T) {
	f := newFake(t)
	c := f.client()
	ctx := context.Background()
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close without a session: %v", err)
	}
	if err := c.Tap(ctx, 1, 1); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	dels := f.seen("DELETE ")
	if len(dels) != 1 || dels[0].Session != "S1" {
		t.Errorf("DELETE requests = %+v; want one, of S1", dels)
	}
	if got := c.SessionID(); got != "" {
		t.Errorf("SessionID after Close = %q; want none", got)
	}
	if err := c.Tap(ctx, 1, 1); err != nil || c.SessionID() != "S2" {
		t.Errorf("Tap after Close = %v in %q; want success in a new session S2", err, c.SessionID())
	}
}

func TestSecretsStayOutOfLogs(t *testing.T) {
	const password = "hunter2-Tr0ub4dor"
	const code = "OTP 493817"
	f := newFake(t)
	// WDA's message could echo what failed to be typed.
	f.handle("POST /wda/keys", func(w http.ResponseWriter, r *http.Request) {
		var b struct{ Value []string }
		json.NewDecoder(r.Body).Decode(&b)
		writeError(w, 500, "unknown error", "Failed to type '"+strings.Join(b.Value, "")+"': keyboard not present")
	})
	var logs testkit.Buffer
	c, err := New(f.srv.URL, WithLogger(logs.Logger()))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = c.Keys(ctx, password)
	if err == nil {
		t.Fatal("Keys succeeded; want the fake's error")
	}
	if strings.Contains(err.Error(), password) || strings.Contains(err.Error(), password[:8]) {
		t.Errorf("Keys error %q carries the password", err)
	}
	if err := c.SetPasteboard(ctx, code); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, secret := range []string{password, password[:8], code, base64.StdEncoding.EncodeToString([]byte(code))} {
		if strings.Contains(out, secret) {
			t.Errorf("logs carry %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{"/wda/keys", "/wda/setPasteboard", "status=500"} {
		if !strings.Contains(out, want) {
			t.Errorf("logs do not name %q:\n%s", want, out)
		}
	}
}
