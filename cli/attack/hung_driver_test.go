package attack_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// Issue 12, item 12: a driver that stops answering held phone_connect for
// 75 s, `pinky stop` did not free it, and nothing restarted the driver.
// Each attack runs the virtual phones with a call that hangs inside the
// driver process (PINKY_SIM_FAULTS) and short driver deadlines
// (PINKY_DRIVER_DEADLINES), and an agent over `pinky mcp`.

const hungPhone = "sim-android-1"

// hungDaemon starts a daemon whose virtual phones hang as faults says,
// with the driver deadlines dl, and an agent connected over stdio.
func hungDaemon(t *testing.T, faults, dl string) (*e2e.Env, *e2e.Host, *e2e.Buffer) {
	t.Helper()
	e := e2e.New(t)
	e.Extra = []string{"PINKY_SIM_FAULTS=" + faults, "PINKY_DRIVER_DEADLINES=" + dl}
	_, logs := e.DaemonLog("--sim")
	h := e.StdioHost()
	h.Initialize()
	return e, h, logs
}

// hungCall calls a tool that must answer within limit, and returns its
// result and how long it took.
func hungCall(h *e2e.Host, tool string, args map[string]any, limit time.Duration) (e2e.Result, time.Duration) {
	h.T.Helper()
	start := time.Now()
	r := h.CallWithin(tool, args, limit) // fails the test when no answer comes in time
	return r, time.Since(start)
}

func hungCode(t *testing.T, what string, r e2e.Result, code string) {
	t.Helper()
	if !r.IsError || !strings.HasPrefix(r.Text, code+":") {
		t.Errorf("%s: got error=%v %q; want an error starting %q", what, r.IsError, r.Text, code+":")
	}
}

// TestHungReadAnswersTimeout: with the phone's screen reads hanging,
// phone_connect and phone_observe answer timeout within the read deadline
// (plus a generous margin), instead of waiting as long as the driver does.
func TestHungReadAnswersTimeout(t *testing.T) {
	const read = 2 * time.Second
	_, h, _ := hungDaemon(t, "hang=screen", fmt.Sprintf("read=%s,misses=100", read))
	with := e2e.OnDevice(hungPhone)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"phone_connect", with("task", "read a phone whose driver hangs")},
		{"phone_observe", with()},
	} {
		r, took := hungCall(h, c.tool, c.args, read+5*time.Second)
		hungCode(t, c.tool, r, "timeout")
		if !strings.Contains(r.Text, "did not answer") {
			t.Errorf("%s: %q; want it to say the driver did not answer", c.tool, r.Text)
		}
		if took < read {
			t.Errorf("%s answered after %s, before the %s deadline: the read did not hang?", c.tool, took, read)
		}
	}
}

// TestHungTapAnswersUncertain: a tap that hangs in the driver answers
// uncertain ("observe before repeating") within the action deadline, and
// the phone can be read right after.
func TestHungTapAnswersUncertain(t *testing.T) {
	const act = 2 * time.Second
	e, h, _ := hungDaemon(t, "hang=tap", fmt.Sprintf("act=%s,misses=100", act))
	e.Unlock(hungPhone)
	with := e2e.OnDevice(hungPhone)
	h.OK("phone_connect", with("task", "tap on a phone whose driver hangs"), "Pixel Launcher")
	r, _ := hungCall(h, "phone_tap", with("text", "Messages"), act+5*time.Second)
	hungCode(t, "hung tap", r, "uncertain")
	if !strings.Contains(r.Text, "observe before repeating") {
		t.Errorf("hung tap: %q; want it to say to observe before repeating", r.Text)
	}
	h.OK("phone_observe", with(), "")
}

