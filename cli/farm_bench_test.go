package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// farmActions is how many actions each agent of BenchmarkFarm makes at
// least: 25 rounds of loadAction's cycle of four.
const farmActions = 100

// farmWait bounds each wait of BenchmarkFarm's set-up (a daemon's start,
// a host's phones listed): generous, since the machine is shared.
const farmWait = 30 * time.Second

// hostNames are the names the benchmark's phone hosts pair under.
var hostNames = []string{"closet", "mac"}

// BenchmarkFarm measures a phone farm through the real binaries: a gateway
// daemon that listens for phone hosts on 127.0.0.2 (--hosts-listen), and
// `pinky host --sim` processes on data folders of their own, each serving
// the ten phones of cli/testdata/ten-phones.yaml, paired with `pinky
// hosts add` (the second host's ids are qualified, mac/sim-1 …). One agent
// per phone (its own `pinky mcp`, spoken to with mcp-go) connects, then all
// agents act at once, max(b.N, farmActions) actions each (loadAction's
// cycle: open Notes, read, back, home).
//
// The sub-benchmarks:
//   - local-1x10: one daemon with --sim on the same world, 10 agents, no
//     link: the baseline;
//   - hosts-1x10: the same 10 agents on one host's 10 phones, so that
//     hosts-1x10 / local-1x10 is what the link costs at the same load;
//   - hosts-2x10: two hosts, 20 phones, 20 agents (the figure);
//   - hosts-2x10-postgres: the same with the gateway's history, and so its
//     leases, in PostgreSQL (pgtest's server; skipped without it, as every
//     PostgreSQL test is).
//
// Each reports actions/s (all agents' actions over the wall time from the
// first to the last), ms-p50 and ms-p95 of one action from the client's
// send to its receive (ns/op is that median), and the run's own figures:
// agents, phones, and for the farms hosts/gateway and phones/host as the
// gateway listed them. Those two are what this run had, not limits.
// gateway-cpu-ms/action is the CPU time the gateway's daemon used over the
// actions, per action; hosts-cpu-ms/action the phone hosts' (`pinky
// host`), and drivers-cpu-ms/action the drivers' that the daemon or the
// hosts started (the virtual phones'). The agents' `pinky mcp` bridges
// and the PostgreSQL server are not counted. On a shared machine these say
// more than the times, which follow the other work: load-1m is the
// machine's one-minute load average as the sub-benchmark began. The CPU
// times and the load are read from /proc, on Linux only.
func BenchmarkFarm(b *testing.B) {
	world := tenPhones(b)
	b.Run("local-1x10", func(b *testing.B) {
		reportLoad(b)
		gw := newBenchEnv(b)
		d, log := gw.start("daemon", "--console", "off", "--sim", "--sim-world", world)
		gw.waitReady(log)
		phones := gw.waitPhones(func(ds []api.Device) bool { return len(ds) == 10 }, log)
		runFarm(b, gw, phones, d, nil)
	})
	for _, tt := range []struct {
		name     string
		hosts    int
		postgres bool
	}{
		{"hosts-1x10", 1, false},
		{"hosts-2x10", 2, false},
		{"hosts-2x10-postgres", 2, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			reportLoad(b)
			args := []string{"daemon", "--console", "off", "--hosts-listen", freeAddr(b, "127.0.0.2")}
			if tt.postgres {
				args = append(args, "--history", pgtest.New(b))
			}
			gw := newBenchEnv(b)
			d, log := gw.start(args...)
			gw.waitReady(log)
			var phones []api.Device
			var hosts []*exec.Cmd
			for _, name := range hostNames[:tt.hosts] {
				hosts = append(hosts, gw.startHost(name, world))
				// The first host keeps the bare ids: wait for each host's
				// ten phones before the next host links.
				phones = gw.waitPhones(func(ds []api.Device) bool {
					n := 0
					for _, d := range ds {
						if d.Host == name {
							n++
						}
					}
					return n == 10
				}, log)
			}
			perHost := map[string]int{}
			for _, d := range phones {
				perHost[d.Host]++
			}
			if len(phones) != 10*tt.hosts || len(perHost) != tt.hosts || perHost[""] != 0 {
				b.Fatalf("the gateway lists %d phones on hosts %v; want %d, ten on each of %d hosts", len(phones), perHost, 10*tt.hosts, tt.hosts)
			}
			if tt.hosts == 2 && !slices.ContainsFunc(phones, func(d api.Device) bool { return d.ID == "mac/sim-1" && d.Host == "mac" }) {
				b.Fatalf("the second host's phones: %+v; want ids qualified by its name (mac/sim-1)", phones)
			}
			runFarm(b, gw, phones, d, hosts)
			b.ReportMetric(float64(len(perHost)), "hosts/gateway")
			b.ReportMetric(float64(len(phones))/float64(len(perHost)), "phones/host")
		})
	}
}

