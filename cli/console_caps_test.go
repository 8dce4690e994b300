package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// TestConsoleMirrorWhenVideoComes: a phone that lacks video when the
// console opens (an iPhone whose broadcast has not connected yet) shows
// pictures in its mirror; once it serves video, its device update turns
// the mirror into live video at once, not at the mirror's next retry
// (which has backed off to seconds by then).
func TestConsoleMirrorWhenVideoComes(t *testing.T) {
	e := newEnv(t)
	// Long enough that the mirror's retries have backed off well past the
	// couple of seconds the test allows once the video comes.
	const lack = 20 * time.Second
	e.Extra = append(e.Extra, "PINKY_SIM_FAULTS=lack=sim-android-1:video@0s/"+lack.String())
	e.Daemon("--sim", "--console", "127.0.0.1:0")
	ctx := e2e.Chromium(t)
	link, errs, code := e.Run("open", "--no-browser")
	link = strings.TrimSpace(link)
	if code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:") {
		t.Fatalf("pinky open --no-browser: exit %d, %q %s", code, link, errs)
	}
	e2e.Do(t, ctx, chromedp.Navigate(link))
	const lacksVideo = `!!document.querySelector('#missing-sim-android-1 li[data-capability="video"]')`
	const frames = `+((document.getElementById('mirror-sim-android-1') || {dataset: {}}).dataset.frames || 0)`
	const stills = `+((document.getElementById('mirror-sim-android-1') || {dataset: {}}).dataset.stills || 0)`
	e2e.WaitJS(t, ctx, "the card says the phone lacks video", lacksVideo)
	// The page notes when its card stops saying so and when the first
	// frame shows, in its own clock.
	e2e.JS[bool](t, ctx, `(() => {
		const t = setInterval(() => {
			if (window.videoBackAt === undefined && !(`+lacksVideo+`)) window.videoBackAt = performance.now();
			if (window.firstFrameAt === undefined && `+frames+` > 0) window.firstFrameAt = performance.now();
			if (window.videoBackAt !== undefined && window.firstFrameAt !== undefined) clearInterval(t);
		}, 20);
		return true;
	})()`)
	e2e.WaitJS(t, ctx, "the mirror shows pictures while the phone lacks video", stills+` > 0`)
	if !e2e.JS[bool](t, ctx, lacksVideo) || e2e.JS[int](t, ctx, frames) > 0 {
		t.Fatal("the phone served video before the mirror showed a picture: the test proves nothing (a slow machine?)")
	}
	// The lack ends lack after the daemon started; WaitJS waits 30 s.
	e2e.WaitJS(t, ctx, "the card says the phone serves video", `window.videoBackAt !== undefined`)
	e2e.WaitJS(t, ctx, "the mirror shows frames", `window.firstFrameAt !== undefined`)
	after := time.Duration(e2e.JS[float64](t, ctx, `window.firstFrameAt - window.videoBackAt`) * float64(time.Millisecond))
	t.Logf("the first frame came %s after the card said the phone serves video", after.Round(time.Millisecond))
	// A generous bound: the mirror's retry after that long a lack comes
	// 7 s or more after the video does.
	if after > 3*time.Second {
		t.Errorf("the first frame came %s after the card said the phone serves video; want it within a couple of seconds (the mirror reopens on the update)", after.Round(time.Millisecond))
	}
}
