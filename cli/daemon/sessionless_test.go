package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/history"
)

// idless is a client that sends no Mcp-Session-Id, as some hosted agents
// do: every request a plain POST with its token and User-Agent.
type idless struct {
	t      *testing.T
	f      *httpFixture
	ua     string
	nextID int
}

// post sends one message without a session id and returns the HTTP
// status, the response's header and its JSON-RPC message (the last of an
// SSE stream).
func (c *idless) post(msg string) (int, http.Header, map[string]any) {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.f.url, strings.NewReader(msg))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.f.token)
	req.Header.Set("User-Agent", c.ua)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(d)
			}
		}
	}
	var out map[string]any
	json.Unmarshal(data, &out) //nolint:errcheck // an empty 202 has none
	return resp.StatusCode, resp.Header, out
}

// initialize sends an initialize without a session id, as name.
func (c *idless) initialize(name string) {
	c.t.Helper()
	c.nextID++
	status, h, _ := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":%q,"version":"2"}}}`, c.nextID, name))
	if status != http.StatusOK || h.Get("Mcp-Session-Id") == "" {
		c.t.Fatalf("initialize: HTTP %d", status)
	}
	if status, _, _ := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		c.t.Fatalf("an id-less notifications/initialized: HTTP %d; want 202", status)
	}
}

// tool calls a tool without a session id and returns its text and whether
// it failed.
func (c *idless) tool(name string, args map[string]any) (string, bool) {
	c.t.Helper()
	c.nextID++
	a, _ := json.Marshal(args)
	status, _, msg := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, c.nextID, name, a))
	res, _ := msg["result"].(map[string]any)
	if status != http.StatusOK || res == nil {
		c.t.Fatalf("%s without a session id: HTTP %d %v", name, status, msg)
	}
	var b strings.Builder
	content, _ := res["content"].([]any)
	for _, ct := range content {
		if m, ok := ct.(map[string]any); ok && m["type"] == "text" {
			b.WriteString(m["text"].(string))
		}
	}
	return b.String(), res["isError"] == true
}

// TestHTTPSessionlessClient: a client that never sends a session id nor
// initialize is served in a session kept for it (its token and
// User-Agent), named by its User-Agent; its requests share that session's
// lease; another User-Agent is another client.
func TestHTTPSessionlessClient(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	c := &idless{t: t, f: f, ua: "hosted-agent/3.1 (+https://example.com)"}
	if text, failed := c.tool("phone_list", map[string]any{}); failed || !strings.Contains(text, "sim-android-1") {
		t.Fatalf("phone_list without a session: %v %s", failed, text)
	}
	if text, failed := c.tool("phone_connect", connectAndroid); failed {
		t.Fatalf("phone_connect: %s", text)
	}
	if text, failed := c.tool("phone_tap", tapDigit("1")); failed {
		t.Fatalf("phone_tap in the same kept session: %s", text)
	}
	if ls := f.agents.Leases(); len(ls) != 1 || ls[0].Agent != "hosted-agent/3.1" {
		t.Fatalf("leases: %+v; want one, of the client named by its User-Agent", ls)
	}
	other := &idless{t: t, f: f, ua: "another-agent/1"}
	if text, failed := other.tool("phone_tap", tapDigit("2")); !failed || !strings.HasPrefix(text, "lease_held") {
		t.Fatalf("another User-Agent's tap: %v %q; want lease_held", failed, text)
	}
	// A client with neither a User-Agent nor initialize has a name too.
	if got := clientName(""); got != DefaultSessionlessName {
		t.Errorf("the name of a client without a User-Agent: %q", got)
	}
	if got := clientName("bad\x1b[31mname/1 extra"); got != "bad[31mname/1" {
		t.Errorf("a User-Agent with a control character: %q", got)
	}
}

