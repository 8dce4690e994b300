package daemon_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheCoreDoesNotImportTheDaemon: nothing under gateway/ depends on the
// daemon's wiring, the MCP transport or the person's CLI, so that the core
// can be read and changed without them (the dependency runs one way:
// cli → cli/daemon → mcpserver and gateway/...).
func TestTheCoreDoesNotImportTheDaemon(t *testing.T) {
	const mod = "github.com/pinky-gateway/pinky/"
	c := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", mod+"gateway/...")
	out, err := c.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	n := 0
	for line := range strings.Lines(string(out)) {
		pkg, deps, _ := strings.Cut(strings.TrimSpace(line), " ")
		n++
		for _, d := range strings.Fields(deps) {
			for _, banned := range []string{"mcpserver", "cli"} {
				if d == mod+banned || strings.HasPrefix(d, mod+banned+"/") {
					t.Errorf("%s depends on %s; the core must not depend on the daemon, MCP or the CLI", pkg, d)
				}
			}
		}
	}
	if n < 10 {
		t.Errorf("go list listed %d packages under gateway/; want the core's (at least 10)", n)
	}
}
