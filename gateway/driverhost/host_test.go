package driverhost

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestStartListsDevicesAndStops(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := New(testConfig(driverDir(t, "alpha", "beta")))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range h.Devices() {
		if !d.Online || d.Duplicate {
			t.Errorf("device %+v: want online, not duplicate", d)
		}
		got = append(got, d.Driver+"/"+d.ID)
	}
	want := []string{"alpha/alpha-1", "alpha/alpha-2", "beta/beta-1", "beta/beta-2"}
	if !slices.Equal(got, want) {
		t.Errorf("devices = %v; want %v", got, want)
	}
	var pids []int
	for _, s := range h.Drivers() {
		if s.State != StateRunning || s.Pid == 0 || s.Version != "0.0.1-test" || s.Devices != 2 || s.StartedAt.IsZero() {
			t.Errorf("status %+v: want running with a pid, version and 2 devices", s)
		}
		pids = append(pids, s.Pid)
	}
	waitFor(t, 2*time.Second, "stderr line in the status", func() bool {
		return slices.Contains(status(h, "alpha").Stderr, "fake driver alpha starting")
	})

	d, name, err := h.DriverForDevice("beta-2")
	if err != nil || name != "beta" {
		t.Fatalf("DriverForDevice(beta-2) = %v, %v; want beta", name, err)
	}
	s, err := d.Screen(context.Background(), "beta-2", 0)
	if err != nil || len(s.Elements) == 0 {
		t.Fatalf("Screen = %v, %v; want elements", s, err)
	}
	if _, err := d.Screen(context.Background(), "alpha-1", 0); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("Screen of another driver's device: err = %v; want ErrDeviceNotFound", err)
	}
	if _, _, err := h.DriverForDevice("nope"); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("DriverForDevice(nope): err = %v; want ErrDeviceNotFound", err)
	}
	// What a device's driver serves is what the driver declared.
	info, err := d.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []sdk.Capability{sdk.CapWake, sdk.CapVideo, sdk.CapFiles, sdk.CapDisplays} {
		if got, want := h.Serves("beta-2", c), slices.Contains(info.Capabilities, c); got != want {
			t.Errorf("Serves(beta-2, %s) = %v; the driver declares %v", c, got, info.Capabilities)
		}
	}
	if h.Serves("nope", sdk.CapWake) {
		t.Error("an unknown device serves a capability")
	}
	if _, err := h.Driver("nope"); !errors.Is(err, ErrUnknownDriver) {
		t.Errorf("Driver(nope): err = %v; want ErrUnknownDriver", err)
	}

	h.Stop()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("driver pid %d alive after Stop", pid)
		}
	}
	for _, s := range h.Drivers() {
		if s.State != StateStopped || s.Pid != 0 {
			t.Errorf("after Stop: %+v; want stopped without pid", s)
		}
	}
	if _, err := d.Screen(context.Background(), "beta-2", 0); !errors.Is(err, sdk.ErrDriverGone) {
		t.Errorf("Screen after Stop: err = %v; want ErrDriverGone", err)
	}
	if c := children(t); len(c) != 0 {
		t.Errorf("child processes after Stop: %v", c)
	}
}

