package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// TestEveryToolOverStdio drives every tool through a real `pinky mcp`
// process and daemon, with a good and a bad input each.
func TestEveryToolOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	id := h.Request("tools/list", map[string]any{})
	tools := h.Response(id, 10*time.Second)["result"].(map[string]any)["tools"].([]any)
	names := map[string]bool{}
	for _, tl := range tools {
		names[tl.(map[string]any)["name"].(string)] = true
	}
	const dev = "sim-android-1"
	d := map[string]any{"device": dev}
	with := e2e.OnDevice(dev)
	called := map[string]bool{}
	call := func(name string) string { called[name] = true; return name }

	h.OK(call("phone_list"), nil, "sim-android-1")
	h.Fails("phone_list", map[string]any{"bogus": 1}, "invalid_argument")
	h.Fails(call("phone_connect"), map[string]any{"device": dev}, "invalid_argument")
	h.Fails("phone_observe", d, "not_leased")
	h.OK("phone_connect", with("task", "e2e: every tool"), "LOCKED")
	h.OK(call("phone_observe"), with("full", true), "Enter PIN")
	h.Fails("phone_observe", with("full", "yes"), "invalid_argument")

	// The person unlocks the phone while the agent waits.
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.OK(call("phone_ask_person"), with("message", "please unlock"), "unlocked")
	}()
	e.Eventually("the agent waits for the person", func() bool {
		var st api.Status
		e.JSON(&st, "status")
		return len(st.Leases) == 1 && st.Leases[0].WithPerson
	})
	e.Unlock(dev)
	if _, errs, code := e.Run("hand-back", dev); code != 0 {
		t.Fatalf("pinky hand-back: %s", errs)
	}
	<-done
	h.Fails("phone_ask_person", d, "invalid_argument")

	h.OK(call("phone_apps"), d, "Messages")
	h.Fails("phone_apps", map[string]any{}, "invalid_argument")
	h.OK(call("phone_launch"), with("app", "Messages"), "Ben Okafor")
	h.Fails("phone_launch", with("app", "Nonesuch"), "not_found")
	h.OK(call("phone_tap"), with("text", "Ben Okafor"), "Did you get the tickets?")
	h.Fails("phone_tap", with("ref", 999999), "not_found")
	h.OK(call("phone_type"), with("field", "Text message", "text", "On my way"), "On my way")
	h.Fails("phone_type", with("text", strings.Repeat("x", 5000)), "invalid_argument")
	// A long press on the field (it pastes); on Send it would ask, as a tap does.
	h.OK(call("phone_long_press"), with("text", "Text message"), "")
	h.Fails("phone_long_press", with("text", "Send", "duration_ms", 20000), "invalid_argument")
	h.OK(call("phone_key"), with("key", "back"), "")
	h.Fails("phone_key", with("key", "hyper"), "invalid_argument")
	h.OK(call("phone_scroll"), with("direction", "down"), "")
	h.Fails("phone_scroll", with("direction", "sideways"), "invalid_argument")
	h.OK(call("phone_swipe"), with("from", map[string]any{"x": 500, "y": 1500}, "to", map[string]any{"x": 500, "y": 900}), "")
	h.Fails("phone_swipe", with("from", map[string]any{"x": 500, "y": 1500}), "invalid_argument")
	h.OK(call("phone_pinch"), with("scale_percent", 150), "")
	h.Fails("phone_pinch", with("scale_percent", 100), "invalid_argument")
	h.OK(call("phone_wait_for"), with("text", "1 notification", "timeout_ms", 2000), "")
	h.Fails("phone_wait_for", with("text", "Never shown", "timeout_ms", 300), "timeout")
	h.OK(call("phone_notifications"), d, "Ben")
	h.Fails("phone_notifications", map[string]any{"device": "../x"}, "invalid_argument")
	h.OK(call("phone_upload"), with("path", "notes/hello.txt", "content_base64", "aGVsbG8="), "")
	h.Fails("phone_upload", with("path", "../escape.txt", "content_base64", "aGVsbG8="), "invalid_argument")
	// Upload links exist only over HTTP: over stdio the tool says to use phone_upload.
	h.Fails(call("phone_upload_link"), with("path", "big.bin"), "unsupported")
	h.Fails("phone_upload_link", with("path", "../escape.bin"), "invalid_argument")
	h.OK(call("phone_files"), with("path", "notes"), "hello.txt")
	h.Fails("phone_files", with("path", "nope"), "not_found")
	// Opening a URL commits (open_url): the person approves it.
	e.approveNext(t)
	h.OK(call("phone_open_url"), with("url", "https://example.com/"), "")
	h.Fails("phone_open_url", with("url", "not a url"), "invalid_argument")
	h.OK(call("phone_stop_app"), with("app", "Browser"), "")
	h.Fails("phone_stop_app", with("app", ""), "invalid_argument")
	h.Fails(call("phone_approval"), map[string]any{"id": "ap_nope"}, "not_found")
	h.Fails("phone_approval", map[string]any{}, "invalid_argument")
	h.OK(call("phone_release"), d, "")
	h.Fails("phone_release", d, "not_leased")

	for name := range names {
		if !called[name] {
			t.Errorf("tool %s was not called", name)
		}
	}
	if len(names) < 18 {
		t.Errorf("tools/list has %d tools; want about twenty", len(names))
	}
	// Unknown tools and methods are JSON-RPC errors, not crashes.
	if r := h.Response(h.Request("tools/call", map[string]any{"name": "phone_fly", "arguments": map[string]any{}}), 10*time.Second); r["error"] == nil {
		if res, _ := r["result"].(map[string]any); res == nil || res["isError"] != true {
			t.Errorf("unknown tool: got %v; want an error", r)
		}
	}
	if r := h.Response(h.Request("no/such/method", nil), 10*time.Second); r["error"] == nil {
		t.Errorf("unknown method: got %v; want a JSON-RPC error", r)
	}
	// The history has the task with its steps.
	var ts []api.Task
	e.JSON(&ts, "history")
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
			out, _ := e.Cmd("approvals", "--json").Output()
			if json.Unmarshal(out, &cards) == nil && len(cards) > 0 {
				e.Cmd("approve", cards[0].ID).Run()
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
		h := e.StdioHost("PINKY_SIM=1")
		h.Initialize()
		for _, line := range []string{
			"not json at all",
			`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":"garbage"}`,
			`{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"phone_tap","arguments":{"device":"sim-android-1","text":"` + "\xff\xfe" + `"}}}`,
			`{"jsonrpc":"2.0","id":78,"method":"tools/call","params":{"name":"phone_type","arguments":{"device":"sim-android-1","text":"` + strings.Repeat("a", 1<<20) + `"}}}`,
			`[1,2,3]`,
		} {
			h.Send(line)
		}
		for _, id := range []int{77, 78} {
			if r := h.Response(id, 10*time.Second); r["error"] == nil && r["result"].(map[string]any)["isError"] != true {
				t.Errorf("request %d: got %v; want an error", id, r)
			}
		}
		h.OK("phone_list", nil, "sim-android-1") // still serving
	})
	t.Run("daemon cannot start", func(t *testing.T) {
		e := newEnv(t)
		// A data folder whose socket path is too long: the daemon refuses to start.
		long := e.Home + "/" + strings.Repeat("d", 120)
		if err := os.MkdirAll(long, 0o700); err != nil {
			t.Fatal(err)
		}
		h := e.StdioHost("PINKY_HOME=" + long)
		id := h.Request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}})
		r := h.Response(id, 20*time.Second)
		errObj, _ := r["error"].(map[string]any)
		if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "daemon") {
			t.Errorf("got %v; want a JSON-RPC error about the daemon", r)
		}
	})
	t.Run("daemon killed mid-call", func(t *testing.T) {
		e := newEnv(t)
		d := e.Daemon("--sim")
		h := e.StdioHost()
		h.Initialize()
		h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "wait"}, "LOCKED")
		id := h.Request("tools/call", map[string]any{"name": "phone_wait_for", "arguments": map[string]any{"device": "sim-android-1", "text": "never", "timeout_ms": 50000}})
		time.Sleep(300 * time.Millisecond)
		d.Process.Signal(syscall.SIGKILL)
		r := h.Response(id, 10*time.Second)
		errObj, _ := r["error"].(map[string]any)
		if errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "observe before repeating") {
			t.Errorf("got %v; want a JSON-RPC error that says to observe", r)
		}
		// Later requests get an error too, at once.
		if r := h.Response(h.Request("tools/list", nil), 5*time.Second); r["error"] == nil {
			t.Errorf("after the daemon died: got %v; want an error", r)
		}
	})
}