// runFarm starts one agent per phone, connects each to its phone, then
// makes every agent act at once and reports the figures, with the CPU time
// per action of the gateway's daemon, the phone hosts and their drivers.
func runFarm(b *testing.B, gw *benchEnv, phones []api.Device, daemon *exec.Cmd, hosts []*exec.Cmd) {
	b.Helper()
	agents := make([]*mcpAgent, len(phones))
	for i := range agents {
		agents[i] = startMCPAgent(b, gw.home, fmt.Sprintf("farm-agent-%d", i+1))
	}
	errs := make([]error, len(agents))
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Go(func() { errs[i] = farmConnect(a, phones[i].ID) })
	}
	wg.Wait()
	failed(b, agents, errs)

	n := max(b.N, farmActions)
	lat := make([][]time.Duration, len(agents))
	// No b.ResetTimer: it would drop the metrics reported so far, and
	// ns/op is the median action's below, not the benchmark's timer.
	gwCPU, hostsCPU := cpuOf(daemon), cpuOf(hosts...)
	start := time.Now()
	for i, a := range agents {
		wg.Go(func() { lat[i], errs[i] = farmAct(a, phones[i].ID, n) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	gwCPU, hostsCPU = cpuOf(daemon).since(gwCPU), cpuOf(hosts...).since(hostsCPU)
	failed(b, agents, errs)

	all := slices.Concat(lat...)
	slices.Sort(all)
	p50 := quantile(all, 0.5)
	b.ReportMetric(float64(p50.Nanoseconds()), "ns/op")
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "actions/s")
	b.ReportMetric(ms(p50), "ms-p50")
	b.ReportMetric(ms(quantile(all, 0.95)), "ms-p95")
	if gwCPU.ok && hostsCPU.ok { // where /proc tells
		perAction := func(d time.Duration) float64 { return ms(d) / float64(len(all)) }
		b.ReportMetric(perAction(gwCPU.own), "gateway-cpu-ms/action")
		b.ReportMetric(perAction(gwCPU.children+hostsCPU.children), "drivers-cpu-ms/action")
		if len(hosts) > 0 {
			b.ReportMetric(perAction(hostsCPU.own), "hosts-cpu-ms/action")
		}
	}
	b.ReportMetric(float64(len(agents)), "agents")
	b.ReportMetric(float64(len(phones)), "phones")
}

// failed fails b with every agent's error and what its pinky mcp said.
func failed(b *testing.B, agents []*mcpAgent, errs []error) {
	b.Helper()
	for i, err := range errs {
		if err != nil {
			b.Errorf("%s: %v\nits pinky mcp said: %s", agents[i].name, err, agents[i].log)
		}
	}
	if b.Failed() {
		b.FailNow()
	}
}

// farmConnect leases device for agent a.
func farmConnect(a *mcpAgent, device string) error {
	res, err := a.call("phone_connect", map[string]any{"device": device, "task": "farm benchmark: " + a.name + " opens Notes and goes home"})
	if err != nil {
		return fmt.Errorf("phone_connect %s: %w", device, err)
	}
	if res.IsError {
		return fmt.Errorf("phone_connect %s: %s", device, mcpText(res))
	}
	return nil
}

// farmAct makes n actions of loadAction's cycle on device and returns the
// time of each, from the send to the receive. It stops at the first
// failure: a JSON-RPC error, a tool error, an answer without its step, or
// a tap on Notes that did not open Notes.
func farmAct(a *mcpAgent, device string, n int) ([]time.Duration, error) {
	lat := make([]time.Duration, 0, n)
	for i := range n {
		tool, args := loadAction(device, i)
		t0 := time.Now()
		res, err := a.call(tool, args)
		d := time.Since(t0)
		var step string
		if err == nil {
			step, _ = mcpField(res, "step").(string)
		}
		switch {
		case err != nil:
			return lat, fmt.Errorf("action %d, %s: %w", i+1, tool, err)
		case res.IsError:
			return lat, fmt.Errorf("action %d, %s: %s", i+1, tool, mcpText(res))
		case step == "":
			return lat, fmt.Errorf("action %d, %s: no step in %v", i+1, tool, res.StructuredContent)
		case tool == "phone_tap" && mcpField(res, "app") != "Notes":
			return lat, fmt.Errorf("action %d: tapped Notes; got app %v:\n%s", i+1, mcpField(res, "app"), mcpText(res))
		}
		lat = append(lat, d)
	}
	return lat, nil
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// reportLoad reports the one-minute load average of /proc/loadavg as
// load-1m, where the system has one.
func reportLoad(b *testing.B) {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return
	}
	if f := strings.Fields(string(raw)); len(f) > 0 {
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			b.ReportMetric(v, "load-1m")
		}
	}
}

// benchEnv is a data folder and the pinky commands run on it, for
// benchmarks: e2e.Env holds a *testing.T, and its helpers (and their
// users') take one.
type benchEnv struct {
	tb   testing.TB
	home string
}

