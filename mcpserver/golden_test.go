package mcpserver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestGoldenSchemas keeps one snapshot per tool of its full definition
// (name, description, input and output schemas, annotations): a change to
// what clients see must show up in review.
func TestGoldenSchemas(t *testing.T) {
	want := map[string]bool{}
	for _, tool := range AllTools() {
		name := tool.Def.Name + ".json"
		want[name] = true
		got, err := json.MarshalIndent(tool.Def, "", "  ")
		if err != nil {
			t.Fatalf("%s: %v", tool.Def.Name, err)
		}
		got = append(got, '\n')
		testkit.Golden(t, filepath.Join("testdata", name), got)
	}
	// A snapshot without a tool is a tool that went away unnoticed.
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !want[e.Name()] {
			if testkit.UpdateGolden() {
				_ = os.Remove(filepath.Join("testdata", e.Name()))
				continue
			}
			t.Errorf("testdata/%s: no such tool; remove it or run UPDATE_GOLDEN=1 go test ./mcpserver/", e.Name())
		}
	}
}

// TestDocsCurrent keeps docs/mcp.md in step with the inventory.
func TestDocsCurrent(t *testing.T) {
	testkit.Golden(t, filepath.Join("..", "docs", "mcp.md"), []byte(Docs()))
}

// Every tool's schemas are valid JSON Schema that mcp-go can check calls
// against, and the definitions are complete.
func TestDefinitions(t *testing.T) {
	for _, tool := range AllTools() {
		d := tool.Def
		if !strings.HasPrefix(d.Name, "phone_") {
			t.Errorf("%s: want the phone_ prefix", d.Name)
		}
		if len(d.Description) < 40 || d.Annotations.Title == "" || d.Title != d.Annotations.Title {
			t.Errorf("%s: want a description and a title", d.Name)
		}
		if d.InputSchema.AdditionalProperties != false {
			t.Errorf("%s: want additionalProperties false", d.Name)
		}
		if d.OutputSchema.Type != "object" {
			t.Errorf("%s: want an output schema", d.Name)
		}
		if len(tool.Codes) == 0 {
			t.Errorf("%s: want its error codes", d.Name)
		}
	}
}
