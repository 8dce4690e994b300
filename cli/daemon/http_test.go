package daemon

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/gateway/home"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// simDrivers serves the default world's two phones in-process.
type simDrivers struct{ d *sim.Driver }

func (s simDrivers) Devices() []driverhost.Device {
	return []driverhost.Device{
		{Device: sdk.Device{ID: "sim-android-1", Platform: sdk.PlatformAndroid, State: sdk.StateOnline}, Driver: "sim", Online: true},
		{Device: sdk.Device{ID: "sim-ios-1", Platform: sdk.PlatformIOS, State: sdk.StateOnline}, Driver: "sim", Online: true},
	}
}

func (s simDrivers) Drivers() []driverhost.DriverStatus {
	return []driverhost.DriverStatus{{Name: "sim", State: driverhost.StateRunning}}
}

func (s simDrivers) DriverForDevice(string) (sdk.Full, string, error) {
	return sdk.Complete(s.d), "sim", nil
}

func (s simDrivers) Serves(_ string, c sdk.Capability) bool {
	return slices.Contains(sdk.Capabilities(s.d), c)
}

func (s simDrivers) Missing(string, sdk.Capability) (sdk.MissingCap, bool) {
	return sdk.MissingCap{}, false
}

func (s simDrivers) Subscribe() (<-chan driverhost.Event, func()) {
	return make(chan driverhost.Event), func() {}
}

// httpFixture is MCP over HTTP in front of an agent manager with the
// virtual phones, on a loopback test server.
type httpFixture struct {
	url       string
	tokenPath string
	token     string
	agents    *agent.Manager
	store     *history.Memory
	logs      *testkit.Buffer
}

func newHTTPFixture(t *testing.T, grace time.Duration) *httpFixture {
	t.Helper()
	d := simtest.New(t, simtest.Unlocked(simtest.Android))
	f := &httpFixture{tokenPath: filepath.Join(t.TempDir(), "token"), store: history.NewMemory(), logs: &testkit.Buffer{}}
	log := f.logs.Logger()
	f.agents = agent.NewManager(agent.Config{Drivers: simDrivers{d}, Store: f.store, Logger: log})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.agents.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	var err error
	if f.token, err = home.EnsureToken(f.tokenPath); err != nil {
		t.Fatal(err)
	}
	h := newHTTPMCP(httpConfig{Agents: f.agents, TokenPath: f.tokenPath, Grace: grace, Logger: log})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close(context.Background())
		srv.Close()
		if t.Failed() {
			t.Logf("log:\n%s", f.logs.String())
		}
	})
	f.url = srv.URL + MCPPath
	return f
}

