package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

func TestToolCalls(t *testing.T) {
	const dev = "sim-android-1"
	tests := []struct {
		tool     string
		args     map[string]any
		want     fakeCall
		wantText string // a part of the result's text
	}{
		{"phone_list", nil, fakeCall{Method: "Phones"},
			`sim-ios-1 · iPhone 15 · ios · online · locked · in use by "Claude Code" for "book a table"`},
		{"phone_connect", map[string]any{"task": "book a table for 2", "apps": []any{"Maps", "com.opentable"}},
			fakeCall{Method: "Connect", Arg: agent.ConnectRequest{Task: "book a table for 2", Apps: []string{"Maps", "com.opentable"}}},
			"sim-android-1 · whole screen\napp Messages"},
		{"phone_connect", map[string]any{"device": dev, "task": "reply to Alice"},
			fakeCall{Method: "Connect", Device: dev, Arg: agent.ConnectRequest{Device: dev, Task: "reply to Alice"}}, `[3] button "Send"`},
		{"phone_release", map[string]any{"device": dev}, fakeCall{Method: "Release", Device: dev}, "Released sim-android-1"},
		{"phone_observe", map[string]any{"device": dev}, fakeCall{Method: "Observe", Device: dev, Arg: observeArg{}},
			"sim-android-1 · Messages · unlocked · changes since your last read\n+ [15] text \"Sent\""},
		{"phone_observe", map[string]any{"device": dev, "full": true}, fakeCall{Method: "Observe", Device: dev, Arg: observeArg{Full: true}}, "[15]"},
		{"phone_observe", map[string]any{"device": dev, "marks": true}, fakeCall{Method: "Observe", Device: dev, Arg: observeArg{Marks: true}}, "[15]"},
		{"phone_tap", map[string]any{"device": dev, "mark": 23},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_tap", Kind: "tap", Target: agent.Target{Mark: 23}}}, "+ [15]"},
		{"phone_tap", map[string]any{"device": dev, "ref": 12},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_tap", Kind: "tap", Target: agent.Target{Ref: 12}}}, "+ [15]"},
		{"phone_tap", map[string]any{"device": dev, "text": "Send", "occurrence": 2},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_tap", Kind: "tap", Target: agent.Target{Text: "Send", Occurrence: 2}}}, "+ [15]"},
		{"phone_tap", map[string]any{"device": dev, "x": 540, "y": 1200},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_tap", Kind: "tap", Target: agent.Target{X: 540, Y: 1200, HasPoint: true}}}, "+ [15]"},
		{"phone_long_press", map[string]any{"device": dev, "ref": 4, "duration_ms": 1500},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_long_press", Kind: "long_press", Target: agent.Target{Ref: 4}, Duration: 1500 * time.Millisecond}}, "+ [15]"},
		{"phone_swipe", map[string]any{"device": dev, "from": map[string]any{"ref": 4}, "to": map[string]any{"x": 10, "y": 900}, "duration_ms": 300},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_swipe", Kind: "swipe", Target: agent.Target{Ref: 4},
				To: agent.Target{X: 10, Y: 900, HasPoint: true}, Duration: 300 * time.Millisecond}}, "+ [15]"},
		{"phone_pinch", map[string]any{"device": dev, "scale_percent": 250, "ref": 6, "duration_ms": 400},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_pinch", Kind: "pinch", Target: agent.Target{Ref: 6}, Scale: 2500, Duration: 400 * time.Millisecond}}, "+ [15]"},
		{"phone_pinch", map[string]any{"device": dev, "scale_percent": 50},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_pinch", Kind: "pinch", Scale: 500}}, "+ [15]"},
		{"phone_scroll", map[string]any{"device": dev, "direction": "down", "until": "Dessert"},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_scroll", Kind: "scroll", Direction: "down", Until: "Dessert"}}, "+ [15]"},
		{"phone_scroll", map[string]any{"device": dev, "direction": "left", "ref": 8},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_scroll", Kind: "scroll", Direction: "left", Target: agent.Target{Ref: 8}}}, "+ [15]"},
		{"phone_type", map[string]any{"device": dev, "text": "Hello, Alice 👋", "submit": true},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_type", Kind: "type", Text: "Hello, Alice 👋", Submit: true}}, "+ [15]"},
		{"phone_type", map[string]any{"device": dev, "text": "12", "field": "Guests", "occurrence": 2},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_type", Kind: "type", Target: agent.Target{Text: "Guests", Occurrence: 2}, Text: "12"}}, "+ [15]"},
		{"phone_type", map[string]any{"device": dev, "text": "", "replace": true, "ref": 7},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_type", Kind: "type", Target: agent.Target{Ref: 7}, Replace: true}}, "+ [15]"},
		{"phone_key", map[string]any{"device": dev, "key": "back"},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_key", Kind: "key", Key: "back"}}, "+ [15]"},
		{"phone_apps", map[string]any{"device": dev}, fakeCall{Method: "Apps", Device: dev}, "Messages (com.google.android.apps.messaging)"},
		{"phone_launch", map[string]any{"device": dev, "app": "Messages"},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_launch", Kind: "launch", App: "Messages"}}, "+ [15]"},
		{"phone_stop_app", map[string]any{"device": dev, "app": "com.example.app"},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_stop_app", Kind: "stop", App: "com.example.app"}}, "+ [15]"},
		{"phone_open_url", map[string]any{"device": dev, "url": "https://example.com/menu?x=1"},
			fakeCall{Method: "Act", Device: dev, Arg: agent.Action{Tool: "phone_open_url", Kind: "open_url", URL: "https://example.com/menu?x=1"}}, "+ [15]"},
		{"phone_wait_for", map[string]any{"device": dev, "text": "Sent"},
			fakeCall{Method: "WaitFor", Device: dev, Arg: agent.WaitRequest{Text: "Sent", Timeout: 10 * time.Second}}, "+ [15]"},
		{"phone_wait_for", map[string]any{"device": dev, "ref": 9, "gone": true, "timeout_ms": 50000},
			fakeCall{Method: "WaitFor", Device: dev, Arg: agent.WaitRequest{Ref: 9, Gone: true, Timeout: 50 * time.Second}}, "+ [15]"},
		{"phone_notifications", map[string]any{"device": dev}, fakeCall{Method: "Notifications", Device: dev}, `Messages · "Alice" · "See you at 8"`},
		{"phone_files", map[string]any{"device": dev}, fakeCall{Method: "Files", Device: dev, Arg: agent.FilesRequest{Action: "list"}}, "receipts/ · both\nmenu.pdf · 1234 bytes · phone"},
		{"phone_files", map[string]any{"device": dev, "path": "receipts/2026"}, fakeCall{Method: "Files", Device: dev, Arg: agent.FilesRequest{Action: "list", Path: "receipts/2026"}}, "2 entries"},
		{"phone_files", map[string]any{"device": dev, "action": "pull", "path": "menu.pdf"}, fakeCall{Method: "Files", Device: dev, Arg: agent.FilesRequest{Action: "pull", Path: "menu.pdf"}}, "Pulled menu.pdf (1234 bytes)"},
		{"phone_files", map[string]any{"device": dev, "action": "push", "path": "menu.pdf", "approval_id": "ap_1"}, fakeCall{Method: "Files", Device: dev, Arg: agent.FilesRequest{Action: "push", Path: "menu.pdf", ApprovalID: "ap_1"}}, "Pushed menu.pdf (1234 bytes)"},
		{"phone_upload", map[string]any{"device": dev, "path": "menu.pdf", "content_base64": base64.StdEncoding.EncodeToString([]byte("%PDF-1.7"))},
			fakeCall{Method: "Upload", Device: dev, Arg: uploadArg{Path: "menu.pdf", Data: "%PDF-1.7"}}, "Saved 8 bytes as menu.pdf"},
		{"phone_upload_link", map[string]any{"device": dev, "path": "video.mp4", "size": 123456789 % MaxUploadLinkBytes},
			fakeCall{Method: "UploadLink", Device: dev, Arg: uploadLinkArg{Path: "video.mp4", Size: 123456789 % MaxUploadLinkBytes}},
			"PUT the file's bytes to http://127.0.0.1:8765/upload/tok before 2026-05-01T12:05:00Z"},
		{"phone_ask_person", map[string]any{"device": dev, "message": "Please sign in, then hand the phone back."},
			fakeCall{Method: "AskPerson", Device: dev, Arg: "Please sign in, then hand the phone back."}, "+ [15]"},
		{"phone_approval", map[string]any{"id": "ap_123"}, fakeCall{Method: "Approval", Arg: "ap_123"}, "+ [15]"},
	}
	fake := newFake()
	c := connectStream(t, fake, Options{})
	called := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			before := len(fake.Calls())
			res := callTool(t, c, tt.tool, tt.args)
			text := resultText(res)
			if res.IsError {
				t.Fatalf("got error result %q; want success", text)
			}
			calls := fake.Calls()[before:]
			if len(calls) != 1 {
				t.Fatalf("got %d session calls; want 1: %+v", len(calls), calls)
			}
			if diff := cmp.Diff(tt.want, calls[0]); diff != "" {
				t.Errorf("session call (-want +got):\n%s", diff)
			}
			if !strings.Contains(text, tt.wantText) {
				t.Errorf("got text %q; want it to contain %q", text, tt.wantText)
			}
			if res.StructuredContent == nil {
				t.Errorf("got no structured content; want some")
			}
			called[tt.tool] = true
		})
	}
	for _, tool := range AllTools() {
		if !called[tool.Def.Name] {
			t.Errorf("%s: no good call in the table", tool.Def.Name)
		}
	}
}

func TestBadArguments(t *testing.T) {
	const dev = "sim-android-1"
	long := strings.Repeat("a", maxTypedText+1)
	tests := []struct {
		name      string
		tool      string
		args      any
		wantField string // the text must start with "invalid_argument: " + wantField
	}{
		{"unknown argument", "phone_list", map[string]any{"verbose": true}, "verbose: unknown argument"},
		{"connect missing task", "phone_connect", map[string]any{"device": dev}, "task: is required"},
		{"connect blank task", "phone_connect", map[string]any{"task": "   "}, "task: must say"},
		{"connect bad device", "phone_connect", map[string]any{"device": "../etc", "task": "x"}, "device: "},
		{"connect apps not array", "phone_connect", map[string]any{"task": "x", "apps": "Maps"}, "apps: must be an array"},
		{"connect apps item", "phone_connect", map[string]any{"task": "x", "apps": []any{"Maps", 3}}, "apps[1]: must be a string"},
		{"release missing device", "phone_release", map[string]any{}, "device: is required"},
		{"observe wrong type", "phone_observe", map[string]any{"device": dev, "full": "yes"}, "full: must be true or false"},
		{"tap no target", "phone_tap", map[string]any{"device": dev}, "ref: say what to aim at"},
		{"tap two targets", "phone_tap", map[string]any{"device": dev, "ref": 3, "text": "Send"}, "ref: give only one"},
		{"tap mark and ref", "phone_tap", map[string]any{"device": dev, "ref": 3, "mark": 4}, "mark: give only one"},
		{"tap mark zero", "phone_tap", map[string]any{"device": dev, "mark": 0}, "mark: must be at least 1"},
		{"tap ref zero", "phone_tap", map[string]any{"device": dev, "ref": 0}, "ref: must be at least 1"},
		{"tap ref fraction", "phone_tap", map[string]any{"device": dev, "ref": 1.5}, "ref: must be an integer"},
		{"tap x without y", "phone_tap", map[string]any{"device": dev, "x": 3}, "y: is required with x"},
		{"tap occurrence without text", "phone_tap", map[string]any{"device": dev, "ref": 3, "occurrence": 2}, "occurrence: is allowed only with text"},
		{"tap occurrence zero", "phone_tap", map[string]any{"device": dev, "text": "OK", "occurrence": 0}, "occurrence: must be at least 1"},
		{"tap invalid utf-8", "phone_tap", map[string]any{"device": dev, "text": "caf\xe9"}, "text: is not valid UTF-8"},
		{"long press too long", "phone_long_press", map[string]any{"device": dev, "ref": 3, "duration_ms": 10001}, "duration_ms: must be at most 10000"},
		{"swipe missing to", "phone_swipe", map[string]any{"device": dev, "from": map[string]any{"ref": 3}}, "to: is required"},
		{"swipe unknown nested", "phone_swipe", map[string]any{"device": dev, "from": map[string]any{"ref": 3, "z": 1}, "to": map[string]any{"ref": 4}}, "from.z: unknown argument"},
		{"swipe empty from", "phone_swipe", map[string]any{"device": dev, "from": map[string]any{}, "to": map[string]any{"ref": 4}}, "from.ref: say what to aim at"},
		{"pinch missing scale", "phone_pinch", map[string]any{"device": dev, "ref": 3}, "scale_percent: is required"},
		{"pinch of 100 percent", "phone_pinch", map[string]any{"device": dev, "scale_percent": 100}, "scale_percent: must not be 100"},
		{"pinch scale too large", "phone_pinch", map[string]any{"device": dev, "scale_percent": 1001}, "scale_percent:"},
		{"pinch at two targets", "phone_pinch", map[string]any{"device": dev, "scale_percent": 200, "ref": 3, "text": "Map"}, "ref"},
		{"scroll bad direction", "phone_scroll", map[string]any{"device": dev, "direction": "sideways"}, `direction: "sideways" is not one of down, up, left, right`},
		{"type too long", "phone_type", map[string]any{"device": dev, "text": long}, "text: must be at most 4096 characters, not 4097"},
		{"type empty", "phone_type", map[string]any{"device": dev, "text": ""}, "text: must not be empty"},
		{"type missing text", "phone_type", map[string]any{"device": dev}, "text: is required"},
		{"type field and ref", "phone_type", map[string]any{"device": dev, "text": "hi", "field": "To", "ref": 2}, "ref: give only one of ref, field"},
		{"key unknown", "phone_key", map[string]any{"device": dev, "key": "power"}, `key: "power" is not one of`},
		{"apps device pattern", "phone_apps", map[string]any{"device": "a b"}, "device: "},
		{"launch empty app", "phone_launch", map[string]any{"device": dev, "app": ""}, "app: must not be empty"},
		{"stop app wrong type", "phone_stop_app", map[string]any{"device": dev, "app": 7}, "app: must be a string"},
		{"open url relative", "phone_open_url", map[string]any{"device": dev, "url": "example.com"}, "url: must be an absolute URL"},
		{"wait no target", "phone_wait_for", map[string]any{"device": dev}, "text: say what to wait for"},
		{"wait timeout capped", "phone_wait_for", map[string]any{"device": dev, "text": "Sent", "timeout_ms": 50001}, "timeout_ms: must be at most 50000"},
		{"notifications missing device", "phone_notifications", nil, "device: is required"},
		{"files dotdot", "phone_files", map[string]any{"device": dev, "path": "../secrets"}, "path: must stay inside"},
		{"files bad action", "phone_files", map[string]any{"device": dev, "action": "delete"}, "action"},
		{"pull without path", "phone_files", map[string]any{"device": dev, "action": "pull"}, "path: is required to pull"},
		{"upload bad base64", "phone_upload", map[string]any{"device": dev, "path": "a.txt", "content_base64": "@@@"}, "content_base64: is not valid base64"},
		{"upload folder", "phone_upload", map[string]any{"device": dev, "path": "docs/", "content_base64": ""}, "path: must name a file"},
		{"upload link dotdot", "phone_upload_link", map[string]any{"device": dev, "path": "../x.bin"}, "path: must stay inside"},
		{"upload link too large", "phone_upload_link", map[string]any{"device": dev, "path": "x.bin", "size": MaxUploadLinkBytes + 1}, "size: must be at most"},
		{"ask person long message", "phone_ask_person", map[string]any{"device": dev, "message": strings.Repeat("x", 1001)}, "message: must be at most 1000"},
		{"approval bad id", "phone_approval", map[string]any{"id": "a/b"}, "id: "},
		{"oversized arguments", "phone_ask_person", map[string]any{"device": dev, "message": "hi", "pad": strings.Repeat("x", maxArgsBytes)}, "the arguments are"},
	}
	fake := newFake()
	c := connectStream(t, fake, Options{})
	covered := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, tt.tool, tt.args)
			text := resultText(res)
			want := "invalid_argument: " + tt.wantField
			if !res.IsError || !strings.HasPrefix(text, want) {
				t.Errorf("got %q (isError %v); want an error starting %q", text, res.IsError, want)
			}
			covered[tt.tool] = true
		})
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Errorf("got session calls %+v for bad arguments; want none", calls)
	}
	for _, tool := range AllTools() {
		if !covered[tool.Def.Name] {
			t.Errorf("%s: no bad call in the table", tool.Def.Name)
		}
	}
}

// Over stdio a session has no upload links: phone_upload_link answers
// unsupported and points to phone_upload; bad paths are refused first.
func TestUploadLinkOverStdio(t *testing.T) {
	fake := newFake()
	c := connectStream(t, struct{ Session }{fake}, Options{}) // no UploadLinker
	res := callTool(t, c, "phone_upload_link", map[string]any{"device": "sim-android-1", "path": "video.mp4"})
	text := resultText(res)
	if !res.IsError || !strings.HasPrefix(text, "unsupported: ") || !strings.Contains(text, "send the content with phone_upload") {
		t.Errorf("got %v %q; want unsupported, send the content with phone_upload", res.IsError, text)
	}
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"device": "sim-android-1", "path": "../x.bin"}, "path: must stay inside"},
		{map[string]any{"device": "sim-android-1", "path": "docs/"}, "path: must name a file"},
		{map[string]any{"device": "sim-android-1", "path": "a.bin", "size": MaxUploadLinkBytes + 1}, "size"},
	} {
		res := callTool(t, connectStream(t, fake, Options{}), "phone_upload_link", tt.args)
		if text := resultText(res); !res.IsError || !strings.HasPrefix(text, "invalid_argument") || !strings.Contains(text, tt.want) {
			t.Errorf("%v: got %v %q; want invalid_argument %s", tt.args, res.IsError, text, tt.want)
		}
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Errorf("got session calls %+v; want none", calls)
	}
}

// An upload over 10 MiB is refused before it reaches the gateway. The
// handler is called directly: the stream would carry 14 MB for nothing.
func TestUploadTooLarge(t *testing.T) {
	fake := newFake()
	tool := PhoneUpload()
	h := tool.Handler(fixedSessions{fake}, nil)
	for _, tt := range []struct {
		name string
		size int
		want string
	}{
		{"decoded over the cap", maxUploadBytes + 1, "invalid_argument: content_base64: decodes to 10485761 bytes"},
		{"at the cap", maxUploadBytes, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := base64.StdEncoding.EncodeToString(make([]byte, tt.size))
			res, err := h(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: tool.Def.Name, Arguments: map[string]any{
				"device": "sim-android-1", "path": "big.bin", "content_base64": data,
			}}})
			if err != nil {
				t.Fatal(err)
			}
			text := resultText(res)
			if tt.want == "" {
				if res.IsError {
					t.Errorf("got %q; want success", text)
				}
				return
			}
			if !res.IsError || !strings.HasPrefix(text, tt.want) {
				t.Errorf("got %q; want an error starting %q", text, tt.want)
			}
		})
	}
}

