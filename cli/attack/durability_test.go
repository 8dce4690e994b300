//go:build linux

package attack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/history"
	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"
)

// The attacks on the history's durability: the history is the person's
// record of what agents did, so an action the history cannot hold must not
// run, and no agent may be answered ok for a step the history does not
// have. Each attack breaks the history for real under a running daemon (a
// full disk, an unwritable or damaged file, an immutable -shm file), keeps
// acting, and checks the phone, the person's status, and the history after
// the cause is fixed and the daemon restarted.

const durablePhone = "sim-android-1"

var onPhone = e2e.OnDevice(durablePhone)

// durable is a daemon with the virtual phones and an agent on a real
// `pinky mcp` pipe holding durablePhone for a task.
type durable struct {
	t      *testing.T
	e      *e2e.Env
	daemon *exec.Cmd
	logs   *e2e.Buffer
	agent  *e2e.Host
	task   string
	// acked are the tools of the calls answered ok with a step id, in
	// order: each must be in the history.
	acked []string
}

func newDurable(t *testing.T, task string) *durable {
	t.Helper()
	e := e2e.New(t)
	d := &durable{t: t, e: e}
	d.start()
	e.Unlock(durablePhone)
	d.connect(task)
	return d
}

// start starts the daemon.
func (d *durable) start() {
	d.t.Helper()
	d.daemon, d.logs = d.e.DaemonLog("--sim", "--console", "off")
}

// stop stops the daemon with SIGTERM, as a service manager does.
func (d *durable) stop() {
	d.t.Helper()
	d.daemon.Process.Signal(syscall.SIGTERM)
	d.daemon.Wait()
}

// connect starts an agent and leases the phone for a task.
func (d *durable) connect(task string) {
	d.t.Helper()
	d.agent = d.e.StdioHost()
	d.agent.Initialize()
	r := d.call("phone_connect", onPhone("task", task))
	if r.IsError {
		d.t.Fatalf("phone_connect: %s", r.Text)
	}
	d.task, _ = r.Structured["task_id"].(string)
}

// call calls a tool and notes an ok answer that names a step.
func (d *durable) call(tool string, args map[string]any) e2e.Result {
	d.t.Helper()
	r := d.agent.Call(tool, args)
	if step, _ := r.Structured["step"].(string); !r.IsError && step != "" {
		d.acked = append(d.acked, tool)
	}
	return r
}

// app is the app in front of the phone, as its driver reports it to the
// person's CLI: what really happened on the phone.
func (d *durable) app() string {
	d.t.Helper()
	var s sdk.Screen
	d.e.JSON(&s, "driver", "screen", durablePhone)
	return s.App.ID
}

// status is `pinky status`, as text and as JSON.
func (d *durable) status() (string, api.Status) {
	d.t.Helper()
	out, errs, code := d.e.Run("status")
	if code != 0 {
		d.t.Fatalf("pinky status: exit %d: %s", code, errs)
	}
	var st api.Status
	d.e.JSON(&st, "status")
	return out, st
}

// attacks are actions that would each take the phone off its launcher.
var attacks = []struct {
	tool string
	args map[string]any
}{
	{"phone_tap", onPhone("text", "Messages")},
	{"phone_launch", onPhone("app", "Notes")},
	{"phone_long_press", onPhone("text", "Mail")},
	{"phone_tap", onPhone("text", "Settings")},
}

// actBroken makes n actions with the history broken: each must answer
// internal "history cannot be written: cause…" and leave the phone on the
// launcher.
func (d *durable) actBroken(n int, cause string) {
	d.t.Helper()
	home := d.app()
	failures := 0
	for i := range n {
		a := attacks[i%len(attacks)]
		r := d.call(a.tool, a.args)
		if !r.IsError || !strings.HasPrefix(r.Text, "internal: history cannot be written: "+cause) || !strings.Contains(r.Text, "nothing was done on the phone") {
			d.t.Errorf("%s %v with the history broken: got error=%v %q; want internal: history cannot be written: %s…, nothing was done",
				a.tool, a.args, r.IsError, r.Text, cause)
			failures++
		}
		if got := d.app(); got != home {
			d.t.Errorf("after %s with the history broken the phone shows %s; want %s, untouched", a.tool, got, home)
			failures++
			// Back to the launcher for the next attack.
			d.agent.Call("phone_key", onPhone("key", "home"))
		}
		if failures > 3 {
			d.t.Fatalf("stopping after %d failures", failures)
		}
	}
}

