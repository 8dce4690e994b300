package console

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// missingRow is one thing a phone card says its phone lacks.
type missingRow struct {
	Capability string // data-capability
	Cap        string // span.cap
	Reason     string // span.reason, "" when absent
	Fix        string // span.fix, "" when absent
	Text       string // the whole line
}

// missingRows reads the list of what phone id lacks, once cond (a JS
// expression on ul, the list) holds: nil while the list is hidden.
func missingRows(t *testing.T, ctx context.Context, id, cond string) []missingRow {
	t.Helper()
	rows, err := chromedp.Run(ctx, chromedp.Poll[*[]missingRow](fmt.Sprintf(`(() => {
		const ul = document.getElementById('missing-%s');
		if (!ul || !(%s)) return null;
		if (ul.hidden) return [];
		const text = (li, sel) => { const e = li.querySelector(sel); return e ? e.textContent : ''; };
		return [...ul.querySelectorAll('li.missing-cap')].map((li) => ({Capability: li.dataset.capability,
			Cap: text(li, '.cap'), Reason: text(li, '.reason'), Fix: text(li, '.fix'), Text: li.textContent}));
	})()`, id, cond)))
	if err != nil {
		t.Fatalf("the card of %s never showed what it lacks (%s): %v", id, cond, err)
	}
	if rows == nil || len(*rows) == 0 {
		return nil
	}
	return *rows
}

// TestBrowserPhoneMissing: a phone card lists what the phone lacks, each
// with why and how to enable it, with the phone's text made safe to read;
// a phone that lacks nothing shows no list, and the list follows the phone
// when it gains some of what it lacked.
func TestBrowserPhoneMissing(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.devices = append(f.devices, map[string]any{
		"id": "d2", "driver": "android", "online": true, "name": "Pixel", "platform": "android", "state": "online",
		"missing": []map[string]any{
			{"capability": "video", "reason": "no scrcpy server found", "fix": "install scrcpy 3.x\u202e<b>x</b>"},
			{"capability": "displays", "reason": "Android 12 has none"},
			{"capability": "teleport", "fix": "wait"},
		},
	})
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	want := []missingRow{
		{"video", "No live video", "no scrcpy server found", "install scrcpy 3.x‹U+202E›<b>x</b>",
			"No live video: no scrcpy server found. To enable it: install scrcpy 3.x‹U+202E›<b>x</b>"},
		{"displays", "No background displays", "Android 12 has none", "", "No background displays: Android 12 has none"},
		{"teleport", "No teleport", "", "wait", "No teleport. To enable it: wait"},
	}
	if d := cmp.Diff(want, missingRows(t, ctx, "d2", "!ul.hidden")); d != "" {
		t.Errorf("d2's card (-want +got):\n%s", d)
	}
	if got := missingRows(t, ctx, "d1", "true"); got != nil {
		t.Errorf("d1 lacks nothing, yet its card shows %+v", got)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#missing-d2 b').length`)); n != 0 {
		t.Errorf("the phone's text made %d elements; want it shown as text", n)
	}

	// scrcpy is installed: the phone says it lacks only displays now.
	f.mu.Lock()
	f.devices[1] = map[string]any{"id": "d2", "driver": "android", "online": true, "name": "Pixel", "platform": "android", "state": "online",
		"missing": []map[string]any{{"capability": "displays", "reason": "Android 12 has none"}}}
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "device.changed", "device": "d2"})
	if d := cmp.Diff(want[1:2], missingRows(t, ctx, "d2", "ul.children.length === 1")); d != "" {
		t.Errorf("d2's card after scrcpy came (-want +got):\n%s", d)
	}
}
