package sdk

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies keeps drivers/ free of the gateway, and the SDK that
// third parties import free of heavy dependencies.
func TestDependencies(t *testing.T) {
	const mod = "github.com/pinky-gateway/pinky/"
	for _, tt := range []struct {
		pkgs   string
		banned []string
	}{
		{"../...", []string{mod + "gateway", mod + "mcpserver", mod + "cli"}},
		{".", []string{
			mod + "drivers/sim", mod + "drivers/drivertest", "github.com/mark3labs/mcp-go", "github.com/mattn/go-sqlite3",
			"github.com/spf13/cobra", "gopkg.in/yaml.v3", "github.com/chromedp",
		}},
	} {
		out, err := exec.Command("go", "list", "-e", "-deps", tt.pkgs).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", tt.pkgs, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, b := range tt.banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s depends on %s", tt.pkgs, dep)
				}
			}
		}
	}
}
