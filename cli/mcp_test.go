package cli_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// stdioHost runs `pinky mcp` over real pipes, as an agent host does, and
// checks that every line it writes to stdout is a JSON-RPC message.
type stdioHost struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	lines  []map[string]any // every message read, in order
	more   chan struct{}
	nextID int
	done   chan struct{}
}

func (e *env) stdioHost(extraEnv ...string) *stdioHost {
	e.t.Helper()
	cmd := e.cmd("mcp")
	cmd.Env = append(cmd.Env, extraEnv...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	h := &stdioHost{t: e.t, cmd: cmd, stdin: stdin, more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 64<<20)
		for sc.Scan() {
			var msg map[string]any
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg["jsonrpc"] != "2.0" {
				e.t.Errorf("stdout carried a line that is not JSON-RPC: %q", sc.Text())
				continue
			}
			h.mu.Lock()
			h.lines = append(h.lines, msg)
			h.mu.Unlock()
			select {
			case h.more <- struct{}{}:
			default:
			}
		}
	}()
	e.t.Cleanup(func() {
		stdin.Close()
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
		cmd.Wait()
		if e.t.Failed() {
			e.t.Logf("pinky mcp stderr:\n%s", stderr.String())
		}
	})
	return h
}

// send writes one raw line.
func (h *stdioHost) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.stdin, line+"\n"); err != nil {
		h.t.Fatalf("writing to pinky mcp: %v", err)
	}
}

// request sends a request and returns its id.
func (h *stdioHost) request(method string, params any) int {
	h.t.Helper()
	h.nextID++
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": h.nextID, "method": method, "params": params})
	if err != nil {
		h.t.Fatal(err)
	}
	h.send(string(b))
	return h.nextID
}

// response waits for the answer to id.
func (h *stdioHost) response(id int, timeout time.Duration) map[string]any {
	h.t.Helper()
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
			h.t.Fatalf("pinky mcp closed stdout before answering request %d", id)
		case <-deadline:
			h.t.Fatalf("no answer to request %d within %s", id, timeout)
		}
	}
}

