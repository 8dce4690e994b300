package mcpclients

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/mcpserver"
)

// sdkCall is one tool call of testdata/node/sdkclient.mjs.
type sdkCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// sdkOutput is what sdkclient.mjs prints.
type sdkOutput struct {
	Server struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"server"`
	ProtocolVersion *string        `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	Tools           []string       `json:"tools"`
	Results         []struct {
		Text       string         `json:"text"`
		IsError    bool           `json:"isError"`
		Structured map[string]any `json:"structured"`
		RPCError   string         `json:"rpcError"`
	} `json:"results"`
}

// A step of the task: a call and what its result must be (an error
// result's text starts with errCode and a colon; a success's contains
// want).
type sdkStep struct {
	call    sdkCall
	errCode string
	want    string
}

// sdkTask is a short real task on the unlocked virtual phone: a tap before
// connecting is refused, then connect, read the home screen, open Messages
// by its icon, read what changed, tap a ref that does not exist, release,
// and a read after the release is refused.
var sdkTask = []sdkStep{
	{call: sdkCall{"phone_tap", on("text", "Messages")}, errCode: "not_leased"},
	{call: sdkCall{"phone_connect", on("task", "open Messages with the TypeScript SDK")}, want: device},
	{call: sdkCall{"phone_observe", on("full", true)}, want: `"Messages"`},
	{call: sdkCall{"phone_tap", on("text", "Messages")}, want: "Ben Okafor"},
	{call: sdkCall{"phone_observe", on()}, want: device},
	{call: sdkCall{"phone_tap", on("ref", 999999)}, errCode: "not_found"},
	{call: sdkCall{"phone_release", on()}, want: device},
	{call: sdkCall{"phone_observe", on()}, errCode: "not_leased"},
}

// on is the arguments of a call on the test's phone.
var on = e2e.OnDevice(device)

// TestTypeScriptSDK: the official TypeScript SDK's client, over stdio
// (spawning `pinky mcp`) and over Streamable HTTP (with the bearer token),
// initializes, lists every tool of Pinky's inventory, and does a short
// task on the virtual phone; failures come back as tool results whose
// text starts with a stable code, and every result passes the SDK's own
// checks (its output schema validation among them).
func TestTypeScriptSDK(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			r := newRig(t)
			spec := map[string]any{"transport": transport}
			if transport == "stdio" {
				spec["command"], spec["args"], spec["env"] = e2e.Bin.Pinky, []string{"mcp"}, envMap(r.stdioEnv())
			} else {
				spec["url"], spec["token"] = r.url, r.token
			}
			var calls []sdkCall
			for _, s := range sdkTask {
				calls = append(calls, s.call)
			}
			spec["calls"] = calls
			b, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := r.run(t, 2*time.Minute, "sdkclient.mjs", string(b))
			if code != 0 {
				t.Fatalf("sdkclient.mjs: exit %d\nstderr: %s", code, stderr)
			}
			var got sdkOutput
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("sdkclient.mjs printed %q: %v", stdout, err)
			}

			if got.Server.Name != "pinky" {
				t.Errorf("initialize: server %+v; want pinky", got.Server)
			}
			if transport == "http" && (got.ProtocolVersion == nil || *got.ProtocolVersion == "") {
				t.Errorf("initialize: no protocol version negotiated over HTTP")
			}
			if _, ok := got.Capabilities["tools"]; !ok {
				t.Errorf("initialize: capabilities %v; want tools", got.Capabilities)
			}
			for _, tool := range mcpserver.AllTools() {
				if !slices.Contains(got.Tools, tool.Def.Name) {
					t.Errorf("tools/list: %s missing from %v", tool.Def.Name, got.Tools)
				}
			}
			if len(got.Results) != len(sdkTask) {
				t.Fatalf("got %d results; want %d", len(got.Results), len(sdkTask))
			}
			for i, s := range sdkTask {
				res := got.Results[i]
				switch {
				case res.RPCError != "":
					t.Errorf("%d. %s %v: the SDK refused it: %s", i+1, s.call.Name, s.call.Arguments, res.RPCError)
				case s.errCode != "" && (!res.IsError || !strings.HasPrefix(res.Text, s.errCode+":")):
					t.Errorf("%d. %s %v: got isError %v %q; want an error result starting %q", i+1, s.call.Name, s.call.Arguments, res.IsError, res.Text, s.errCode+":")
				case s.errCode == "" && (res.IsError || !strings.Contains(res.Text, s.want)):
					t.Errorf("%d. %s %v: got isError %v %q; want a result containing %q", i+1, s.call.Name, s.call.Arguments, res.IsError, res.Text, s.want)
				}
			}
		})
	}
}

// envMap is an environment list as the SDK's stdio transport takes it.
func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}