func TestAgentErrors(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{agent.Errorf(agent.CodeLeaseHeld, `sim-android-1 is in use by "Claude Code" for the task "book a table". Pick another phone with phone_list, or wait.`),
			`lease_held: sim-android-1 is in use by "Claude Code" for the task "book a table". Pick another phone with phone_list, or wait.`},
		{agent.Errorf(agent.CodeNotLeased, "connect first with phone_connect."), "not_leased: connect first with phone_connect."},
		{agent.Errorf(agent.CodeDeviceOffline, "sim-android-1 is offline."), "device_offline: sim-android-1 is offline."},
		{agent.Errorf(agent.CodeDriverRestarting, "the driver is restarting; retry in a few seconds."), "driver_restarting: the driver is restarting"},
		{agent.Errorf(agent.CodeDeviceLocked, "the phone is locked."), "device_locked: the phone is locked."},
		{agent.Errorf(agent.CodeNotFound, "no phone x."), "not_found: no phone x."},
		{agent.Errorf(agent.CodeUnsupported, "no notifications on this phone."), "unsupported: no notifications"},
		{agent.Errorf(agent.CodeTimeout, `"Sent" did not show in 10 s.`), `timeout: "Sent" did not show in 10 s.`},
		{agent.Errorf(agent.CodeUncertain, "the driver restarted during the tap"),
			"uncertain: the driver restarted during the tap. It may or may not have happened; observe before repeating it."},
		{agent.Errorf(agent.CodeUncertain, "the tap may have landed; observe before repeating it."),
			"uncertain: the tap may have landed; observe before repeating it."},
		{fmtWrap(agent.Errorf(agent.CodeLeaseHeld, "taken.")), "lease_held: taken."},
		{agent.Errorf("approval_pending", "the person must approve sending; call phone_approval with id ap_1."), "approval_pending: the person must approve"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			fake := newFake()
			fake.err = tt.err
			c := connectStream(t, fake, Options{})
			res := callTool(t, c, "phone_tap", map[string]any{"device": "sim-android-1", "ref": 3})
			if text := resultText(res); !res.IsError || !strings.HasPrefix(text, tt.want) {
				t.Errorf("got %q (isError %v); want an error starting %q", text, res.IsError, tt.want)
			}
		})
	}
}

