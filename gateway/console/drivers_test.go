package console

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// adbMissing is the Android driver's check when adb is not installed, as
// the daemon's drivers.checks gives it.
var adbMissing = map[string]any{
	"driver": "android", "check": "adb", "ok": false,
	"detail": "adb is not installed, and no adb server answers at 127.0.0.1:5037",
	"fix":    "install Android's platform tools (Debian/Ubuntu: apt install adb)",
}

// TestBrowserDriverProblems: the phones page says, under each driver that
// needs something, what is wrong and what to do, as `pinky doctor` does: a
// running driver's failing checks, and why a driver does not run; a driver
// with nothing wrong and a check that passes are not shown. Once the check
// passes, the driver's note goes away.
func TestBrowserDriverProblems(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.drivers = []map[string]any{
		{"name": "android", "state": "running", "devices": 0},
		{"name": "ios", "state": "failed", "devices": 0, "last_error": "exit status 1", "stderr": []string{"panic: no phones file"}},
		{"name": "sim", "state": "running", "devices": 1},
	}
	f.checks = []map[string]any{
		adbMissing,
		{"driver": "android", "check": "scrcpy", "ok": true, "detail": "scrcpy server found"},
		{"driver": "ios", "check": "wda ana", "ok": false, "detail": "WebDriverAgent not answering", "fix": "start WebDriverAgent"},
		{"driver": "sim", "check": "world", "ok": true, "detail": "two virtual phones"},
	}
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const d = document.getElementById('drivers'); return !!d && !d.hidden; })()`)); err != nil {
		t.Fatalf("the page never showed the drivers' problems: %v", err)
	}
	tests := []struct {
		driver      string
		want, wantN []string // what the driver's note says, and does not
	}{
		{"android", []string{"android", "adb is not installed, and no adb server answers at 127.0.0.1:5037",
			"To fix: install Android's platform tools (Debian/Ubuntu: apt install adb)"}, []string{"scrcpy server found"}},
		{"ios", []string{"failed: exit status 1", "panic: no phones file", "pinky driver restart ios"}, []string{"WebDriverAgent"}},
	}
	for _, tt := range tests {
		t.Run(tt.driver, func(t *testing.T) {
			text, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(
				`(() => { const d = document.getElementById(%q); return d ? d.textContent : ''; })()`, "driver-"+tt.driver)))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("the %s driver's note %q does not say %q", tt.driver, text, w)
				}
			}
			for _, w := range tt.wantN {
				if strings.Contains(text, w) {
					t.Errorf("the %s driver's note %q says %q; want it left out", tt.driver, text, w)
				}
			}
		})
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#drivers .driver').length`)); n != 2 {
		t.Errorf("got %d drivers' notes; want 2 (android and ios, not sim)", n)
	}

	f.mu.Lock()
	f.drivers = f.drivers[:1]
	f.checks = []map[string]any{{"driver": "android", "check": "adb", "ok": true, "detail": "the adb server answers"}}
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "device.added", "device": "d1"})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('drivers').hidden`)); err != nil {
		t.Errorf("the drivers' notes stayed after adb was found: %v", err)
	}
}

// TestBrowserNoPhones: with no phone at all the page says how to connect
// one (USB debugging and its prompt, `pinky ios add`), not to use virtual
// phones; with a phone it does not.
func TestBrowserNoPhones(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.devices = nil
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	text, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const p = document.getElementById('no-phones'); return !p.hidden && p.textContent; })()`))
	if err != nil {
		t.Fatalf("the page never said that there are no phones: %v", err)
	}
	text = strings.Join(strings.Fields(text), " ")
	for _, want := range []string{"USB debugging", `“Allow USB debugging?”`, "pinky ios add NAME --wda", "pinky doctor"} {
		if !strings.Contains(text, want) {
			t.Errorf("no phones: %q does not say %q", text, want)
		}
	}
	if strings.Contains(strings.ToLower(text), "virtual") {
		t.Errorf("no phones: %q suggests virtual phones; want how to connect a real one", text)
	}

	f.mu.Lock()
	f.devices = newFakeDaemon().devices
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "device.added", "device": "d1"})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('no-phones').hidden && !!document.getElementById('phone-d1')`)); err != nil {
		t.Errorf("the how-to stayed after a phone came: %v", err)
	}
}