// TestHTTPSessionlessInitializePerCall: a client that sends a new
// initialize before each call, never a session id, has each call served in
// its newest initialize's session, named as it said, and its lease and
// task follow it from session to session.
func TestHTTPSessionlessInitializePerCall(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	c := &idless{t: t, f: f, ua: "python-httpx/0.27"}
	for i, step := range []struct {
		tool string
		args map[string]any
	}{{"phone_connect", connectAndroid}, {"phone_tap", tapDigit("1")}, {"phone_tap", tapDigit("2")}} {
		c.initialize("hosted")
		if text, failed := c.tool(step.tool, step.args); failed {
			t.Fatalf("call %d, %s, after a fresh initialize: %s", i+1, step.tool, text)
		}
		if ls := f.agents.Leases(); len(ls) != 1 || ls[0].Agent != "hosted" || !ls[0].ParkedUntil.IsZero() {
			t.Fatalf("leases after call %d: %+v; want hosted's, in use", i+1, ls)
		}
	}
	tasks, _ := f.store.Tasks(context.Background(), history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].Steps != 3 || tasks[0].AgentName != "hosted" {
		t.Fatalf("tasks: %+v; want one task of hosted with the 3 steps", tasks)
	}
	// A client that initializes and then sends the id it got keeps its
	// own session: its id-less neighbour does not take it over.
	var sid string
	{
		status, h, _ := c.post(`{"jsonrpc":"2.0","id":99,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tidy","version":"1"}}}`)
		sid = h.Get("Mcp-Session-Id")
		if status != http.StatusOK || sid == "" {
			t.Fatalf("initialize: %d", status)
		}
		resp := post(t, f.url, "Bearer "+f.token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized in the session: HTTP %d", resp.StatusCode)
		}
	}
	if text, failed := c.tool("phone_tap", tapDigit("3")); failed {
		t.Fatalf("the id-less call after a claimed initialize: %s", text)
	}
	if ls := f.agents.Leases(); len(ls) != 1 || ls[0].Agent != "hosted" {
		t.Fatalf("leases after a claimed initialize: %+v; want still hosted's", ls)
	}
}

// TestHTTPSessionlessGETStream: an id-less client keeps a GET stream open
// while it calls, in the same kept session; a DELETE without an id ends
// that session, and its lease waits for the client's next session.
func TestHTTPSessionlessGETStream(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	c := &idless{t: t, f: f, ua: "stream-agent/1"}
	c.initialize("streamer")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", f.url, nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", c.ua)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET without a session id: HTTP %d %s; want the session's stream", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	streamEnded := make(chan struct{})
	go func() {
		io.Copy(io.Discard, bufio.NewReader(resp.Body))
		close(streamEnded)
	}()
	for _, step := range []struct {
		tool string
		args map[string]any
	}{{"phone_connect", connectAndroid}, {"phone_tap", tapDigit("1")}} {
		if text, failed := c.tool(step.tool, step.args); failed {
			t.Fatalf("%s while the GET stream is open: %s", step.tool, text)
		}
	}
	select {
	case <-streamEnded:
		t.Fatal("the GET stream ended while the client called")
	default:
	}
	if ls := f.agents.Leases(); len(ls) != 1 || ls[0].Agent != "streamer" {
		t.Fatalf("leases: %+v", ls)
	}
	del, _ := http.NewRequest("DELETE", f.url, nil)
	del.Header.Set("Authorization", "Bearer "+f.token)
	del.Header.Set("User-Agent", c.ua)
	dresp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE without a session id: HTTP %d; want the kept session ended", dresp.StatusCode)
	}
	waitFor(t, "the lease parked", func() bool {
		ls := f.agents.Leases()
		return len(ls) == 1 && !ls[0].ParkedUntil.IsZero()
	})
	// The same client again, named as before: its lease comes back.
	c.initialize("streamer")
	if text, failed := c.tool("phone_tap", tapDigit("2")); failed {
		t.Fatalf("the tap after the DELETE and a new initialize: %s", text)
	}
}

// sseEvent is one event of an SSE stream.
type sseEvent struct {
	id   string
	data map[string]any
}

