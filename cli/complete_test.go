package cli_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// complete runs cobra's hidden `pinky __complete ARGS…` (what the shell
// scripts run on a Tab) and returns the candidates' ids and the directive
// line. It fails the test on anything else on stdout.
func complete(t *testing.T, e *env, args ...string) (ids []string, directive string) {
	t.Helper()
	out, errs, code := e.Run(append([]string{"__complete"}, args...)...)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		t.Fatalf("pinky __complete %q: exit %d, stdout %q, stderr %q; want candidates and a directive", args, code, out, errs)
	}
	for _, l := range lines[:len(lines)-1] {
		id, _, _ := strings.Cut(l, "\t")
		if id == "" || strings.ContainsAny(id, " :") {
			t.Errorf("pinky __complete %q: candidate line %q is not an id", args, l)
		}
		ids = append(ids, id)
	}
	return ids, lines[len(lines)-1]
}

// noFiles is cobra's ShellCompDirectiveNoFileComp: the shell must not
// offer file names instead.
const noFiles = ":4"

// TestCompleteWithoutDaemon: with no daemon every completion offers
// nothing, with no error on stdout, and the shell is told not to offer
// files where ids belong.
func TestCompleteWithoutDaemon(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{
		{"takeover", ""}, {"approve", ""}, {"history", "show", ""}, {"driver", "restart", ""},
		{"history", "--device", ""}, {"export", ""},
	} {
		ids, dir := complete(t, e, args...)
		if len(ids) != 0 || dir != noFiles {
			t.Errorf("pinky __complete %q: got %q, %s; want nothing and %s", args, ids, dir, noFiles)
		}
	}
}

// TestCompleteFromDaemon: devices, drivers, tasks and a pending approval
// come from the running daemon, filtered by what is typed.
func TestCompleteFromDaemon(t *testing.T) {
	e := newEnv(t)
	// The approval stays pending while the test completes its id.
	e.Daemon("--sim", "--approval-wait", "60s")
	devices := []string{"sim-android-1", "sim-ios-1"}
	tests := []struct {
		name string
		args []string
		want []string
		dir  string
	}{
		{"takeover", []string{"takeover", ""}, devices, noFiles},
		{"take-over alias", []string{"take-over", ""}, devices, noFiles},
		{"handback", []string{"handback", ""}, devices, noFiles},
		{"unlock", []string{"unlock", ""}, devices, noFiles},
		{"stop", []string{"stop", ""}, devices, noFiles},
		{"driver screen", []string{"driver", "screen", ""}, devices, noFiles},
		{"pin set", []string{"pin", "set", ""}, devices, noFiles},
		{"a prefix", []string{"takeover", "sim-i"}, []string{"sim-ios-1"}, noFiles},
		{"no second device", []string{"takeover", "sim-android-1", ""}, nil, noFiles},
		{"history --device", []string{"history", "--device", ""}, devices, noFiles},
		{"history --device=", []string{"history", "--device=sim-a"}, []string{"sim-android-1"}, noFiles},
		{"policy check --device", []string{"policy", "check", "--device", ""}, devices, noFiles},
		{"policy check --commit", []string{"policy", "check", "--commit", "send_"}, []string{"send_message"}, noFiles},
		{"driver restart", []string{"driver", "restart", "s"}, []string{"sim"}, noFiles},
		{"driver run", []string{"driver", "run", "si"}, []string{"sim"}, noFiles},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ids, dir := complete(t, e, tt.args...)
			if !slices.Equal(ids, tt.want) || dir != tt.dir {
				t.Errorf("got %q, %s; want %q, %s", ids, dir, tt.want, tt.dir)
			}
		})
	}

	// An agent's task, and a tap on Send that waits for the person.
	e.Unlock("sim-android-1")
	h := e.StdioHost()
	h.Initialize()
	with := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", with("task", "reply to Ben"), "Pixel Launcher")
	h.OK("phone_launch", with("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", with("text", "Ben Okafor"), "Did you get the tickets?")
	h.OK("phone_type", with("field", "Text message", "text", "hello"), "hello")
	done := make(chan string, 1)
	go func() { text, _ := h.Tool("phone_tap", with("text", "Send")); done <- text }()
	var cards []api.Card
	e.Eventually("a card opens", func() bool {
		e.JSON(&cards, "approvals")
		return len(cards) == 1
	})
	var tasks []api.Task
	e.JSON(&tasks, "history")
	if len(tasks) != 1 {
		t.Fatalf("history: got %+v; want one task", tasks)
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
		dir  string
	}{
		{"approve", []string{"approve", ""}, []string{cards[0].ID}, noFiles},
		{"deny", []string{"deny", "ap_"}, []string{cards[0].ID}, noFiles},
		{"deny, another prefix", []string{"deny", "zz"}, nil, noFiles},
		{"history show", []string{"history", "show", ""}, []string{tasks[0].ID}, noFiles},
		{"export's first task", []string{"export", ""}, []string{tasks[0].ID}, noFiles},
		// After a task: another task or the folder, so files may follow.
		{"export's folder", []string{"export", tasks[0].ID, ""}, nil, ":0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ids, dir := complete(t, e, tt.args...)
			if !slices.Equal(ids, tt.want) || dir != tt.dir {
				t.Errorf("got %q, %s; want %q, %s", ids, dir, tt.want, tt.dir)
			}
		})
	}
	if _, errs, code := e.Run("deny", cards[0].ID); code != 0 {
		t.Errorf("deny: exit %d: %s", code, errs)
	}
	if text := <-done; !strings.HasPrefix(text, "denied:") {
		t.Errorf("the denied tap: %q", text)
	}
	// A decided approval is no longer offered.
	if ids, _ := complete(t, e, "approve", ""); len(ids) != 0 {
		t.Errorf("approve after the decision: got %q; want nothing", ids)
	}
}

// TestCompleteScripts: cobra's completion command writes a script for
// each shell, which calls back into __complete.
func TestCompleteScripts(t *testing.T) {
	e := newEnv(t)
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		out, errs, code := e.Run("completion", sh)
		if code != 0 || !strings.Contains(out, "__complete") || !strings.Contains(out, "pinky") {
			t.Errorf("pinky completion %s: exit %d, %d bytes, %q; want a script that calls __complete", sh, code, len(out), errs)
		}
	}
}
