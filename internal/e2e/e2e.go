// Package e2e runs the real binaries for end-to-end tests: it builds pinky
// and the drivers once per test binary, gives each test a private data
// folder, and speaks to the daemon as the person (the CLI) and as an agent
// host (`pinky mcp` over real pipes). The CLI's tests and the attack suite
// (cli/attack) share it.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// Bin holds the paths of the built binaries: pinky and pinky-driver-sim side
// by side (as an installation has them), the other drivers elsewhere so that
// a daemon does not start them unless a test puts them in its drivers/.
var Bin struct{ Dir, Pinky, Sim, Example, Android, IOS string }

// Root is the module's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Main builds the binaries, runs the tests and removes the binaries; a
// test package's TestMain calls it.
func Main(m *testing.M) {
	dir, err := os.MkdirTemp("", "pinky-e2e")
	if err != nil {
		panic(err)
	}
	Bin.Dir = dir
	Bin.Pinky = filepath.Join(dir, "pinky")
	Bin.Sim = filepath.Join(dir, "pinky-driver-sim")
	Bin.Example = filepath.Join(dir, "other", "pinky-driver-example")
	Bin.Android = filepath.Join(dir, "other", "pinky-driver-android")
	Bin.IOS = filepath.Join(dir, "other", "pinky-driver-ios")
	root := Root()
	var wg sync.WaitGroup
	for out, pkg := range map[string]string{Bin.Pinky: "./cli/cmd/pinky", Bin.Sim: "./drivers/sim/cmd/pinky-driver-sim", Bin.Example: "./drivers/sdk/example",
		Bin.Android: "./drivers/android/cmd/pinky-driver-android", Bin.IOS: "./drivers/ios/cmd/pinky-driver-ios"} {
		wg.Go(func() {
			c := exec.Command("go", "build", "-o", out, pkg)
			c.Dir = root
			if b, err := c.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, b)
				os.Exit(1)
			}
		})
	}
	wg.Wait()
	code := pgtest.Main(m).Run() // a test's PostgreSQL server, if one started, stops after the tests
	os.RemoveAll(dir)
	os.Exit(code)
}

// Env is one test's data folder and the pinky commands run on it.
type Env struct {
	T    *testing.T
	Home string
	// Extra is more environment for every pinky this env runs (and the
	// drivers its daemon starts).
	Extra []string
}

// New makes a private data folder; the daemon a test starts in it is
// stopped when the test ends.
func New(t *testing.T) *Env {
	home, err := os.MkdirTemp("", "ph") // short: the socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	e := &Env{T: t, Home: home}
	// A daemon that `pinky mcp` started in this home outlives the test
	// unless it is stopped (it runs in its own session, as it should).
	t.Cleanup(func() { e.Cmd("stop-daemon").Run() })
	return e
}

// Cmd is a pinky command on the env's data folder.
func (e *Env) Cmd(args ...string) *exec.Cmd {
	c := exec.Command(Bin.Pinky, args...)
	c.Env = append(append(os.Environ(), "PINKY_HOME="+e.Home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin"), e.Extra...)
	return c
}

// Run runs pinky and returns stdout, stderr and the exit code.
func (e *Env) Run(args ...string) (string, string, int) {
	e.T.Helper()
	return e.RunIn(nil, args...)
}

// RunIn is Run with stdin.
func (e *Env) RunIn(stdin []byte, args ...string) (string, string, int) {
	e.T.Helper()
	c := e.Cmd(args...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.T.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// JSON runs pinky with --json and decodes what it prints into v.
func (e *Env) JSON(v any, args ...string) {
	e.T.Helper()
	out, errs, code := e.Run(append(args, "--json")...)
	if code != 0 {
		e.T.Fatalf("pinky %v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.T.Fatalf("pinky %v: %v\n%s", args, err, out)
	}
}

// Daemon starts `pinky daemon` and waits for its socket. Its log is
// printed when the test fails.
func (e *Env) Daemon(args ...string) *exec.Cmd {
	e.T.Helper()
	c, _ := e.DaemonLog(args...)
	return c
}

// DaemonLog is Daemon that also returns the daemon's log as it grows.
func (e *Env) DaemonLog(args ...string) (*exec.Cmd, *Buffer) {
	e.T.Helper()
	c := e.Cmd(append([]string{"daemon"}, args...)...)
	logs := &Buffer{}
	c.Stderr = logs
	if err := c.Start(); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		if e.T.Failed() {
			e.T.Logf("daemon log:\n%s", logs.String())
		}
	})
	e.Eventually("the daemon answers", func() bool { _, _, code := e.Run("status"); return code == 0 })
	return c, logs
}

// EventuallyOr waits up to testkit.Limit (10 s) for cond, and says more
// when it times out.
func (e *Env) EventuallyOr(what string, cond func() bool, more func() string) {
	e.T.Helper()
	if !testkit.PollEvery(testkit.Limit, 20*time.Millisecond, cond) {
		e.T.Fatalf("%s: not within %s: %s", what, testkit.Limit, more())
	}
}

// Eventually waits up to testkit.Limit (10 s) for cond. It checks every 50
// ms, not at Poll's quicker pace: its conditions run pinky commands, each
// a process that takes some 60 ms to start.
func (e *Env) Eventually(what string, cond func() bool) {
	e.T.Helper()
	if !testkit.PollEvery(testkit.Limit, 50*time.Millisecond, cond) {
		e.T.Fatalf("%s: not within %s", what, testkit.Limit)
	}
}

// Driver returns the daemon's status of one driver.
func (e *Env) Driver(name string) api.Driver {
	e.T.Helper()
	var ds []api.Driver
	e.JSON(&ds, "drivers")
	for _, d := range ds {
		if d.Name == name {
			return d
		}
	}
	e.T.Fatalf("driver %s not listed in %+v", name, ds)
	return api.Driver{}
}

// Unlock unlocks a phone for agents with the test PIN, as the person would.
func (e *Env) Unlock(device string) {
	e.T.Helper()
	c := e.Cmd("unlock", device)
	c.Stdin = strings.NewReader("1234\n")
	if out, err := c.CombinedOutput(); err != nil {
		e.T.Fatalf("pinky unlock: %v: %s", err, out)
	}
}

// WriteFile writes a file into the data folder (policy.yaml, say).
func (e *Env) WriteFile(name, content string) {
	e.T.Helper()
	if err := os.WriteFile(filepath.Join(e.Home, name), []byte(content), 0o600); err != nil {
		e.T.Fatal(err)
	}
}

// OnDevice returns a builder of tool arguments aimed at device: with("app",
// "Messages") is {"device": device, "app": "Messages"}.
func OnDevice(device string) func(kv ...any) map[string]any {
	return func(kv ...any) map[string]any {
		m := map[string]any{"device": device}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
}

// Buffer is a buffer safe for a writer and readers at once (a process's
// stderr): the test kit's, under the name this package's users know.
type Buffer = testkit.Buffer
