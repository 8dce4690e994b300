package mcpserver

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// fakeCall is one call a fakeSession received.
type fakeCall struct {
	Method string
	Device string
	Arg    any // the request: agent.Action, agent.ConnectRequest, …
}

// fakeSession records what the tools ask of the gateway.
type fakeSession struct {
	mu    sync.Mutex
	calls []fakeCall

	err  error              // every method fails with it when set
	obs  *agent.Observation // what screen-returning methods answer
	wait func(ctx context.Context, progress agent.Progress) error
}

func newFake() *fakeSession {
	return &fakeSession{obs: &agent.Observation{
		Device: "sim-android-1", Text: "+ [15] text \"Sent\"", App: "Messages", Settled: true, Step: "st-1",
	}}
}

func (f *fakeSession) record(method, device string, arg any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fakeCall{Method: method, Device: device, Arg: arg})
}

func (f *fakeSession) Calls() []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeCall(nil), f.calls...)
}

// waiting runs the wait hook of a call that can wait.
func (f *fakeSession) waiting(ctx context.Context, progress agent.Progress) (*agent.Observation, error) {
	if f.wait != nil {
		if err := f.wait(ctx, progress); err != nil {
			return nil, err
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.obs, nil
}

func (f *fakeSession) Phones(ctx context.Context) ([]agent.Phone, error) {
	f.record("Phones", "", nil)
	if f.err != nil {
		return nil, f.err
	}
	return []agent.Phone{
		{ID: "sim-android-1", Name: "Pixel", Model: "Pixel 8", Platform: "android", Online: true},
		{ID: "sim-ios-1", Model: "iPhone 15", Platform: "ios", Online: true, Locked: true,
			Lease: &agent.LeaseInfo{Agent: "Claude Code", Task: "book a table", Since: time.Unix(1_800_000_000, 0).UTC()}},
	}, nil
}

func (f *fakeSession) Connect(ctx context.Context, req agent.ConnectRequest) (*agent.Observation, error) {
	f.record("Connect", req.Device, req)
	if f.err != nil {
		return nil, f.err
	}
	return &agent.Observation{Device: "sim-android-1", Text: "app Messages (com.google.android.apps.messaging) · unlocked · 1080x2400\n[3] button \"Send\"", Full: true, App: "Messages", Settled: true}, nil
}

func (f *fakeSession) Release(ctx context.Context, device string) error {
	f.record("Release", device, nil)
	return f.err
}

type observeArg struct{ Full, Screenshot, Marks bool }

func (f *fakeSession) ObserveWith(ctx context.Context, device string, opts agent.ObserveOptions) (*agent.Observation, error) {
	f.record("Observe", device, observeArg{opts.Full, opts.Screenshot, opts.Marks})
	if f.err != nil {
		return nil, f.err
	}
	o := *f.obs
	if opts.Screenshot || opts.Marks {
		o.Screenshot = []byte{0xff, 0xd8, 0xff, 0xe0, 'j', 'p', 'g'}
	}
	return &o, nil
}

func (f *fakeSession) Act(ctx context.Context, device string, a agent.Action, progress agent.Progress) (*agent.Observation, error) {
	f.record("Act", device, a)
	return f.waiting(ctx, progress)
}

func (f *fakeSession) Apps(ctx context.Context, device string) ([]agent.App, error) {
	f.record("Apps", device, nil)
	if f.err != nil {
		return nil, f.err
	}
	return []agent.App{{ID: "com.google.android.apps.messaging", Label: "Messages"}}, nil
}

func (f *fakeSession) WaitFor(ctx context.Context, device string, req agent.WaitRequest, progress agent.Progress) (*agent.Observation, error) {
	f.record("WaitFor", device, req)
	return f.waiting(ctx, progress)
}

func (f *fakeSession) Notifications(ctx context.Context, device string) ([]agent.Notification, error) {
	f.record("Notifications", device, nil)
	if f.err != nil {
		return nil, f.err
	}
	return []agent.Notification{{App: "Messages", Title: "Alice", Text: "See you at 8", Time: time.Unix(1_800_000_000, 0).UTC()}}, nil
}

func (f *fakeSession) Files(ctx context.Context, device string, req agent.FilesRequest, progress agent.Progress) (*agent.FilesResult, error) {
	f.record("Files", device, req)
	if f.err != nil {
		return nil, f.err
	}
	if req.Action != "list" {
		return &agent.FilesResult{Action: req.Action, Path: req.Path, Size: 1234}, nil
	}
	return &agent.FilesResult{Action: req.Action, Path: req.Path, Files: []agent.File{
		{Name: "receipts", Dir: true, Where: agent.WhereBoth}, {Name: "menu.pdf", Size: 1234, Where: agent.WherePhone, Modified: time.Unix(1_800_000_000, 0).UTC()},
	}}, nil
}

type uploadArg struct {
	Path string
	Data string
}

func (f *fakeSession) Upload(ctx context.Context, device, path string, data []byte) (int64, error) {
	f.record("Upload", device, uploadArg{path, string(data)})
	if f.err != nil {
		return 0, f.err
	}
	return int64(len(data)), nil
}

type uploadLinkArg struct {
	Path string
	Size int64
}

// UploadLink makes the fake an HTTP session's: it implements UploadLinker.
func (f *fakeSession) UploadLink(ctx context.Context, device, path string, size int64) (*UploadLink, error) {
	f.record("UploadLink", device, uploadLinkArg{path, size})
	if f.err != nil {
		return nil, f.err
	}
	return &UploadLink{URL: "http://127.0.0.1:8765/upload/tok", Method: "PUT", ExpiresAt: time.Date(2026, 5, 1, 12, 5, 0, 0, time.UTC)}, nil
}

func (f *fakeSession) AskPerson(ctx context.Context, device, message string, progress agent.Progress) (*agent.Observation, error) {
	f.record("AskPerson", device, message)
	return f.waiting(ctx, progress)
}

func (f *fakeSession) Approval(ctx context.Context, id string, progress agent.Progress) (*agent.Observation, error) {
	f.record("Approval", "", id)
	return f.waiting(ctx, progress)
}

var _ Session = (*fakeSession)(nil)

// logBuffer is a slog.Logger writing to a buffer that tests can read.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// connectStream serves sess over an in-memory stream the way the daemon
// does and returns an initialized client. Results are checked against
// their output schemas (mcp-go turns a mismatch into an error result).
func connectStream(t *testing.T, sess Session, opts Options, clientOpts ...client.ClientOption) *client.Client {
	t.Helper()
	srv := newServer(fixedSessions{sess}, opts, server.WithOutputSchemaValidation())
	return connectServer(t, func(ctx context.Context, r io.Reader, w io.Writer) error {
		return serveStream(ctx, srv, r, w, opts.logger())
	}, clientOpts...)
}

// connectServer runs serve over a pair of pipes and connects a client.
func connectServer(t *testing.T, serve func(ctx context.Context, r io.Reader, w io.Writer) error, clientOpts ...client.ClientOption) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientRead, serverWrite := io.Pipe()
	serverRead, clientWrite := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- serve(ctx, serverRead, serverWrite) }()

	c := client.NewClient(transport.NewIO(clientRead, clientWrite, io.NopCloser(bytes.NewReader(nil))), clientOpts...)
	t.Cleanup(func() {
		_ = c.Close()
		_ = clientWrite.Close() // the server reads EOF
		// and its writes fail, as a real pipe's do once the client is gone
		// (an io.Pipe would block a progress notice or an answer written
		// after the client stopped reading, and serve with it).
		_ = clientRead.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: got %v; want nil", err)
			}
		case <-time.After(20 * time.Second): // a hang detector: generous for a loaded machine
			t.Errorf("serve did not return after the client closed")
		}
		cancel()
		_ = serverWrite.Close()
	})
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start client: %v", err)
	}
	initCtx, initCancel := context.WithTimeout(ctx, 5*time.Second)
	defer initCancel()
	if _, err := c.Initialize(initCtx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ClientInfo: mcp.Implementation{Name: "test-agent", Version: "1.2"},
	}}); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return c
}

// callTool calls a tool with a timeout.
func callTool(t *testing.T, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := c.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// resultText joins a result's text content.
func resultText(res *mcp.CallToolResult) string {
	var b bytes.Buffer
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
