package cli_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestConsoleFarm drives the web console of a gateway whose phone is on
// another machine (a `pinky host --sim` on another loopback address) in
// real headless Chromium: the phone's card names its host and the host's
// state, the live mirror shows the remote phone's screen, take over and
// hand back work on it, and once the host is killed the card says the host
// is offline.
func TestConsoleFarm(t *testing.T) {
	const id = "sim-android-1"
	// newFarm turns the console off; this gateway has it on.
	f := &farm{gw: newEnv(t), addr: freeAddr(t, "127.0.0.2")}
	f.args = []string{"--console", "127.0.0.1:0", "--hosts-listen", f.addr}
	f.start()
	closet := newEnv(t)
	host := runHost(t, closet, "--gateway", f.addr, "--pair", f.pair(t, "closet"))
	f.online(t, id, "closet")
	f.gw.Unlock(id)
	version := f.hostState(t, "closet").Version
	if version == "" {
		t.Fatalf("closet once linked: %+v; want its version", f.hostState(t, "closet"))
	}

	ctx := e2e.Chromium(t)
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.pinky ? window.pinky.log : []`))
			t.Logf("page log:\n%s", strings.Join(logs, "\n"))
		}
	})
	link, errs, code := f.gw.Run("open", "--no-browser")
	link = strings.TrimSpace(link)
	if code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:") {
		t.Fatalf("pinky open --no-browser: exit %d, %q %s", code, link, errs)
	}
	e2e.Do(t, ctx, chromedp.Navigate(link))

	// The card names the host, online, with its version; the mirror shows
	// the remote phone's screen.
	e2e.WaitJS(t, ctx, "the phone's card shows its host online", `(el => el && !el.hidden && el.dataset.state === 'online' && el.textContent === `+
		jsString("closet · online · version "+version)+`)(document.getElementById('host-`+id+`'))`)
	e2e.WaitJS(t, ctx, "the remote phone's mirror shows frames", `+document.getElementById('mirror-`+id+`').dataset.frames > 0`)
	before := e2e.JS[string](t, ctx, mirrorPixels)

	// An agent on the gateway has the phone; the person takes it over, and
	// a click on the mirror taps the remote phone.
	h := f.gw.StdioHost()
	h.Initialize()
	defer h.Close()
	dev := e2e.OnDevice(id)
	h.OK("phone_connect", dev("task", "console: the closet's phone"), "Pixel Launcher")
	e2e.Do(t, ctx, chromedp.Click(chromedp.ID("takeover-"+id)))
	e2e.WaitJS(t, ctx, "the phone is held", `document.getElementById('phone-`+id+`').classList.contains('held')`)
	f.gw.Eventually("the gateway knows the person has the phone", func() bool {
		out, _, _ := f.gw.Run("status")
		return strings.Contains(out, "waiting for you")
	})
	h.Fails("phone_tap", dev("text", "Settings"), "person_in_control")
	clickPhone(t, ctx, 668, 535) // the Notes icon
	f.gw.Eventually("the click opened Notes on the remote phone", func() bool {
		var sc struct{ App struct{ ID string } }
		f.gw.JSON(&sc, "driver", "screen", id)
		return sc.App.ID == "com.google.android.keep"
	})
	e2e.WaitJS(t, ctx, "the mirror shows the remote phone's new screen", mirrorPixels+` !== `+jsString(before))
	e2e.Do(t, ctx, chromedp.Click(chromedp.ID("handback-"+id)))
	e2e.WaitJS(t, ctx, "the phone is back with the agent", `!document.getElementById('phone-`+id+`').classList.contains('held')`)
	h.OK("phone_key", dev("key", "home"), "")

	// kill -9 of the host: the card says the host is offline, since when.
	host.kill9(t)
	e2e.WaitJS(t, ctx, "the phone's card shows its host offline", `(el => el && el.dataset.state === 'offline' && el.classList.contains('down') &&
		el.textContent.startsWith('closet · offline since ') && el.textContent.endsWith(`+jsString(" · version "+version)+`))(document.getElementById('host-`+id+`'))`)
	e2e.WaitJS(t, ctx, "the phone's card is offline", `document.getElementById('phone-`+id+`').classList.contains('offline')`)
	if hs := f.hostState(t, "closet"); hs.State != "offline" || hs.Since.IsZero() {
		t.Fatalf("closet after kill -9: %+v; want offline since a time", hs)
	}
}
