package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// wildClient is an MCP client over HTTP as some hosted agents are: it
// never sends an Mcp-Session-Id, and may send a new initialize before
// each call.
type wildClient struct {
	t      *testing.T
	url    string
	token  string
	ua     string
	nextID int
}

// post sends a message without a session id; for a request it returns
// the last JSON-RPC message of the answer (JSON, or an SSE stream).
func (c *wildClient) post(ctx context.Context, msg string, hdr ...string) *http.Response {
	c.t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", c.url, strings.NewReader(msg))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", c.ua)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

func lastMessage(t *testing.T, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("HTTP %d: %v: %s", resp.StatusCode, err, data)
	}
	return m
}

func (c *wildClient) initialize(name string) {
	c.t.Helper()
	c.nextID++
	resp := c.post(context.Background(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`, c.nextID, name))
	if m := lastMessage(c.t, resp); resp.StatusCode != http.StatusOK || m["result"] == nil {
		c.t.Fatalf("initialize: HTTP %d %v", resp.StatusCode, m)
	}
	resp = c.post(context.Background(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("id-less notifications/initialized: HTTP %d", resp.StatusCode)
	}
}

func (c *wildClient) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	c.nextID++
	a, _ := json.Marshal(args)
	resp := c.post(context.Background(), fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.nextID, name, a))
	m := lastMessage(c.t, resp)
	res, _ := m["result"].(map[string]any)
	if resp.StatusCode != http.StatusOK || res == nil {
		c.t.Fatalf("%s: HTTP %d %v", name, resp.StatusCode, m)
	}
	text := ""
	content, _ := res["content"].([]any)
	for _, ct := range content {
		if mm, ok := ct.(map[string]any); ok && mm["type"] == "text" {
			text += mm["text"].(string)
		}
	}
	return text, res["isError"] == true
}

// TestHTTPClientsInTheWild: through the real daemon, a client that sends
// no session id, a new initialize per call and keeps a GET stream open
// while it calls does a task; its lease follows it from session to
// session; and a call whose stream drops is resumed with Last-Event-ID,
// its result included.
func TestHTTPClientsInTheWild(t *testing.T) {
	e := newEnv(t)
	tok := e.token()
	e.Daemon("--sim", "--http", "127.0.0.1:0")
	var st api.Status
	e.JSON(&st, "status")
	url := "http://" + st.HTTP + "/mcp"
	e.Unlock("sim-android-1")
	c := &wildClient{t: t, url: url, token: tok, ua: "hosted-agent/2.0 (cloud)"}

	// The GET stream, opened after the first initialize, without an id.
	c.initialize("hosted")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	greq, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	greq.Header.Set("Authorization", "Bearer "+tok)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("User-Agent", c.ua)
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	defer gresp.Body.Close()
	if gresp.StatusCode != http.StatusOK {
		t.Fatalf("an id-less GET stream: HTTP %d", gresp.StatusCode)
	}
	if text, failed := c.tool("phone_connect", map[string]any{"device": "sim-android-1", "task": "a note from the cloud"}); failed {
		t.Fatalf("phone_connect: %s", text)
	}
	for _, target := range []string{"Notes", "Back"} {
		c.initialize("hosted") // a new initialize before each call
		args := map[string]any{"device": "sim-android-1", "text": target}
		if target == "Back" {
			args = map[string]any{"device": "sim-android-1", "key": "back"}
			if text, failed := c.tool("phone_key", args); failed {
				t.Fatalf("phone_key after a fresh initialize: %s", text)
			}
			continue
		}
		if text, failed := c.tool("phone_tap", args); failed {
			t.Fatalf("phone_tap after a fresh initialize: %s", text)
		}
	}
	e.JSON(&st, "status")
	if len(st.Leases) != 1 || st.Leases[0].Agent != "hosted" || st.Leases[0].Steps != 3 || !st.Leases[0].ParkedUntil.IsZero() {
		t.Fatalf("the lease after three sessions: %+v; want hosted's, with the task's 3 steps, in use", st.Leases)
	}

	// A wait whose stream drops after its first progress event: the call
	// goes on, and the client resumes it.
	c.initialize("hosted")
	wctx, wcancel := context.WithCancel(context.Background())
	wresp := c.post(wctx, `{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"phone_wait_for","arguments":{"device":"sim-android-1","text":"Nothing shows this","timeout_ms":2000},"_meta":{"progressToken":"w"}}}`)
	sid := wresp.Header.Get("Mcp-Session-Id")
	br := bufio.NewReader(wresp.Body)
	var lastID string
	for lastID == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the wait's stream: %v", err)
		}
		lastID, _ = strings.CutPrefix(strings.TrimSpace(line), "id: ")
	}
	wcancel()
	wresp.Body.Close()
	if sid == "" {
		t.Fatal("the answer of an id-less call does not name its session")
	}
	rreq, _ := http.NewRequest("GET", url, nil)
	rreq.Header.Set("Authorization", "Bearer "+tok)
	rreq.Header.Set("Accept", "text/event-stream")
	rreq.Header.Set("User-Agent", c.ua) // no session id: the client's kept session
	rreq.Header.Set("Last-Event-ID", lastID)
	rresp, err := http.DefaultClient.Do(rreq)
	if err != nil {
		t.Fatal(err)
	}
	defer rresp.Body.Close()
	sc := bufio.NewScanner(rresp.Body)
	sc.Buffer(nil, 4<<20)
	var result string
	for sc.Scan() && result == "" {
		d, ok := strings.CutPrefix(sc.Text(), "data: ")
		if ok && strings.Contains(d, `"id":77`) {
			result = d
		}
	}
	if !strings.Contains(result, "did not show within") {
		t.Fatalf("the resumed stream's result: %q; want the wait's own end, after the drop", result)
	}
}
