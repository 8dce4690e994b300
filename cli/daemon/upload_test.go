package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// uploadFixture is httpFixture with a files folder and a clock the upload
// links read.
type uploadFixture struct {
	*httpFixture
	h     *httpMCP
	files string // $PINKY_HOME/files

	mu  sync.Mutex
	now time.Time
}

func newUploadFixture(t *testing.T) *uploadFixture {
	t.Helper()
	d := simtest.New(t, simtest.Unlocked(simtest.Android))
	f := &uploadFixture{
		httpFixture: &httpFixture{tokenPath: filepath.Join(t.TempDir(), "token"), store: history.NewMemory(), logs: &testkit.Buffer{}},
		files:       t.TempDir(),
		now:         time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC),
	}
	log := f.logs.Logger()
	f.agents = agent.NewManager(agent.Config{Drivers: simDrivers{d}, Store: f.store, Logger: log, Files: f.files})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.agents.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var err error
	if f.token, err = home.EnsureToken(f.tokenPath); err != nil {
		t.Fatal(err)
	}
	f.h = newHTTPMCP(httpConfig{Agents: f.agents, TokenPath: f.tokenPath, Logger: log})
	f.h.sessions.uploads.now = func() time.Time {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.now
	}
	srv := httptest.NewServer(f.h)
	t.Cleanup(func() {
		f.h.Close(context.Background())
		srv.Close()
		if t.Failed() {
			t.Logf("log:\n%s", f.logs.String())
		}
	})
	f.url = srv.URL + MCPPath
	return f
}

func (f *uploadFixture) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// agentWithPhone connects an agent that holds sim-android-1.
func (f *uploadFixture) agentWithPhone(t *testing.T) *client.Client {
	t.Helper()
	c := f.connect(t, "uploader", f.token)
	mustCall(t, c, "phone_connect", connectAndroid)
	return c
}

var linkURL = regexp.MustCompile(`http://\S+/upload/[A-Za-z0-9_-]{43}`)

// link asks for an upload link and returns its URL.
func link(t *testing.T, c *client.Client, path string, size int) string {
	t.Helper()
	args := map[string]any{"device": "sim-android-1", "path": path}
	if size > 0 {
		args["size"] = size
	}
	text := mustCall(t, c, "phone_upload_link", args)
	u := linkURL.FindString(text)
	if u == "" {
		t.Fatalf("phone_upload_link: no link in %q", text)
	}
	return u
}

// send sends one request to an upload link and returns its status and
// decoded JSON body.
func send(t *testing.T, method, url, auth string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %d with a body that is not JSON: %v", method, url, resp.StatusCode, err)
	}
	return resp.StatusCode, m
}