// connect starts an MCP session of the named agent with the token.
func (f *httpFixture) connect(t *testing.T, name, token string) *client.Client {
	t.Helper()
	// A transport rather than WithHTTPHeaders: mcp-go's client leaves its
	// headers off the DELETE that ends a session.
	hc := &http.Client{Transport: bearerTransport(token)}
	c, err := client.NewStreamableHttpClient(f.url, transport.WithHTTPBasicClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: name, Version: "1.0"},
	}}); err != nil {
		t.Fatalf("initialize %s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// bearerTransport adds the token to every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and returns its text and whether it failed.
func call(t *testing.T, c *client.Client, tool string, args map[string]any) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String(), res.IsError
}

func mustCall(t *testing.T, c *client.Client, tool string, args map[string]any) string {
	t.Helper()
	text, failed := call(t, c, tool, args)
	if failed {
		t.Fatalf("%s: %s", tool, text)
	}
	return text
}

func wantFailure(t *testing.T, c *client.Client, what, tool string, args map[string]any, code string) {
	t.Helper()
	text, failed := call(t, c, tool, args)
	if !failed || !strings.HasPrefix(text, code) {
		t.Errorf("%s: got failed=%v %q; want %s", what, failed, text, code)
	}
}

var (
	connectAndroid = map[string]any{"device": "sim-android-1", "task": "unlock the phone"}
	// tapDigit taps an element by its text. The phone is unlocked by the
	// fixture (agents do not type PINs), so the launcher is in front: the
	// "digits" open Settings and flip two of its switches.
	tapDigit = func(d string) map[string]any {
		text := map[string]string{"1": "Settings", "2": "Wi-Fi", "3": "Bluetooth"}[d]
		return map[string]any{"device": "sim-android-1", "text": text}
	}
)

// post sends one raw JSON-RPC POST.
func post(t *testing.T, url, auth, session, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`

func TestHTTPAuth(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	var calls atomic.Int32
	compared := func() int { return int(calls.Load()) }
	compareTokens = func(x, y []byte) int { calls.Add(1); return cmpConstantTime(x, y) }
	t.Cleanup(func() { compareTokens = cmpConstantTime })

	for _, tt := range []struct {
		name, auth, challenge string
	}{
		{"no header", "", `Bearer realm="pinky"`},
		{"another scheme", "Basic " + f.token, `Bearer realm="pinky"`},
		{"empty bearer", "Bearer ", `Bearer realm="pinky"`},
		{"wrong token", "Bearer pinky_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", `Bearer realm="pinky", error="invalid_token"`},
		{"token with a byte more", "Bearer " + f.token + "x", `Bearer realm="pinky", error="invalid_token"`},
		{"prefix of the token", "Bearer " + f.token[:len(f.token)-1], `Bearer realm="pinky", error="invalid_token"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := compared()
			resp := post(t, f.url, tt.auth, "", initializeBody)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("got HTTP %d; want 401", resp.StatusCode)
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("WWW-Authenticate: got %q; want %q", got, tt.challenge)
			}
			var body struct{ Error, Message string }
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Error != "unauthorized" || !strings.Contains(body.Message, "pinky token") {
				t.Errorf("body: got %+v, %v; want an unauthorized error that names `pinky token`", body, err)
			}
			if compared() != before+1 {
				t.Errorf("constant-time comparisons: got %d; want 1", compared()-before)
			}
		})
	}
	// Any path is refused without the token; with it, only /mcp exists.
	req, _ := http.NewRequest("GET", strings.TrimSuffix(f.url, MCPPath)+"/other", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("another path without a token: got HTTP %d; want 401", resp.StatusCode)
	}
	req.Header.Set("Authorization", "Bearer "+f.token)
	if resp, err = http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("another path with the token: got HTTP %d; want 404", resp.StatusCode)
	}

	before := compared()
	resp = post(t, f.url, "bearer "+f.token, "", initializeBody)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("initialize with the token: got HTTP %d %s; want 200 with a session id", resp.StatusCode, b)
	}
	if compared() != before+1 {
		t.Errorf("constant-time comparisons for an accepted request: got %d; want 1", compared()-before)
	}

	logs := f.logs.String()
	if n := strings.Count(logs, "MCP over HTTP refused a request"); n != 1 {
		t.Errorf("got %d warnings about refused requests; want 1 (rate-limited):\n%s", n, logs)
	}
	if strings.Contains(logs, f.token) || strings.Contains(logs, "pinky_AAAA") {
		t.Errorf("the log holds a token:\n%s", logs)
	}
}

var cmpConstantTime = compareTokens

func TestHTTPTokenRotation(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	old := f.token
	if resp := post(t, f.url, "Bearer "+old, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Fatalf("before rotation: got HTTP %d; want 200", resp.StatusCode)
	}
	tok, err := home.RotateToken(f.tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	if tok == old {
		t.Fatal("rotation kept the token")
	}
	if resp := post(t, f.url, "Bearer "+old, "", initializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("old token after rotation: got HTTP %d; want 401", resp.StatusCode)
	}
	if resp := post(t, f.url, "Bearer "+tok, "", initializeBody); resp.StatusCode != http.StatusOK {
		t.Errorf("new token after rotation: got HTTP %d; want 200", resp.StatusCode)
	}
	// Without a usable token file, everything is refused.
	if err := os.Remove(f.tokenPath); err != nil {
		t.Fatal(err)
	}
	if resp := post(t, f.url, "Bearer "+tok, "", initializeBody); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("after the token file was removed: got HTTP %d; want 401", resp.StatusCode)
	}
	if !strings.Contains(f.logs.String(), "no usable bearer token") {
		t.Error("the daemon did not log that it has no token")
	}
}

// An MCP session over HTTP is an agent session named by its clientInfo,
// and two agents contend for a phone as over stdio.
func TestHTTPSessionsAndContention(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	a := f.connect(t, "remote-a", f.token)
	b := f.connect(t, "remote-b", f.token)
	mustCall(t, a, "phone_connect", connectAndroid)
	ls := f.agents.Leases()
	if len(ls) != 1 || ls[0].Agent != "remote-a" {
		t.Fatalf("leases: got %+v; want one of remote-a", ls)
	}
	tasks, _ := f.store.Tasks(context.Background(), history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].AgentName != "remote-a" || tasks[0].AgentVersion != "1.0" {
		t.Errorf("tasks: got %+v; want one of remote-a 1.0", tasks)
	}
	wantFailure(t, b, "another agent connects", "phone_connect", connectAndroid, "lease_held")
	wantFailure(t, b, "another agent taps", "phone_tap", tapDigit("1"), "lease_held")
	mustCall(t, a, "phone_tap", tapDigit("1"))
}

