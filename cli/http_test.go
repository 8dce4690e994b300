package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// mcpHTTP is a remote agent speaking MCP over HTTP by hand, as any client
// library would.
type mcpHTTP struct {
	t       *testing.T
	url     string
	token   string
	session string
	nextID  int
}

// send posts one JSON-RPC message and returns the HTTP status and, for a
// request, the response's result or error.
func (c *mcpHTTP) send(method string, params any, notify bool) (int, json.RawMessage, *struct{ Message string }) {
	c.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	if !notify {
		c.nextID++
		msg["id"] = c.nextID
	}
	body, _ := json.Marshal(msg)
	req, err := http.NewRequest("POST", c.url, strings.NewReader(string(body)))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	if resp.StatusCode != http.StatusOK || notify {
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil, nil
	}
	// The answer is JSON, or an SSE stream whose last message is it.
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
			}
		}
	} else if data, err = io.ReadAll(resp.Body); err != nil {
		c.t.Fatal(err)
	}
	var out struct {
		Result json.RawMessage
		Error  *struct{ Message string }
	}
	if err := json.Unmarshal(data, &out); err != nil {
		c.t.Fatalf("%s: %v in %s", method, err, data)
	}
	return resp.StatusCode, out.Result, out.Error
}

// initialize starts a session of the named agent.
func (c *mcpHTTP) initialize(name string) {
	c.t.Helper()
	c.session = ""
	status, _, rpcErr := c.send("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1.0"},
	}, false)
	if status != http.StatusOK || rpcErr != nil || c.session == "" {
		c.t.Fatalf("initialize: HTTP %d, %v, session %q", status, rpcErr, c.session)
	}
	if status, _, _ := c.send("notifications/initialized", nil, true); status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: HTTP %d", status)
	}
}

// tool calls a tool and returns its text and whether it failed.
func (c *mcpHTTP) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	status, res, rpcErr := c.send("tools/call", map[string]any{"name": name, "arguments": args}, false)
	if status != http.StatusOK || rpcErr != nil {
		c.t.Fatalf("%s: HTTP %d, %v", name, status, rpcErr)
	}
	var r struct {
		Content []struct{ Text string }
		IsError bool
	}
	if err := json.Unmarshal(res, &r); err != nil {
		c.t.Fatal(err)
	}
	var b strings.Builder
	for _, ct := range r.Content {
		b.WriteString(ct.Text)
	}
	return b.String(), r.IsError
}

// end deletes the session, as a client does when it closes.
func (c *mcpHTTP) end() {
	c.t.Helper()
	req, _ := http.NewRequest("DELETE", c.url, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Session-Id", c.session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("DELETE session: HTTP %d", resp.StatusCode)
	}
	c.session = ""
}

func (e *env) token(args ...string) string {
	e.T.Helper()
	out, errs, code := e.Run(append([]string{"token"}, args...)...)
	tok := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(tok, "pinky_") || strings.Contains(tok, "\n") {
		e.T.Fatalf("pinky token %v: exit %d, %q, %s", args, code, out, errs)
	}
	return tok
}

func TestHTTPRefusesRemoteAddresses(t *testing.T) {
	e := newEnv(t)
	// Refused before anything listens: no address here is ever bound.
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		_, errs, code := e.Run("daemon", "--http", addr)
		if code == 0 || !strings.Contains(errs, "--allow-remote") || !strings.Contains(errs, "token") || !strings.Contains(errs, "TLS") {
			t.Errorf("daemon --http %s: exit %d, %q; want a refusal that explains why and names --allow-remote", addr, code, errs)
		}
	}
}

func TestHTTPDaemon(t *testing.T) {
	e := newEnv(t)
	// pinky token works without a daemon, and makes the token once.
	tok := e.token()
	if again := e.token(); again != tok {
		t.Errorf("a second pinky token: got another token")
	}
	if fi, err := os.Stat(filepath.Join(e.Home, "token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v; want mode 0600", err)
	}

	// --allow-remote with a loopback address changes nothing but is accepted.
	d := e.Daemon("--sim", "--http", "127.0.0.1:0", "--allow-remote")
	var st api.Status
	e.JSON(&st, "status")
	if !strings.HasPrefix(st.HTTP, "127.0.0.1:") || strings.HasSuffix(st.HTTP, ":0") {
		t.Fatalf("status: http %q; want the port the daemon listens on", st.HTTP)
	}
	url := "http://" + st.HTTP + "/mcp"
	if out, _, _ := e.Run("status"); !strings.Contains(out, url) {
		t.Errorf("pinky status does not show %s:\n%s", url, out)
	}

	anon := &mcpHTTP{t: t, url: url}
	if status, _, _ := anon.send("initialize", map[string]any{}, false); status != http.StatusUnauthorized {
		t.Errorf("initialize without a token: HTTP %d; want 401", status)
	}
	wrong := &mcpHTTP{t: t, url: url, token: tok + "x"}
	if status, _, _ := wrong.send("initialize", map[string]any{}, false); status != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: HTTP %d; want 401", status)
	}

	a := &mcpHTTP{t: t, url: url, token: tok}
	a.initialize("remote-agent")
	if text, failed := a.tool("phone_list", nil); failed || !strings.Contains(text, "sim-android-1") {
		t.Fatalf("phone_list: %v %s", failed, text)
	}
	if text, failed := a.tool("phone_connect", map[string]any{"device": "sim-android-1", "task": "unlock the phone"}); failed {
		t.Fatalf("phone_connect: %s", text)
	}
	e.JSON(&st, "status")
	if len(st.Leases) != 1 || st.Leases[0].Agent != "remote-agent" {
		t.Errorf("leases: got %+v; want one of remote-agent", st.Leases)
	}

	// The person unlocks it (agents do not type PINs).
	e.Unlock("sim-android-1")
	// A session per call: the next session of the same agent keeps the lease.
	for _, target := range []string{"Settings", "Network & internet"} {
		a.end()
		a.initialize("remote-agent")
		if text, failed := a.tool("phone_tap", map[string]any{"device": "sim-android-1", "text": target}); failed {
			t.Fatalf("phone_tap %s in a new session: %s", target, text)
		}
	}
	other := &mcpHTTP{t: t, url: url, token: tok}
	other.initialize("someone-else")
	if text, failed := other.tool("phone_tap", map[string]any{"device": "sim-android-1", "text": "Wi-Fi"}); !failed || !strings.HasPrefix(text, "lease_held") {
		t.Errorf("another agent taps: %v %q; want lease_held", failed, text)
	}

	// Rotation: the old token is refused at once, the new one works, and
	// the daemon was not restarted.
	out, errs, code := e.Run("token", "--rotate")
	rotated := strings.TrimSpace(out)
	if code != 0 || rotated == tok || !strings.HasPrefix(rotated, "pinky_") {
		t.Fatalf("pinky token --rotate: exit %d, %q, %s", code, out, errs)
	}
	if got := e.token(); got != rotated {
		t.Errorf("pinky token after rotation: got another token than --rotate printed")
	}
	if status, _, _ := a.send("tools/call", map[string]any{"name": "phone_list"}, false); status != http.StatusUnauthorized {
		t.Errorf("the old token after rotation: HTTP %d; want 401", status)
	}
	a.token = rotated
	if text, failed := a.tool("phone_observe", map[string]any{"device": "sim-android-1"}); failed {
		t.Errorf("the new token in the same session: %s", text)
	}
	e.JSON(&st, "status")
	if st.Pid != d.Process.Pid {
		t.Errorf("status pid %d; want the same daemon %d", st.Pid, d.Process.Pid)
	}
}
