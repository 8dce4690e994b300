package console

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// spyNotifications puts a stand-in for the browser's Notification API
// in the page (headless Chromium shows none), granted or not, recording
// what the console shows and whether it asked.
const spyNotifications = `(() => {
	window.__notes = []; window.__asked = 0;
	const N = function (title, opts) { window.__notes.push({title, body: opts.body, tag: opts.tag}); this.close = () => {}; };
	N.permission = %q;
	N.requestPermission = () => { window.__asked++; return Promise.resolve('granted'); };
	window.Notification = N;
	return true;
})()`

// TestBrowserNotifiesANewApproval: an approval that opens while the
// console is open shows a browser notification with the card's sentence
// and phone; the cards there when the page opened do not.
func TestBrowserNotifiesANewApproval(t *testing.T) {
	f := withApproval()
	ctx, _ := startBrowserConsole(t, f, newFakeScreen(red), Config{})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.getElementById('approval-ap1')`)); err != nil {
		t.Fatalf("the first card never showed: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](strings.Replace(spyNotifications, "%q", `"granted"`, 1))); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.approvals = append(f.approvals, map[string]any{
		"id": "ap2", "agent": "codex", "device": "d1", "tool": "tap", "commit": "send_message", "status": "pending",
		"summary": `Send "See you Friday" to Ben Okafor (in Messages)`, "opened_at": time.Now(), "expires_at": time.Now().Add(time.Hour),
	})
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "approval.opened", "device": "d1", "agent": "codex"})
	type note struct{ Title, Body, Tag string }
	notes, err := chromedp.Run(ctx, chromedp.Poll[[]note](`window.__notes.length ? window.__notes : null`))
	if err != nil {
		t.Fatalf("no browser notification for the new approval: %v", err)
	}
	want := note{Title: "Pinky: codex asks you", Body: `Send "See you Friday" to Ben Okafor (in Messages) on d1`, Tag: "pinky-approval-ap2"}
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notifications %+v; want only %+v (none for the card already there)", notes, want)
	}
}

// TestBrowserAsksToNotifyOnAClick: the console asks the browser whether
// it may notify at the person's first click, not before.
func TestBrowserAsksToNotifyOnAClick(t *testing.T) {
	ctx, _ := startBrowserConsole(t, newFakeDaemon(), newFakeScreen(red), Config{})
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](strings.Replace(spyNotifications, "%q", `"default"`, 1))); err != nil {
		t.Fatal(err)
	}
	if asked, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`window.__asked`)); asked != 0 {
		t.Errorf("asked %d times before any click", asked)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("nav-history"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.__asked === 1`)); err != nil {
		t.Errorf("the first click did not ask to notify: %v", err)
	}
}
