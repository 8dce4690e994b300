package api

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoCoreDependencies keeps the local API's wire apart from the core:
// gateway/api imports no other package of gateway/, and nothing of the
// daemon, the MCP front-end or the CLI, so that the core can change while
// the API stays as its clients know it.
func TestNoCoreDependencies(t *testing.T) {
	const module = "github.com/pinky-gateway/pinky/"
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != module+"gateway/api" {
		t.Fatalf("go list -deps gave %d packages, not ending with gateway/api: %q", len(deps), deps)
	}
	for _, p := range deps {
		rel, ok := strings.CutPrefix(p, module)
		if !ok || rel == "gateway/api" {
			continue
		}
		banned := strings.HasPrefix(rel, "gateway/")
		for _, top := range []string{"mcpserver", "cli"} {
			banned = banned || rel == top || strings.HasPrefix(rel, top+"/")
		}
		if banned {
			t.Errorf("gateway/api depends on %s; its wire types must be its own", p)
		}
	}
}