// readEvent reads the next event of an SSE stream.
func readEvent(t *testing.T, r *bufio.Reader) (sseEvent, error) {
	t.Helper()
	var ev sseEvent
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && ev.data != nil:
			return ev, nil
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
				t.Fatalf("an SSE event's data: %v: %s", err, line)
			}
		}
	}
}

// TestHTTPStreamResumes: a call whose answer is an SSE stream (progress,
// then the result) gives each event an id; when the client's connection
// drops in the middle, the call goes on, and a GET with Last-Event-ID gets
// what the client missed, the result included.
func TestHTTPStreamResumes(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	auth := "Bearer " + f.token
	resp := post(t, f.url, auth, "", initializeBody)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session")
	}
	post(t, f.url, auth, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	connect, _ := json.Marshal(connectAndroid)
	if r := post(t, f.url, auth, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"phone_connect","arguments":`+string(connect)+`}}`); r.StatusCode != http.StatusOK {
		t.Fatalf("phone_connect: HTTP %d", r.StatusCode)
	}

	// A wait that reports progress, and that the client drops after the
	// first event.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", f.url, strings.NewReader(
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"phone_wait_for","arguments":{"device":"sim-android-1","text":"Nothing shows this","timeout_ms":2500},"_meta":{"progressToken":"w1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", auth)
	req.Header.Set("Mcp-Session-Id", sid)
	wresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if ct := wresp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("the wait's answer: %s; want a stream with its progress", ct)
	}
	first, err := readEvent(t, bufio.NewReader(wresp.Body))
	if err != nil || first.id == "" || first.data["method"] != "notifications/progress" {
		t.Fatalf("the first event: %+v, %v; want progress with an event id", first, err)
	}
	cancel() // the connection drops
	wresp.Body.Close()

	greq, _ := http.NewRequest("GET", f.url, nil)
	greq.Header.Set("Authorization", auth)
	greq.Header.Set("Accept", "text/event-stream")
	greq.Header.Set("Mcp-Session-Id", sid)
	greq.Header.Set("Last-Event-ID", first.id)
	gresp, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	defer gresp.Body.Close()
	if gresp.StatusCode != http.StatusOK {
		t.Fatalf("resuming with Last-Event-ID %s: HTTP %d", first.id, gresp.StatusCode)
	}
	br := bufio.NewReader(gresp.Body)
	last := first.id
	for {
		ev, err := readEvent(t, br)
		if err != nil {
			t.Fatalf("the resumed stream ended before the result: %v", err)
		}
		if ev.id == "" || ev.id == last {
			t.Fatalf("a resumed event without a new id: %+v after %s", ev, last)
		}
		last = ev.id
		if ev.data["id"] == nil {
			continue // more progress
		}
		res, _ := ev.data["result"].(map[string]any)
		content, _ := res["content"].([]any)
		text := ""
		if len(content) > 0 {
			text, _ = content[0].(map[string]any)["text"].(string)
		}
		if ev.data["id"] != float64(3) || !strings.Contains(text, "did not show within") {
			t.Fatalf("the result resumed: %v; want the wait's own end (it went on after the drop)", ev.data)
		}
		break
	}
	// An id the store never gave is refused.
	greq.Header.Set("Last-Event-ID", "123456789")
	bad, err := http.DefaultClient.Do(greq)
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("an unknown Last-Event-ID: HTTP %d; want 400", bad.StatusCode)
	}
}

// TestHTTPSessionlessBatch: a client of 2025-03-26 that sends no session
// id may send a batch: its kept session is of that version, which has
// batches.
func TestHTTPSessionlessBatch(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	c := &idless{t: t, f: f, ua: "old-client/0.9"}
	req, _ := http.NewRequest("POST", f.url, strings.NewReader(
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"phone_list","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("User-Agent", c.ua)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK || len(out) != 2 {
		t.Fatalf("an id-less batch: HTTP %d, %v, %v; want the two answers", resp.StatusCode, out, err)
	}
	for _, m := range out {
		if m["result"] == nil {
			t.Errorf("an answer of the batch: %v; want a result", m)
		}
	}
}
