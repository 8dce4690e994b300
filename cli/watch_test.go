package cli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/events"
)

// watcher runs `pinky watch` and collects its output lines.
type watcher struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr strings.Builder
	mu     sync.Mutex
	lines  []string
	more   chan struct{}
	done   chan struct{} // closed when the process has exited
	code   int
}

func (e *env) watch(args ...string) *watcher {
	e.T.Helper()
	w := &watcher{t: e.T, cmd: e.Cmd(append([]string{"watch"}, args...)...), more: make(chan struct{}, 1), done: make(chan struct{})}
	stdout, err := w.cmd.StdoutPipe()
	if err != nil {
		e.T.Fatal(err)
	}
	w.cmd.Stderr = &w.stderr
	if err := w.cmd.Start(); err != nil {
		e.T.Fatal(err)
	}
	go func() {
		defer close(w.done)
		w.read(stdout)
		err := w.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			w.code = ee.ExitCode()
		}
	}()
	e.T.Cleanup(func() {
		w.cmd.Process.Kill()
		<-w.done
	})
	return w
}

func (w *watcher) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w.mu.Lock()
		w.lines = append(w.lines, sc.Text())
		w.mu.Unlock()
		select {
		case w.more <- struct{}{}:
		default:
		}
	}
}

func (w *watcher) output() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// until waits until a line satisfies cond.
func (w *watcher) until(what string, cond func(line string) bool) {
	w.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		for _, l := range w.output() {
			if cond(l) {
				return
			}
		}
		select {
		case <-w.more:
		case <-w.done:
			w.t.Fatalf("pinky watch exited (%d) before %s: %s", w.code, what, w.stderr.String())
		case <-deadline:
			w.t.Fatalf("pinky watch did not print %s within 20s; printed:\n%s", what, strings.Join(w.output(), "\n"))
		}
	}
}

// TestWatch follows an agent's work with `pinky watch`: the phones, the
// lease, its steps and an approval show up in order, numbered, and what
// the agent typed never does. When the daemon stops, watch says so and
// exits 1.
func TestWatch(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim")
	jw := e.watch("--json", "--since", "0")
	plain := e.watch("--since", "0")

	h := e.StdioHost()
	h.Initialize()
	e.Unlock("sim-android-1")
	with := e2e.OnDevice("sim-android-1")
	const typed = "zebra-quartz-4711"
	h.OK("phone_connect", with("task", "watch: write to Ben"), "")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "")
	h.OK("phone_type", with("field", "Text message", "text", typed), typed)
	e.approveNext(t) // opening a URL commits: the person approves it
	h.OK("phone_open_url", with("url", "https://example.com/"), "")
	h.OK("phone_release", with(), "")

	jw.until("the lease's end", func(l string) bool { return strings.Contains(l, `"lease.ended"`) })
	var got []api.Event
	for _, l := range jw.output() {
		var ev api.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("pinky watch --json printed a line that is not an event: %q", l)
		}
		got = append(got, ev)
	}
	seen := map[string]api.Event{}
	for i, ev := range got {
		if i > 0 && ev.Seq <= got[i-1].Seq {
			t.Errorf("event %d has seq %d after %d; want strictly increasing", i, ev.Seq, got[i-1].Seq)
		}
		key := ev.Kind
		if ev.Kind == events.Step {
			key += " " + ev.Data["tool"]
		}
		if _, ok := seen[key]; !ok {
			seen[key] = ev
		}
	}
	if len(got) > 0 && got[0].Seq != 1 {
		t.Errorf("the first event has seq %d; want 1", got[0].Seq)
	}
	checks := []struct {
		key               string
		device, agent     string
		dataKey, dataWant string
	}{
		{events.DeviceAdded, "sim-android-1", "", "driver", "sim"},
		{events.LeaseStarted, "sim-android-1", "e2e-agent", "text", "watch: write to Ben"},
		{events.Step + " phone_type", "sim-android-1", "e2e-agent", "outcome", "ok"},
		{events.ApprovalOpened, "sim-android-1", "e2e-agent", "tool", "phone_open_url"},
		{events.ApprovalDecided, "sim-android-1", "e2e-agent", "status", "approved"},
		{events.LeaseEnded, "sim-android-1", "e2e-agent", "outcome", "released"},
	}
	for _, c := range checks {
		ev, ok := seen[c.key]
		if !ok {
			t.Errorf("no %s event in\n%s", c.key, strings.Join(jw.output(), "\n"))
			continue
		}
		if ev.Device != c.device || ev.Agent != c.agent || ev.Data[c.dataKey] != c.dataWant {
			t.Errorf("%s: got %+v; want device %s, agent %q, %s=%s", c.key, ev, c.device, c.agent, c.dataKey, c.dataWant)
		}
		if c.agent != "" && !strings.HasPrefix(ev.Task, "t_") {
			t.Errorf("%s: got task %q; want the task's id", c.key, ev.Task)
		}
	}
	if s, l := seen[events.Step+" phone_type"], seen[events.LeaseStarted]; s.Task != l.Task || s.Data["step"] == "" {
		t.Errorf("the phone_type step: got %+v; want the lease's task %s and the step's number", s, l.Task)
	}
	plain.until("the lease's end", func(l string) bool { return strings.Contains(l, "lease.ended") })
	if out := strings.Join(plain.output(), "\n"); !strings.Contains(out, "tool=phone_type") || !strings.Contains(out, "outcome=released") {
		t.Errorf("pinky watch: want a phone_type step and the release in\n%s", out)
	}
	for _, w := range []*watcher{jw, plain} {
		if out := strings.Join(w.output(), "\n"); strings.Contains(out, typed) {
			t.Errorf("pinky watch printed the typed text %q:\n%s", typed, out)
		}
	}

	// A phone that goes away and comes back.
	if _, errs, code := e.Run("driver", "restart", "sim"); code != 0 {
		t.Fatalf("driver restart: %s", errs)
	}
	for _, kind := range []string{events.DeviceOffline, events.DeviceOnline} {
		jw.until(kind, func(l string) bool {
			return strings.Contains(l, `"kind":"`+kind+`"`) && strings.Contains(l, `"device":"sim-android-1"`)
		})
	}

	// The daemon goes away: watch says so and exits 1.
	if _, errs, code := e.Run("stop-daemon"); code != 0 {
		t.Fatalf("stop-daemon: %s", errs)
	}
	for _, w := range []*watcher{jw, plain} {
		select {
		case <-w.done:
		case <-time.After(15 * time.Second):
			t.Fatal("pinky watch still runs 15s after the daemon stopped")
		}
		if w.code != 1 || !strings.Contains(w.stderr.String(), "daemon") {
			t.Errorf("pinky watch after the daemon stopped: exit %d, stderr %q; want 1 and a word about the daemon", w.code, w.stderr.String())
		}
	}
}

// TestWatchWithoutDaemon fails at once, naming the missing daemon.
func TestWatchWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	_, errs, code := e.Run("watch")
	if code != 1 || !strings.Contains(errs, "no pinky daemon") {
		t.Errorf("pinky watch without a daemon: exit %d, %q; want 1 naming the daemon", code, errs)
	}
}
