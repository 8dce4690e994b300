package driverpython

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// pythonModules are what the driver imports beyond the standard library,
// with the Debian package of each (scripts/test-deps.sh installs them).
var pythonModules = map[string]string{"grpc": "python3-grpcio", "google.protobuf": "python3-protobuf", "PIL": "python3-pil"}

// python returns an interpreter that has the driver's modules: $PINKY_PYTHON,
// python3 on PATH, or Debian's own /usr/bin/python3 (a python3 from pyenv or
// a virtualenv on PATH does not see Debian's packages). Missing, it skips
// the test on a developer's machine and fails it in CI, as testdep does.
func python(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p := os.Getenv("PINKY_PYTHON"); p != "" {
		candidates = append(candidates, p)
	}
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3")
	var imports, pkgs []string
	for m, pkg := range pythonModules {
		imports = append(imports, m)
		pkgs = append(pkgs, pkg)
	}
	var tried []string
	for _, py := range candidates {
		out, err := exec.Command(py, "-c", "import "+strings.Join(imports, ", ")).CombinedOutput()
		if err == nil {
			return py
		}
		tried = append(tried, fmt.Sprintf("%s: %s", py, lastLine(out, err)))
	}
	msg := fmt.Sprintf("no python3 with %s (Debian: %s); tried %s", strings.Join(imports, ", "), strings.Join(pkgs, " "), strings.Join(tried, "; "))
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: scripts/test-deps.sh installs them", msg)
	}
	t.Skipf("%s (make test installs them)", msg)
	return ""
}

func lastLine(out []byte, err error) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// driver generates the Python code of the protos into a temporary folder
// and returns an executable named as a driver must be, which runs the
// example with that interpreter and that code.
func driver(t *testing.T) string {
	t.Helper()
	protoc := testdep.Need(t, "protoc")
	py := python(t)
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gen := filepath.Join(dir, "gen")
	c := exec.Command("sh", filepath.Join(here, "generate.sh"), gen)
	c.Env = append(os.Environ(), "PROTOC="+protoc)
	if out, err := c.CombinedOutput(); err != nil {
		// protoc finds the well-known types (google/protobuf/*.proto) in
		// ../include beside it; Debian's libprotobuf-dev puts them there.
		if bytes.Contains(out, []byte("google/protobuf/")) && os.Getenv("CI") != "true" {
			t.Skipf("protoc has no well-known types (Debian: libprotobuf-dev; make test installs it): %s", out)
		}
		t.Fatalf("generate.sh: %v\n%s", err, out)
	}
	exe := filepath.Join(dir, "pinky-driver-pyphone")
	script := fmt.Sprintf("#!/bin/sh\nPYPHONE_GEN=%s exec %s %s \"$@\"\n",
		shellQuote(gen), shellQuote(py), shellQuote(filepath.Join(here, "pinky-driver-pyphone")))
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// pinky builds the pinky command into a temporary folder.
func pinky(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "pinky")
	c := exec.Command("go", "build", "-o", out, "./cli/cmd/pinky")
	c.Dir = filepath.Join("..", "..")
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cli/cmd/pinky: %v\n%s", err, b)
	}
	return out
}

var summaryRE = regexp.MustCompile(`(?m)^(\d+) passed, (\d+) failed, (\d+) skipped$`)

// TestDriverCheck runs `pinky driver check` on the Python driver, as its
// README tells a driver author to.
func TestDriverCheck(t *testing.T) {
	exe := driver(t)
	c := exec.Command(pinky(t), "driver", "check", exe)
	c.Env = append(os.Environ(), "PINKY_HOME="+t.TempDir())
	out, err := c.CombinedOutput()
	report := string(out)
	if err != nil {
		t.Fatalf("pinky driver check %s: %v; want it to pass:\n%s", exe, err, report)
	}
	m := summaryRE.FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("the report has no summary line:\n%s", report)
	}
	passed, _ := strconv.Atoi(m[1])
	if m[2] != "0" || passed < 15 {
		t.Errorf("summary: got %q; want 0 failed and at least 15 passed:\n%s", m[0], report)
	}
	// The cases that only an error detail on the wire can pass (a reason
	// that shares its code), and the ones the driver's capabilities add.
	for _, name := range []string{"unknown-device", "act-launch-unknown-app", "screenshot-bad-args", "act-tap-effect", "capabilities", "wait-idle", "apps-list"} {
		if !regexp.MustCompile(`(?m)^PASS ` + regexp.QuoteMeta(name) + ` `).MatchString(report) {
			t.Errorf("case %s did not pass; want PASS:\n%s", name, report)
		}
	}
}

// TestErrorsAndShutdown starts the driver as the daemon does, checks that
// an error keeps its reason and message across the boundary, and that the
// host's Kill ends it through GRPCController.Shutdown, leaving no socket
// folder behind.
func TestErrorsAndShutdown(t *testing.T) {
	exe := driver(t)
	var stderr testkit.Buffer
	p, err := sdk.Start(sdk.StartConfig{Path: exe, Stderr: &stderr})
	if err != nil {
		t.Fatalf("starting %s: %v\n%s", exe, err, stderr.String())
	}
	killed := false
	defer func() {
		if !killed {
			p.Kill()
		}
	}()

	_, err = p.Driver().Act(context.Background(), "pyphone-1", sdk.Action{Kind: sdk.ActLaunch, AppID: "com.example.absent"})
	if !errors.Is(err, sdk.ErrAppNotFound) {
		t.Errorf("Act(launch) of a missing app: got %v; want APP_NOT_FOUND", err)
	}
	if err != nil && !strings.Contains(err.Error(), "com.example.absent' is not installed") {
		t.Errorf("Act(launch) of a missing app: message %q; want the driver's own", err)
	}

	sock := listeningAddr(t, stderr.Bytes())
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("the driver's socket: %v", err)
	}
	p.Kill() // returns once the process is gone
	killed = true
	if !strings.Contains(stderr.String(), "GRPCController.Shutdown") {
		t.Errorf("the driver's stderr has no word of a Shutdown call; want the host to end it through GRPCController:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Dir(sock)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket folder %s after the driver ended: %v; want it removed", filepath.Dir(sock), err)
	}
}

// listeningAddr is the addr of the driver's "listening" log line.
func listeningAddr(t *testing.T, stderr []byte) string {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		var line struct{ Msg, Network, Addr string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
			if line.Network != "unix" {
				t.Skipf("the driver listens on %s, not a Unix socket", line.Network)
			}
			return line.Addr
		}
	}
	t.Fatalf("no \"listening\" line on the driver's stderr:\n%s", stderr)
	return ""
}