// TestDriverKilledMidAction: an action cut by a driver crash is uncertain,
// the lease survives the restart, and the person can stop the agent.
func TestDriverKilledMidAction(t *testing.T) {
	e := newEnv(t)
	d := e.Cmd("daemon", "--sim")
	d.Env = append(d.Env, "PINKY_SIM_FAULTS=hang=tap") // taps hang inside the driver
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Process.Signal(syscall.SIGTERM); d.Wait() })
	e.Eventually("the daemon answers", func() bool { _, _, code := e.Run("status"); return code == 0 })

	h := e.StdioHost()
	h.Initialize()
	e.Unlock("sim-android-1")
	h.OK("phone_connect", map[string]any{"device": "sim-android-1", "task": "crash test"}, "Pixel Launcher")
	id := h.Request("tools/call", map[string]any{"name": "phone_tap", "arguments": map[string]any{"device": "sim-android-1", "text": "Messages"}})
	time.Sleep(300 * time.Millisecond) // the tap is now hanging in the driver
	before := e.Driver("sim")
	if err := testkit.Kill(before.Pid); err != nil {
		t.Fatal(err)
	}
	r := h.Response(id, 10*time.Second)
	res, _ := r["result"].(map[string]any)
	text := fmt.Sprint(res["content"])
	if res == nil || res["isError"] != true || !strings.Contains(text, "uncertain:") || !strings.Contains(text, "observe before repeating") {
		t.Fatalf("tap cut by the crash: got %v; want an uncertain tool error", r)
	}
	// The driver comes back and the lease is still ours.
	e.Eventually("observe works again", func() bool {
		_, isErr := h.Tool("phone_observe", map[string]any{"device": "sim-android-1"})
		return !isErr
	})
	if after := e.Driver("sim"); after.Pid == before.Pid || after.Restarts != before.Restarts+1 {
		t.Errorf("driver after the crash: %+v; before %+v", after, before)
	}
	// The person stops the agent.
	if out, errs, code := e.Run("stop", "sim-android-1"); code != 0 || !strings.Contains(out, "stopped 1") {
		t.Fatalf("pinky stop: exit %d: %s%s", code, out, errs)
	}
	h.Fails("phone_observe", map[string]any{"device": "sim-android-1"}, "stopped")
	var ts []api.Task
	e.JSON(&ts, "history")
	if len(ts) != 1 || ts[0].Outcome != "stopped" {
		t.Errorf("history: %+v; want the task stopped", ts)
	}
	var detail api.TaskDetail
	e.JSON(&detail, "history", "show", ts[0].ID)
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
	e.Daemon("--sim")
	h := e.StdioHost()
	h.Initialize()
	big := strings.Repeat("a", 15<<20)
	h.Send(`{"jsonrpc":"2.0","id":4242,"method":"tools/call","params":{"name":"phone_type","arguments":{"device":"sim-android-1","text":"` + big + `"}}}`)
	r := h.Response(4242, 20*time.Second)
	if errObj, _ := r["error"].(map[string]any); errObj == nil || !strings.Contains(fmt.Sprint(errObj["message"]), "larger than") {
		t.Errorf("got %v; want an error saying the message is too large", r)
	}
	h.OK("phone_list", nil, "sim-android-1")
}
