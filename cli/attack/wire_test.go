package attack_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// remote is an agent (or a web page) speaking MCP over HTTP by hand.
type remote struct {
	t       *testing.T
	url     string
	token   string
	session string
}

// httpDaemon starts a daemon with MCP over HTTP on a free loopback port
// and returns a remote agent with its token.
func httpDaemon(t *testing.T, e *e2e.Env) *remote {
	t.Helper()
	e.Daemon("--sim", "--console", "off", "--http", "127.0.0.1:0")
	var st api.Status
	e.JSON(&st, "status")
	tok, errs, code := e.Run("token")
	if code != 0 || st.HTTP == "" {
		t.Fatalf("pinky token: %s; status http %q", errs, st.HTTP)
	}
	return &remote{t: t, url: "http://" + st.HTTP + "/mcp", token: strings.TrimSpace(tok)}
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"remote","version":"1"}}}`

// post sends one body with an Origin (none when empty) and returns the
// status and the JSON-RPC message answered (the last of an event stream).
func (c *remote) post(origin string, body []byte) (int, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	if id := res.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	data, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var msg map[string]any
	json.Unmarshal(data, &msg)
	return res.StatusCode, msg
}

// TestHTTPRefusesForeignOrigins: a web page of another site, in the
// person's browser, calls MCP over HTTP with the right bearer token (a
// token pasted into a web tool, or DNS rebinding): 403, whatever the
// token. Agents send no Origin and are served, as are the daemon's own
// loopback origins.
func TestHTTPRefusesForeignOrigins(t *testing.T) {
	e := e2e.New(t)
	c := httpDaemon(t, e)
	port := c.url[strings.LastIndex(c.url[:len(c.url)-len("/mcp")], ":")+1 : len(c.url)-len("/mcp")]
	for _, tt := range []struct {
		origin string
		want   int
	}{
		{"http://evil.example", http.StatusForbidden},
		{"https://evil.example", http.StatusForbidden},
		{"null", http.StatusForbidden},
		{"http://127.0.0.1:1", http.StatusForbidden}, // another port of this computer: another program's page
		{"http://127.0.0.1.evil.example:" + port, http.StatusForbidden},
		{"file://", http.StatusForbidden},
		{"", http.StatusOK}, // an agent
		{"http://127.0.0.1:" + port, http.StatusOK},
		{"http://localhost:" + port, http.StatusOK},
		{"http://[::1]:" + port, http.StatusOK},
	} {
		c.session = ""
		status, msg := c.post(tt.origin, []byte(initialize))
		if status != tt.want {
			t.Errorf("initialize with Origin %q: HTTP %d %v; want %d", tt.origin, status, msg, tt.want)
		}
		if tt.want == http.StatusForbidden && (msg["error"] != "forbidden_origin" || !strings.Contains(msg["message"].(string), "no Origin")) {
			t.Errorf("Origin %q refused with %v; want forbidden_origin saying what is served", tt.origin, msg)
		}
	}
}

// TestTokenFileOthersCanReadIsRefused: the token file is made readable by
// the group or by everyone, or given to another user, after the daemon
// loaded it: the daemon refuses the token from the next request on, and
// `pinky token` refuses to print it, saying what to run, as ssh does with
// a private key; a daemon does not start with it. chmod 600 makes it work
// again.
func TestTokenFileOthersCanReadIsRefused(t *testing.T) {
	e := e2e.New(t)
	c := httpDaemon(t, e)
	path := filepath.Join(e.Home, "token")
	if status, _ := c.post("", []byte(initialize)); status != http.StatusOK {
		t.Fatalf("initialize with the token: HTTP %d", status)
	}
	refused := func(why, want string) {
		t.Helper()
		c.session = ""
		if status, msg := c.post("", []byte(initialize)); status != http.StatusUnauthorized {
			t.Errorf("%s: the daemon answers HTTP %d %v; want 401", why, status, msg)
		}
		out, errs, code := e.Run("token")
		if code == 0 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("%s: pinky token exit %d, printed %q, said %q; want a refusal saying %q", why, code, out, errs, want)
		}
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		refused(mode.String(), "are too open")
		_, errs, _ := e.Run("token")
		if !strings.Contains(errs, "chmod 600 "+path) {
			t.Errorf("pinky token on a %v token says %q; want it to say to run chmod 600 %s", mode, errs, path)
		}
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	c.session = ""
	if status, _ := c.post("", []byte(initialize)); status != http.StatusOK {
		t.Errorf("after chmod 600: HTTP %d; want the token accepted again", status)
	}
	if os.Getuid() == 0 { // only root can give a file away; CI runs as root
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		refused("owned by uid 65534", "owned by another user")
		if err := os.Chown(path, 0, 0); err != nil {
			t.Fatal(err)
		}
	}

	// A daemon does not start on a token others may read.
	if _, errs, code := e.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := exec.CommandContext(ctx, e2e.Bin.Pinky, "daemon", "--console", "off", "--http", "127.0.0.1:0")
	d.Env = e.Cmd().Env
	out, err := d.CombinedOutput()
	if err == nil || ctx.Err() != nil || !strings.Contains(string(out), "permissions 0644 for "+path+" are too open") {
		t.Errorf("pinky daemon with a 0644 token: %v (context %v):\n%s\nwant it to refuse to start, saying why", err, ctx.Err(), out)
	}
}

// deep is a request whose params nest n arrays.
func deep(id string, n int) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`
}