func newBenchEnv(tb testing.TB) *benchEnv {
	tb.Helper()
	home, err := os.MkdirTemp("", "ph") // short: the socket lives here
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(home) })
	return &benchEnv{tb: tb, home: home}
}

func (e *benchEnv) cmd(args ...string) *exec.Cmd {
	c := exec.Command(e2e.Bin.Pinky, args...)
	c.Env = append(os.Environ(), "PINKY_HOME="+e.home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin")
	return c
}

// start starts a pinky command that runs until it is stopped (a daemon, a
// host) and returns it with its log. It is stopped with SIGTERM when tb
// ends, and its log is printed if tb failed.
func (e *benchEnv) start(args ...string) (*exec.Cmd, *e2e.Buffer) {
	e.tb.Helper()
	c := e.cmd(args...)
	log := &e2e.Buffer{}
	c.Stderr = log
	if err := c.Start(); err != nil {
		e.tb.Fatal(err)
	}
	e.tb.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		if e.tb.Failed() {
			e.tb.Logf("pinky %v log:\n%s", args, log.String())
		}
	})
	return c, log
}

// json runs pinky with --json and decodes what it prints into v.
func (e *benchEnv) json(v any, args ...string) error {
	var out, errs bytes.Buffer
	c := e.cmd(append(args, "--json")...)
	c.Stdout, c.Stderr = &out, &errs
	if err := c.Run(); err != nil {
		return fmt.Errorf("pinky %v: %v: %s", args, err, errs.String())
	}
	return json.Unmarshal(out.Bytes(), v)
}

// waitReady waits until the daemon of this data folder answers.
func (e *benchEnv) waitReady(log *e2e.Buffer) {
	e.tb.Helper()
	if !testkit.PollEvery(farmWait, 50*time.Millisecond, func() bool { return e.cmd("status").Run() == nil }) {
		e.tb.Fatalf("the daemon did not answer within %s:\n%s", farmWait, log.String())
	}
}

// waitPhones waits until the gateway's online phones satisfy ok, and
// returns them.
func (e *benchEnv) waitPhones(ok func([]api.Device) bool, log *e2e.Buffer) []api.Device {
	e.tb.Helper()
	var online []api.Device
	var err error
	if !testkit.PollEvery(farmWait, 50*time.Millisecond, func() bool {
		var ds []api.Device
		if err = e.json(&ds, "devices"); err != nil {
			return false
		}
		online = slices.DeleteFunc(ds, func(d api.Device) bool { return !d.Online })
		return ok(online)
	}) {
		e.tb.Fatalf("the phones online: %+v (%v), not as wanted within %s; the daemon's log:\n%s", online, err, farmWait, log.String())
	}
	return online
}

// startHost pairs a new phone host called name with the gateway of this
// data folder and starts it, on a data folder of its own, serving the
// virtual phones of world.
func (e *benchEnv) startHost(name, world string) *exec.Cmd {
	e.tb.Helper()
	var p api.HostPairing
	if err := e.json(&p, "hosts", "add", name); err != nil || p.Code == "" {
		e.tb.Fatalf("hosts add %s: %+v, %v; want a code", name, p, err)
	}
	c, _ := newBenchEnv(e.tb).start("host", "--sim", "--sim-world", world, "--gateway", p.Listen, "--pair", p.Code)
	return c
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times:
// 100 on every Linux that Go runs on.
const clockTicks = 100

// cpuUse is the CPU time, user and system, that processes have used so
// far, read from /proc: the processes themselves (own) and their
// descendants (children: the drivers that a daemon or a host started).
// ok is false where /proc does not tell (not Linux). A descendant that
// ended is no longer counted; the drivers run until they are stopped.
type cpuUse struct {
	own, children time.Duration
	ok            bool
}

func cpuOf(cmds ...*exec.Cmd) cpuUse {
	u := cpuUse{ok: true}
	for _, c := range cmds {
		own, ok := procCPU(c.Process.Pid)
		u.own += own
		u.ok = u.ok && ok
		for _, child := range descendants(c.Process.Pid) {
			d, _ := procCPU(child)
			u.children += d
		}
	}
	return u
}

// since is the CPU time used from before to u.
func (u cpuUse) since(before cpuUse) cpuUse {
	return cpuUse{own: u.own - before.own, children: u.children - before.children, ok: u.ok && before.ok}
}

// procCPU is the CPU time process pid has used, its children's apart.
func procCPU(pid int) (time.Duration, bool) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command name's closing parenthesis start with
	// the third (state); utime and stime are the 14th and 15th.
	s := string(stat)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, true
}

// descendants are the processes below pid, from /proc/PID/task/*/children.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		children, _ := os.ReadFile(t)
		for _, c := range strings.Fields(string(children)) {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(out, n)
				out = append(out, descendants(n)...)
			}
		}
	}
	return out
}