// onComputer lists the device's folder on the computer, recursively.
func (f *uploadFixture) onComputer(t *testing.T) map[string]string {
	t.Helper()
	got := map[string]string{}
	root := filepath.Join(f.files, "sim-android-1")
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error { //nolint:errcheck // a missing folder is empty
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return got
}

func TestUploadLinkOnce(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)
	u := link(t, c, "docs/big file.bin", 0)

	// A GET neither writes nor uses the link up.
	if st, m := send(t, "GET", u, "", nil); st != http.StatusMethodNotAllowed || m["error"] != "method_not_allowed" {
		t.Errorf("GET: got %d %v; want 405 method_not_allowed", st, m)
	}
	body := strings.Repeat("pinky", 1000)
	st, m := send(t, "PUT", u, "", strings.NewReader(body))
	if st != http.StatusCreated || m["path"] != "docs/big file.bin" || m["size"] != float64(len(body)) {
		t.Fatalf("PUT: got %d %v; want 201 {path, size %d}", st, m, len(body))
	}
	if got := f.onComputer(t); len(got) != 1 || got["docs/big file.bin"] != body {
		t.Errorf("on the computer: got %d files %v; want docs/big file.bin only", len(got), keys(got))
	}
	// Once only.
	if st, m := send(t, "PUT", u, "", strings.NewReader("other")); st != http.StatusGone || m["error"] != "link_used" {
		t.Errorf("second PUT: got %d %v; want 410 link_used", st, m)
	}
	if got := f.onComputer(t); got["docs/big file.bin"] != body {
		t.Errorf("the second PUT changed the file")
	}
	// An unknown link.
	bad := u[:strings.LastIndex(u, "/")+1] + strings.Repeat("A", 43)
	if st, m := send(t, "PUT", bad, "", strings.NewReader("x")); st != http.StatusNotFound || m["error"] != "unknown_link" {
		t.Errorf("unknown link: got %d %v; want 404 unknown_link", st, m)
	}

	// A history step: phone_upload, with the size but not the content.
	tasks, _ := f.store.Tasks(context.Background(), history.TaskFilter{})
	if len(tasks) != 1 {
		t.Fatalf("got %d tasks; want 1", len(tasks))
	}
	_, steps, _ := f.store.Task(context.Background(), tasks[0].ID)
	var found bool
	for _, s := range steps {
		if s.Tool == "phone_upload" {
			found = true
			if s.Outcome != "ok" || !strings.Contains(s.Args, `"bytes":5000`) || !strings.Contains(s.Args, "upload_link") || strings.Contains(s.Args, "pinkypinky") {
				t.Errorf("step: got %s %s; want ok with bytes and no content", s.Outcome, s.Args)
			}
		}
	}
	if !found {
		t.Errorf("no phone_upload step in %+v", steps)
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestUploadLinkExpires(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)
	u := link(t, c, "late.bin", 0)
	f.advance(uploadLinkTTL)
	if st, m := send(t, "PUT", u, "", strings.NewReader("late")); st != http.StatusGone || m["error"] != "link_expired" {
		t.Errorf("PUT after expiry: got %d %v; want 410 link_expired", st, m)
	}
	// Just before expiry is fine.
	u = link(t, c, "early.bin", 0)
	f.advance(uploadLinkTTL - time.Second)
	if st, m := send(t, "PUT", u, "", strings.NewReader("early")); st != http.StatusCreated {
		t.Errorf("PUT before expiry: got %d %v; want 201", st, m)
	}
	// Long after, the link is forgotten.
	f.advance(3 * uploadLinkTTL)
	if st, _ := send(t, "PUT", u, "", strings.NewReader("x")); st != http.StatusNotFound {
		t.Errorf("PUT long after: got %d; want 404", st)
	}
	if got := f.onComputer(t); len(got) != 1 || got["early.bin"] != "early" {
		t.Errorf("on the computer: got %v; want early.bin only", keys(got))
	}
}

func TestUploadLinkSizeLimits(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)

	// Content-Length over the declared size: refused before reading.
	u := link(t, c, "a.bin", 5)
	if st, m := send(t, "PUT", u, "", strings.NewReader("123456")); st != http.StatusRequestEntityTooLarge || m["error"] != "too_large" {
		t.Errorf("Content-Length over: got %d %v; want 413 too_large", st, m)
	}
	// A body without a length that turns out too long: refused while
	// reading, nothing written.
	u = link(t, c, "b.bin", 5)
	if st, m := send(t, "PUT", u, "", io.MultiReader(strings.NewReader("1234"), strings.NewReader("56"))); st != http.StatusRequestEntityTooLarge {
		t.Errorf("streamed over: got %d %v; want 413", st, m)
	}
	// At the declared size.
	u = link(t, c, "c.bin", 5)
	if st, m := send(t, "PUT", u, "", io.MultiReader(strings.NewReader("12345"))); st != http.StatusCreated {
		t.Errorf("at the size: got %d %v; want 201", st, m)
	}
	if got := f.onComputer(t); len(got) != 1 || got["c.bin"] != "12345" {
		t.Errorf("on the computer: got %v; want c.bin only (no temporary files)", keys(got))
	}
	// Over 100 MiB cannot be declared.
	text, failed := call(t, c, "phone_upload_link", map[string]any{"device": "sim-android-1", "path": "d.bin", "size": 100<<20 + 1})
	if !failed || !strings.HasPrefix(text, "invalid_argument") {
		t.Errorf("size over 100 MiB: got %v %q; want invalid_argument", failed, text)
	}
	// Nor sent without a declared size.
	u = link(t, c, "e.bin", 0)
	req := httptest.NewRequest("PUT", u, strings.NewReader("x"))
	req.ContentLength = 100<<20 + 1 // refused from the header, before any body
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("Content-Length over 100 MiB: got %d %s; want 413", rec.Code, rec.Body)
	}
	if got := f.onComputer(t); len(got) != 1 {
		t.Errorf("on the computer: got %v; want c.bin only", keys(got))
	}
}

