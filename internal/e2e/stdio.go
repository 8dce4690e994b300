package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Host runs `pinky mcp` over real pipes, as an agent host does, and
// checks that every line it writes to stdout is a JSON-RPC message.
type Host struct {
	T      *testing.T
	Proc   *exec.Cmd
	Stdin  io.WriteCloser
	Stderr *Buffer
	mu     sync.Mutex
	lines  []map[string]any // every message read, in order
	raw    []string         // the same, as written
	more   chan struct{}
	nextID int
	done   chan struct{}
}

// StdioHost starts `pinky mcp` with more environment.
func (e *Env) StdioHost(extraEnv ...string) *Host {
	e.T.Helper()
	cmd := e.Cmd("mcp")
	cmd.Env = append(cmd.Env, extraEnv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	stderr := &Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	h := &Host{T: e.T, Proc: cmd, Stdin: stdin, Stderr: stderr, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg["jsonrpc"] != "2.0" {
				e.T.Errorf("stdout carried a line that is not JSON-RPC: %q", sc.Text())
				continue
			}
			h.mu.Lock()
			h.lines = append(h.lines, msg)
			h.raw = append(h.raw, sc.Text())
			h.mu.Unlock()
			select {
			case h.more <- struct{}{}:
			default:
			}
		}
	}()
	e.T.Cleanup(func() {
		stdin.Close()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if e.T.Failed() {
			e.T.Logf("pinky mcp stderr:\n%s", stderr.String())
		}
	})
	return h
}

// Close ends pinky mcp as an agent host does, by closing its stdin, and
// waits until it has exited.
func (h *Host) Close() {
	h.Stdin.Close()
	select {
	case <-h.done:
	case <-time.After(10 * time.Second):
		h.Proc.Process.Kill()
	}
	h.Proc.Wait()
}

// Lines returns every message read so far.
func (h *Host) Lines() []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.lines...)
}

// Transcript is every line pinky mcp wrote, joined: what an agent read.
func (h *Host) Transcript() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.raw, "\n")
}

// Send writes one raw line.
func (h *Host) Send(line string) {
	h.T.Helper()
	if _, err := io.WriteString(h.Stdin, line+"\n"); err != nil {
		h.T.Fatalf("writing to pinky mcp: %v", err)
	}
}

// Request sends a request and returns its id.
func (h *Host) Request(method string, params any) int {
	h.T.Helper()
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		h.T.Fatal(err)
	}
	h.Send(string(b))
	return id
}

// Response waits for the answer to id.
func (h *Host) Response(id int, timeout time.Duration) map[string]any {
	h.T.Helper()
	deadline := time.After(timeout)
	for {
		h.mu.Lock()
		for _, m := range h.lines {
			if n, ok := m["id"].(float64); ok && int(n) == id && m["method"] == nil {
				h.mu.Unlock()
				return m
			}
		}
		h.mu.Unlock()
		select {
		case <-h.more:
		case <-h.done:
			h.T.Fatalf("pinky mcp closed stdout before answering request %d", id)
		case <-deadline:
			h.T.Fatalf("no answer to request %d within %s", id, timeout)
		}
	}
}

// Initialize runs the MCP handshake as the client "e2e-agent".
func (h *Host) Initialize() {
	h.T.Helper()
	h.InitializeAs("e2e-agent")
}

// InitializeAs runs the MCP handshake with a client name.
func (h *Host) InitializeAs(name string) {
	h.T.Helper()
	id := h.Request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "0.1"},
	})
	if r := h.Response(id, 20*time.Second); r["result"] == nil {
		h.T.Fatalf("initialize: %v", r)
	}
	h.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// Result is a tool call's result: its text, whether it is an error, and
// its structured content and images.
type Result struct {
	Text       string
	IsError    bool
	Structured map[string]any
	Images     int
}

// Call calls a tool and returns its whole result.
func (h *Host) Call(name string, args map[string]any) Result {
	h.T.Helper()
	return h.CallWithin(name, args, 30*time.Second)
}

