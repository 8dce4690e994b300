package console

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hostRow is what a phone card shows of the phone's host.
type hostRow struct {
	Shown bool   // the Host row and its label are visible
	Text  string // the row's text
	State string // its data-state
	Down  bool   // it has the class "down"
}

// hostRows reads every phone card's host row once the page has shown the
// hosts (the row of r1 has a state other than unknown).
func hostRows(t *testing.T, ctx context.Context, wantR1 string) map[string]hostRow {
	t.Helper()
	rows, err := chromedp.Run(ctx, chromedp.Poll[map[string]hostRow](fmt.Sprintf(`(() => {
		const r1 = document.getElementById('host-r1');
		if (!r1 || r1.dataset.state !== %q) return null;
		const out = {};
		for (const card of document.querySelectorAll('article.phone')) {
			const id = card.dataset.device, dd = document.getElementById('host-' + id);
			const label = document.getElementById('host-label-' + id);
			out[id] = {Shown: !dd.hidden && !label.hidden, Text: dd.textContent, State: dd.dataset.state || '',
				Down: dd.classList.contains('down')};
		}
		return out;
	})()`, wantR1)))
	if err != nil {
		t.Fatalf("the page never showed r1's host as %s: %v", wantR1, err)
	}
	return rows
}

// TestBrowserPhoneHosts: a phone on another machine shows the phone host
// that serves it and the host's state (online, or offline since when, and
// its version), with what the host sent made safe to read; a phone on this
// machine shows no host. When the host goes offline, the card says so.
func TestBrowserPhoneHosts(t *testing.T) {
	since := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.devices = append(f.devices,
		map[string]any{"id": "r1", "driver": "sim", "host": "closet", "online": true, "name": "Closet phone", "platform": "android", "state": "ready"},
		map[string]any{"id": "r2", "driver": "sim", "host": "mac", "online": false, "name": "Mac phone", "platform": "ios", "state": "offline"},
		map[string]any{"id": "r3", "driver": "sim", "host": "gone", "online": false, "name": "Unknown host's phone", "platform": "ios", "state": "offline"},
	)
	hosts := func(closet string) map[string]any {
		c := map[string]any{"name": "closet", "state": closet, "version": "0.9.0\u202e1", "devices": 1}
		if closet == "offline" {
			c["since"] = since
		}
		return map[string]any{"listen": "127.0.0.2:4778", "hosts": []map[string]any{
			c,
			{"name": "mac", "state": "offline", "since": since, "version": "1.2.0", "devices": 1},
		}}
	}
	f.hosts = hosts("online")
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	sinceText, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`new Date(%q).toLocaleString()`, since.Format(time.RFC3339))))
	if err != nil {
		t.Fatal(err)
	}

	check := func(t *testing.T, phase string, got map[string]hostRow, want map[string]hostRow) {
		t.Helper()
		for id, w := range want {
			t.Run(phase+"/"+id, func(t *testing.T) {
				if g := got[id]; g != w {
					t.Errorf("%s's host row: got %+v; want %+v", id, g, w)
				}
			})
		}
	}
	offlineCloset := hostRow{Shown: true, Text: "closet · offline since " + sinceText + " · version 0.9.0‹U+202E›1", State: "offline", Down: true}
	check(t, "closet online", hostRows(t, ctx, "online"), map[string]hostRow{
		"d1": {},
		"r1": {Shown: true, Text: "closet · online · version 0.9.0‹U+202E›1", State: "online"},
		"r2": {Shown: true, Text: "mac · offline since " + sinceText + " · version 1.2.0", State: "offline", Down: true},
		"r3": {Shown: true, Text: "gone", State: "unknown"},
	})

	// The host goes: its phone's card says it is offline, and since when.
	f.mu.Lock()
	f.hosts = hosts("offline")
	f.devices[1] = map[string]any{"id": "r1", "driver": "sim", "host": "closet", "online": false, "name": "Closet phone", "platform": "android", "state": "offline"}
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "device.changed", "device": "r1"})
	check(t, "closet offline", hostRows(t, ctx, "offline"), map[string]hostRow{"r1": offlineCloset, "d1": {}})
	if cls, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('phone-r1').classList.contains('offline')`)); !cls {
		t.Error("r1's card is not marked offline after its host went")
	}
}