// readsGoOn: a read works with the history broken, and names no step.
func (d *durable) readsGoOn() {
	d.t.Helper()
	r := d.call("phone_observe", onPhone("full", true))
	if step, _ := r.Structured["step"].(string); r.IsError || !strings.Contains(r.Text, "Messages") || step != "" {
		d.t.Errorf("phone_observe with the history broken: got error=%v step %q %q; want the launcher, and no step id", r.IsError, step, r.Text)
	}
}

// statusSays: `pinky status` says the history cannot be written, why and
// what to do.
func (d *durable) statusSays(cause, fix string, failures int) {
	d.t.Helper()
	out, st := d.status()
	if !strings.Contains(out, "CANNOT BE WRITTEN") || !strings.Contains(out, cause) || !strings.Contains(out, fix) || !strings.Contains(out, "refused") {
		d.t.Errorf("pinky status with the history broken does not say it cannot be written (%q), nor what to do (%q):\n%s", cause, fix, out)
	}
	if st.History.Writable || st.History.Failures < failures || st.History.Since.IsZero() || !strings.Contains(st.History.Cause, cause) {
		d.t.Errorf("pinky status --json: history %+v; want not writable since a time, %q, at least %d failures", st.History, cause, failures)
	}
}

// historyHasAcked restarts the daemon and checks, with `pinky history
// show`, that every call answered ok with a step id is in the task's
// history, ok, in order, and that no step is left running.
func (d *durable) historyHasAcked() {
	d.t.Helper()
	d.stop()
	d.start()
	var task api.TaskDetail
	d.e.JSON(&task, "history", "show", d.task)
	var ok []string
	for _, s := range task.StepList {
		if s.Outcome == "ok" {
			ok = append(ok, s.Tool)
		}
		if s.Outcome == "running" {
			d.t.Errorf("step %d (%s) is left running after the restart", s.Seq, s.Tool)
		}
	}
	if got, want := strings.Join(ok, " "), strings.Join(d.acked, " "); got != want {
		d.t.Errorf("the history's ok steps after the restart:\n  %s\nwant the calls answered ok with a step:\n  %s", got, want)
	}
	d.t.Logf("%d calls answered ok with a step, all in the history; %d steps in all", len(d.acked), len(task.StepList))
}

// limitFileSize sets the running daemon's file size limit to zero, as a
// full disk does to its writes (they fail with EFBIG: Go ignores SIGXFSZ),
// and returns the function that puts the old limit back.
func limitFileSize(t *testing.T, pid int) func() {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 0, Max: unix.RLIM_INFINITY}, &old); err != nil {
		if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, nil, &old); err != nil {
			t.Fatal(err)
		}
		if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: 0, Max: old.Max}, nil); err != nil {
			t.Fatalf("prlimit: %v", err)
		}
	}
	return func() {
		if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &old, nil); err != nil {
			t.Errorf("prlimit back: %v", err)
		}
	}
}

// TestDiskFullRefusesActions: the disk fills under a running daemon, and
// the agent keeps acting. Once, 30 of 30 calls answered ok with a step id,
// the actions ran on the phone, and after a restart all 30 steps were
// missing. Now each call answers that the history cannot be written and
// nothing reaches the phone; reads go on; `pinky status` says what is
// wrong; and once there is room again, every step answered ok is there.
func TestDiskFullRefusesActions(t *testing.T) {
	d := newDurable(t, "fill the disk")
	if r := d.call("phone_key", onPhone("key", "home")); r.IsError {
		t.Fatalf("phone_key home: %s", r.Text)
	}

	fix := limitFileSize(t, d.daemon.Process.Pid)
	d.actBroken(30, "a file size limit was reached")
	d.readsGoOn()
	d.statusSays("a file size limit was reached", "ulimit -f", 30)

	fix()
	if r := d.call("phone_tap", onPhone("text", "Messages")); r.IsError {
		t.Errorf("phone_tap once there is room again: %s", r.Text)
	}
	if got := d.app(); !strings.Contains(strings.ToLower(got), "messag") {
		t.Errorf("after the tap, the phone shows %s; want Messages", got)
	}
	if out, st := d.status(); !st.History.Writable || !strings.Contains(out, "writable again") {
		t.Errorf("pinky status once there is room again: %+v\n%s", st.History, out)
	}
	d.historyHasAcked()
}

