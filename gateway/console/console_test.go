package console

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// recorder is a fake daemon for the HTTP tests: it records what the console
// asks of it.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, s)
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// start starts a console with fakes that record every call; cfg's non-nil
// funcs replace them.
func start(t *testing.T, cfg Config) (*Server, string, *recorder) {
	t.Helper()
	rec := &recorder{}
	dir := t.TempDir()
	file := filepath.Join(dir, "file.bin")
	if err := os.WriteFile(file, []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Call == nil {
		cfg.Call = func(_ context.Context, method string, params json.RawMessage) (any, error) {
			rec.add("call " + method)
			return map[string]any{"method": method, "params": params}, nil
		}
	}
	if cfg.Mirror == nil {
		cfg.Mirror = func(context.Context, string, int) (Packets, error) {
			rec.add("mirror")
			return nil, errors.New("no such phone")
		}
	}
	if cfg.Still == nil {
		cfg.Still = func(_ context.Context, device string, display int) ([]byte, error) {
			rec.add(fmt.Sprintf("still %s %d", device, display))
			return []byte("\xff\xd8jpeg"), nil
		}
	}
	if cfg.Media == nil {
		cfg.Media = func(_ context.Context, id string) (string, error) { rec.add("media " + id); return file, nil }
	}
	if cfg.Recording == nil {
		cfg.Recording = func(_ context.Context, task string) (string, error) { rec.add("recording " + task); return file, nil }
	}
	if cfg.Export == nil {
		cfg.Export = func(_ context.Context, tasks []string, dir string) error {
			rec.add("export " + strings.Join(tasks, ","))
			return os.MkdirAll(dir, 0o700)
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, "http://" + addr, rec
}

// noRedirect is a client that shows redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	Timeout:       20 * time.Second,
}

// login opens a fresh link and returns the session cookie.
func login(t *testing.T, s *Server) *http.Cookie {
	t.Helper()
	resp, err := noRedirect.Get(s.Link())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: got status %d; want 303", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == s.cookieName() {
			return c
		}
	}
	t.Fatal("login: no session cookie")
	return nil
}

type req struct {
	method, path, body string
	header             map[string]string
}

func do(t *testing.T, base string, r req, cookie *http.Cookie) (*http.Response, string) {
	t.Helper()
	hr, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if cookie != nil {
		hr.AddCookie(cookie)
	}
	for k, v := range r.header {
		if k == "Host" {
			hr.Host = v
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := noRedirect.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// wsHeaders are what a browser sends to open a WebSocket.
var wsHeaders = map[string]string{
	"Connection":            "Upgrade",
	"Upgrade":               "websocket",
	"Sec-WebSocket-Version": "13",
	"Sec-WebSocket-Key":     "dGhlIHNhbXBsZSBub25jZQ==",
}

// routes are one request for each route of the console.
var routes = []req{
	{method: "GET", path: "/"},
	{method: "GET", path: "/static/app.js"},
	{method: "GET", path: "/static/app.css"},
	{method: "POST", path: "/api/call", body: `{"method":"status"}`, header: map[string]string{"Content-Type": "application/json"}},
	{method: "GET", path: "/media/m1"},
	{method: "GET", path: "/still/d1"},
	{method: "GET", path: "/recordings/t1.mp4"},
	{method: "GET", path: "/export?task=t1"},
	{method: "GET", path: "/ws/mirror/d1", header: wsHeaders},
	{method: "GET", path: "/no/such/page"},
}

func TestNewRefusesNonLoopback(t *testing.T) {
	call := func(context.Context, string, json.RawMessage) (any, error) { return nil, nil }
	for _, tt := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:0", true},
		{"127.0.0.2:8080", true},
		{"[::1]:0", true},
		{"localhost:0", true},
		{"0.0.0.0:0", false},
		{":0", false},
		{"[::]:0", false},
		{"192.168.1.20:8080", false},
		{"example.com:80", false},
		{"127.0.0.1", false},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			_, err := New(Config{Addr: tt.addr, Call: call})
			if (err == nil) != tt.ok {
				t.Fatalf("New(%q): got %v; want ok=%v", tt.addr, err, tt.ok)
			}
			if err != nil && strings.Contains(tt.addr, ":") && tt.addr != "127.0.0.1" && !errors.Is(err, ErrNotLoopback) {
				t.Errorf("New(%q): got %v; want ErrNotLoopback", tt.addr, err)
			}
		})
	}
	if _, err := New(Config{Addr: "127.0.0.1:0"}); err == nil {
		t.Error("New without Call: got nil; want an error")
	}
}

