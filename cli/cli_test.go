package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// The tests run the real binaries: pinky, pinky-driver-sim next to it (as
// an installation has them), and the example driver elsewhere.
var bin struct{ dir, pinky, sim, example, android, ios string }

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "pinky-cli-test")
	if err != nil {
		panic(err)
	}
	bin.dir = dir
	bin.pinky = filepath.Join(dir, "pinky")
	bin.sim = filepath.Join(dir, "pinky-driver-sim")
	bin.example = filepath.Join(dir, "other", "pinky-driver-example")
	// Not next to pinky: every test's daemon would start them. The Android
	// and iOS tests put them in their data folder's drivers/.
	bin.android = filepath.Join(dir, "other", "pinky-driver-android")
	bin.ios = filepath.Join(dir, "other", "pinky-driver-ios")
	var wg sync.WaitGroup
	for out, pkg := range map[string]string{bin.pinky: "./cmd/pinky", bin.sim: "../drivers/sim/cmd/pinky-driver-sim", bin.example: "../drivers/sdk/example",
		bin.android: "../drivers/android/cmd/pinky-driver-android", bin.ios: "../drivers/ios/cmd/pinky-driver-ios"} {
		wg.Go(func() {
			if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, b)
				os.Exit(1)
			}
		})
	}
	wg.Wait()
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type env struct {
	t    *testing.T
	home string
	// extra is more environment for every pinky this env runs (and the
	// drivers its daemon starts).
	extra []string
}

func newEnv(t *testing.T) *env {
	home, err := os.MkdirTemp("", "ph") // short: the socket lives here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	e := &env{t: t, home: home}
	// A daemon that `pinky mcp` started in this home outlives the test
	// unless it is stopped (it runs in its own session, as it should).
	t.Cleanup(func() { e.cmd("stop-daemon").Run() })
	return e
}

