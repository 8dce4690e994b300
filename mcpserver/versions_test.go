package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Over a stream, each protocol version gets output schemas and structured
// content only when it has them (2025-06-18 and later).
func TestStructuredContentByVersion(t *testing.T) {
	for _, tt := range []struct {
		version    string
		structured bool
	}{
		{mcp.ProtocolVersion20241105, false},
		{mcp.ProtocolVersion20250326, false},
		{mcp.ProtocolVersion20250618, true},
		{mcp.ProtocolVersion20251125, true},
	} {
		t.Run(tt.version, func(t *testing.T) {
			c := connectStream(t, newFake(), Options{}, client.WithProtocolVersion(tt.version))
			if got := c.ProtocolVersion(); got != tt.version {
				t.Fatalf("negotiated %q; want %q", got, tt.version)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range list.Tools {
				if got := tool.OutputSchema.Type != ""; got != tt.structured {
					t.Errorf("%s: has an output schema: got %v; want %v", tool.Name, got, tt.structured)
				}
			}
			res := callTool(t, c, "phone_list", nil)
			if got := res.StructuredContent != nil; got != tt.structured {
				t.Errorf("phone_list: has structured content: got %v; want %v", got, tt.structured)
			}
			if !strings.Contains(resultText(res), "sim-android-1") {
				t.Errorf("phone_list: text %q; want the phone either way", resultText(res))
			}
		})
	}
	// The registered tools keep their schemas, whatever a session saw.
	for _, tool := range AllTools() {
		if tool.Def.OutputSchema.Type != "object" {
			t.Errorf("%s: the inventory lost its output schema", tool.Def.Name)
		}
	}
}

// rawHTTP posts raw JSON-RPC bodies to an HTTP handler, as a client does.
type rawHTTP struct {
	t       *testing.T
	url     string
	session string
	version string // sent as MCP-Protocol-Version once set
}

func (c *rawHTTP) post(body string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.url, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
		c.session = id
	}
	return resp.StatusCode, string(b)
}

// initialize starts a session asking for version and returns the version
// the server answered.
func (c *rawHTTP) initialize(version string) string {
	c.t.Helper()
	c.session = ""
	status, body := c.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	var res struct {
		Result struct{ ProtocolVersion string }
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &res) != nil || c.session == "" {
		c.t.Fatalf("initialize %s: HTTP %d %s", version, status, body)
	}
	if status, body := c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: HTTP %d %s", status, body)
	}
	return res.Result.ProtocolVersion
}

func newHTTPTest(t *testing.T) string {
	t.Helper()
	h := NewHTTPHandler(sessionsFunc(func(context.Context) (Session, error) { return newFake(), nil }), Options{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		_ = h.Close(context.Background())
	})
	return srv.URL
}

func TestHTTPNegotiatesItsVersions(t *testing.T) {
	url := newHTTPTest(t)
	for _, tt := range []struct{ ask, want string }{
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2024-11-05", "2025-11-25"}, // before Streamable HTTP
		{"2026-07-28", "2025-11-25"}, // stateless: no sessions, no leases
		{"1999-01-01", "2025-11-25"},
	} {
		c := &rawHTTP{t: t, url: url}
		if got := c.initialize(tt.ask); got != tt.want {
			t.Errorf("initialize asking %s: got %s; want %s", tt.ask, got, tt.want)
		}
	}
}

const batchOfTwo = `[{"jsonrpc":"2.0","id":2,"method":"ping"},` +
	`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}},` +
	`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"phone_list","arguments":{}}}]`

func TestHTTPBatchOnlyUnder20250326(t *testing.T) {
	url := newHTTPTest(t)
	for _, version := range HTTPProtocolVersions {
		t.Run(version, func(t *testing.T) {
			c := &rawHTTP{t: t, url: url}
			c.initialize(version)
			if version != batchVersion {
				c.version = version
			}
			status, body := c.post(batchOfTwo)
			if version != batchVersion {
				var e struct {
					Error struct {
						Code    int
						Message string
					}
				}
				if status != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(e.Error.Message, "batch") {
					t.Errorf("a batch: HTTP %d %s; want 400 and an invalid request that names batches", status, body)
				}
				return
			}
			var answers []struct {
				ID     json.RawMessage
				Result json.RawMessage
				Error  *struct{ Message string }
			}
			if status != http.StatusOK || json.Unmarshal([]byte(body), &answers) != nil {
				t.Fatalf("a batch: HTTP %d %s; want 200 and an array", status, body)
			}
			byID := map[string]string{}
			for _, a := range answers {
				if a.Error != nil {
					t.Errorf("answer %s: error %s", a.ID, a.Error.Message)
				}
				byID[string(a.ID)] = string(a.Result)
			}
			if len(answers) != 2 || byID["2"] != "{}" || !strings.Contains(byID[`"three"`], "sim-android-1") {
				t.Errorf("a batch: got %s; want the ping's and phone_list's answers, none for the notification", body)
			}
			if status, body := c.post(`[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":98}}]`); status != http.StatusAccepted || body != "" {
				t.Errorf("a batch of notifications: HTTP %d %q; want 202 and no body", status, body)
			}
			status, body = c.post(`[{"jsonrpc":"2.0","id":5,"method":"initialize","params":{}},{"jsonrpc":"2.0","id":6,"method":"ping"}]`)
			if status != http.StatusOK || !strings.Contains(body, `"id":5,"error"`) || !strings.Contains(body, "initialize may not") || !strings.Contains(body, `"id":6,"result"`) {
				t.Errorf("a batch with initialize: HTTP %d %s; want an error for initialize and the ping served", status, body)
			}
			if status, body := c.post(`[]`); status != http.StatusBadRequest || !strings.Contains(body, "empty batch") {
				t.Errorf("an empty batch: HTTP %d %s; want 400", status, body)
			}
		})
	}
	// Without a session there is nothing to serve a batch in.
	c := &rawHTTP{t: t, url: url}
	if status, body := c.post(batchOfTwo); status != http.StatusBadRequest || !strings.Contains(body, "batch") || !strings.Contains(body, "-32600") {
		t.Errorf("a batch without a session: HTTP %d %s; want 400 and an invalid request", status, body)
	}
}

func TestHTTPRefusesUnsupportedVersionHeader(t *testing.T) {
	url := newHTTPTest(t)
	c := &rawHTTP{t: t, url: url}
	c.initialize(mcp.ProtocolVersion20250618)
	for _, tt := range []struct {
		header string
		want   int
	}{
		{"", http.StatusOK}, // 2025-03-26 clients send none
		{"2025-03-26", http.StatusOK},
		{"2025-06-18", http.StatusOK},
		{"2025-11-25", http.StatusOK},
		{"2024-11-05", http.StatusBadRequest},
		{"1999-01-01", http.StatusBadRequest},
		{"2026-07-28", http.StatusBadRequest}, // mcp-go's refusal, with the versions to use
		{"bogus", http.StatusBadRequest},
	} {
		c.version = tt.header
		if status, body := c.post(`{"jsonrpc":"2.0","id":7,"method":"ping"}`); status != tt.want {
			t.Errorf("MCP-Protocol-Version %q: HTTP %d %s; want %d", tt.header, status, body, tt.want)
		}
	}
}
