package android

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestADBProblem(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"not installed", fmt.Errorf("%w: install it", adb.ErrADBNotInstalled), "adb is not installed, and no adb server answers at tcp:127.0.0.1:5037 / apt install adb"},
		{"no server", fmt.Errorf("%w at tcp:127.0.0.1:5037", adb.ErrServerNotRunning), "no adb server answers at tcp:127.0.0.1:5037 / start one with `adb start-server`"},
		{"other", errors.New("reset by peer"), "does not answer / adb kill-server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problem, fix := adbProblem(tt.err, "tcp:127.0.0.1:5037")
			wantProblem, wantFix, _ := strings.Cut(tt.want, " / ")
			if !strings.Contains(problem, wantProblem) || !strings.Contains(fix, wantFix) {
				t.Errorf("got %q, fix %q; want %q, fix %q", problem, fix, wantProblem, wantFix)
			}
		})
	}
}

// jsonLines are the JSON lines logged into b.
func jsonLines(b *testkit.Buffer) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// checkLine returns the last line logged with check=name.
func checkLine(lines []map[string]any, name string) map[string]any {
	var last map[string]any
	for _, m := range lines {
		if m["check"] == name {
			last = m
		}
	}
	return last
}

// TestChecksWithoutADB: with no adb server and no adb to start one, the
// driver says so as its adb check, at WARN, before its first list is
// synced; and without a scrcpy server, its scrcpy check says how to get one.
func TestChecksWithoutADB(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	var logs testkit.Buffer
	d, err := New(Config{
		ADB:    adb.Options{Addr: addr, ADBPath: "/nonexistent/adb"},
		Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	synced := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
			if ev.Kind == sdk.DevicesSynced {
				close(synced)
			}
			return nil
		})
	}()
	select {
	case <-synced:
	case err := <-done:
		t.Fatalf("WatchDevices ended before its first sync: %v", err)
	}
	lines := jsonLines(&logs)
	a := checkLine(lines, CheckADB)
	if a == nil || a["level"] != "WARN" || !strings.HasPrefix(fmt.Sprint(a["msg"]), "adb is not installed") ||
		!strings.Contains(fmt.Sprint(a["fix"]), "install Android's platform tools") {
		t.Errorf("adb check: got %v; want a WARN that adb is not installed and how to install it", a)
	}
	s := checkLine(lines, CheckScrcpy)
	if s == nil || s["level"] != "WARN" || !strings.Contains(fmt.Sprint(s["fix"]), "install scrcpy") {
		t.Errorf("scrcpy check: got %v; want a WARN that says to install scrcpy", s)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchDevices: %v", err)
	}
}