func TestDuplicateDeviceIDs(t *testing.T) {
	defer goleak.VerifyNone(t)
	cfg := testConfig(driverDir(t, "one"))
	cfg.Env = map[string][]string{"one": {"FAKE_DEVICES=same"}, "two": {"FAKE_DEVICES=same"}}
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// "two" comes second, so its device is the duplicate.
	dir := driverDir(t, "two")
	var r sdk.Reattach
	cmd := startByHand(t, filepath.Join(dir, Prefix+"two"), &r, "FAKE_DEVICES=same")
	defer cmd.Process.Kill()
	if err := h.Attach(context.Background(), "two", r); err != nil {
		t.Fatal(err)
	}
	devs := h.Devices()
	if len(devs) != 2 || devs[0].Driver != "one" || devs[0].Duplicate || devs[1].Driver != "two" || !devs[1].Duplicate {
		t.Fatalf("devices = %+v; want same from one, then a duplicate from two", devs)
	}
	if _, name, err := h.DriverForDevice("same"); err != nil || name != "one" {
		t.Errorf("DriverForDevice = %q, %v; want one", name, err)
	}
	testkit.Kill(status(h, "one").Pid)
	waitFor(t, 2*time.Second, "one's device offline", func() bool { return len(onlineDevices(h, "one")) == 0 })
	if _, name, err := h.DriverForDevice("same"); err != nil || name != "two" {
		t.Errorf("with one down: DriverForDevice = %q, %v; want two (online)", name, err)
	}
}

// startByHand starts a driver in debug mode, as `pinky driver attach`
// expects, and parses its reattach line into r.
func startByHand(t *testing.T, path string, r *sdk.Reattach, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), append(env, sdk.DebugEnv+"=1")...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("reading the reattach line: %v", err)
	}
	if err := json.Unmarshal([]byte(line), r); err != nil || r.Pid != cmd.Process.Pid {
		cmd.Process.Kill()
		t.Fatalf("reattach line %q: %v (pid %d)", line, err, cmd.Process.Pid)
	}
	go cmd.Wait() // reaps it: a zombie would look alive to go-plugin's pid check
	return cmd
}

func TestAttach(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := New(testConfig(t.TempDir()))
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	var r sdk.Reattach
	cmd := startByHand(t, bin.fake, &r, "FAKE_DEVICES=hand-1,hand-2")
	if err := h.Attach(context.Background(), "hand", r); err != nil {
		t.Fatal(err)
	}
	if got := onlineDevices(h, "hand"); !slices.Equal(got, []string{"hand-1", "hand-2"}) {
		t.Fatalf("online devices = %v; want hand-1, hand-2", got)
	}
	s := status(h, "hand")
	if s.State != StateAttached || s.Pid != cmd.Process.Pid || s.Source != "attach" {
		t.Fatalf("status = %+v; want attached with pid %d", s, cmd.Process.Pid)
	}
	d, _ := h.Driver("hand")
	if _, err := d.Act(context.Background(), "hand-1", sdk.Action{Kind: sdk.ActTap}); err != nil {
		t.Fatalf("Act: %v", err)
	}
	if err := h.Restart(context.Background(), "hand"); err == nil {
		t.Error("Restart of an attached driver: err = nil; want an error")
	}

	events, cancel := h.Subscribe()
	defer cancel()
	testkit.Kill(cmd.Process.Pid)
	waitFor(t, 3*time.Second, "attached driver exited", func() bool { return status(h, "hand").State == StateExited })
	if got := onlineDevices(h, "hand"); len(got) != 0 {
		t.Errorf("online devices after exit = %v; want none", got)
	}
	offline := map[string]bool{}
	for len(offline) < 2 {
		select {
		case ev := <-events:
			if ev.Kind == EventOffline {
				offline[ev.Device.ID] = true
			}
		case <-time.After(time.Second):
			t.Fatalf("offline events: got %v; want hand-1 and hand-2", offline)
		}
	}
	time.Sleep(200 * time.Millisecond) // would be enough for a restart with the test backoff
	s = status(h, "hand")
	if s.State != StateExited || s.Restarts != 0 || s.Pid != 0 || !strings.Contains(s.LastError, "exited") {
		t.Errorf("status = %+v; want exited, no restart", s)
	}
	if _, err := d.Act(context.Background(), "hand-1", sdk.Action{Kind: sdk.ActTap}); !errors.Is(err, sdk.ErrDriverGone) {
		t.Errorf("Act after exit: err = %v; want ErrDriverGone", err)
	}
}

