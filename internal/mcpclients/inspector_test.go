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

// inspectorResult is a tools/call result as the Inspector's CLI prints it.
type inspectorResult struct {
	Content []struct {
		Type, Text string
	}
	IsError           bool
	StructuredContent map[string]any
}

// TestInspectorCLI: the MCP Inspector's CLI (--cli), over stdio and over
// Streamable HTTP, lists the tools in its strict mode (which exits 6 on a
// tool schema that is not portable across clients) and calls tools: a
// success, a tap without a lease (an error result with its code) and a
// connect with arguments given as key=value pairs.
func TestInspectorCLI(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			r := newRig(t)
			launcher := "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
			inspector := func(t *testing.T, args ...string) (string, string, int) {
				t.Helper()
				cmd := []string{launcher, "--cli"}
				if transport == "stdio" {
					cmd = append(cmd, "-e", "PINKY_HOME="+r.e.Home)
					cmd = append(append(cmd, args...), "--", e2e.Bin.Pinky, "mcp")
				} else {
					cmd = append(cmd, r.url, "--transport", "http", "--header", "Authorization: Bearer "+r.token)
					cmd = append(cmd, args...)
				}
				return r.run(t, time.Minute, cmd...)
			}

			out, errs, code := inspector(t, "--method", "tools/list", "--strict")
			if code != 0 {
				t.Errorf("tools/list --strict: exit %d (6: a schema problem)\nstderr: %s", code, errs)
			}
			var list struct{ Tools []struct{ Name string } }
			if err := json.Unmarshal([]byte(out), &list); err != nil {
				t.Fatalf("tools/list printed %q: %v\nstderr: %s", out, err, errs)
			}
			var names []string
			for _, tool := range list.Tools {
				names = append(names, tool.Name)
			}
			for _, tool := range mcpserver.AllTools() {
				if !slices.Contains(names, tool.Def.Name) {
					t.Errorf("tools/list: %s missing from %v", tool.Def.Name, names)
				}
			}

			tests := []struct {
				name    string
				args    []string
				errCode string // the error result's code, or "" for a success
				want    string // in the result's text
			}{
				{"phone_list", []string{"--tool-name", "phone_list"}, "", device},
				{"tap without a lease", []string{"--tool-name", "phone_tap", "--tool-arg", "device=" + device, "--tool-arg", "x=540", "--tool-arg", "y=1200"}, "not_leased", device},
				{"phone_connect", []string{"--tool-name", "phone_connect", "--tool-arg", "device=" + device, "--tool-arg", "task=look at the phone with the Inspector"}, "", device},
				{"unknown phone", []string{"--tool-name", "phone_observe", "--tool-arg", "device=sim-nonesuch"}, "not_found", "sim-nonesuch"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					out, errs, code := inspector(t, append([]string{"--method", "tools/call"}, tt.args...)...)
					// An error result is printed, then a line that says so,
					// and the CLI exits non-zero.
					first, _, _ := strings.Cut(out, "\n}\n")
					var res inspectorResult
					if err := json.Unmarshal([]byte(first+"\n}"), &res); err != nil {
						t.Fatalf("tools/call printed %q: %v\nstderr: %s", out, err, errs)
					}
					var text strings.Builder
					for _, c := range res.Content {
						text.WriteString(c.Text)
					}
					if tt.errCode == "" {
						if code != 0 || res.IsError || !strings.Contains(text.String(), tt.want) {
							t.Errorf("got exit %d, isError %v, %q; want a success containing %q\nstderr: %s", code, res.IsError, text.String(), tt.want, errs)
						}
						return
					}
					if code == 0 || !res.IsError || !strings.HasPrefix(text.String(), tt.errCode+":") || !strings.Contains(text.String(), tt.want) {
						t.Errorf("got exit %d, isError %v, %q; want an error result starting %q and naming %q", code, res.IsError, text.String(), tt.errCode+":", tt.want)
					}
				})
			}
		})
	}
}
