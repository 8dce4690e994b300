package mcpserver

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestInitialize(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts []client.ClientOption
	}{
		{"initialize handshake", []client.ClientOption{client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION)}},
		{"stateless protocol", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var (
				mu  sync.Mutex
				got []agent.Client
				ids []string
			)
			opts := Options{Version: "1.2.3", OnInitialize: func(ctx context.Context, c agent.Client) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, c)
				ids = append(ids, SessionID(ctx))
				if info, ok := ClientInfo(ctx); !ok || info != c {
					t.Errorf("ClientInfo: got %v, %v; want %v", info, ok, c)
				}
			}}
			c := connectServer(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
				return ServeStream(ctx, newFake(), r, w, opts)
			}, tt.opts...)
			// A few requests: OnInitialize must still be called only once.
			callTool(t, c, "phone_list", nil)
			callTool(t, c, "phone_list", nil)
			mu.Lock()
			defer mu.Unlock()
			if want := []agent.Client{{Name: "test-agent", Version: "1.2"}}; !cmp.Equal(got, want) {
				t.Errorf("OnInitialize: got %v; want %v", got, want)
			}
			if len(ids) != 1 || !strings.HasPrefix(ids[0], "stream-") {
				t.Errorf("session ids: got %q; want one stream session", ids)
			}
		})
	}
}

func TestToolsList(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("readOnly=%v", readOnly), func(t *testing.T) {
			c := connectStream(t, newFake(), Options{ReadOnly: readOnly})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tool := range list.Tools {
				got = append(got, tool.Name)
				a := tool.Annotations
				if a.Title == "" || a.ReadOnlyHint == nil || a.DestructiveHint == nil || a.IdempotentHint == nil || a.OpenWorldHint == nil {
					t.Errorf("%s: got annotations %+v; want all set", tool.Name, a)
				}
				if readOnly && !*a.ReadOnlyHint {
					t.Errorf("%s: listed in read-only mode but not read-only", tool.Name)
				}
				if *a.ReadOnlyHint && *a.DestructiveHint {
					t.Errorf("%s: both read-only and destructive", tool.Name)
				}
			}
			slices.Sort(got)
			var want []string
			for _, tool := range AllTools() {
				if !readOnly || tool.ReadOnly() {
					want = append(want, tool.Def.Name)
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if !readOnly && len(got) != 22 {
				t.Errorf("got %d tools; want 22", len(got))
			}
			if readOnly {
				wantRO := []string{"phone_apps", "phone_connect", "phone_list", "phone_notifications", "phone_observe", "phone_release", "phone_wait_for"}
				if diff := cmp.Diff(wantRO, got); diff != "" {
					t.Errorf("read-only tools (-want +got):\n%s", diff)
				}
				_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "phone_tap",
					Arguments: map[string]any{"device": "sim-android-1", "ref": 1}}})
				if err == nil {
					t.Errorf("phone_tap in read-only mode: got no error; want the tool to be unknown")
				}
			}
		})
	}
}

func TestUnknownToolIsProtocolError(t *testing.T) {
	c := connectStream(t, newFake(), Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "phone_fly"}})
	if err == nil {
		t.Fatalf("got result %+v; want a JSON-RPC error", res)
	}
	if !strings.Contains(err.Error(), "phone_fly") {
		t.Errorf("got %v; want it to name the tool", err)
	}
}

