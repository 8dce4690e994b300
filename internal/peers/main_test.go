package peers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// simBin is the path of the pinky-driver-sim binary TestMain builds.
var simBin string

// nodeDir is the folder of the pinned npm packages and the node scripts.
var nodeDir string

func TestMain(m *testing.M) {
	_, file, _, _ := runtime.Caller(0)
	here := filepath.Dir(file)
	nodeDir = filepath.Join(here, "testdata", "node")
	dir, err := os.MkdirTemp("", "pinky-peers")
	if err != nil {
		panic(err)
	}
	simBin = filepath.Join(dir, "pinky-driver-sim")
	c := exec.Command("go", "build", "-o", simBin, "./drivers/sim/cmd/pinky-driver-sim")
	c.Dir = filepath.Join(here, "..", "..")
	if b, err := c.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build pinky-driver-sim: %v\n%s", err, b)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
