package goclients

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// versions are the protocol versions Pinky serves over HTTP.
var versions = []string{"2025-03-26", "2025-06-18", "2025-11-25"}

// rawClient speaks MCP over HTTP by hand, with net/http, so that a test
// controls every header and body.
type rawClient struct {
	t       *testing.T
	url     string
	token   string
	session string
	version string // sent as MCP-Protocol-Version when set
}

// reply is an HTTP answer: its status and body, the body's last JSON-RPC
// message when it was an event stream.
type reply struct {
	status int
	body   string
}

// post sends body with the client's headers and more (name, value pairs).
func (c *rawClient) post(body string, headers ...string) reply {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	var b []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				b = []byte(strings.TrimSpace(d))
			}
		}
	} else if b, err = io.ReadAll(resp.Body); err != nil {
		c.t.Fatal(err)
	}
	return reply{resp.StatusCode, strings.TrimSpace(string(b))}
}

// initialize starts a session asking for version, and returns the version
// the server answered.
func (c *rawClient) initialize(version string) string {
	c.t.Helper()
	c.session, c.version = "", ""
	r := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"goclients-raw","version":"` + version + `"}}}`)
	var res struct {
		Result struct{ ProtocolVersion string }
	}
	if r.status != http.StatusOK || json.Unmarshal([]byte(r.body), &res) != nil || c.session == "" {
		c.t.Fatalf("initialize %s: HTTP %d %s; want a session", version, r.status, r.body)
	}
	if r := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); r.status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: HTTP %d %s", r.status, r.body)
	}
	return res.Result.ProtocolVersion
}

// rpcError decodes a JSON-RPC error answer; ok is false for anything else.
func rpcError(body string) (code int, msg string, ok bool) {
	var e struct {
		Error *struct {
			Code    int
			Message string
		}
	}
	if json.Unmarshal([]byte(body), &e) != nil || e.Error == nil {
		return 0, "", false
	}
	return e.Error.Code, e.Error.Message, true
}

const (
	ping         = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	toolsList    = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	phoneList    = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"phone_list","arguments":{}}}`
	invalidReq   = -32600
	batchOfThree = `[` + ping + `,{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":77}},` + phoneList + `]`
)

// TestVersionsOverHTTP holds each protocol version to what it says, with
// raw requests to the daemon.
func TestVersionsOverHTTP(t *testing.T) {
	r := newRig(t)
	u, err := url.Parse(r.url)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			c := &rawClient{t: t, url: r.url, token: r.token}
			if got := c.initialize(v); got != v {
				t.Fatalf("initialize asking %s: answered %s", v, got)
			}
			if v != "2025-03-26" {
				c.version = v // from 2025-06-18 on, clients send it
			}

			// Output schemas and structured content only from 2025-06-18.
			list := c.post(toolsList)
			call := c.post(phoneList)
			if list.status != http.StatusOK || call.status != http.StatusOK || !strings.Contains(call.body, device) {
				t.Fatalf("tools/list: HTTP %d; phone_list: HTTP %d %s", list.status, call.status, call.body)
			}
			if got := strings.Contains(list.body, `"outputSchema"`); got != hasStructured(v) {
				t.Errorf("tools/list: outputSchema present %v; want %v", got, hasStructured(v))
			}
			if got := strings.Contains(call.body, `"structuredContent"`); got != hasStructured(v) {
				t.Errorf("phone_list: structuredContent present %v; want %v: %s", got, hasStructured(v), call.body)
			}

			// A batch under 2025-03-26; none after.
			b := c.post(batchOfThree)
			if v == "2025-03-26" {
				var answers []struct {
					ID     int
					Result json.RawMessage
				}
				if b.status != http.StatusOK || json.Unmarshal([]byte(b.body), &answers) != nil || len(answers) != 2 {
					t.Errorf("a batch: HTTP %d %s; want an array of two answers", b.status, b.body)
				}
				for _, a := range answers {
					if (a.ID == 2 && string(a.Result) != "{}") || (a.ID == 4 && !strings.Contains(string(a.Result), device)) || (a.ID != 2 && a.ID != 4) {
						t.Errorf("a batch's answer %d: %s", a.ID, a.Result)
					}
				}
			} else if code, msg, ok := rpcError(b.body); b.status != http.StatusBadRequest || !ok || code != invalidReq || !strings.Contains(msg, "batch") {
				t.Errorf("a batch: HTTP %d %s; want 400 and a JSON-RPC invalid request that names batches", b.status, b.body)
			}

			// The Origin rule does not depend on the version.
			for _, tt := range []struct {
				origin string
				want   int
			}{
				{"", http.StatusOK},
				{"http://127.0.0.1:" + port, http.StatusOK},
				{"http://localhost:" + port, http.StatusOK},
				{"http://evil.example", http.StatusForbidden},
				{"http://127.0.0.1.evil.example:" + port, http.StatusForbidden},
				{"null", http.StatusForbidden},
			} {
				var got reply
				if tt.origin == "" {
					got = c.post(ping)
				} else {
					got = c.post(ping, "Origin", tt.origin)
				}
				if got.status != tt.want {
					t.Errorf("Origin %q: HTTP %d %s; want %d", tt.origin, got.status, got.body, tt.want)
				}
			}

			// An unknown MCP-Protocol-Version is a Bad Request.
			for _, header := range []string{"1999-01-01", "2024-11-05", "bogus"} {
				if got := c.post(ping, "Mcp-Protocol-Version", header); got.status != http.StatusBadRequest {
					t.Errorf("MCP-Protocol-Version %s: HTTP %d %s; want 400", header, got.status, got.body)
				}
			}
			if got := c.post(ping, "Mcp-Protocol-Version", v); got.status != http.StatusOK {
				t.Errorf("MCP-Protocol-Version %s (the session's): HTTP %d %s; want 200", v, got.status, got.body)
			}
		})
	}
	// A version not served over HTTP is answered with the newest that is.
	c := &rawClient{t: t, url: r.url, token: r.token}
	if got := c.initialize("2024-11-05"); got != "2025-11-25" {
		t.Errorf("initialize asking 2024-11-05: answered %s; want 2025-11-25", got)
	}
}

// TestClientsAskForEachVersion: each client library, asking for each
// version, over HTTP and over stdio, gets it, and with it output schemas
// and structured content exactly when the version has them.
func TestClientsAskForEachVersion(t *testing.T) {
	r := newRig(t)
	for _, c := range connectors {
		for _, tr := range r.transports() {
			for _, v := range versions {
				t.Run(c.name+"/"+tr.name+"/"+v, func(t *testing.T) {
					ctx := testContext(t)
					a, err := c.connect(ctx, tr.conn, v)
					if err != nil {
						t.Fatal(err)
					}
					defer a.close()
					if got := a.version(); got != v {
						t.Fatalf("negotiated %s; want %s", got, v)
					}
					tools, err := a.tools(ctx)
					if err != nil {
						t.Fatalf("tools/list: %v", err)
					}
					schemas := checkTools(t, v, tools)
					res, err := a.call(ctx, "phone_list", nil)
					if err != nil || res.IsError || !strings.Contains(res.Text, device) {
						t.Fatalf("phone_list: %v, %+v", err, res)
					}
					checkStructured(t, v, "phone_list", res, schemas)
				})
			}
		}
	}
}