func TestProgressNotifications(t *testing.T) {
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_wait_for", map[string]any{"device": "sim-android-1", "text": "Sent"}},
		{"phone_tap", map[string]any{"device": "sim-android-1", "ref": 3}},
		{"phone_ask_person", map[string]any{"device": "sim-android-1", "message": "Please sign in."}},
		{"phone_approval", map[string]any{"id": "ap_1"}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			fake := newFake()
			fake.wait = func(ctx context.Context, progress agent.Progress) error {
				if progress == nil {
					return fmt.Errorf("no progress func")
				}
				progress(1, 3, "waiting for the person")
				progress(2, 3, "")
				progress(1, 3, "late") // never backwards
				return nil
			}
			c := connectStream(t, fake, Options{})
			var (
				mu  sync.Mutex
				got []map[string]any
			)
			c.OnNotification(func(n mcp.JSONRPCNotification) {
				if n.Method != "notifications/progress" {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				got = append(got, n.Params.AdditionalFields)
			})
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req := mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tt.tool, Arguments: tt.args,
				Meta: &mcp.Meta{ProgressToken: "tok-1"}}}
			res, err := c.CallTool(ctx, req)
			if err != nil || res.IsError {
				t.Fatalf("got %v, %q; want success", err, resultText(res))
			}
			// The notifications are written before the result, but the
			// client hands them to handlers on its own goroutine.
			testkit.Poll(testkit.Limit, func() bool { // the comparison below says what is missing
				mu.Lock()
				defer mu.Unlock()
				return len(got) >= 3
			})
			mu.Lock()
			defer mu.Unlock()
			want := []map[string]any{
				{"progressToken": "tok-1", "progress": 1.0, "total": 3.0, "message": "waiting for the person"},
				{"progressToken": "tok-1", "progress": 2.0, "total": 3.0},
				{"progressToken": "tok-1", "progress": 2.0, "total": 3.0, "message": "late"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("progress notifications (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNoProgressTokenNoProgress(t *testing.T) {
	fake := newFake()
	fake.wait = func(ctx context.Context, progress agent.Progress) error {
		if progress != nil {
			return fmt.Errorf("got a progress func without a progress token")
		}
		return nil
	}
	c := connectStream(t, fake, Options{})
	if res := callTool(t, c, "phone_wait_for", map[string]any{"device": "sim-android-1", "text": "x"}); res.IsError {
		t.Errorf("got %q; want success", resultText(res))
	}
}

func TestClientCancellationCancelsSession(t *testing.T) {
	for tool, args := range map[string]map[string]any{
		"phone_ask_person": {"device": "sim-android-1", "message": "Please sign in."},
		"phone_wait_for":   {"device": "sim-android-1", "text": "Sent", "timeout_ms": 50000},
		"phone_approval":   {"id": "ap_1"},
	} {
		t.Run(tool, func(t *testing.T) {
			started := make(chan struct{})
			stopped := make(chan error, 1)
			fake := newFake()
			fake.wait = func(ctx context.Context, progress agent.Progress) error {
				close(started)
				select {
				case <-ctx.Done():
					stopped <- ctx.Err()
					return ctx.Err()
				case <-time.After(10 * time.Second):
					stopped <- nil
					return nil
				}
			}
			c := connectStream(t, fake, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool, Arguments: args}})
				errc <- err
			}()
			select {
			case <-started:
			case <-time.After(5 * time.Second):
				t.Fatal("the session was never called")
			}
			cancel()
			if err := <-errc; err == nil {
				t.Errorf("CallTool: got nil; want the cancellation")
			}
			select {
			case err := <-stopped:
				if err == nil {
					t.Errorf("session ctx: got no cancellation; want context.Canceled")
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the session's ctx was not cancelled after the client cancelled")
			}
		})
	}
}

// Two streams served at once keep their sessions apart: mcp-go's own
// StdioServer shares one session per process and would mix them.
func TestConcurrentStreams(t *testing.T) {
	var (
		mu    sync.Mutex
		names = map[string]string{} // session id → client name
	)
	opts := Options{OnInitialize: func(ctx context.Context, c agent.Client) {
		mu.Lock()
		defer mu.Unlock()
		names[SessionID(ctx)] = c.Name
	}}
	release := make(chan struct{})
	started := make(chan struct{}, 2)
	fakes := []*fakeSession{newFake(), newFake()}
	var clients []*client.Client
	for _, f := range fakes {
		f.wait = func(ctx context.Context, progress agent.Progress) error {
			started <- struct{}{}
			<-release // both calls are in flight together
			return nil
		}
		clients = append(clients, connectServer(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
			return ServeStream(ctx, f, r, w, opts)
		}))
	}
	var wg sync.WaitGroup
	for i, c := range clients {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "phone_launch",
				Arguments: map[string]any{"device": "sim-android-1", "app": fmt.Sprintf("app-%d", i)}}})
			if err != nil || res.IsError {
				t.Errorf("client %d: got %v, %+v; want success", i, err, res)
			}
		})
	}
	for range fakes {
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("the calls did not reach their sessions")
		}
	}
	close(release)
	wg.Wait()
	for i, f := range fakes {
		want := []fakeCall{{Method: "Act", Device: "sim-android-1", Arg: agent.Action{Tool: "phone_launch", Kind: "launch", App: fmt.Sprintf("app-%d", i)}}}
		if diff := cmp.Diff(want, f.Calls()); diff != "" {
			t.Errorf("session %d calls (-want +got):\n%s", i, diff)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(names) != 2 {
		t.Errorf("got sessions %v; want two distinct sessions", names)
	}
}

// Over HTTP each MCP session id is one agent session, and the daemon
// learns when a session starts and ends.
func TestHTTPHandler(t *testing.T) {
	var (
		mu     sync.Mutex
		inits  = map[string]agent.Client{}
		closed []string
		used   []string
	)
	fake := newFake()
	sessions := sessionsFunc(func(ctx context.Context) (Session, error) {
		mu.Lock()
		defer mu.Unlock()
		used = append(used, SessionID(ctx))
		return fake, nil
	})
	h := NewHTTPHandler(sessions, Options{
		OnInitialize: func(ctx context.Context, c agent.Client) {
			mu.Lock()
			defer mu.Unlock()
			inits[SessionID(ctx)] = c
		},
		OnSessionClosed: func(id string) {
			mu.Lock()
			defer mu.Unlock()
			closed = append(closed, id)
		},
	})
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer func() { _ = h.Close(context.Background()) }()

	c, err := client.NewStreamableHttpClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "remote-agent", Version: "9"},
	}}); err != nil {
		t.Fatal(err)
	}
	sessionID := c.GetSessionId()
	if sessionID == "" {
		t.Fatal("got no session id; want a session-oriented protocol")
	}
	fake.wait = func(ctx context.Context, progress agent.Progress) error {
		if progress != nil {
			progress(1, 0, "working")
		}
		return nil
	}
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "phone_tap",
		Arguments: map[string]any{"device": "sim-android-1", "ref": 3}, Meta: &mcp.Meta{ProgressToken: 7}}})
	if err != nil || res.IsError {
		t.Fatalf("phone_tap: got %v, %+v; want success", err, res)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(map[string]agent.Client{sessionID: {Name: "remote-agent", Version: "9"}}, inits); diff != "" {
		t.Errorf("OnInitialize (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sessionID}, used); diff != "" {
		t.Errorf("Sessions saw session ids (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sessionID}, closed); diff != "" {
		t.Errorf("OnSessionClosed (-want +got):\n%s", diff)
	}
}

// A session id the handler did not mint is refused.
func TestHTTPUnknownSession(t *testing.T) {
	h := NewHTTPHandler(sessionsFunc(func(context.Context) (Session, error) { return newFake(), nil }), Options{})
	defer func() { _ = h.Close(context.Background()) }()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"phone_list"}}`
	req := httptest.NewRequest("POST", "http://localhost/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "mcp-session-8c4d5f3e-4b8a-4c1e-9d7a-2f3b4c5d6e7f")
	req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 404 {
		t.Errorf("got HTTP %d %q; want 404", rec.Code, rec.Body.String())
	}
}