// CallWithin is Call with a limit on the wait for the answer.
func (h *Host) CallWithin(name string, args map[string]any, timeout time.Duration) Result {
	h.T.Helper()
	id := h.Request("tools/call", map[string]any{"name": name, "arguments": args})
	r := h.Response(id, timeout)
	res, ok := r["result"].(map[string]any)
	if !ok {
		h.T.Fatalf("%s: no result: %v", name, r)
	}
	var out Result
	var text strings.Builder
	for _, c := range res["content"].([]any) {
		switch m := c.(map[string]any); m["type"] {
		case "text":
			text.WriteString(m["text"].(string))
		case "image":
			out.Images++
		}
	}
	out.Text = text.String()
	out.IsError, _ = res["isError"].(bool)
	out.Structured, _ = res["structuredContent"].(map[string]any)
	return out
}

// Tool calls a tool and returns its text and whether it is an error result.
func (h *Host) Tool(name string, args map[string]any) (string, bool) {
	h.T.Helper()
	r := h.Call(name, args)
	return r.Text, r.IsError
}

// OK calls a tool that must succeed with a text containing want.
func (h *Host) OK(name string, args map[string]any, want string) string {
	h.T.Helper()
	text, isErr := h.Tool(name, args)
	if isErr || !strings.Contains(text, want) {
		h.T.Errorf("%s %v: got error=%v %q; want success containing %q", name, args, isErr, text, want)
	}
	return text
}

// Fails calls a tool that must fail with the error code code.
func (h *Host) Fails(name string, args map[string]any, code string) string {
	h.T.Helper()
	text, isErr := h.Tool(name, args)
	if !isErr || !strings.HasPrefix(text, code+":") {
		h.T.Errorf("%s %v: got error=%v %q; want an error starting %q", name, args, isErr, text, code+":")
	}
	return text
}

// Raw writes JSON-RPC lines to a `pinky mcp` process byte for byte, for
// what a well-behaved client library never sends.
type Raw struct {
	T     *testing.T
	Proc  *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
	Log   *Buffer
}

// RawResponse is a JSON-RPC response: a tool result or an error.
type RawResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r RawResponse) String() string {
	switch {
	case r.Error != nil:
		return fmt.Sprintf("JSON-RPC error %d %q", r.Error.Code, r.Error.Message)
	case r.Result != nil && len(r.Result.Content) > 0:
		return fmt.Sprintf("result (isError %v) %q", r.Result.IsError, r.Result.Content[0].Text)
	}
	return "empty response"
}

// RawMCP starts `pinky mcp` (with the virtual phones when the daemon is
// not running yet) and initializes it as "raw-client".
func (e *Env) RawMCP(extraEnv ...string) *Raw {
	e.T.Helper()
	r := &Raw{T: e.T, Proc: e.Cmd("mcp"), lines: make(chan []byte, 16), Log: &Buffer{}}
	r.Proc.Env = append(append(r.Proc.Env, "PINKY_SIM=1"), extraEnv...)
	r.Proc.Stderr = r.Log
	var err error
	if r.in, err = r.Proc.StdinPipe(); err != nil {
		e.T.Fatal(err)
	}
	out, err := r.Proc.StdoutPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	if err := r.Proc.Start(); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		r.in.Close()
		r.Proc.Wait()
	})
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			r.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	r.Send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-client","version":"0"}}}`)
	if res := r.Response(`"init"`); res.Error != nil {
		e.T.Fatalf("initialize: %v", res)
	}
	r.Send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

// Send writes one line.
func (r *Raw) Send(line string) {
	r.T.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.T.Fatalf("writing to pinky mcp: %v\nits stderr: %s", err, r.Log)
	}
}

// Response reads lines until the response with the given id (JSON: `7`,
// `"init"`, `null`), skipping notifications.
func (r *Raw) Response(id string) RawResponse {
	r.T.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.T.Fatalf("pinky mcp closed stdout waiting for response %s\nits stderr: %s", id, r.Log)
			}
			var res RawResponse
			if err := json.Unmarshal(line, &res); err != nil {
				r.T.Fatalf("pinky mcp wrote a line that is not JSON: %v: %q", err, line)
			}
			if string(res.ID) == id || (id == "null" && res.ID == nil) {
				return res
			}
		case <-timeout:
			r.T.Fatalf("no response %s within 15 s\nits stderr: %s", id, r.Log)
		}
	}
}

// Call sends a tools/call with the given id and raw arguments JSON, and
// returns its response.
func (r *Raw) Call(id int, tool, args string) RawResponse {
	r.T.Helper()
	r.Send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
	return r.Response(fmt.Sprint(id))
}