func fmtWrap(err error) error { return errors.Join(errors.New("context"), err) }

func TestInternalErrorHidesDetail(t *testing.T) {
	var logs logBuffer
	fake := newFake()
	fake.err = errors.New("open /home/p/.local/share/pinky/history.db: secret-detail")
	c := connectStream(t, fake, Options{Logger: logs.logger()})
	for _, tc := range []struct {
		tool string
		args any
	}{{"phone_list", nil}, {"phone_observe", map[string]any{"device": "sim-android-1"}}} {
		res := callTool(t, c, tc.tool, tc.args)
		text := resultText(res)
		if !res.IsError || !strings.HasPrefix(text, "internal: ") {
			t.Errorf("%s: got %q; want an internal error", tc.tool, text)
		}
		if strings.Contains(text, "secret-detail") {
			t.Errorf("%s: got %q; want no internal detail", tc.tool, text)
		}
	}
	if !strings.Contains(logs.String(), "secret-detail") {
		t.Errorf("got log %q; want the detail logged", logs.String())
	}
}

func TestPanicIsInternal(t *testing.T) {
	var logs logBuffer
	fake := newFake()
	fake.wait = func(context.Context, agent.Progress) error { panic("boom-detail") }
	c := connectStream(t, fake, Options{Logger: logs.logger()})
	res := callTool(t, c, "phone_key", map[string]any{"device": "sim-android-1", "key": "home"})
	if text := resultText(res); !res.IsError || !strings.HasPrefix(text, "internal: ") || strings.Contains(text, "boom") {
		t.Errorf("got %q; want an internal error without detail", text)
	}
	if !strings.Contains(logs.String(), "boom-detail") {
		t.Errorf("got log %q; want the panic logged", logs.String())
	}
}