func (h *stdioHost) initialize() {
	h.t.Helper()
	id := h.request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e-agent", "version": "0.1"},
	})
	if r := h.response(id, 20*time.Second); r["result"] == nil {
		h.t.Fatalf("initialize: %v", r)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// tool calls a tool and returns its text and whether it is an error result.
func (h *stdioHost) tool(name string, args map[string]any) (string, bool) {
	h.t.Helper()
	id := h.request("tools/call", map[string]any{"name": name, "arguments": args})
	r := h.response(id, 30*time.Second)
	res, ok := r["result"].(map[string]any)
	if !ok {
		h.t.Fatalf("%s: no result: %v", name, r)
	}
	var text strings.Builder
	for _, c := range res["content"].([]any) {
		if m := c.(map[string]any); m["type"] == "text" {
			text.WriteString(m["text"].(string))
		}
	}
	isErr, _ := res["isError"].(bool)
	return text.String(), isErr
}

func (h *stdioHost) ok(name string, args map[string]any, want string) string {
	h.t.Helper()
	text, isErr := h.tool(name, args)
	if isErr || !strings.Contains(text, want) {
		h.t.Errorf("%s %v: got error=%v %q; want success containing %q", name, args, isErr, text, want)
	}
	return text
}

func (h *stdioHost) fails(name string, args map[string]any, code string) {
	h.t.Helper()
	text, isErr := h.tool(name, args)
	if !isErr || !strings.HasPrefix(text, code+":") {
		h.t.Errorf("%s %v: got error=%v %q; want an error starting %q", name, args, isErr, text, code+":")
	}
}

// TestEveryToolOverStdio drives every tool through a real `pinky mcp`
// process and daemon, with a good and a bad input each.
func TestEveryToolOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.stdioHost("PINKY_SIM=1")
	h.initialize()
	id := h.request("tools/list", map[string]any{})
	tools := h.response(id, 10*time.Second)["result"].(map[string]any)["tools"].([]any)
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.(map[string]any)["name"].(string)] = true
	}
	const dev = "sim-android-1"
	d := map[string]any{"device": dev}
	with := onDevice(dev)
	called := map[string]bool{}
	call := func(name string) string { called[name] = true; return name }

	h.ok(call("phone_list"), nil, "sim-android-1")
	h.fails("phone_list", map[string]any{"bogus": 1}, "invalid_argument")
	h.fails(call("phone_connect"), map[string]any{"device": dev}, "invalid_argument")
	h.fails("phone_observe", d, "not_leased")
	h.ok("phone_connect", with("task", "e2e: every tool"), "LOCKED")
	h.ok(call("phone_observe"), with("full", true), "Enter PIN")
	h.fails("phone_observe", with("full", "yes"), "invalid_argument")

	// The person unlocks the phone while the agent waits.
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ok(call("phone_ask_person"), with("message", "please unlock"), "unlocked")
	}()
	e.eventually("the agent waits for the person", func() bool {
		var st api.Status
		e.json(&st, "status")
		return len(st.Leases) == 1 && st.Leases[0].WithPerson
	})
	e.unlock(dev)
	if _, errs, code := e.run("hand-back", dev); code != 0 {
		t.Fatalf("pinky hand-back: %s", errs)
	}
	<-done
	h.fails("phone_ask_person", d, "invalid_argument")

	h.ok(call("phone_apps"), d, "Messages")
	h.fails("phone_apps", map[string]any{}, "invalid_argument")
	h.ok(call("phone_launch"), with("app", "Messages"), "Ben Okafor")
	h.fails("phone_launch", with("app", "Nonesuch"), "not_found")
	h.ok(call("phone_tap"), with("text", "Ben Okafor"), "Did you get the tickets?")
	h.fails("phone_tap", with("ref", 999999), "not_found")
	h.ok(call("phone_type"), with("field", "Text message", "text", "On my way"), "On my way")
	h.fails("phone_type", with("text", strings.Repeat("x", 5000)), "invalid_argument")
	h.ok(call("phone_long_press"), with("text", "Send"), "")
	h.fails("phone_long_press", with("text", "Send", "duration_ms", 20000), "invalid_argument")
	h.ok(call("phone_key"), with("key", "back"), "")
	h.fails("phone_key", with("key", "hyper"), "invalid_argument")
	h.ok(call("phone_scroll"), with("direction", "down"), "")
	h.fails("phone_scroll", with("direction", "sideways"), "invalid_argument")
	h.ok(call("phone_swipe"), with("from", map[string]any{"x": 500, "y": 1500}, "to", map[string]any{"x": 500, "y": 900}), "")
	h.fails("phone_swipe", with("from", map[string]any{"x": 500, "y": 1500}), "invalid_argument")
	h.ok(call("phone_wait_for"), with("text", "1 notification", "timeout_ms", 2000), "")
	h.fails("phone_wait_for", with("text", "Never shown", "timeout_ms", 300), "timeout")
	h.ok(call("phone_notifications"), d, "Ben")
	h.fails("phone_notifications", map[string]any{"device": "../x"}, "invalid_argument")
	h.ok(call("phone_upload"), with("path", "notes/hello.txt", "content_base64", "aGVsbG8="), "")
	h.fails("phone_upload", with("path", "../escape.txt", "content_base64", "aGVsbG8="), "invalid_argument")
	// Upload links exist only over HTTP: over stdio the tool says to use phone_upload.
	h.fails(call("phone_upload_link"), with("path", "big.bin"), "unsupported")
	h.fails("phone_upload_link", with("path", "../escape.bin"), "invalid_argument")
	h.ok(call("phone_files"), with("path", "notes"), "hello.txt")
	h.fails("phone_files", with("path", "nope"), "not_found")
	// Opening a URL commits (open_url): the person approves it.
	e.approveNext(t)
	h.ok(call("phone_open_url"), with("url", "https://example.com/"), "")
	h.fails("phone_open_url", with("url", "not a url"), "invalid_argument")
	h.ok(call("phone_stop_app"), with("app", "Browser"), "")
	h.fails("phone_stop_app", with("app", ""), "invalid_argument")
	h.fails(call("phone_approval"), map[string]any{"id": "ap_nope"}, "not_found")
	h.fails("phone_approval", map[string]any{}, "invalid_argument")
	h.ok(call("phone_release"), d, "")
	h.fails("phone_release", d, "not_leased")

	for name := range names {
		if !called[name] {
			t.Errorf("tool %s was not called", name)
		}
	}
	if len(names) < 18 {
		t.Errorf("tools/list has %d tools; want about twenty", len(names))
	}
	// Unknown tools and methods are JSON-RPC errors, not crashes.
	if r := h.response(h.request("tools/call", map[string]any{"name": "phone_fly", "arguments": map[string]any{}}), 10*time.Second); r["error"] == nil {
		if res, _ := r["result"].(map[string]any); res == nil || res["isError"] != true {
			t.Errorf("unknown tool: got %v; want an error", r)
		}
	}
	if r := h.response(h.request("no/such/method", nil), 10*time.Second); r["error"] == nil {
		t.Errorf("unknown method: got %v; want a JSON-RPC error", r)
	}
	// The history has the task with its steps.
	var ts []api.Task
	e.json(&ts, "history")
	if len(ts) != 1 || ts[0].Agent != "e2e-agent" || ts[0].Outcome != "released" || ts[0].Steps < 20 {
		t.Errorf("history: got %+v", ts)
	}
}