func TestEveryRouteNeedsASession(t *testing.T) {
	s, base, rec := start(t, Config{})
	stale := &http.Cookie{Name: s.cookieName(), Value: "made-up"}
	for _, cookie := range []*http.Cookie{nil, stale} {
		for _, r := range routes {
			t.Run(r.method+" "+r.path, func(t *testing.T) {
				resp, body := do(t, base, r, cookie)
				if resp.StatusCode != http.StatusUnauthorized {
					t.Errorf("got status %d; want 401", resp.StatusCode)
				}
				if !strings.Contains(body, "pinky open") {
					t.Errorf("got body %q; want it to say to run `pinky open`", body)
				}
			})
		}
	}
	// The WebSocket as a real client opens it.
	_, resp, err := websocket.Dial(context.Background(), strings.Replace(base, "http", "ws", 1)+"/ws/mirror/d1", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("websocket without a session: got %v, %v; want 401", resp, err)
	}
	if got := rec.list(); len(got) != 0 {
		t.Errorf("the daemon was asked %q without a session; want nothing", got)
	}
	// With a session every route answers (the made-up path with 404; the
	// WebSocket has tests of its own).
	c := login(t, s)
	for _, r := range routes {
		if r.path == "/ws/mirror/d1" {
			continue
		}
		resp, _ := do(t, base, r, c)
		want := http.StatusOK
		if r.path == "/no/such/page" {
			want = http.StatusNotFound
		}
		if resp.StatusCode != want {
			t.Errorf("%s %s with a session: got status %d; want %d", r.method, r.path, resp.StatusCode, want)
		}
	}
}

func TestLoginLink(t *testing.T) {
	s, base, _ := start(t, Config{})
	link := s.Link()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	if got := "http://" + u.Host; got != base || u.Path != "/login" {
		t.Errorf("link %q: want %s/login?t=…", link, base)
	}
	if tok := u.Query().Get("t"); len(tok) != 43 { // 32 bytes, base64url
		t.Errorf("token %q: got %d characters; want 43", tok, len(tok))
	}
	if s.Link() == link {
		t.Error("two links are the same")
	}

	resp, err := noRedirect.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" {
		t.Fatalf("first use: got %d to %q; want 303 to /", resp.StatusCode, resp.Header.Get("Location"))
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == s.cookieName() {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" || len(cookie.Value) < 43 {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/ and 32 random bytes", cookie)
	}
	page, _ := do(t, base, req{method: "GET", path: "/"}, cookie)
	if page.StatusCode != http.StatusOK {
		t.Errorf("page with the cookie: got %d; want 200", page.StatusCode)
	}
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'self'",
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
	} {
		if got := page.Header.Get(k); !strings.HasPrefix(got, want) {
			t.Errorf("header %s: got %q; want %q…", k, got, want)
		}
	}

	// Used once, the link is dead, and gives no cookie.
	resp2, body := do(t, base, req{method: "GET", path: u.RequestURI()}, nil)
	if resp2.StatusCode != http.StatusUnauthorized || len(resp2.Cookies()) != 0 || !strings.Contains(body, "pinky open") {
		t.Errorf("second use: got %d, cookies %v; want 401 and none", resp2.StatusCode, resp2.Cookies())
	}
	for _, bad := range []string{"/login", "/login?t=", "/login?t=" + strings.Repeat("A", 43)} {
		if resp, _ := do(t, base, req{method: "GET", path: bad}, nil); resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: got %d; want 401", bad, resp.StatusCode)
		}
	}
}

