package goclients

import (
	"context"
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

const device = "sim-android-1"

// rig is one test's daemon, with the virtual phones and MCP over HTTP on a
// free loopback port, and the ways an agent reaches it.
type rig struct {
	e     *e2e.Env
	url   string // of MCP over HTTP
	token string
}

func newRig(t *testing.T) *rig {
	t.Helper()
	e := e2e.New(t)
	e.Daemon("--sim", "--http", "127.0.0.1:0")
	var st api.Status
	e.JSON(&st, "status")
	if st.HTTP == "" || strings.HasSuffix(st.HTTP, ":0") {
		t.Fatalf("status: http %q; want the address MCP over HTTP listens on", st.HTTP)
	}
	out, errs, code := e.Run("token")
	tok := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(tok, "pinky_") {
		t.Fatalf("pinky token: exit %d, %q, %s", code, out, errs)
	}
	// The person unlocks the phone for agents (agents never type PINs).
	e.Unlock(device)
	return &rig{e: e, url: "http://" + st.HTTP + "/mcp", token: tok}
}

// stdio is the connection of an agent host that spawns `pinky mcp`.
func (r *rig) stdio() connection {
	return connection{cmd: func() *exec.Cmd { return r.e.Cmd("mcp") }}
}

// http is the connection of a remote agent.
func (r *rig) http() connection { return connection{url: r.url, token: r.token} }

// transports are both ways to reach the rig, by name.
func (r *rig) transports() []struct {
	name string
	conn connection
} {
	return []struct {
		name string
		conn connection
	}{{"stdio", r.stdio()}, {"http", r.http()}}
}

// timeout bounds one client's whole conversation: generous, for a loaded
// machine; it only stops a hang.
const timeout = 60 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// structuredSince is the first protocol version with structuredContent and
// outputSchema.
const structuredSince = "2025-06-18"

// hasStructured reports whether protocol version v has structured content
// and output schemas.
func hasStructured(v string) bool { return v >= structuredSince }

// resolveSchema compiles a tool's schema as the Go SDK does
// (google/jsonschema-go): a schema it cannot resolve is one it refuses.
func resolveSchema(raw json.RawMessage) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// checkTools checks tools/list as a client of protocol version v got it:
// every tool has an input schema of an object that the Go SDK's schema
// package resolves, and an output schema exactly when v has them, which it
// resolves too. It returns the resolved output schemas by tool.
func checkTools(t *testing.T, v string, tools []toolDef) map[string]*jsonschema.Resolved {
	t.Helper()
	if len(tools) < 20 {
		t.Errorf("tools/list: %d tools; want Pinky's twenty-odd", len(tools))
	}
	out := map[string]*jsonschema.Resolved{}
	for _, tool := range tools {
		if len(tool.Input) == 0 {
			t.Errorf("%s: no input schema", tool.Name)
		} else if _, err := resolveSchema(tool.Input); err != nil {
			t.Errorf("%s: input schema: %v", tool.Name, err)
		} else if !strings.Contains(string(tool.Input), `"type":"object"`) {
			t.Errorf("%s: input schema %s; want an object", tool.Name, tool.Input)
		}
		present := len(tool.Output) > 0 && string(tool.Output) != "null"
		if present != hasStructured(v) {
			t.Errorf("%s under %s: output schema present %v; want %v", tool.Name, v, present, hasStructured(v))
		}
		if !present {
			continue
		}
		rs, err := resolveSchema(tool.Output)
		if err != nil {
			t.Errorf("%s: output schema: %v", tool.Name, err)
			continue
		}
		out[tool.Name] = rs
	}
	return out
}

// codeRE is the stable code that starts an error result's text.
var codeRE = regexp.MustCompile(`^([a-z_]+): \S`)
