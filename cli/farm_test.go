package cli_test

import (
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	gwdoctor "github.com/pinky-gateway/pinky/gateway/doctor"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testkit/pgtest"
)

// farm is a gateway whose history is in PostgreSQL and that listens for
// phone hosts on a loopback address of its own.
type farm struct {
	gw   *env
	addr string // where it listens for hosts
	args []string
	cmd  *exec.Cmd
	log  *e2e.Buffer
}

// freeAddr is a free TCP address on ip, for a daemon that must come back
// on the same one.
func freeAddr(t testing.TB, ip string) string {
	t.Helper()
	l, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Fatalf("listening on %s (Linux routes all of 127.0.0.0/8 to the loopback): %v", ip, err)
	}
	defer l.Close()
	return l.Addr().String()
}

func newFarm(t *testing.T, ip string, history string, extra ...string) *farm {
	t.Helper()
	f := &farm{gw: newEnv(t), addr: freeAddr(t, ip)}
	f.args = append([]string{"--console", "off", "--hosts-listen", f.addr}, extra...)
	if history != "" {
		f.args = append(f.args, "--history", history)
	}
	f.start()
	return f
}

func (f *farm) start() { f.cmd, f.log = f.gw.DaemonLog(f.args...) }

// stop stops the gateway's daemon, as the person would.
func (f *farm) stop(t *testing.T) {
	t.Helper()
	if _, errs, code := f.gw.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}
	f.cmd.Wait()
}

// pair offers a pairing to name and returns the code.
func (f *farm) pair(t *testing.T, name string) string {
	t.Helper()
	var p api.HostPairing
	f.gw.JSON(&p, "hosts", "add", name)
	if p.Code == "" || p.Listen != f.addr {
		t.Fatalf("hosts add %s: %+v; want a code and the listen address %s", name, p, f.addr)
	}
	return p.Code
}

func (f *farm) devices(t *testing.T) map[string]api.Device {
	t.Helper()
	var ds []api.Device
	f.gw.JSON(&ds, "devices")
	out := map[string]api.Device{}
	for _, d := range ds {
		out[d.ID] = d
	}
	return out
}

func (f *farm) hostState(t *testing.T, name string) api.Host {
	t.Helper()
	var hs api.Hosts
	f.gw.JSON(&hs, "hosts", "list")
	for _, h := range hs.Hosts {
		if h.Name == name {
			return h
		}
	}
	return api.Host{}
}

// online waits until the gateway lists id online, served by host.
func (f *farm) online(t *testing.T, id, host string) {
	t.Helper()
	f.gw.EventuallyOr(id+" online from "+host, func() bool {
		d, ok := f.devices(t)[id]
		return ok && d.Online && d.Host == host
	}, func() string { return f.log.String() })
}

// phoneHost is a `pinky host` process on a data folder of its own.
type phoneHost struct {
	e   *env
	cmd *exec.Cmd
	log *e2e.Buffer
}

// runHost starts `pinky host` in he with args, quick to dial again.
func runHost(t *testing.T, he *env, args ...string) *phoneHost {
	t.Helper()
	c := he.Cmd(append([]string{"host", "--sim", "--min-backoff", "50ms", "--max-backoff", "300ms"}, args...)...)
	p := &phoneHost{e: he, cmd: c, log: &e2e.Buffer{}}
	c.Stderr = p.log
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		if t.Failed() {
			t.Logf("pinky host %v log:\n%s", args, p.log.String())
		}
	})
	return p
}

// kill9 kills the host with SIGKILL: its drivers are left to their own
// end, as after a crash.
func (p *phoneHost) kill9(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
}