func TestLoginLinkExpires(t *testing.T) {
	s, base, _ := start(t, Config{})
	var mu sync.Mutex
	now := time.Now()
	s.mu.Lock()
	s.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s.mu.Unlock()
	fresh, old := s.Link(), s.Link()
	mu.Lock()
	now = now.Add(LinkTTL - time.Second)
	mu.Unlock()
	if resp, _ := do(t, base, req{method: "GET", path: strings.TrimPrefix(fresh, base)}, nil); resp.StatusCode != http.StatusSeeOther {
		t.Errorf("just before expiry: got %d; want 303", resp.StatusCode)
	}
	mu.Lock()
	now = now.Add(2 * time.Second)
	mu.Unlock()
	if resp, _ := do(t, base, req{method: "GET", path: strings.TrimPrefix(old, base)}, nil); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after expiry: got %d; want 401", resp.StatusCode)
	}
}

func TestOriginMustBeOwn(t *testing.T) {
	s, base, rec := start(t, Config{})
	c := login(t, s)
	call := req{method: "POST", path: "/api/call", body: `{"method":"leases.stop","params":{"all":true}}`}
	for _, tt := range []struct {
		origin string
		want   int
	}{
		{"", http.StatusOK},
		{base, http.StatusOK},
		{"http://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{strings.Replace(base, "127.0.0.1", "localhost", 1), http.StatusForbidden},
		{"https://" + strings.TrimPrefix(base, "http://"), http.StatusForbidden},
	} {
		r := call
		r.header = map[string]string{"Origin": tt.origin}
		if resp, body := do(t, base, r, c); resp.StatusCode != tt.want {
			t.Errorf("POST with Origin %q: got %d %s; want %d", tt.origin, resp.StatusCode, body, tt.want)
		}
	}
	if got := len(rec.list()); got != 2 {
		t.Errorf("leases.stop ran %d times; want 2 (only same-origin)", got)
	}
	// The WebSocket too, whatever its method.
	ws := req{method: "GET", path: "/ws/mirror/d1", header: map[string]string{"Origin": "http://evil.example"}}
	for k, v := range wsHeaders {
		ws.header[k] = v
	}
	if resp, _ := do(t, base, ws, c); resp.StatusCode != http.StatusForbidden {
		t.Errorf("WebSocket from another origin: got %d; want 403", resp.StatusCode)
	}
	if got := rec.list(); len(got) != 2 {
		t.Errorf("calls %q; want no mirror from another origin", got)
	}
}

func TestHostMustBeOwn(t *testing.T) {
	s, base, rec := start(t, Config{})
	c := login(t, s)
	port := base[strings.LastIndex(base, ":")+1:]
	for _, tt := range []struct {
		host string
		want int
	}{
		{"127.0.0.1:" + port, http.StatusOK},
		{"localhost:" + port, http.StatusOK},
		{"evil.example:" + port, http.StatusMisdirectedRequest},
		{"evil.example", http.StatusMisdirectedRequest},
		{"127.0.0.1", http.StatusMisdirectedRequest},
		{"127.0.0.1:1", http.StatusMisdirectedRequest},
	} {
		r := req{method: "POST", path: "/api/call", body: `{"method":"status"}`, header: map[string]string{"Host": tt.host}}
		if resp, _ := do(t, base, r, c); resp.StatusCode != tt.want {
			t.Errorf("Host %q: got %d; want %d", tt.host, resp.StatusCode, tt.want)
		}
	}
	// A rebound name cannot log in either.
	u, _ := url.Parse(s.Link())
	if resp, _ := do(t, base, req{method: "GET", path: u.RequestURI(), header: map[string]string{"Host": "evil.example:" + port}}, nil); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("login with another Host: got %d; want 421", resp.StatusCode)
	}
	if got := len(rec.list()); got != 2 {
		t.Errorf("status ran %d times; want 2", got)
	}
}