// approveNext approves, from the person's side, the next approval that
// opens, in the background.
func (e *env) approveNext(t *testing.T) {
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			var cards []struct{ ID string }
			out, _ := e.cmd("approvals", "--json").Output()
			if json.Unmarshal(out, &cards) == nil && len(cards) > 0 {
				e.cmd("approve", cards[0].ID).Run()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}

// TestStdoutPurity: whatever happens, stdout carries only JSON-RPC (the
// stdioHost reader fails the test on any other line).
func TestStdoutPurity(t *testing.T) {
	t.Run("garbage in", func(t *testing.T) {
		e := newEnv(t)
		h := e.stdioHost("PINKY_SIM=1")
		h.initialize()
		for _, line := range []string{
			"not json at all",
			`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"garbage"}`,
			`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"phone_tap","arguments":{"device":"sim-android-1","text":"` + "\xff\xfe" + `"}}}`,
			`{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"phone_type","arguments":{"device":"sim-android-1","text":"` + strings.Repeat("a", 1<<20) + `"}}}`,
			`[1,2,3]`,
		} {
			h.send(line)
		}
		for _, id := range []int{77, 78} {
			if r := h.response(id, 10*time.Second); r["error"] == nil && r["result"].(map[string]any)["isError"] != true {
				t.Errorf("request %d: got %v; want an error", id, r)
			}
		}
		h.ok("phone_list", nil, "sim-android-1") // still serving
	})
	t.Run("daemon cannot start", func(t *testing.T) {
		e := newEnv(t)
		// A data folder whose socket path is too long: the daemon refuses to start.
		long := e.home + "/" + strings.Repeat("d", 120)
		if err := os.MkdirAll(long, 0o700); err != nil {
			t.Fatal(err)
		}
		h := e.stdioHost("PINKY_HOME=" + long)
		id := h.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
		r := h.response(id, 20*time.Second)
		errObj, _ := r["error"].(map[string]any)
		if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "daemon") {
			t.Errorf("got %v; want a JSON-RPC error about the daemon", r)
		}
	})
	t.Run("daemon killed mid-call", func(t *testing.T) {
		e := newEnv(t)
		d := e.daemon("--sim")
		h := e.stdioHost()
		h.initialize()
		h.ok("phone_connect", map[string]any{"device": "sim-android-1", "task": "wait"}, "LOCKED")
		id := h.request("tools/call", map[string]any{"name": "phone_wait_for", "arguments": map[string]any{"device": "sim-android-1", "text": "never", "timeout_ms": 60000}})
		time.Sleep(300 * time.Millisecond)
		d.Process.Signal(syscall.SIGKILL)
		r := h.response(id, 10*time.Second)
		errObj, _ := r["error"].(map[string]any)
		if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "observe before repeating") {
			t.Errorf("got %v; want a JSON-RPC error that says to observe", r)
		}
		// Later requests get an error too, at once.
		if r := h.response(h.request("tools/list", nil), 5*time.Second); r["error"] == nil {
			t.Errorf("after the daemon died: got %v; want an error", r)
		}
	})
}