// TestDeepAndMarkedRequestsAreAnswered: over pinky mcp's stdio, an agent
// sends a request nested 10,001 levels deep, a line of nothing but
// nesting, and a request after a UTF-8 byte-order mark. The deep request
// gets a parse error with its id (the other line, with none: null), the
// marked one is served, and the bridge goes on serving.
func TestDeepAndMarkedRequestsAreAnswered(t *testing.T) {
	e := e2e.New(t)
	r := e.RawMCP()
	r.Send(deep("41", 10001))
	if res := r.Response("41"); res.Error == nil || res.Error.Code != -32700 || !strings.Contains(res.Error.Message, "nest") {
		t.Errorf("a request nested 10,001 deep: %v; want parse error -32700 with its id, saying why", res)
	}
	r.Send(strings.Repeat("[", 20000) + strings.Repeat("]", 20000))
	if res := r.Response("null"); res.Error == nil || res.Error.Code != -32700 {
		t.Errorf("a line of nesting: %v; want parse error -32700 with id null", res)
	}
	r.Send(deep("45", 900)) // deep, but within the limit: served
	if res := r.Response("45"); res.Error != nil && res.Error.Code == -32700 {
		t.Errorf("a request nested 900 deep: %v; want it parsed", res)
	}
	r.Send("\ufeff" + `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`)
	if res := r.Response("42"); res.Error != nil || res.Result == nil {
		t.Errorf("tools/list after a byte-order mark: %v; want it served", res)
	}
	r.Send(`{"jsonrpc":"2.0","id":43,"method":"ping"}`)
	if res := r.Response("43"); res.Error != nil {
		t.Errorf("ping after them: %v; want it answered", res)
	}
}

// TestDeepAndMarkedRequestsOverHTTP: the same over MCP over HTTP.
func TestDeepAndMarkedRequestsOverHTTP(t *testing.T) {
	e := e2e.New(t)
	c := httpDaemon(t, e)
	// initialize itself after a byte-order mark opens a session.
	status, msg := c.post("", append([]byte("\ufeff"), initialize...))
	if status != http.StatusOK || c.session == "" || msg["result"] == nil {
		t.Fatalf("initialize after a byte-order mark: HTTP %d %v, session %q; want a session", status, msg, c.session)
	}
	c.post("", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	status, msg = c.post("", []byte(deep("44", 10001)))
	rpcErr, _ := msg["error"].(map[string]any)
	if status != http.StatusBadRequest || rpcErr == nil || rpcErr["code"] != -32700.0 || msg["id"] != 44.0 {
		t.Errorf("a request nested 10,001 deep: HTTP %d %v; want 400 with parse error -32700 and id 44", status, msg)
	}
	status, msg = c.post("", []byte("\ufeff"+`{"jsonrpc":"2.0","id":46,"method":"tools/list"}`))
	if status != http.StatusOK || msg["result"] == nil {
		t.Errorf("tools/list after a byte-order mark: HTTP %d %v; want it served", status, msg)
	}
	if status, msg = c.post("", []byte(`{"jsonrpc":"2.0","id":47,"method":"ping"}`)); status != http.StatusOK || msg["result"] == nil {
		t.Errorf("ping after them: HTTP %d %v; want it answered", status, msg)
	}
}

// TestFilesListOnAFile: phone_files list on a path that is a file lists
// that one file, where it is, instead of failing with internal.
func TestFilesListOnAFile(t *testing.T) {
	e := e2e.New(t)
	e.Daemon("--sim", "--console", "off")
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "look at a file"), "Pixel Launcher")
	one := func(p, where string) {
		t.Helper()
		r := h.Call("phone_files", with("path", p))
		files, _ := r.Structured["files"].([]any)
		if r.IsError || len(files) != 1 {
			t.Fatalf("phone_files list %s: error=%v %q %v; want that one file", p, r.IsError, r.Text, r.Structured)
		}
		f := files[0].(map[string]any)
		if f["name"] != filepath.Base(p) || f["dir"] == true || f["where"] != where {
			t.Errorf("phone_files list %s: %v; want %s, a file, where %s", p, f, filepath.Base(p), where)
		}
	}
	one("welcome.txt", "phone") // the virtual phone's Pinky folder has it
	h.OK("phone_upload", with("path", "welcome.txt", "content_base64", "b3RoZXIgYnl0ZXM="), "")
	one("welcome.txt", "differs")
	h.OK("phone_upload", with("path", "notes/only-here.txt", "content_base64", "aGk="), "")
	one("notes/only-here.txt", "computer")
	h.Fails("phone_files", with("path", "notes/missing.txt"), "not_found")
	h.Fails("phone_files", with("path", "missing.txt"), "not_found")
	if text := h.OK("phone_files", with("path", "notes"), "only-here.txt"); strings.Contains(text, "welcome.txt") {
		t.Errorf("phone_files list notes: %q; want the folder's entries only", text)
	}
	h.OK("phone_files", with(), "welcome.txt")
}