// TestFarm: an agent on the gateway, through pinky mcp, uses a virtual
// phone served by `pinky host` on another machine (another loopback
// address), with the history in PostgreSQL; then every fault of a phone
// farm, through the real binaries: a second host whose ids clash, kill -9
// of a host (the lease holds; the phone comes back under the same id), a
// link cut in the middle of an action (uncertain), a replayed pairing
// code, a host paired with another gateway, a revoked host, and a host
// restarted while the gateway is down.
func TestFarm(t *testing.T) {
	db := pgtest.New(t)
	f := newFarm(t, "127.0.0.2", db)

	closet := newEnv(t)
	code := f.pair(t, "closet")
	if h := f.hostState(t, "closet"); h.State != "pending" {
		t.Fatalf("closet before it paired: %+v, want pending", h)
	}
	host := runHost(t, closet, "--gateway", f.addr, "--pair", code)
	f.online(t, "sim-android-1", "closet")
	if h := f.hostState(t, "closet"); h.State != "online" || h.Devices == 0 || h.Version == "" {
		t.Fatalf("closet once linked: %+v, want online with its devices and version", h)
	}

	// The doctor checks the link on the gateway and the identity on the host.
	if r := doctorCheck(t, f.gw, "host closet"); !r.OK || !strings.Contains(r.Detail, "online") {
		t.Errorf("doctor on the gateway, host closet: %+v; want online", r)
	}
	if r := doctorCheck(t, closet, "phone host identity"); !r.OK || !strings.Contains(r.Detail, "paired as closet") {
		t.Errorf("doctor on the host: %+v; want paired as closet", r)
	}

	// The agent's task, through pinky mcp on the gateway.
	dev := e2e.OnDevice("sim-android-1")
	f.gw.Unlock("sim-android-1")
	h := f.gw.StdioHost()
	h.Initialize()
	h.OK("phone_connect", dev("task", "a note from the closet"), "Pixel Launcher")
	h.OK("phone_tap", dev("text", "Notes"), "")

	// The history is in PostgreSQL, with the agent's steps.
	var st api.Status
	f.gw.JSON(&st, "status")
	if !strings.HasPrefix(st.History.Path, "postgres://") || !st.History.Writable {
		t.Fatalf("history %+v; want the PostgreSQL database, writable", st.History)
	}
	if task := f.gw.lastTask(t); task.Text != "a note from the closet" || task.Steps < 1 || task.Device != "sim-android-1" {
		t.Fatalf("the task in the history: %+v", task)
	}

	// A second host with the same virtual phones: its ids are qualified.
	mac := newEnv(t)
	macHost := runHost(t, mac, "--gateway", f.addr, "--pair", f.pair(t, "mac"))
	f.online(t, "mac/sim-android-1", "mac")
	if d := f.devices(t)["sim-android-1"]; d.Host != "closet" {
		t.Fatalf("sim-android-1 after mac linked: %+v; want it still closet's", d)
	}

	// kill -9 of the host: the phone goes offline, the lease holds, and
	// the phone comes back under the same id when the host starts again
	// without --pair.
	host.kill9(t)
	f.gw.Eventually("closet's phone offline", func() bool { return !f.devices(t)["sim-android-1"].Online })
	if hs := f.hostState(t, "closet"); hs.State != "offline" || hs.Since.IsZero() {
		t.Fatalf("closet after kill -9: %+v; want offline since a time", hs)
	}
	f.gw.JSON(&st, "status")
	if len(st.Leases) != 1 || st.Leases[0].Device != "sim-android-1" {
		t.Fatalf("leases while the host is down: %+v; want the agent's lease kept", st.Leases)
	}
	h.Fails("phone_observe", dev(), "device_offline")
	// This run's virtual phones hang in a long press, so that one is under
	// way when the link is cut.
	closet.Extra = []string{"PINKY_SIM_FAULTS=hang=long_press"}
	host = runHost(t, closet, "--gateway", f.addr)
	closet.Extra = nil
	f.online(t, "sim-android-1", "closet")
	h.OK("phone_observe", dev(), "")
	f.gw.Unlock("sim-android-1") // the virtual phones start again locked, with their host

	// A link cut in the middle of an action: the agent is told the outcome
	// is uncertain, never a plain failure.
	id := h.Request("tools/call", map[string]any{"name": "phone_long_press", "arguments": dev("x", 540, "y", 1200)})
	time.Sleep(time.Second) // the press is under way on the host
	host.kill9(t)
	r := h.Response(id, 30*time.Second)
	if text := resultText(r); !strings.HasPrefix(text, "uncertain:") || !strings.Contains(text, "went away") || !strings.Contains(text, "observe before repeating") {
		t.Fatalf("a long press cut by the host's death: %q; want uncertain (the phone went away), observe before repeating", text)
	}
	host = runHost(t, closet, "--gateway", f.addr)
	f.online(t, "sim-android-1", "closet")

	// A replayed pairing code is refused, and says why.
	again := newEnv(t)
	_, errs, exit := again.Run("host", "--sim", "--gateway", f.addr, "--pair", code)
	if exit == 0 || !strings.Contains(errs, "used already") {
		t.Fatalf("pinky host with a used code: exit %d, %q; want a refusal that says the code was used", exit, errs)
	}

	// A host paired with another gateway is refused before it sends
	// anything: the fingerprint it pinned is not this gateway's.
	other := newFarm(t, "127.0.0.3", "")
	stray := newEnv(t)
	strayHost := runHost(t, stray, "--gateway", other.addr, "--pair", other.pair(t, "stray"))
	other.online(t, "sim-android-1", "stray")
	strayHost.cmd.Process.Signal(syscall.SIGTERM)
	strayHost.cmd.Wait()
	strayHost = runHost(t, stray, "--gateway", f.addr)
	f.gw.EventuallyOr("the stray host refused", func() bool {
		return strings.Contains(strayHost.log.String(), "fingerprint")
	}, func() string { return strayHost.log.String() })
	for id, d := range f.devices(t) {
		if d.Host == "stray" {
			t.Fatalf("the gateway lists %s of a host it never paired", id)
		}
	}

	// A revoked host is refused at once, and its phones are no longer
	// listed.
	if _, errs, code := f.gw.Run("hosts", "remove", "mac"); code != 0 {
		t.Fatalf("hosts remove mac: %s", errs)
	}
	f.gw.Eventually("mac's phones gone", func() bool { _, ok := f.devices(t)["mac/sim-android-1"]; return !ok })
	f.gw.EventuallyOr("mac refused", func() bool { return strings.Count(macHost.log.String(), "link down") >= 2 },
		func() string { return macHost.log.String() })
	time.Sleep(500 * time.Millisecond) // a few dials of mac, every one refused
	if _, ok := f.devices(t)["mac/sim-android-1"]; ok || f.hostState(t, "mac").Name != "" {
		t.Fatal("the revoked host came back")
	}

	// The gateway goes down; the host restarted meanwhile dials until it
	// comes back, with the history as it was.
	h.Close()
	f.stop(t)
	host.kill9(t)
	host = runHost(t, closet, "--gateway", f.addr)
	e2eWaitLog(t, host, "link down")
	f.start()
	f.online(t, "sim-android-1", "closet")
	if task := f.gw.lastTask(t); task.Text != "a note from the closet" {
		t.Fatalf("the history after the gateway's restart: %+v", task)
	}
}

// doctorCheck runs pinky doctor in e and returns its check called name.
func doctorCheck(t *testing.T, e *env, name string) gwdoctor.Result {
	t.Helper()
	out, errs, _ := e.Run("doctor", "--json") // exit 1 on any problem of this machine
	var rs []gwdoctor.Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("doctor --json: %v: %s %s", err, out, errs)
	}
	for _, r := range rs {
		if r.Check == name {
			return r
		}
	}
	t.Fatalf("doctor has no check %q: %+v", name, rs)
	return gwdoctor.Result{}
}

// e2eWaitLog waits until the host's log holds s.
func e2eWaitLog(t *testing.T, p *phoneHost, s string) {
	t.Helper()
	p.e.EventuallyOr("host log: "+s, func() bool { return strings.Contains(p.log.String(), s) }, func() string { return p.log.String() })
}

// resultText is the text of a tools/call response.
func resultText(r map[string]any) string {
	res, _ := r["result"].(map[string]any)
	var out string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok && m["type"] == "text" {
			out += m["text"].(string)
		}
	}
	return out
}