func TestUploadLinkPathRefused(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)
	for _, p := range []string{"../escape.bin", "docs/../../x", "/etc/passwd", "bad*name.bin", "docs/"} {
		text, failed := call(t, c, "phone_upload_link", map[string]any{"device": "sim-android-1", "path": p})
		if !failed || !strings.HasPrefix(text, "invalid_argument") {
			t.Errorf("%q: got %v %q; want invalid_argument", p, failed, text)
		}
	}
	// The gateway refuses too, whatever reaches it.
	s, err := f.agents.Open(context.Background(), agent.Client{Name: "direct"}, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.CheckUpload("sim-android-1", "x.bin"); err == nil {
		t.Errorf("CheckUpload without the lease: got nil; want not_leased")
	}
	if got := f.onComputer(t); len(got) != 0 {
		t.Errorf("on the computer: got %v; want nothing", keys(got))
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(f.files), "escape.bin")); err == nil {
		t.Errorf("escape.bin written outside the files folder")
	}
}

func TestUploadLinkNeedsLease(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)
	u := link(t, c, "a.bin", 0)
	mustCall(t, c, "phone_release", map[string]any{"device": "sim-android-1"})
	if st, m := send(t, "PUT", u, "", strings.NewReader("x")); st != http.StatusConflict || m["error"] != "not_leased" {
		t.Errorf("PUT after release: got %d %v; want 409 not_leased", st, m)
	}
	// Without a lease there is no link.
	text, failed := call(t, c, "phone_upload_link", map[string]any{"device": "sim-android-1", "path": "b.bin"})
	if !failed || !strings.HasPrefix(text, "not_leased") {
		t.Errorf("link without a lease: got %v %q; want not_leased", failed, text)
	}
	if got := f.onComputer(t); len(got) != 0 {
		t.Errorf("on the computer: got %v; want nothing", keys(got))
	}
}

func TestUploadLinkAuthorization(t *testing.T) {
	f := newUploadFixture(t)
	c := f.agentWithPhone(t)
	// A wrong token is refused, and does not use the link up.
	u := link(t, c, "a.bin", 0)
	if st, m := send(t, "PUT", u, "Bearer pinky_wrong", strings.NewReader("x")); st != http.StatusUnauthorized || m["error"] != "unauthorized" {
		t.Errorf("wrong token: got %d %v; want 401", st, m)
	}
	if st, m := send(t, "PUT", u, "Bearer "+f.token, strings.NewReader("x")); st != http.StatusCreated {
		t.Errorf("right token: got %d %v; want 201", st, m)
	}
	// A link dies with its MCP session.
	u = link(t, c, "b.bin", 0)
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, m := send(t, "PUT", u, "", strings.NewReader("x"))
		if st == http.StatusGone {
			break
		}
		if st == http.StatusCreated || time.Now().After(deadline) {
			t.Fatalf("PUT after the session ended: got %d %v; want 410", st, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := f.onComputer(t); len(got) != 1 {
		t.Errorf("on the computer: got %v; want a.bin only", keys(got))
	}
}