func TestCallAllowList(t *testing.T) {
	s, base, _ := start(t, Config{Call: func(_ context.Context, method string, params json.RawMessage) (any, error) {
		switch method {
		case "status":
			return map[string]any{"pid": 7, "params": params}, nil
		case "devices.unlock":
			return nil, errors.New("wrong PIN")
		}
		t.Errorf("Call(%q) ran; it is not in the allow-list", method)
		return nil, nil
	}})
	c := login(t, s)
	for _, tt := range []struct {
		body, want string
		code       int
	}{
		{`{"method":"status","params":{"x":1}}`, `{"params":{"x":1},"pid":7}`, 200},
		{`{"method":"status"}`, `{"params":{},"pid":7}`, 200},
		{`{"method":"devices.unlock","params":{"device":"d","pin":"1234"}}`, `{"error":"wrong PIN"}`, 400},
		{`{"method":"daemon.stop"}`, `{"error":"method \"daemon.stop\" is not available in the console"}`, 400},
		{`{"method":"drivers.attach","params":{}}`, `{"error":"method \"drivers.attach\" is not available in the console"}`, 400},
		{`{"method":"console.link"}`, `{"error":"method \"console.link\" is not available in the console"}`, 400},
		{`not json`, ``, 400},
	} {
		resp, body := do(t, base, req{method: "POST", path: "/api/call", body: tt.body}, c)
		if resp.StatusCode != tt.code || (tt.want != "" && strings.TrimSpace(body) != tt.want) {
			t.Errorf("%s: got %d %s; want %d %s", tt.body, resp.StatusCode, body, tt.code, tt.want)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: got Content-Type %q; want application/json", tt.body, ct)
		}
	}
	if resp, _ := do(t, base, req{method: "GET", path: "/api/call"}, c); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /api/call: got %d; want 405", resp.StatusCode)
	}
}

func TestFiles(t *testing.T) {
	s, base, rec := start(t, Config{})
	c := login(t, s)
	resp, body := do(t, base, req{method: "GET", path: "/recordings/t1.mp4", header: map[string]string{"Range": "bytes=2-5"}}, c)
	if resp.StatusCode != http.StatusPartialContent || body != "2345" || resp.Header.Get("Content-Type") != "video/mp4" {
		t.Errorf("recording range: got %d %q %q; want 206 \"2345\" video/mp4", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	if resp, _ := do(t, base, req{method: "GET", path: "/recordings/t1.webm"}, c); resp.StatusCode != http.StatusNotFound {
		t.Errorf("recording not .mp4: got %d; want 404", resp.StatusCode)
	}
	if resp, body := do(t, base, req{method: "GET", path: "/media/m%2Fx"}, c); resp.StatusCode != http.StatusOK || body != "0123456789" {
		t.Errorf("media: got %d %q", resp.StatusCode, body)
	}
	want := []string{"recording t1", "media m/x"}
	if got := rec.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got calls %q; want %q", got, want)
	}

	s2, base2, _ := start(t, Config{
		Media:     func(context.Context, string) (string, error) { return "", errors.New("no such screenshot") },
		Recording: func(context.Context, string) (string, error) { return "", errors.New("task t1 has no recording") },
	})
	c2 := login(t, s2)
	for _, p := range []string{"/media/x", "/recordings/t1.mp4"} {
		if resp, body := do(t, base2, req{method: "GET", path: p}, c2); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "no ") {
			t.Errorf("%s missing: got %d %q; want 404 with the reason", p, resp.StatusCode, body)
		}
	}
}