// TestUnwritableHistoryRefusesActions: the database and its WAL are made
// immutable under a running daemon (nobody, root included, can write
// them), then the daemon restarts on them. Actions answer that the
// history cannot be written, nothing reaches the phone, an agent cannot
// even take a phone, and status says what to do; once the files are
// writable again and the daemon restarted, every step answered ok is in
// the history.
func TestUnwritableHistoryRefusesActions(t *testing.T) {
	d := newDurable(t, "lock the history")
	if r := d.call("phone_key", onPhone("key", "home")); r.IsError {
		t.Fatalf("phone_key home: %s", r.Text)
	}
	db := filepath.Join(d.e.Home, "history.db")
	clearDB := testdep.Immutable(t, db)
	clearWAL := testdep.Immutable(t, db+"-wal")
	d.actBroken(8, "the database file is not writable")
	d.readsGoOn()
	d.statusSays("the database file is not writable", "chattr -i", 8)

	// A daemon that starts on the unwritable files opens them for reading.
	d.stop()
	d.start()
	d.agent = d.e.StdioHost()
	d.agent.Initialize()
	if r := d.call("phone_connect", onPhone("task", "lock the history again")); !r.IsError ||
		!strings.HasPrefix(r.Text, "internal: history cannot be written: ") || !strings.Contains(r.Text, "not connected") {
		t.Errorf("phone_connect on an unwritable history: got error=%v %q; want internal: history cannot be written…, not connected", r.IsError, r.Text)
	}
	d.statusSays("read-only", "restart the daemon", 1)
	if r := d.call("phone_list", nil); r.IsError {
		t.Errorf("phone_list on an unwritable history: %s", r.Text)
	}

	clearDB()
	clearWAL()
	d.historyHasAcked()
}

// TestDamagedHistoryRefusesStart: a daemon does not start on a damaged
// database; it names the file and says what to do, and so does `pinky mcp`
// to the agent whose host starts it. Moved away as it says, the daemon
// starts a new history. Before, the daemon started on it and wrote on.
func TestDamagedHistoryRefusesStart(t *testing.T) {
	d := newDurable(t, "before the damage")
	for range 20 {
		d.call("phone_tap", onPhone("text", "Messages"))
		d.call("phone_key", onPhone("key", "home"))
	}
	d.stop()
	db := filepath.Join(d.e.Home, "history.db")
	b, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 8*4096 {
		t.Fatalf("the history has %d bytes; want a few pages to damage", len(b))
	}
	// The file's last page becomes garbage, as a bad disk leaves it: the
	// header and the schema still read well, so only a check of every page
	// finds it.
	copy(b[len(b)-4096:], bytes.Repeat([]byte{0xa5}, 4096))
	if err := os.WriteFile(db, b, 0o600); err != nil {
		t.Fatal(err)
	}

	c := d.e.Cmd("daemon", "--sim", "--console", "off")
	var errs bytes.Buffer
	c.Stderr = &errs
	done := make(chan error, 1)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- c.Wait() }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("the daemon exited 0 on a damaged history; want a failure")
		}
	case <-time.After(15 * time.Second):
		c.Process.Kill()
		t.Fatalf("the daemon started on a damaged history:\n%s", errs.String())
	}
	t.Logf("the daemon's refusal: %s", errs.String())
	for _, want := range []string{db, "damaged", "mv " + db + " " + db + ".damaged", "start the daemon again"} {
		if !strings.Contains(errs.String(), want) {
			t.Errorf("the daemon's refusal does not say %q:\n%s", want, errs.String())
		}
	}

	// An agent whose host starts the daemon learns why it cannot.
	h := d.e.StdioHost("PINKY_SIM=1")
	id := h.Request("initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "e2e-agent", "version": "0.1"},
	})
	resp := h.Response(id, 30*time.Second)
	msg, _ := json.Marshal(resp["error"])
	if resp["error"] == nil || !strings.Contains(string(msg), "damaged") {
		t.Errorf("initialize through pinky mcp on a damaged history: got %v; want an error saying the history is damaged", resp)
	}

	// Moved away as the message says, a new history starts.
	if err := os.Rename(db, db+".damaged"); err != nil {
		t.Fatal(err)
	}
	os.Rename(db+"-wal", db+".damaged-wal")
	d.start()
	var tasks []api.Task
	d.e.JSON(&tasks, "history")
	if len(tasks) != 0 {
		t.Errorf("the new history has %d tasks; want none", len(tasks))
	}
	d.acked = nil
	d.e.Unlock(durablePhone) // the new daemon's virtual phones start locked
	d.connect("after the damage")
	if r := d.call("phone_tap", onPhone("text", "Messages")); r.IsError {
		t.Errorf("phone_tap on the new history: %s", r.Text)
	}
	d.historyHasAcked()
}

