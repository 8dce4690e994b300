package wda

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeWDA is a small WebDriverAgent: real envelope shapes, status codes and
// error bodies (FBCommandStatus.m, FBResponsePayload.m), one active session
// at a time like WDA.
type fakeWDA struct {
	t   testing.TB
	srv *httptest.Server

	mu        sync.Mutex
	session   string // the active session; "" after a restart
	created   int    // POST /session count
	caps      []json.RawMessage
	requests  []fakeRequest
	overrides map[string]http.HandlerFunc // by "METHOD /endpoint"
	pasteB64  string
	// onStale, if set, runs before the answer to a request in a session
	// that does not exist.
	onStale func()
}

// fakeRequest is a request the fake saw, with the session prefix split off.
type fakeRequest struct {
	Method, Endpoint, Session, Query string
	Body                             []byte
}

func newFake(t testing.TB) *fakeWDA {
	t.Helper()
	f := &fakeWDA{t: t, overrides: map[string]http.HandlerFunc{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// client returns a Client of the fake with a silent logger.
func (f *fakeWDA) client(opts ...Option) *Client {
	f.t.Helper()
	opts = append([]Option{WithLogger(discard())}, opts...)
	c, err := New(f.srv.URL, opts...)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// handle overrides the fake's answer to key, e.g. "POST /wda/tap". The
// override runs after the session check.
func (f *fakeWDA) handle(key string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overrides[key] = h
}

// restart forgets the sessions, like WDA started again.
func (f *fakeWDA) restart() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.session = ""
}

func (f *fakeWDA) creations() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.created
}

// seen returns the requests to endpoint, e.g. "POST /wda/tap".
func (f *fakeWDA) seen(key string) []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRequest
	for _, r := range f.requests {
		if r.Method+" "+r.Endpoint == key {
			out = append(out, r)
		}
	}
	return out
}

func (f *fakeWDA) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	endpoint, sid := r.URL.Path, ""
	if rest, ok := strings.CutPrefix(endpoint, "/session/"); ok {
		sid, endpoint, _ = strings.Cut(rest, "/")
		endpoint = "/" + endpoint
		if endpoint == "/" {
			endpoint = ""
		}
	}
	key := r.Method + " " + endpoint
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{r.Method, endpoint, sid, r.URL.RawQuery, body})
	active := f.session
	h := f.overrides[key]
	f.mu.Unlock()

	if key == "POST /session" && h == nil {
		f.createSession(w, body)
		return
	}
	if sid != "" && sid != active {
		f.mu.Lock()
		hook := f.onStale
		f.mu.Unlock()
		if hook != nil {
			hook()
		}
		// FBRoute.decorateRequest → FBSessionDoesNotExistException.
		writeError(w, 404, "invalid session id", "Session does not exist")
		return
	}
	if h != nil {
		h(w, r)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch key {
	case "GET /status":
		ok(w, map[string]any{
			"ready": true, "message": "WebDriverAgent is ready to accept commands", "state": "success",
			"os":     map[string]any{"name": "iOS", "version": "17.5.1", "sdkVersion": "17.5", "testmanagerdVersion": 65535},
			"ios":    map[string]any{"ip": "192.168.1.20"},
			"build":  map[string]any{"time": "Aug  1 2026 10:00:00", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner", "version": "16.7.0"},
			"device": "iphone",
		})
	case "GET /wda/screen":
		ok(w, map[string]any{"screenSize": map[string]any{"width": 390, "height": 844},
			"statusBarSize": map[string]any{"width": 390, "height": 47}, "scale": 3})
	case "GET /wda/activeAppInfo":
		ok(w, map[string]any{"pid": 4321, "bundleId": "com.apple.Preferences", "name": "Settings",
			"processArguments": map[string]any{"args": []string{}, "env": map[string]any{}}})
	case "GET /wda/device/info":
		ok(w, map[string]any{"currentLocale": "fr_FR", "timeZone": "Europe/Paris", "name": "Ben's iPhone",
			"model": "iPhone", "uuid": "0000-1111", "userInterfaceIdiom": 0, "userInterfaceStyle": "light",
			"isSimulator": false, "thermalState": 0})
	case "GET /wda/locked":
		ok(w, true)
	case "GET /source":
		ok(w, map[string]any{"type": "Application", "name": "Settings", "rect": map[string]any{"x": 0, "y": 0, "width": 390, "height": 844}})
	case "GET /screenshot":
		ok(w, base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake")))
	case "POST /wda/apps/terminate":
		ok(w, true)
	case "POST /wda/apps/state":
		ok(w, 4)
	case "POST /wda/setPasteboard":
		var b struct{ Content string }
		json.Unmarshal(body, &b)
		f.pasteB64 = b.Content
		ok(w, nil)
	case "POST /wda/getPasteboard":
		ok(w, f.pasteB64)
	case "DELETE ":
		f.session = ""
		ok(w, nil)
	case "POST /wda/tap", "POST /wda/doubleTap", "POST /wda/touchAndHold", "POST /actions", "POST /wda/keys",
		"POST /wda/pressButton", "POST /wda/homescreen", "POST /wda/lock", "POST /wda/unlock",
		"POST /wda/apps/launch", "POST /wda/apps/activate", "POST /url":
		ok(w, nil)
	default:
		// FBUnknownCommands.
		writeError(w, 404, "unknown command", "Unhandled endpoint: "+r.URL.Path+" with parameters {\n}")
	}
}

// createSession answers POST /session like WDA: a new session replaces the
// active one.
func (f *fakeWDA) createSession(w http.ResponseWriter, caps []byte) {
	f.mu.Lock()
	f.created++
	f.session = fmt.Sprintf("S%d", f.created)
	f.caps = append(f.caps, caps)
	id := f.session
	f.mu.Unlock()
	writeJSON(w, 200, map[string]any{"value": map[string]any{"sessionId": id,
		"capabilities": map[string]any{"device": "iphone", "sdkVersion": "17.5"}}, "sessionId": id})
}

// ok writes a success envelope.
func ok(w http.ResponseWriter, v any) {
	writeJSON(w, 200, map[string]any{"value": v, "sessionId": nil})
}

// writeError writes WDA's error envelope.
func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, map[string]any{"value": map[string]any{"error": code, "message": msg,
		"traceback": "0 WebDriverAgentLib 0x0000 -[FBRoute mountRequest:intoResponse:]"}, "sessionId": nil})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