func TestStill(t *testing.T) {
	s, base, rec := start(t, Config{})
	c := login(t, s)
	resp, body := do(t, base, req{method: "GET", path: "/still/d1?display=2"}, c)
	if resp.StatusCode != http.StatusOK || body != "\xff\xd8jpeg" || resp.Header.Get("Content-Type") != "image/jpeg" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("still: got %d %q %q %q; want 200, the JPEG, image/jpeg, no-store", resp.StatusCode, body, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
	}
	if resp, _ := do(t, base, req{method: "GET", path: "/still/d1?display=-1"}, c); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("still of display -1: got %d; want 400", resp.StatusCode)
	}
	if got, want := rec.list(), []string{"still d1 2"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got calls %q; want %q", got, want)
	}
	s2, base2, _ := start(t, Config{Still: func(context.Context, string, int) ([]byte, error) { return nil, errors.New("phone offline") }})
	if resp, body := do(t, base2, req{method: "GET", path: "/still/d1"}, login(t, s2)); resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "phone offline") {
		t.Errorf("still failing: got %d %q; want 503 with the reason", resp.StatusCode, body)
	}
}

func TestExport(t *testing.T) {
	var exported atomic.Value // the folder of the last export
	s, base, _ := start(t, Config{Export: func(_ context.Context, tasks []string, dir string) error {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("export dir %s: got %v; want it not to exist", dir, err)
		}
		if strings.Join(tasks, ",") == "bad" {
			return errors.New("no task bad")
		}
		exported.Store(dir)
		if err := os.MkdirAll(filepath.Join(dir, "media"), 0o700); err != nil {
			return err
		}
		os.WriteFile(filepath.Join(dir, "index.html"), []byte("<h1>"+strings.Join(tasks, ",")+"</h1>"), 0o600)
		return os.WriteFile(filepath.Join(dir, "media", "a.png"), []byte("png"), 0o600)
	}})
	c := login(t, s)
	resp, body := do(t, base, req{method: "GET", path: "/export?task=t1&task=t2"}, c)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/zip" ||
		!strings.Contains(resp.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("export: got %d %v", resp.StatusCode, resp.Header)
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(body)), int64(len(body)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		files[f.Name] = string(b)
	}
	if files["pinky-report/index.html"] != "<h1>t1,t2</h1>" || files["pinky-report/media/a.png"] != "png" || len(files) != 2 {
		t.Errorf("zip: got %v", files)
	}
	tmp := filepath.Dir(exported.Load().(string))
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary folder %s: got %v; want it removed", tmp, err)
	}
	if resp, _ := do(t, base, req{method: "GET", path: "/export?task=bad"}, c); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("failed export: got %d; want 400", resp.StatusCode)
	}
	if resp, _ := do(t, base, req{method: "GET", path: "/export"}, c); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("export without tasks: got %d; want 400", resp.StatusCode)
	}
}

// chanPackets hands out the packets of a channel; a closed channel ends the
// stream.
type chanPackets struct {
	ch     chan sdk.VideoPacket
	closed chan struct{}
}

func (p *chanPackets) Next(ctx context.Context) (sdk.VideoPacket, error) {
	select {
	case v, ok := <-p.ch:
		if !ok {
			return sdk.VideoPacket{}, errors.New("device offline")
		}
		return v, nil
	case <-ctx.Done():
		return sdk.VideoPacket{}, ctx.Err()
	}
}

func (p *chanPackets) Close() { close(p.closed) }