func TestSessionsError(t *testing.T) {
	h := PhoneList().Handler(sessionsFunc(func(context.Context) (Session, error) {
		return nil, agent.Errorf(agent.CodeNotFound, "no agent session; reconnect.")
	}), nil)
	res, err := h(context.Background(), mcp.CallToolRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || text != "not_found: no agent session; reconnect." {
		t.Errorf("got %q; want the session's error", text)
	}
}

type sessionsFunc func(context.Context) (Session, error)

func (f sessionsFunc) Session(ctx context.Context) (Session, error) { return f(ctx) }

func TestScreenshotIsImage(t *testing.T) {
	c := connectStream(t, newFake(), Options{})
	res := callTool(t, c, "phone_observe", map[string]any{"device": "sim-android-1", "screenshot": true})
	var images []mcp.ImageContent
	for _, content := range res.Content {
		if img, ok := content.(mcp.ImageContent); ok {
			images = append(images, img)
		}
	}
	if len(images) != 1 {
		t.Fatalf("got %d images; want 1", len(images))
	}
	if images[0].MIMEType != "image/jpeg" {
		t.Errorf("got MIME type %q; want image/jpeg", images[0].MIMEType)
	}
	data, err := base64.StdEncoding.DecodeString(images[0].Data)
	if err != nil || string(data) != "\xff\xd8\xff\xe0jpg" {
		t.Errorf("got image data %q (%v); want the screenshot", data, err)
	}
	// Without screenshot there is none.
	res = callTool(t, c, "phone_observe", map[string]any{"device": "sim-android-1"})
	if len(res.Content) != 1 {
		t.Errorf("got %d contents; want text only", len(res.Content))
	}
}

func TestObservationText(t *testing.T) {
	tests := []struct {
		obs  agent.Observation
		want string
	}{
		{agent.Observation{Device: "d1", Text: "~ [7] field \"Message\" → \"Hi\"", App: "Messages", Settled: true},
			"d1 · Messages · unlocked · changes since your last read\n~ [7] field \"Message\" → \"Hi\""},
		{agent.Observation{Device: "d1", Locked: true, Settled: true},
			"d1 · no app · locked · changes since your last read\n(nothing changed)"},
		{agent.Observation{Device: "d1", Full: true, Text: "app Maps (com.google.maps) · unlocked · 1080x2400\n", Settled: false},
			"d1 · whole screen · still changing (read again for the end state)\napp Maps (com.google.maps) · unlocked · 1080x2400"},
	}
	for _, tt := range tests {
		res := observationResult(&tt.obs)
		if got := resultText(res); got != tt.want {
			t.Errorf("got %q; want %q", got, tt.want)
		}
	}
}