// A client that opens a session per call keeps its lease: a new session of
// the same agent takes it over, and the task goes on.
func TestHTTPResumeBySameAgent(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	a := f.connect(t, "remote", f.token)
	mustCall(t, a, "phone_connect", connectAndroid)
	mustCall(t, a, "phone_tap", tapDigit("1"))
	a.Close() // DELETE: the session ends
	waitFor(t, "the lease is parked", func() bool {
		ls := f.agents.Leases()
		return len(ls) == 1 && !ls[0].ParkedUntil.IsZero()
	})

	b := f.connect(t, "remote", f.token)
	if ls := f.agents.Leases(); len(ls) != 1 || !ls[0].ParkedUntil.IsZero() {
		t.Errorf("leases after the new session started: got %+v; want it resumed", ls)
	}
	mustCall(t, b, "phone_tap", tapDigit("2"))
	b.Close()
	c := f.connect(t, "remote", f.token)
	mustCall(t, c, "phone_tap", tapDigit("3"))

	tasks, _ := f.store.Tasks(context.Background(), history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].Outcome != "" || tasks[0].Steps != 4 {
		t.Fatalf("tasks: got %+v; want one open task of 4 steps", tasks)
	}
	_, steps, _ := f.store.Task(context.Background(), tasks[0].ID)
	var got []string
	for _, s := range steps {
		got = append(got, s.Tool+" "+s.Outcome)
	}
	if diff := cmp.Diff([]string{"phone_connect ok", "phone_tap ok", "phone_tap ok", "phone_tap ok"}, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// Parked leases are never handed to another agent, nor to the same agent
// name with another token.
func TestHTTPNoResumeAcrossAgents(t *testing.T) {
	f := newHTTPFixture(t, time.Minute)
	a := f.connect(t, "remote", f.token)
	mustCall(t, a, "phone_connect", connectAndroid)
	a.Close()
	other := f.connect(t, "other-agent", f.token)
	wantFailure(t, other, "another agent in the grace", "phone_tap", tapDigit("1"), "lease_held")
	wantFailure(t, other, "another agent connects in the grace", "phone_connect", connectAndroid, "lease_held")
	if text := mustCall(t, other, "phone_list", nil); strings.Contains(text, `"yours":true`) {
		t.Errorf("phone_list of another agent shows the lease as its own: %s", text)
	}

	tok, err := home.RotateToken(f.tokenPath)
	if err != nil {
		t.Fatal(err)
	}
	sameNameNewToken := f.connect(t, "remote", tok)
	wantFailure(t, sameNameNewToken, "the same name with another token", "phone_tap", tapDigit("1"), "lease_held")
}

// A parked lease ends when its grace passes.
func TestHTTPResumeGraceEnds(t *testing.T) {
	f := newHTTPFixture(t, 200*time.Millisecond)
	a := f.connect(t, "remote", f.token)
	mustCall(t, a, "phone_connect", connectAndroid)
	a.Close()
	waitFor(t, "the parked lease ends", func() bool { return len(f.agents.Leases()) == 0 })
	b := f.connect(t, "remote", f.token)
	wantFailure(t, b, "the same agent after the grace", "phone_tap", tapDigit("1"), "not_leased")
	tasks, _ := f.store.Tasks(context.Background(), history.TaskFilter{})
	if len(tasks) != 1 || tasks[0].Outcome != "session_closed" {
		t.Errorf("tasks: got %+v; want one ended session_closed", tasks)
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCheckHTTPAddr(t *testing.T) {
	for _, tt := range []struct {
		addr     string
		loopback bool
	}{
		{"127.0.0.1:8765", true},
		{"127.1.2.3:0", true},
		{"[::1]:8765", true},
		{"localhost:8765", true},
		{"LocalHost:1", true},
		{"[::ffff:127.0.0.1]:80", true},
		{":8765", false},
		{"0.0.0.0:8765", false},
		{"[::]:8765", false},
		{"192.168.1.10:8765", false},
		{"10.0.0.1:1", false},
		{"[fe80::1]:8765", false},
		{"example.com:8765", false},
		{"localhost.example.com:8765", false},
		{"128.0.0.1:8765", false},
	} {
		t.Run(tt.addr, func(t *testing.T) {
			err := CheckHTTPAddr(tt.addr, false)
			if (err == nil) != tt.loopback {
				t.Fatalf("CheckHTTPAddr(%q, false): got %v; want loopback=%v", tt.addr, err, tt.loopback)
			}
			if err != nil {
				for _, why := range []string{"--allow-remote", "token", "TLS"} {
					if !strings.Contains(err.Error(), why) {
						t.Errorf("refusal %q should mention %s", err, why)
					}
				}
			}
			if err := CheckHTTPAddr(tt.addr, true); err != nil {
				t.Errorf("CheckHTTPAddr(%q, true): got %v; want it allowed", tt.addr, err)
			}
		})
	}
	for _, bad := range []string{"8765", "127.0.0.1", "127.0.0.1:http", "127.0.0.1:70000", ""} {
		if err := CheckHTTPAddr(bad, true); err == nil {
			t.Errorf("CheckHTTPAddr(%q): got nil; want an error", bad)
		}
	}
}