func TestRestart(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := New(testConfig(driverDir(t, "fake")))
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	d, _ := h.Driver("fake")
	old := status(h, "fake").Pid
	if err := h.Restart(context.Background(), "fake"); err != nil {
		t.Fatal(err)
	}
	s := status(h, "fake")
	if s.State != StateRunning || s.Pid == old || s.Pid == 0 || s.Restarts != 1 {
		t.Errorf("after Restart: %+v; want running, new pid (old %d), 1 restart", s, old)
	}
	if alive(old) {
		t.Errorf("old pid %d still alive", old)
	}
	if got := onlineDevices(h, "fake"); len(got) != 2 {
		t.Errorf("online devices = %v; want 2", got)
	}
	if _, err := d.Screen(context.Background(), "fake-1", 0); err != nil {
		t.Errorf("Screen through the old handle: %v", err)
	}
	if err := h.Restart(context.Background(), "nope"); !errors.Is(err, ErrUnknownDriver) {
		t.Errorf("Restart(nope): err = %v; want ErrUnknownDriver", err)
	}
	h.Stop()
	if alive(s.Pid) {
		t.Errorf("pid %d alive after Stop", s.Pid)
	}
	if err := h.Restart(context.Background(), "fake"); !errors.Is(err, ErrStopped) {
		t.Errorf("Restart after Stop: err = %v; want ErrStopped", err)
	}
}

