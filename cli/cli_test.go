package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// The tests run the real binaries (internal/e2e builds them): pinky,
// pinky-driver-sim next to it (as an installation has them), and the other
// drivers elsewhere.
func TestMain(m *testing.M) { e2e.Main(m) }

// env is a test's data folder, with the helpers of these tests.
type env struct{ *e2e.Env }

func newEnv(t *testing.T) *env { return &env{e2e.New(t)} }

func alive(pid int) bool { return testkit.Alive(pid) }

func TestDaemonDriversAndDevices(t *testing.T) {
	e := newEnv(t)
	d := e.Daemon("--sim")

	sim := e.Driver("sim")
	if sim.State != "running" || sim.Path != e2e.Bin.Sim || sim.Pid == 0 || sim.Devices != 2 || sim.Version == "" {
		t.Errorf("sim driver: got %+v; want running from %s with 2 devices", sim, e2e.Bin.Sim)
	}
	var devs []api.Device
	e.JSON(&devs, "devices")
	if len(devs) != 2 || devs[0].ID != "sim-android-1" || !devs[0].Online || devs[1].Platform != "ios" {
		t.Errorf("devices: got %+v", devs)
	}
	out, _, _ := e.Run("drivers")
	for _, col := range []string{"NAME", "VERSION", "PATH", "PID", "STATE", "RESTARTS", "DEVICES", "sim", "running"} {
		if !strings.Contains(out, col) {
			t.Errorf("pinky drivers: %q missing from\n%s", col, out)
		}
	}
	out, _, code := e.Run("driver", "screen", "sim-android-1")
	if code != 0 || !strings.Contains(out, "lock=locked") || !strings.Contains(out, `"Enter PIN"`) {
		t.Errorf("driver screen: exit %d\n%s", code, out)
	}
	if _, errs, code := e.Run("driver", "screen", "no-such-phone"); code == 0 || !strings.Contains(errs, "not found") {
		t.Errorf("screen of an unknown phone: exit %d, %q", code, errs)
	}

	// A second daemon on the same data folder refuses and names the first.
	_, errs, code := e.Run("daemon", "--sim")
	if want := fmt.Sprintf("pid %d", d.Process.Pid); code == 0 || !strings.Contains(errs, want) {
		t.Errorf("second daemon: exit %d, %q; want a refusal naming %s", code, errs, want)
	}

	// Restart on purpose: a new process, the devices back.
	out, errs, code = e.Run("driver", "restart", "sim")
	if code != 0 || !strings.Contains(out, "restarted sim") {
		t.Fatalf("driver restart: exit %d: %s%s", code, out, errs)
	}
	after := e.Driver("sim")
	if after.Pid == sim.Pid || after.Restarts != sim.Restarts+1 || after.State != "running" {
		t.Errorf("after restart: got %+v; before %+v", after, sim)
	}
	if alive(sim.Pid) {
		t.Errorf("the old driver process %d still runs", sim.Pid)
	}
	if _, errs, code := e.Run("driver", "restart", "nope"); code == 0 || !strings.Contains(errs, "nope") {
		t.Errorf("restart of an unknown driver: exit %d, %q", code, errs)
	}

	// kill -9: the daemon restarts the driver by itself.
	testkit.Kill(after.Pid)
	e.Eventually("the sim driver is back after kill -9", func() bool {
		d := e.Driver("sim")
		return d.State == "running" && d.Pid != after.Pid && d.Devices == 2
	})

	// stop-daemon ends the daemon and its drivers.
	last := e.Driver("sim")
	if out, errs, code := e.Run("stop-daemon"); code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("stop-daemon: exit %d: %s%s", code, out, errs)
	}
	if err := d.Wait(); err != nil {
		t.Errorf("daemon exit: %v", err)
	}
	if alive(last.Pid) {
		t.Errorf("driver %d outlived the daemon", last.Pid)
	}
	if _, errs, code := e.Run("devices"); code == 0 || !strings.Contains(errs, "pinky daemon") {
		t.Errorf("devices without a daemon: exit %d, %q; want advice to start one", code, errs)
	}
}

func TestSimIsOptIn(t *testing.T) {
	e := newEnv(t)
	e.Daemon()
	var devs []api.Device
	e.JSON(&devs, "devices")
	if len(devs) != 0 {
		t.Errorf("without --sim: got devices %+v; want none", devs)
	}
}