func dialMirror(t *testing.T, s *Server, base, device string) *websocket.Conn {
	t.Helper()
	c := login(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/ws/mirror/"+device, &websocket.DialOptions{
		HTTPHeader: http.Header{"Cookie": {c.String()}, "Origin": {base}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

func TestMirrorProtocol(t *testing.T) {
	pk := &chanPackets{ch: make(chan sdk.VideoPacket, 4), closed: make(chan struct{})}
	var joined atomic.Value // the device the console joined
	s, base, _ := start(t, Config{Mirror: func(_ context.Context, device string, _ int) (Packets, error) {
		joined.Store(device)
		return pk, nil
	}})
	sent := []sdk.VideoPacket{
		{Codec: sdk.CodecH264, Config: true, Width: 320, Height: 240, Data: []byte{0, 0, 0, 1, 0x67, 66}},
		{Codec: sdk.CodecH264, KeyFrame: true, PTS: 1500 * time.Microsecond, Width: 320, Height: 240, Data: []byte{0, 0, 0, 1, 0x65, 1, 2}},
		{Codec: sdk.CodecH265, PTS: -time.Microsecond, Data: []byte{9}},
	}
	for _, p := range sent {
		pk.ch <- p
	}
	close(pk.ch)
	ws := dialMirror(t, s, base, "phone-1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i, want := range sent {
		typ, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if typ != websocket.MessageBinary || len(b) < headerSize {
			t.Fatalf("packet %d: got %v of %d bytes", i, typ, len(b))
		}
		n := int(b[17])
		got := sdk.VideoPacket{
			Config:   b[0]&flagConfig != 0,
			KeyFrame: b[0]&flagKeyFrame != 0,
			Width:    int(binary.BigEndian.Uint32(b[1:])),
			Height:   int(binary.BigEndian.Uint32(b[5:])),
			PTS:      time.Duration(int64(binary.BigEndian.Uint64(b[9:]))) * time.Microsecond,
			Codec:    sdk.Codec(b[18 : 18+n]),
			Data:     b[18+n:],
		}
		if got.Config != want.Config || got.KeyFrame != want.KeyFrame || got.Width != want.Width || got.Height != want.Height ||
			got.PTS != want.PTS || got.Codec != want.Codec || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("packet %d: got %+v; want %+v", i, got, want)
		}
	}
	_, _, err := ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure || !strings.Contains(err.Error(), "stream ended: device offline") {
		t.Errorf("end of stream: got %v; want a normal close saying why", err)
	}
	if joined.Load() != "phone-1" {
		t.Errorf("joined %v; want phone-1", joined.Load())
	}
	select {
	case <-pk.closed:
	case <-time.After(10 * time.Second):
		t.Error("the stream was not closed")
	}
}

func TestMirrorErrorAndClose(t *testing.T) {
	pk := &chanPackets{ch: make(chan sdk.VideoPacket), closed: make(chan struct{})}
	s, base, _ := start(t, Config{Mirror: func(_ context.Context, device string, _ int) (Packets, error) {
		if device == "gone" {
			return nil, errors.New(`device "gone" is offline`)
		}
		return pk, nil
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, _, err := dialMirror(t, s, base, "gone").Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusTryAgainLater || !strings.Contains(err.Error(), "offline") {
		t.Errorf("no mirror: got %v; want close 1013 with the reason", err)
	}
	// Closing the server ends an open mirror.
	ws := dialMirror(t, s, base, "d1")
	go func() { time.Sleep(100 * time.Millisecond); s.Close() }()
	if _, _, err := ws.Read(ctx); err == nil || ctx.Err() != nil {
		t.Errorf("after Close: got %v; want the socket ended at once", err)
	}
	select {
	case <-pk.closed:
	case <-time.After(10 * time.Second):
		t.Error("the stream was not closed after Close")
	}
}

func TestCloseReason(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	got := closeReason(long)
	if len(got) > 123 || !strings.HasPrefix(long, got) || len(got) < 120 {
		t.Errorf("closeReason: got %d bytes %q", len(got), got)
	}
	if got := closeReason("short"); got != "short" {
		t.Errorf("got %q; want short", got)
	}
}

// TestTwoConsolesOneBrowser: the consoles of two daemons (two data
// folders, two ports) keep their sessions apart in one browser: cookies do
// not tell ports apart, so the cookie's name does.
func TestTwoConsolesOneBrowser(t *testing.T) {
	s1, base1, _ := start(t, Config{})
	s2, base2, _ := start(t, Config{})
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	for _, s := range []*Server{s1, s2} {
		resp, err := browser.Get(s.Link())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	for _, base := range []string{base1, base2} {
		resp, err := browser.Get(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s/ after logging in to both consoles: %d, want 200", base, resp.StatusCode)
		}
	}
}