// TestBadDrivers starts a driver that prints garbage, one that never
// answers the handshake and one that exits at once, next to a good one.
func TestBadDrivers(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := driverDir(t, "good")
	for name, script := range map[string]string{"garbage": "garbage.sh", "sleepy": "sleep.sh", "quitter": "exit.sh"} {
		b, err := os.ReadFile(filepath.Join("testdata", "bad", script))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, Prefix+name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(dir)
	cfg.StartTimeout = time.Second
	cfg.Backoff.Stable = time.Minute
	cfg.Backoff.MaxFailures = 2
	h := New(cfg)
	t0 := time.Now()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(t0); took > cfg.StartTimeout+testkit.Scaled(time.Second) {
		t.Errorf("Start took %s; want about the handshake timeout (%s)", took, cfg.StartTimeout)
	}
	if s := status(h, "good"); s.State != StateRunning {
		t.Errorf("good driver: %+v; want running", s)
	}
	if got := onlineDevices(h, "good"); len(got) != 2 {
		t.Errorf("good driver's devices = %v; want 2", got)
	}
	want := map[string]string{
		"garbage": "nrecognized remote plugin message",
		"sleepy":  "timeout while waiting for plugin to start",
		"quitter": "exited before",
	}
	for name, cause := range want {
		waitFor(t, 5*time.Second, name+" failed", func() bool { return status(h, name).State == StateFailed })
		s := status(h, name)
		if !strings.Contains(s.LastError, cause) || s.Pid != 0 {
			t.Errorf("%s: LastError = %q, pid %d; want it to mention %q", name, s.LastError, s.Pid, cause)
		}
		d, _ := h.Driver(name)
		t1 := time.Now()
		if _, err := d.Screen(context.Background(), "x", 0); !errors.Is(err, sdk.ErrDriverGone) || time.Since(t1) > testkit.Scaled(500*time.Millisecond) { // well under the client's 1 s wait for an exit
			t.Errorf("%s: Screen = %v after %s; want ErrDriverGone at once", name, err, time.Since(t1))
		}
	}
	if s := status(h, "quitter"); !slices.Contains(s.Stderr, "cannot open the device bus") {
		t.Errorf("quitter's stderr tail = %q; want its message", s.Stderr)
	}
	if s := status(h, "good"); s.State != StateRunning || s.Restarts != 0 {
		t.Errorf("good driver after the others failed: %+v", s)
	}
	h.Stop()
	if c := children(t); len(c) != 0 {
		t.Errorf("child processes after Stop: %v", c)
	}
}

// TestHostKilled kills a host with SIGKILL and checks that its driver exits.
func TestHostKilled(t *testing.T) {
	cmd := exec.Command(bin.host, driverDir(t, "orphan"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	var pids map[string]int
	if err := json.Unmarshal([]byte(line), &pids); err != nil || pids["orphan"] == 0 {
		t.Fatalf("host printed %q (%v); want the driver's pid", line, err)
	}
	pid := pids["orphan"]
	if !alive(pid) {
		t.Fatalf("driver %d not running", pid)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	waitFor(t, 2*time.Second, "the orphaned driver to exit", func() bool { return !alive(pid) })
}

func TestSubscribeSlow(t *testing.T) {
	h := New(testConfig(""))
	events, cancel := h.Subscribe()
	h.mu.Lock()
	d := h.newDriverLocked("x")
	seen := map[string]bool{}
	ev := func(i int) sdk.DeviceEvent {
		return sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: sdk.Device{ID: "d" + string(rune('a'+i%26)) + string(rune('a'+i/26)), State: sdk.StateOnline}}
	}
	for i := range subBuffer + 10 { // never read: the host must not block
		h.applyLocked(d, seen, ev(i))
	}
	h.mu.Unlock()
	for i := range subBuffer {
		if e := <-events; e.Kind != EventAdded {
			t.Fatalf("event %d = %v; want added", i, e.Kind)
		}
	}
	select {
	case e := <-events:
		t.Fatalf("got %v; want the dropped events gone", e)
	default:
	}
	h.mu.Lock()
	h.applyLocked(d, seen, ev(subBuffer+20))
	h.mu.Unlock()
	if e := <-events; e.Kind != EventResync {
		t.Errorf("after a drop: got %v; want resync", e.Kind)
	}
	if e := <-events; e.Kind != EventAdded {
		t.Errorf("after resync: got %v; want added", e.Kind)
	}
	cancel()
	cancel()
	if _, ok := <-events; ok {
		t.Error("channel open after cancel")
	}
	h.Stop()
	ch, _ := h.Subscribe()
	if _, ok := <-ch; ok {
		t.Error("Subscribe after Stop: channel open")
	}
}

func TestStatusString(t *testing.T) {
	s := DriverStatus{Name: "sim", Version: "1.0", Path: "/x/pinky-driver-sim", Pid: 42, State: StateRunning, Restarts: 3, Devices: 2}
	if got, want := s.String(), "sim\t1.0\t/x/pinky-driver-sim\t42\trunning\t3\t2"; got != want {
		t.Errorf("String = %q; want %q", got, want)
	}
	if got, want := (DriverStatus{Name: "x", State: StateFailed}).String(), "x\t-\t-\t-\tfailed\t0\t0"; got != want {
		t.Errorf("String = %q; want %q", got, want)
	}
}

// recorder is a slog handler that keeps the records it gets.
type recorder struct {
	mu      sync.Mutex
	records []string
	attrs   []slog.Attr
	shared  *recorder
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	for _, a := range r.attrs {
		line += " " + a.String()
	}
	rec.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	root := r
	if r.shared != nil {
		root = r.shared
	}
	root.mu.Lock()
	root.records = append(root.records, line)
	root.mu.Unlock()
	return nil
}
func (r *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	root := r
	if r.shared != nil {
		root = r.shared
	}
	return &recorder{attrs: append(slices.Clone(r.attrs), as...), shared: root}
}
func (r *recorder) WithGroup(string) slog.Handler { return r }
func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.ContainsFunc(r.records, func(l string) bool { return strings.Contains(l, s) })
}

func TestStderrLogged(t *testing.T) {
	defer goleak.VerifyNone(t)
	rec := &recorder{}
	cfg := testConfig(driverDir(t, "talker"))
	cfg.Logger = slog.New(rec)
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the driver's stderr line in the log", func() bool {
		return rec.has("INFO fake driver talker starting driver=talker")
	})
}