// TestDriverKilledMidAction: an action cut by a driver crash is uncertain,
// the lease survives the restart, and the person can stop the agent.
func TestDriverKilledMidAction(t *testing.T) {
	e := newEnv(t)
	d := e.cmd("daemon", "--sim")
	d.Env = append(d.Env, "PINKY_SIM_FAULTS=hang=tap") // taps hang inside the driver
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Signal(syscall.SIGTERM); d.Wait() })
	e.eventually("the daemon answers", func() bool { _, _, code := e.run("status"); return code == 0 })

	h := e.stdioHost()
	h.initialize()
	e.unlock("sim-android-1")
	h.ok("phone_connect", map[string]any{"device": "sim-android-1", "task": "crash test"}, "Pixel Launcher")
	id := h.request("tools/call", map[string]any{"name": "phone_tap", "arguments": map[string]any{"device": "sim-android-1", "text": "Messages"}})
	time.Sleep(300 * time.Millisecond) // the tap is now hanging in the driver
	before := e.driver("sim")
	if err := syscall.Kill(before.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := h.response(id, 10*time.Second)
	res, _ := r["result"].(map[string]any)
	text := fmt.Sprint(res["content"])
	if res == nil || res["isError"] != true || !strings.Contains(text, "uncertain:") || !strings.Contains(text, "observe before repeating") {
		t.Fatalf("tap cut by the crash: got %v; want an uncertain tool error", r)
	}
	// The driver comes back and the lease is still ours.
	e.eventually("observe works again", func() bool {
		_, isErr := h.tool("phone_observe", map[string]any{"device": "sim-android-1"})
		return !isErr
	})
	if after := e.driver("sim"); after.Pid == before.Pid || after.Restarts != before.Restarts+1 {
		t.Errorf("driver after the crash: %+v; before %+v", after, before)
	}
	// The person stops the agent.
	if out, errs, code := e.run("stop", "sim-android-1"); code != 0 || !strings.Contains(out, "stopped 1") {
		t.Fatalf("pinky stop: exit %d: %s%s", code, out, errs)
	}
	h.fails("phone_observe", map[string]any{"device": "sim-android-1"}, "stopped")
	var ts []api.Task
	e.json(&ts, "history")
	if len(ts) != 1 || ts[0].Outcome != "stopped" {
		t.Errorf("history: %+v; want the task stopped", ts)
	}
	var detail api.TaskDetail
	e.json(&detail, "history", "show", ts[0].ID)
	found := false
	for _, s := range detail.StepList {
		found = found || (s.Tool == "phone_tap" && s.Outcome == "uncertain")
	}
	if !found {
		t.Errorf("no uncertain phone_tap step in %+v", detail.StepList)
	}
}

// TestOversizedRequestAnswered: a request larger than the daemon takes is
// answered (with its id) by the bridge, which goes on serving.
func TestOversizedRequestAnswered(t *testing.T) {
	e := newEnv(t)
	e.daemon("--sim")
	h := e.stdioHost()
	h.initialize()
	big := strings.Repeat("a", 15<<20)
	h.send(`{"jsonrpc":"2.0","id":4242,"method":"tools/call","params":{"name":"phone_type","arguments":{"device":"sim-android-1","text":"` + big + `"}}}`)
	r := h.response(4242, 20*time.Second)
	if errObj, _ := r["error"].(map[string]any); errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "larger than") {
		t.Errorf("got %v; want an error saying the message is too large", r)
	}
	h.ok("phone_list", nil, "sim-android-1")
}
