package console

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// TestBrowserCapsViews: a phone card says, apart from what the phone lacks
// and how to enable it, what its driver does not offer at all; a phone
// that lacks nothing says neither. The drivers' list shows what each
// driver offers and how many of its phones lack some of it, with a link to
// each such phone's card.
func TestBrowserCapsViews(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.devices = append(f.devices, map[string]any{
		"id": "d2", "driver": "android", "online": true, "name": "Pixel", "platform": "android", "state": "online",
		"missing":     []map[string]any{{"capability": "video", "reason": "no scrcpy server found", "fix": "install scrcpy 3.x"}},
		"not_offered": []string{"notifications", "teleport\u202e"},
	}, map[string]any{
		"id": "d3", "driver": "android", "online": true, "name": "Tablet", "platform": "android", "state": "online",
	})
	f.drivers = []map[string]any{
		{"name": "sim", "state": "running", "devices": 1, "capabilities": []string{"input", "video"}},
		{"name": "android", "state": "running", "devices": 2, "capabilities": []string{"input", "video", "apps"}},
	}
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	type card struct {
		Hidden bool
		Caps   string // data-capabilities
		Text   string
	}
	notOffered := func(id string) card {
		t.Helper()
		c, err := chromedp.Run(ctx, chromedp.Poll[*card](`(() => {
			const p = document.getElementById('not-offered-`+id+`');
			return p ? {Hidden: p.hidden, Caps: p.dataset.capabilities || '', Text: p.textContent} : null;
		})()`))
		if err != nil || c == nil {
			t.Fatalf("the card of %s never showed: %v", id, err)
		}
		return *c
	}
	waitJS(t, ctx, "d2's card says what its driver does not offer", `!document.getElementById('not-offered-d2').hidden`)
	if d := cmp.Diff(card{false, "notifications,teleport\u202e", "Its driver (android) does not offer: notifications, teleport‹U+202E›."}, notOffered("d2")); d != "" {
		t.Errorf("d2's card (-want +got):\n%s", d)
	}
	for _, id := range []string{"d1", "d3"} {
		if got := notOffered(id); !got.Hidden || got.Text != "" {
			t.Errorf("%s's driver offers all it lacks, yet its card says %+v", id, got)
		}
	}

	type driver struct {
		Caps, Lacking, Phones string
		Links                 []string
		Text                  string
	}
	waitJS(t, ctx, "the drivers' list", `!document.getElementById('driver-caps').hidden && !!document.getElementById('driver-caps-android')`)
	drivers, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]driver](`(() => {
		const out = {};
		for (const li of document.querySelectorAll('#driver-caps li.driver-caps')) {
			const s = li.querySelector('.lacking');
			out[li.dataset.driver] = {Caps: li.querySelector('.caps').dataset.capabilities, Lacking: s.dataset.lacking, Phones: s.dataset.phones,
				Links: [...li.querySelectorAll('a.phone-link')].map((a) => a.getAttribute('href')), Text: li.textContent};
		}
		return out;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]driver{
		"sim":     {"input,video", "0", "1", []string{}, "sim: offers tap and type, live video. 1 phones, none lacking any of it"},
		"android": {"input,video,apps", "1", "2", []string{"#phone-d2"}, "android: offers tap and type, live video, the list of apps. 1 of its 2 phones lack some of it: Pixel"},
	}
	if d := cmp.Diff(want, drivers); d != "" {
		t.Errorf("the drivers' list (-want +got):\n%s", d)
	}
	// The link leads to the card, on the phones page.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(document.querySelector('#driver-caps-android a.phone-link').click(), true)`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the link leads to d2's card", `location.hash === '#phone-d2' && !document.getElementById('page-phones').hidden`)
}

// waitJS waits until the JS expression expr is true in the page; while
// it throws (an element not there yet), it is not.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { try { return !!(`+expr+`); } catch (e) { return false; } })()`)); err != nil {
		t.Fatalf("%s: never true (%s): %v", what, expr, err)
	}
}