func TestStderrLines(t *testing.T) {
	rec := &recorder{}
	s := &stderrLog{log: slog.New(rec)}
	s.Write([]byte("one\ntw"))
	s.Write([]byte("o\n"))
	s.Write([]byte(`{"@level":"error","@message":"bad thing","code":7}` + "\n"))
	s.Write([]byte(`{"time":"2026-01-02T03:04:05Z","level":"WARN","msg":"slow phone","device":"d1"}` + "\n"))
	s.Write([]byte("panic: oops\n\n"))
	for i := range tailLines {
		fmt.Fprintf(s, "line %d\n", i)
	}
	tail := s.tail()
	if len(tail) != tailLines || tail[0] != "line 0" || tail[tailLines-1] != fmt.Sprintf("line %d", tailLines-1) {
		t.Errorf("tail = %q; want the last %d lines", tail, tailLines)
	}
	for _, want := range []string{"INFO one", "INFO two", "ERROR bad thing code=7", "WARN slow phone device=d1", "ERROR panic: oops"} {
		if !rec.has(want) {
			t.Errorf("log lacks %q; got %q", want, rec.records)
		}
	}
}

// TestStderrKeepsChecks: a check's newest line stays in the tail after
// ordinary lines pushed it out of the ring, so pinky doctor and the console
// still see the problem; a later line of the same check replaces it.
func TestStderrKeepsChecks(t *testing.T) {
	s := &stderrLog{log: slog.New(&recorder{})}
	adbBad := `{"level":"ERROR","msg":"adb is not installed","check":"adb","fix":"apt install adb"}`
	s.Write([]byte(adbBad + "\n" + `{"level":"WARN","msg":"no scrcpy","check":"scrcpy"}` + "\n"))
	for i := range tailLines + 5 {
		fmt.Fprintf(s, "line %d\n", i)
	}
	tail := s.tail()
	if len(tail) != tailLines+2 || tail[0] != adbBad || !strings.Contains(tail[1], "no scrcpy") || tail[2] != "line 5" {
		t.Fatalf("tail = %q; want the two check lines, then the last %d lines", tail, tailLines)
	}
	adbOK := `{"level":"INFO","msg":"adb answers","check":"adb"}`
	fmt.Fprintln(s, adbOK)
	tail = s.tail()
	if slices.Contains(tail, adbBad) || strings.Count(strings.Join(tail, "\n"), `"check":"adb"`) != 1 || tail[len(tail)-1] != adbOK {
		t.Errorf("tail = %q; want only adb's newest line, once", tail)
	}
	for i := range maxChecks + 10 {
		fmt.Fprintf(s, `{"level":"WARN","msg":"m","check":"c%d"}`+"\n", i)
	}
	if got := len(s.tail()); got > tailLines+maxChecks {
		t.Errorf("tail has %d lines; want at most %d", got, tailLines+maxChecks)
	}
}

// TestFailedRetriesSlowly checks that a driver that keeps failing is
// marked failed and then tried only every FailedRetry.
func TestFailedRetriesSlowly(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata", "bad", "exit.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Prefix+"quitter"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(dir)
	cfg.Backoff = Backoff{Initial: time.Millisecond, Max: time.Millisecond, Stable: time.Minute, MaxFailures: 3, FailedRetry: 250 * time.Millisecond}
	h := New(cfg)
	defer h.Stop()
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "failed", func() bool { return status(h, "quitter").State == StateFailed })
	r0 := status(h, "quitter").Restarts
	time.Sleep(time.Second)
	if got := status(h, "quitter").Restarts - r0; got < 2 || got > 5 {
		t.Errorf("%d restarts in 1 s with FailedRetry 250ms; want about 4", got)
	}
	err = h.Restart(context.Background(), "quitter")
	if err == nil || !strings.Contains(err.Error(), "exited before the handshake") {
		t.Errorf("Restart of a failing driver: err = %v; want the start error", err)
	}
}