// TestDriverSettings: every driver is configured alike, by name, in
// $PINKY_HOME/drivers.yaml and with the daemon's flags: here the virtual
// phones, enabled and given another world.
func TestDriverSettings(t *testing.T) {
	count := func(e *env) int {
		var devs []api.Device
		e.JSON(&devs, "devices")
		return len(devs)
	}
	e := newEnv(t)
	e.WriteFile("drivers.yaml", "sim:\n  enabled: true\n  env: {PINKY_SIM_WORLD: "+tenPhones(t)+"}\n")
	e.Daemon()
	e.Eventually("the ten phones of the settings' world", func() bool { return count(e) == 10 })

	f := newEnv(t)
	f.Daemon("--enable-driver", "sim", "--driver-env", "sim:PINKY_SIM_WORLD="+tenPhones(t))
	f.Eventually("the ten phones of the flags' world", func() bool { return count(f) == 10 })

	// The environment of an agent host that spawns `pinky mcp` reaches
	// the daemon the bridge starts; here the daemon directly.
	h := newEnv(t)
	h.Extra = append(h.Extra, "PINKY_ENABLE_DRIVERS=sim", "PINKY_SIM_WORLD="+tenPhones(t))
	h.Daemon()
	h.Eventually("the ten phones of PINKY_ENABLE_DRIVERS=sim", func() bool { return count(h) == 10 })

	g := newEnv(t)
	g.WriteFile("drivers.yaml", "sim: {enabled: true}\n")
	g.Daemon("--disable-driver", "sim")
	if n := count(g); n != 0 {
		t.Errorf("--disable-driver sim over the settings: %d devices; want none", n)
	}
	bad := newEnv(t)
	bad.WriteFile("drivers.yaml", "sim: {enabeld: true}\n")
	if _, errs, code := bad.Run("daemon"); code == 0 || !strings.Contains(errs, "drivers.yaml") {
		t.Errorf("a broken drivers.yaml: exit %d %q; want the daemon to refuse and name the file", code, errs)
	}
	if _, errs, code := newEnv(t).Run("daemon", "--driver-env", "oops"); code == 0 || !strings.Contains(errs, "NAME:KEY=VALUE") {
		t.Errorf("a bad --driver-env: exit %d %q", code, errs)
	}
}

func TestAttach(t *testing.T) {
	e := newEnv(t)
	e.Daemon()
	// The example driver, started by hand in debug mode.
	drv := exec.Command(e2e.Bin.Example)
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
	out, errs, code := e.Run("driver", "attach", "example", line)
	if code != 0 || !strings.Contains(out, "attached example") {
		t.Fatalf("attach: exit %d: %s%s", code, out, errs)
	}
	if d := e.Driver("example"); d.State != "attached" || d.Pid != drv.Process.Pid {
		t.Errorf("attached driver: got %+v; want attached with pid %d", d, drv.Process.Pid)
	}
	drv.Process.Kill()
	drv.Wait()
	e.Eventually("the attached driver is seen to exit", func() bool { return e.Driver("example").State == "exited" })
	time.Sleep(300 * time.Millisecond)
	if d := e.Driver("example"); d.State != "exited" || d.Restarts != 0 {
		t.Errorf("after exit: got %+v; an attached driver is never restarted", d)
	}

	for _, bad := range []string{"not json", `{"network":"udp","addr":"x","pid":1}`, `{"network":"unix","addr":"","pid":1}`} {
		if _, errs, code := e.Run("driver", "attach", "x", bad); code == 0 || !strings.Contains(errs, "REATTACH") {
			t.Errorf("attach %q: exit %d, %q; want a usage error", bad, code, errs)
		}
	}
}

func TestDriversWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	var ds []api.Driver
	c := e.Cmd("drivers", "--json")
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
	out, errs, code := e.Run("driver", "check", e2e.Bin.Example, "--no-devices")
	if code != 0 || !strings.Contains(out, "0 failed") {
		t.Errorf("check of the skeleton: exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = e.Run("driver", "check", "/bin/true")
	if code == 0 || errs == "" {
		t.Errorf("check of a non-driver: exit %d, %q; want a failure", code, errs)
	}
	out, _, code = e.Run("driver", "check", "--list")
	if code != 0 || !strings.Contains(out, "info") {
		t.Errorf("check --list: exit %d\n%s", code, out)
	}
}

// TestVersion: pinky says which build it is, and which its drivers are,
// with or without a daemon.
func TestVersion(t *testing.T) {
	e := newEnv(t)
	out, _, code := e.Run("--version")
	if code != 0 || !strings.HasPrefix(out, "pinky ") || !strings.Contains(out, runtime.Version()) {
		t.Errorf("pinky --version: exit %d %q; want pinky, its version and %s", code, out, runtime.Version())
	}
	check := func(when string) {
		t.Helper()
		var v struct {
			Version string `json:"version"`
			Go      string `json:"go"`
			Drivers []struct{ Name, Version, Path string }
		}
		e.JSON(&v, "version")
		if v.Version == "" || v.Go != runtime.Version() || !strings.Contains(out, v.Version) {
			t.Errorf("%s: pinky version --json: %+v; want the version --version printed (%q) and Go's", when, v, out)
		}
		var sim bool
		for _, d := range v.Drivers {
			sim = sim || d.Name == "sim" && d.Version == v.Version && d.Path != ""
		}
		if !sim {
			t.Errorf("%s: drivers %+v; want the sim driver, at pinky's version, with its path", when, v.Drivers)
		}
	}
	check("no daemon")
	e.Daemon("--sim")
	check("with a daemon")
	var st api.Status
	e.JSON(&st, "status")
	if !strings.Contains(out, st.Version) || st.Version == "" {
		t.Errorf("pinky status says version %q; --version says %q", st.Version, out)
	}
}