func (e *env) cmd(args ...string) *exec.Cmd {
	c := exec.Command(bin.pinky, args...)
	c.Env = append(append(os.Environ(), "PINKY_HOME="+e.home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin"), e.extra...)
	return c
}

// run runs pinky and returns stdout, stderr and the exit code.
func (e *env) run(args ...string) (string, string, int) {
	e.t.Helper()
	c := e.cmd(args...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func (e *env) json(v any, args ...string) {
	e.t.Helper()
	out, errs, code := e.run(append(args, "--json")...)
	if code != 0 {
		e.t.Fatalf("pinky %v: exit %d: %s", args, code, errs)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		e.t.Fatalf("pinky %v: %v\n%s", args, err, out)
	}
}

// daemon starts `pinky daemon` and waits for its socket.
func (e *env) daemon(args ...string) *exec.Cmd {
	e.t.Helper()
	c := e.cmd(append([]string{"daemon"}, args...)...)
	var logs bytes.Buffer
	c.Stderr = &logs
	if err := c.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		if e.t.Failed() {
			e.t.Logf("daemon log:\n%s", logs.String())
		}
	})
	e.eventually("the daemon answers", func() bool { _, _, code := e.run("status"); return code == 0 })
	return c
}

// eventuallyOr is eventually with more to say when it times out.
func (e *env) eventuallyOr(what string, cond func() bool, more func() string) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting until %s: %s", what, more())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) eventually(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (e *env) driver(name string) api.Driver {
	e.t.Helper()
	var ds []api.Driver
	e.json(&ds, "drivers")
	for _, d := range ds {
		if d.Name == name {
			return d
		}
	}
	e.t.Fatalf("driver %s not listed in %+v", name, ds)
	return api.Driver{}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestDaemonDriversAndDevices(t *testing.T) {
	e := newEnv(t)
	d := e.daemon("--sim")

	sim := e.driver("sim")
	if sim.State != "running" || sim.Path != bin.sim || sim.Pid == 0 || sim.Devices != 2 || sim.Version == "" {
		t.Errorf("sim driver: got %+v; want running from %s with 2 devices", sim, bin.sim)
	}
	var devs []api.Device
	e.json(&devs, "devices")
	if len(devs) != 2 || devs[0].ID != "sim-android-1" || !devs[0].Online || devs[1].Platform != "ios" {
		t.Errorf("devices: got %+v", devs)
	}
	out, _, _ := e.run("drivers")
	for _, col := range []string{"NAME", "VERSION", "PATH", "PID", "STATE", "RESTARTS", "DEVICES", "sim", "running"} {
		if !strings.Contains(out, col) {
			t.Errorf("pinky drivers: %q missing from\n%s", col, out)
		}
	}
	out, _, code := e.run("driver", "screen", "sim-android-1")
	if code != 0 || !strings.Contains(out, "lock=locked") || !strings.Contains(out, `"Enter PIN"`) {
		t.Errorf("driver screen: exit %d\n%s", code, out)
	}
	if _, errs, code := e.run("driver", "screen", "no-such-phone"); code == 0 || !strings.Contains(errs, "not found") {
		t.Errorf("screen of an unknown phone: exit %d, %q", code, errs)
	}

	// A second daemon on the same data folder refuses and names the first.
	_, errs, code := e.run("daemon", "--sim")
	if want := fmt.Sprintf("pid %d", d.Process.Pid); code == 0 || !strings.Contains(errs, want) {
		t.Errorf("second daemon: exit %d, %q; want a refusal naming %s", code, errs, want)
	}

	// Restart on purpose: a new process, the devices back.
	out, errs, code = e.run("driver", "restart", "sim")
	if code != 0 || !strings.Contains(out, "restarted sim") {
		t.Fatalf("driver restart: exit %d: %s%s", code, out, errs)
	}
	after := e.driver("sim")
	if after.Pid == sim.Pid || after.Restarts != sim.Restarts+1 || after.State != "running" {
		t.Errorf("after restart: got %+v; before %+v", after, sim)
	}
	if alive(sim.Pid) {
		t.Errorf("the old driver process %d still runs", sim.Pid)
	}
	if _, errs, code := e.run("driver", "restart", "nope"); code == 0 || !strings.Contains(errs, "nope") {
		t.Errorf("restart of an unknown driver: exit %d, %q", code, errs)
	}

	// kill -9: the daemon restarts the driver by itself.
	syscall.Kill(after.Pid, syscall.SIGKILL)
	e.eventually("the sim driver is back after kill -9", func() bool {
		d := e.driver("sim")
		return d.State == "running" && d.Pid != after.Pid && d.Devices == 2
	})

	// stop-daemon ends the daemon and its drivers.
	last := e.driver("sim")
	if out, errs, code := e.run("stop-daemon"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("stop-daemon: exit %d: %s%s", code, out, errs)
	}
	if err := d.Wait(); err != nil {
		t.Errorf("daemon exit: %v", err)
	}
	if alive(last.Pid) {
		t.Errorf("driver %d outlived the daemon", last.Pid)
	}
	if _, errs, code := e.run("devices"); code == 0 || !strings.Contains(errs, "pinky daemon") {
		t.Errorf("devices without a daemon: exit %d, %q; want advice to start one", code, errs)
	}
}

func TestSimIsOptIn(t *testing.T) {
	e := newEnv(t)
	e.daemon()
	var devs []api.Device
	e.json(&devs, "devices")
	if len(devs) != 0 {
		t.Errorf("without --sim: got devices %+v; want none", devs)
	}
}

func TestAttach(t *testing.T) {
	e := newEnv(t)
	e.daemon()
	// The example driver, started by hand in debug mode.
	drv := exec.Command(bin.example)
	drv.Env = append(os.Environ(), "PINKY_DRIVER_DEBUG=1")
	stdout, err := drv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.Start(); err != nil {
		t.Fatal(err)
	}
	defer drv.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := e.run("driver", "attach", "example", line)
	if code != 0 || !strings.Contains(out, "attached example") {
		t.Fatalf("attach: exit %d: %s%s", code, out, errs)
	}
	if d := e.driver("example"); d.State != "attached" || d.Pid != drv.Process.Pid {
		t.Errorf("attached driver: got %+v; want attached with pid %d", d, drv.Process.Pid)
	}
	drv.Process.Kill()
	drv.Wait()
	e.eventually("the attached driver is seen to exit", func() bool { return e.driver("example").State == "exited" })
	time.Sleep(300 * time.Millisecond)
	if d := e.driver("example"); d.State != "exited" || d.Restarts != 0 {
		t.Errorf("after exit: got %+v; an attached driver is never restarted", d)
	}

	for _, bad := range []string{"not json", `{"network":"udp","addr":"x","pid":1}`, `{"network":"unix","addr":"","pid":1}`} {
		if _, errs, code := e.run("driver", "attach", "x", bad); code == 0 || !strings.Contains(errs, "REATTACH") {
			t.Errorf("attach %q: exit %d, %q; want a usage error", bad, code, errs)
		}
	}
}

func TestDriversWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	var ds []api.Driver
	c := e.cmd("drivers", "--json")
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	if err := json.Unmarshal(out.Bytes(), &ds); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(ds) != 1 || ds[0].Name != "sim" || ds[0].Devices != 2 {
		t.Errorf("got %+v; want the sim driver found next to pinky", ds)
	}
	if !strings.Contains(errb.String(), "no daemon is running") {
		t.Errorf("stderr %q should say that no daemon runs", errb.String())
	}
}

func TestDriverCheck(t *testing.T) {
	e := newEnv(t)
	out, errs, code := e.run("driver", "check", bin.example, "--no-devices")
	if code != 0 || !strings.Contains(out, "0 failed") {
		t.Errorf("check of the skeleton: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = e.run("driver", "check", "/bin/true")
	if code == 0 || errs == "" {
		t.Errorf("check of a non-driver: exit %d, %q; want a failure", code, errs)
	}
	out, _, code = e.run("driver", "check", "--list")
	if code != 0 || !strings.Contains(out, "info") {
		t.Errorf("check --list: exit %d\n%s", code, out)
	}
}

// unlock unlocks a phone for agents with the test PIN, as the person would.
func (e *env) unlock(device string) {
	e.t.Helper()
	c := e.cmd("unlock", device)
	c.Stdin = strings.NewReader("1234\n")
	if out, err := c.CombinedOutput(); err != nil {
		e.t.Fatalf("pinky unlock: %v: %s", err, out)
	}
}

// onDevice returns a builder of tool arguments aimed at device: with("app",
// "Messages") is {"device": device, "app": "Messages"}.
func onDevice(device string) func(kv ...any) map[string]any {
	return func(kv ...any) map[string]any {
		m := map[string]any{"device": device}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
}
