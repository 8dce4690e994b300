package mcpserver

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// A schema carries what an agent needs to call right: unlisted bounds, the
// descriptions inside a terse object and a default of false stay out.
func TestSchema(t *testing.T) {
	i64 := func(n int64) *int64 { return &n }
	tests := []struct {
		name string
		p    param
		want map[string]any
	}{
		{"listed bounds", param{typ: "string", desc: "D.", minLen: 1, maxLen: 9},
			map[string]any{"type": "string", "description": "D.", "minLength": 1, "maxLength": 9}},
		{"unlisted bounds", param{typ: "string", desc: "D.", minLen: 1, maxLen: 9, pattern: regexp.MustCompile("^a+$"), unlisted: true},
			map[string]any{"type": "string", "description": "D."}},
		{"listed range", param{typ: "integer", min: i64(0), max: i64(5), def: 2},
			map[string]any{"type": "integer", "minimum": int64(0), "maximum": int64(5), "default": 2}},
		{"unlisted range", param{typ: "integer", min: i64(0), max: i64(5), unlisted: true},
			map[string]any{"type": "integer"}},
		{"default false", param{typ: "boolean", def: false}, map[string]any{"type": "boolean"}},
		{"default true", param{typ: "boolean", def: true}, map[string]any{"type": "boolean", "default": true}},
		{"unlisted list", param{typ: "array", items: &param{typ: "string", minLen: 1, maxLen: 3}, maxItems: 2, unlisted: true},
			map[string]any{"type": "array", "items": map[string]any{"type": "string"}}},
		{"terse object", param{typ: "object", desc: "Where.", terse: true, props: []param{
			{name: "n", typ: "integer", desc: "N.", min: i64(1), max: i64(3), required: true},
		}}, map[string]any{"type": "object", "description": "Where.", "additionalProperties": false, "required": []string{"n"},
			"properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": int64(1), "maximum": int64(3)}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.p.schema()); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

// Leaving a bound out of the schema never loosens the check: every bound
// and pattern of every tool's arguments, listed or not, still refuses the
// first value past it.
func TestUnlistedBoundsAreChecked(t *testing.T) {
	var walk func(tool, prefix string, p param)
	walk = func(tool, prefix string, p param) {
		field := prefix + p.name
		refuse := func(what string, v any) {
			if err := p.check(field, v); err == nil {
				t.Errorf("%s: %s: %s %v passes; want it refused", tool, field, what, v)
			}
		}
		switch {
		case p.typ == "string" && len(p.enum) == 0:
			if p.maxLen > 0 {
				refuse("a string longer than", strings.Repeat("a", p.maxLen+1))
			}
			if p.minLen > 0 {
				refuse("a string shorter than", strings.Repeat("a", p.minLen-1))
			}
			if p.pattern != nil {
				refuse("a string off the pattern", "a b")
			}
		case p.typ == "integer":
			if p.max != nil {
				refuse("a number above", float64(*p.max+1))
			}
			if p.min != nil {
				refuse("a number below", float64(*p.min-1))
			}
		case p.typ == "array" && p.maxItems > 0:
			refuse("a list longer than", make([]any, p.maxItems+1))
		}
		for _, c := range p.props {
			walk(tool, field+".", c)
		}
	}
	for _, tool := range AllTools() {
		for _, p := range tool.params {
			walk(tool.Def.Name, "", p)
		}
	}
}

// The tests that call every tool (TestToolCalls) check each result against
// the tool's output schema through mcp-go's output validation. This makes
// sure that check bites: results that break a tool's real output schema
// become error results.
func TestOutputSchemaValidationBites(t *testing.T) {
	tests := []struct {
		name       string
		tool       Tool
		structured any
		wantError  bool
	}{
		{"observation", PhoneTap(), map[string]any{"device": "d", "text": "+ [1] x", "full": false, "app": "A", "locked": false, "settled": true}, false},
		{"observation without text", PhoneTap(), map[string]any{"device": "d", "full": false}, true},
		{"observation with full a string", PhoneObserve(), map[string]any{"device": "d", "text": "", "full": "yes"}, true},
		{"phone without id", PhoneList(), map[string]any{"phones": []any{map[string]any{"platform": "android"}}}, true},
		{"file somewhere else", PhoneFiles(), map[string]any{"action": "list", "path": "", "files": []any{map[string]any{"name": "a", "where": "cloud"}}}, true},
		{"release", PhoneRelease(), map[string]any{"device": "d", "released": true}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := server.NewMCPServer("test", "1", server.WithToolCapabilities(false), server.WithOutputSchemaValidation())
			srv.AddTool(tt.tool.Def, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult("ok", tt.structured), nil
			})
			req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call",
				"params": map[string]any{"name": tt.tool.Def.Name, "arguments": map[string]any{}}})
			b, err := json.Marshal(srv.HandleMessage(context.Background(), req))
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Result *struct {
					IsError bool `json:"isError"`
				} `json:"result"`
			}
			if err := json.Unmarshal(b, &resp); err != nil || resp.Result == nil {
				t.Fatalf("got %s; want a tool result", b)
			}
			if resp.Result.IsError != tt.wantError {
				t.Errorf("got isError %v (%s); want %v", resp.Result.IsError, b, tt.wantError)
			}
		})
	}
}
