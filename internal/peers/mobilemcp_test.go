package peers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	_ "image/jpeg" // mobile-mcp may send its screenshot as JPEG
	_ "image/png"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/internal/testkit"
)

// mcpElement is an element as mobile_list_elements_on_screen lists it
// (format json).
type mcpElement struct {
	Type, Text, Label, Name, Value, Identifier string
	Coordinates                                struct{ X, Y, Width, Height int }
	Focused                                    bool
}

// peerMCP is mobile-mcp over stdio, spawned as an agent host would.
type peerMCP struct {
	t *testing.T
	c *client.Client
}

// startMobileMCP spawns node …/mobile-mcp/lib/index.js with the rig's adb
// server in its environment and more, and initializes the session.
func startMobileMCP(t *testing.T, r *rig, more ...string) *peerMCP {
	t.Helper()
	node := needNode(t)
	index := filepath.Join(nodeDir, "node_modules", "@mobilenext", "mobile-mcp", "lib", "index.js")
	// No telemetry: the test machine has no network, and no one to report to.
	env := append(append([]string(nil), r.env...), "MOBILEMCP_DISABLE_TELEMETRY=1")
	// mobilecli starts a daemon of its own, detached, for the $HOME it
	// runs in, which outlives mobile-mcp: stop it before the rig's $HOME
	// goes (cleanups run last first).
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		stop := exec.CommandContext(ctx, filepath.Join(nodeDir, "node_modules", "@mobilenext", "mobilecli-"+runtime.GOOS+"-"+mobilecliArch(), "mobilecli-"+runtime.GOOS+"-"+mobilecliArch()), "daemon", "stop")
		stop.Env = env
		if out, err := stop.CombinedOutput(); err != nil {
			t.Logf("mobilecli daemon stop: %v\n%s", err, out)
		}
	})
	c, err := client.NewStdioMCPClient(node, append(env, more...), index, "--stdio")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(testkit.Context(t), testkit.Scaled(30*time.Second))
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "pinky-peers-test", Version: "1.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatalf("mobile-mcp initialize: %v", err)
	}
	return &peerMCP{t: t, c: c}
}

// call calls a tool and returns its result; a protocol error or an error
// result fails the test.
func (p *peerMCP) call(tool string, args map[string]any) *mcp.CallToolResult {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(testkit.Context(p.t), testkit.Scaled(60*time.Second))
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := p.c.CallTool(ctx, req)
	if err != nil {
		p.t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		p.t.Fatalf("%s %v: error result %s", tool, args, text(res))
	}
	return res
}

// text is a result's text content, joined.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// elements lists the elements on screen.
func (p *peerMCP) elements(device string) []mcpElement {
	p.t.Helper()
	out := text(p.call("mobile_list_elements_on_screen", map[string]any{"device": device, "format": "json"}))
	_, list, ok := strings.Cut(out, "Found these elements on screen: ")
	var els []mcpElement
	if !ok || json.Unmarshal([]byte(list), &els) != nil {
		p.t.Fatalf("mobile_list_elements_on_screen: got %q; want a JSON list of elements", out)
	}
	return els
}

// tap taps the middle of the first element that match accepts, and
// returns it.
func (p *peerMCP) tap(device, what string, els []mcpElement, match func(mcpElement) bool) mcpElement {
	p.t.Helper()
	for _, e := range els {
		if match(e) {
			c := e.Coordinates
			p.call("mobile_click_on_screen_at_coordinates", map[string]any{"device": device, "x": c.X + c.Width/2, "y": c.Y + c.Height/2})
			return e
		}
	}
	p.t.Fatalf("no element on screen is %s: %+v", what, els)
	return mcpElement{}
}

// mobilecliArch is the architecture in the name of mobilecli's npm package.
func mobilecliArch() string {
	if runtime.GOARCH == "arm64" {
		return "arm64"
	}
	return "amd64"
}

// TestMobileMCP: mobile-mcp, in its default mode (through mobilecli) and
// in its adb-only mode, does a task on the virtual phone: it lists the
// phone, opens Messages and Ben's conversation, finds the empty message
// field by its name, taps it and types a reply, goes home and takes a
// screenshot. After each step the phone's own dumps show that it happened.
func TestMobileMCP(t *testing.T) {
	tests := []struct {
		name string
		env  []string
	}{
		{"default", nil},
		{"adb-only", []string{"MOBILEMCP_LEGACY_ROBOT=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			needNode(t)
			r := newRig(t)
			p := startMobileMCP(t, r, tt.env...)
			dev := r.serial

			if out := text(p.call("mobile_list_available_devices", map[string]any{})); !strings.Contains(out, dev) {
				t.Fatalf("mobile_list_available_devices: got %q; want %s listed", out, dev)
			}
			p.call("mobile_launch_app", map[string]any{"device": dev, "packageName": "com.google.android.apps.messaging"})
			if app := r.screen(t).App.ID; app != "com.google.android.apps.messaging" {
				t.Fatalf("mobile_launch_app: %q in front; want Messages", app)
			}
			p.tap(dev, "Ben's conversation", p.elements(dev), func(e mcpElement) bool {
				return e.Text == "Ben Okafor" || e.Label == "Ben Okafor"
			})
			if e := element(r.screen(t), "contact_name"); e == nil || e.Text != "Ben Okafor" {
				t.Fatalf("tap on Ben Okafor: contact %+v; want Ben's thread", e)
			}
			// The field is empty: a real dump, and so mobile-mcp, names it
			// by its hint.
			field := p.tap(dev, `the message field "Text message"`, p.elements(dev), func(e mcpElement) bool {
				return strings.HasSuffix(e.Type, "EditText") && (e.Text == "Text message" || e.Label == "Text message" || e.Name == "Text message")
			})
			if !strings.HasSuffix(field.Identifier, "compose_message_text") && field.Identifier != "" {
				t.Errorf("the message field: id %q; want compose_message_text", field.Identifier)
			}
			if e := element(r.screen(t), "compose_message_text"); e == nil || !e.Focused {
				t.Fatalf("tap on the message field: %+v; want it focused", e)
			}
			const reply = "see you at six"
			p.call("mobile_type_keys", map[string]any{"device": dev, "text": reply, "submit": false})
			if e := element(r.screen(t), "compose_message_text"); e == nil || e.Text != reply {
				t.Fatalf("mobile_type_keys: field %+v; want %q in it", e, reply)
			}
			p.call("mobile_press_button", map[string]any{"device": dev, "button": "HOME"})
			if app := r.screen(t).App.ID; app != "com.google.android.apps.nexuslauncher" {
				t.Fatalf("mobile_press_button HOME: %q in front; want the launcher", app)
			}
			shot := p.call("mobile_take_screenshot", map[string]any{"device": dev})
			var img *mcp.ImageContent
			for _, c := range shot.Content {
				if ic, ok := c.(mcp.ImageContent); ok {
					img = &ic
				}
			}
			if img == nil {
				t.Fatalf("mobile_take_screenshot: no image in %+v", shot.Content)
			}
			data, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				t.Fatal(err)
			}
			cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("mobile_take_screenshot: %s is no image: %v", img.MIMEType, err)
			}
			// Scaled or not, the picture keeps the phone's 1080x2400 shape,
			// to a pixel.
			if d := cfg.Width*2400 - cfg.Height*1080; cfg.Width == 0 || d < -2400 || d > 2400 {
				t.Errorf("mobile_take_screenshot: a %dx%d %s; want the phone's 9:20 shape", cfg.Width, cfg.Height, format)
			}
		})
	}
}