// TestImmutableShmDoesNotCrashTheDaemon: the -shm file next to the
// database is made immutable while the daemon runs, then the daemon
// restarts with it there. With the WAL index mapped from that file, the
// next write died of SIGBUS and took the daemon with it; the index now
// lives in the daemon's memory, and the daemon acts and records on.
func TestImmutableShmDoesNotCrashTheDaemon(t *testing.T) {
	d := newDurable(t, "freeze the index")
	if r := d.call("phone_tap", onPhone("text", "Messages")); r.IsError {
		t.Fatalf("phone_tap: %s", r.Text)
	}
	shm := filepath.Join(d.e.Home, "history.db-shm")
	if f, err := os.OpenFile(shm, os.O_CREATE|os.O_RDONLY, 0o600); err == nil {
		f.Close()
	}
	testdep.Immutable(t, shm)

	keys := []string{"home", "back"}
	for i := range 10 {
		if r := d.call("phone_key", onPhone("key", keys[i%2])); r.IsError {
			t.Fatalf("phone_key with an immutable -shm: %s\ndaemon log:\n%s", r.Text, d.logs.String())
		}
	}
	if _, _, code := d.e.Run("status"); code != 0 {
		t.Fatalf("the daemon died with an immutable -shm:\n%s", d.logs.String())
	}

	d.stop()
	d.start()
	task := d.task
	acked := d.acked
	d.acked = nil
	d.connect("with the -shm still immutable")
	for i := range 5 {
		if r := d.call("phone_key", onPhone("key", keys[i%2])); r.IsError {
			t.Fatalf("phone_key after a restart with an immutable -shm: %s", r.Text)
		}
	}
	if _, st := d.status(); !st.History.Writable {
		t.Errorf("status with an immutable -shm: %+v; want writable", st.History)
	}
	d.historyHasAcked()
	d.task, d.acked = task, acked
	d.historyHasAcked()
}

// TestCrashMidActionIsUncertain: the daemon dies after an action's step
// was committed as running and before its end was (the state a kill -9
// during a tap leaves). The next daemon does not leave the step running,
// nor call it ok: it is uncertain, and says so.
func TestCrashMidActionIsUncertain(t *testing.T) {
	d := newDurable(t, "die mid-tap")
	if r := d.call("phone_key", onPhone("key", "home")); r.IsError {
		t.Fatalf("phone_key home: %s", r.Text)
	}
	d.daemon.Process.Signal(syscall.SIGKILL)
	d.daemon.Wait()
	// The step of a tap under way, as the killed daemon committed it.
	store, err := history.Open(filepath.Join(d.e.Home, "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, steps, err := store.Task(ctx, d.task)
	if err != nil {
		t.Fatal(err)
	}
	err = store.AddStep(ctx, history.Step{ID: "st-cut", TaskID: d.task, Seq: len(steps) + 1, Tool: "phone_tap",
		Args: `{"device":"sim-android-1","text":"Send"}`, Outcome: history.StepRunning, StartedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	store.Close()

	d.start()
	var task api.TaskDetail
	d.e.JSON(&task, "history", "show", d.task)
	last := task.StepList[len(task.StepList)-1]
	if last.Tool != "phone_tap" || last.Outcome != "uncertain" || !strings.Contains(last.Message, "may or may not have happened") {
		t.Errorf("the step cut by the crash after a restart: got %+v; want phone_tap, uncertain, saying it may or may not have happened", last)
	}
	if out, _, _ := d.e.Run("history", "show", d.task); !strings.Contains(out, "uncertain") {
		t.Errorf("pinky history show does not show the cut step as uncertain:\n%s", out)
	}
}