// TestPersonStopEndsHungCall: the person's `pinky stop` ends an agent's
// call that waits on a hung driver (a read in phone_connect, a tap) or on
// the person's approval within a couple of seconds, while the driver still
// hangs (it is not restarted); the agent gets stopped.
func TestPersonStopEndsHungCall(t *testing.T) {
	tests := []struct {
		name   string
		faults string
		// start leads the agent to the call that will wait, and sends it.
		start func(t *testing.T, e *e2e.Env, h *e2e.Host) int
		// waiting reports that the call now waits.
		waiting func(e *e2e.Env) bool
		text    string // in the answer
	}{
		{
			name: "connect on a hung screen", faults: "hang=screen",
			start: func(t *testing.T, e *e2e.Env, h *e2e.Host) int {
				return h.Request("tools/call", map[string]any{"name": "phone_connect", "arguments": e2e.OnDevice(hungPhone)("task", "connect to a hung phone")})
			},
			waiting: hungLeased, text: "do not use it for this task",
		},
		{
			name: "hung tap", faults: "hang=tap",
			start: func(t *testing.T, e *e2e.Env, h *e2e.Host) int {
				e.Unlock(hungPhone)
				h.OK("phone_connect", e2e.OnDevice(hungPhone)("task", "tap a hung phone"), "Pixel Launcher")
				return h.Request("tools/call", map[string]any{"name": "phone_tap", "arguments": e2e.OnDevice(hungPhone)("text", "Messages")})
			},
			waiting: hungLeased, text: "may or may not have happened",
		},
		{
			name: "approval", faults: "",
			start: func(t *testing.T, e *e2e.Env, h *e2e.Host) int {
				e.Unlock(hungPhone)
				with := e2e.OnDevice(hungPhone)
				h.OK("phone_connect", with("task", "reply to Ben"), "Pixel Launcher")
				h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
				h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
				h.OK("phone_type", with("field", "Text message", "text", "on my way"), "on my way")
				return h.Request("tools/call", map[string]any{"name": "phone_tap", "arguments": with("text", "Send")})
			},
			waiting: func(e *e2e.Env) bool {
				var cards []approval.Card
				e.JSON(&cards, "approvals")
				return len(cards) == 1
			},
			text: "do not use it for this task",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Long deadlines: only the stop can end the wait in time.
			e, h, _ := hungDaemon(t, tt.faults, "read=60s,act=60s")
			id := tt.start(t, e, h)
			e.Eventually("the call waits", func() bool { return tt.waiting(e) })
			time.Sleep(500 * time.Millisecond) // the call is now inside the driver, or the wait
			stopped := time.Now()
			if out, errs, code := e.Run("stop", hungPhone); code != 0 || !strings.Contains(out, "stopped 1") {
				t.Fatalf("pinky stop: exit %d: %s%s", code, out, errs)
			}
			r := h.Response(id, 5*time.Second) // fails the test when the call still waits
			took := time.Since(stopped)
			text := fmt.Sprint(r)
			if !strings.Contains(text, "stopped:") || !strings.Contains(text, tt.text) {
				t.Errorf("answer after the stop: %s; want stopped, saying %q", text, tt.text)
			}
			if took > 3*time.Second {
				t.Errorf("the call returned %s after the stop; want within a couple of seconds", took)
			}
			if d := e.Driver("sim"); d.Restarts != 0 {
				t.Errorf("driver %+v: it was restarted, so the stop is not what ended the call", d)
			}
			if tt.name == "approval" {
				var cards []approval.Card
				e.JSON(&cards, "approvals", "--all")
				if len(cards) != 1 || cards[0].Status != approval.Denied {
					t.Errorf("cards after the stop: %+v; want the one card denied", cards)
				}
			}
		})
	}
}

// hungLeased reports whether an agent holds the hung phone.
func hungLeased(e *e2e.Env) bool {
	var st api.Status
	e.JSON(&st, "status")
	return len(st.Leases) == 1 && st.Leases[0].Device == hungPhone
}

// TestDriverMissingDeadlinesIsRestarted: a driver whose calls keep missing
// their deadline is restarted by the host, which says so in its log and in
// `pinky drivers`; the phone comes back, and the agent's lease with it.
// hang_mark makes the hang stop in the restarted process, as a restart
// cures a wedged driver.
func TestDriverMissingDeadlinesIsRestarted(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "hung")
	const read = time.Second
	e, h, logs := hungDaemon(t, "hang=screen,hang_mark="+mark, fmt.Sprintf("read=%s,misses=3,window=1m", read))
	with := e2e.OnDevice(hungPhone)
	r, _ := hungCall(h, "phone_connect", with("task", "use a phone whose driver hangs"), read+5*time.Second)
	hungCode(t, "connect", r, "timeout")
	// The agent reads on; the third miss (its reads, or other parts of the
	// gateway reading the same phone) makes the host restart the driver,
	// and the phone comes back.
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := h.CallWithin("phone_observe", with(), read+5*time.Second)
		if !r.IsError {
			break
		}
		if !regexp.MustCompile(`^(driver_restarting|device_offline|timeout):`).MatchString(r.Text) {
			t.Fatalf("observe while the driver restarts: %q; want driver_restarting, device_offline or timeout", r.Text)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the phone did not come back within 30 s: last %q; driver %+v", r.Text, e.Driver("sim"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	d := e.Driver("sim")
	if d.State != "running" || d.Restarts != 1 || !strings.Contains(d.LastError, "missed their deadlines") {
		t.Errorf("pinky drivers: %+v; want sim running, restarted once, its last error saying why", d)
	}
	if !strings.Contains(logs.String(), "driver keeps missing its deadlines") {
		t.Errorf("the daemon's log does not say why it restarted the driver:\n%s", logs)
	}
}
