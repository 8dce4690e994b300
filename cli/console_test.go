package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// mirrorPixels is an expression giving a fingerprint of the mirror's
// picture: a grid of its pixels.
const mirrorPixels = `(() => {
	const c = document.getElementById('mirror-sim-android-1');
	const g = c.getContext('2d'), out = [];
	for (let y = 0.05; y < 1; y += 0.1) for (let x = 0.05; x < 1; x += 0.1) {
		const p = g.getImageData(Math.floor(x * c.width), Math.floor(y * c.height), 1, 1).data;
		out.push(p[0] >> 4, p[1] >> 4, p[2] >> 4);
	}
	return out.join(',');
})()`

// clickPhone clicks the mirror at a point of the phone's screen (in its
// 1080x2400 pixels).
func clickPhone(t *testing.T, ctx context.Context, x, y float64) {
	t.Helper()
	r := e2e.JS[[]float64](t, ctx, `(() => { const b = document.getElementById('mirror-sim-android-1').getBoundingClientRect(); return [b.left, b.top, b.width, b.height]; })()`)
	e2e.Do(t, ctx, chromedp.MouseClickXY(r[0]+r[2]*x/1080, r[1]+r[3]*y/2400))
}

// TestConsoleInChromium drives the web console of a real daemon in real
// headless Chromium: login through the one-time link, the live mirror,
// take over, an approval, the history's recording, and the export from
// disk.
func TestConsoleInChromium(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	e.Daemon("--sim", "--console", "127.0.0.1:0")
	e.Unlock("sim-android-1")
	ctx := e2e.Chromium(t)

	link, errs, code := e.Run("open", "--no-browser")
	link = strings.TrimSpace(link)
	if code != 0 || !strings.HasPrefix(link, "http://127.0.0.1:") {
		t.Fatalf("pinky open --no-browser: exit %d, %q %s", code, link, errs)
	}
	base := link[:strings.Index(link, "/login")]

	// Without --no-browser, pinky open also opens the link in the browser.
	opened := filepath.Join(t.TempDir(), "opened")
	browserScript := filepath.Join(t.TempDir(), "browser")
	if err := os.WriteFile(browserScript, []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := e.Cmd("open")
	c.Env = append(c.Env, "PINKY_BROWSER="+browserScript)
	printed, err := c.Output()
	if err != nil {
		t.Fatalf("pinky open: %v", err)
	}
	e.Eventually("the browser gets the link", func() bool {
		b, _ := os.ReadFile(opened)
		return len(b) > 0 && string(b) == string(printed) && strings.HasPrefix(string(b), base+"/login?t=") && string(b) != link+"\n"
	})

	// Nothing works without the session cookie.
	for _, path := range []string{"/", "/api/call", "/ws/mirror/sim-android-1", "/still/sim-android-1", "/media/x", "/recordings/x.mp4"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without the cookie: %d, want 401", path, res.StatusCode)
		}
	}
	e2e.Do(t, ctx, chromedp.Navigate(base+"/"))
	e2e.WaitJS(t, ctx, "the page without a session says how to log in", `document.body.innerText.includes('pinky open')`)

	// The one-time link logs in; the mirror shows the phone.
	e2e.Do(t, ctx, chromedp.Navigate(link))
	e2e.WaitJS(t, ctx, "the mirror shows frames", `document.getElementById('mirror-sim-android-1') && +document.getElementById('mirror-sim-android-1').dataset.frames > 0`)
	before := e2e.JS[string](t, ctx, mirrorPixels)

	// An agent changes the phone: the mirror's picture changes.
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice("sim-android-1")
	h.OK("phone_connect", dev("task", "console: look at notes"), "Pixel Launcher")
	h.OK("phone_tap", dev("text", "Settings"), "")
	e2e.WaitJS(t, ctx, "the mirror shows the phone's new screen", mirrorPixels+` !== `+jsString(before))
	h.OK("phone_key", dev("key", "home"), "")

	// Take over: a click on the mirror taps the virtual phone.
	e2e.Do(t, ctx, chromedp.Click(chromedp.ID("takeover-sim-android-1")))
	e2e.WaitJS(t, ctx, "the phone is held", `document.getElementById('phone-sim-android-1').classList.contains('held')`)
	e.Eventually("the daemon knows the person has the phone", func() bool {
		out, _, _ := e.Run("status")
		return strings.Contains(out, "waiting for you")
	})
	clickPhone(t, ctx, 668, 535) // the Notes icon
	e.Eventually("the click opened Notes on the virtual phone", func() bool {
		var sc struct{ App struct{ ID string } }
		e.JSON(&sc, "driver", "screen", "sim-android-1")
		return sc.App.ID == "com.google.android.keep"
	})
	e2e.Do(t, ctx, chromedp.Click(chromedp.ID("handback-sim-android-1")))
	e2e.WaitJS(t, ctx, "the phone is back with the agent", `!document.getElementById('phone-sim-android-1').classList.contains('held')`)

	// An approval: the card appears while the agent's call blocks, and Allow releases it.
	h.OK("phone_key", dev("key", "home"), "")
	done := make(chan string, 1)
	go func() {
		text, isErr := h.Tool("phone_open_url", dev("url", "https://example.com/"))
		done <- fmt.Sprintf("%v %s", isErr, text)
	}()
	e2e.WaitJS(t, ctx, "an approval card", `document.querySelector('article.approval')`)
	cardID := e2e.JS[string](t, ctx, `document.querySelector('article.approval').id.replace('approval-', '')`)
	select {
	case r := <-done:
		t.Fatalf("the agent's call returned before the person answered: %s", r)
	default:
	}
	e2e.Do(t, ctx, chromedp.Click(chromedp.ID("allow-"+cardID)))
	select {
	case r := <-done:
		if !strings.HasPrefix(r, "false") {
			t.Errorf("the agent's call after Allow: %s", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Allow did not release the agent's call")
	}
	h.OK("phone_release", dev(), "")

	// The history plays the task's recording; a step mark seeks it.
	task := e.lastTask(t)
	var detail api.TaskDetail
	covers := func() bool {
		e.JSON(&detail, "history", "show", task.ID)
		return detail.Recording && len(detail.StepList) > 0 && detail.RecordingMS >= detail.StepList[len(detail.StepList)-1].VideoAtMS
	}
	e.EventuallyOr("the task's recording, with every step mark inside it", covers, func() string {
		marks := []string{}
		for _, st := range detail.StepList {
			marks = append(marks, fmt.Sprintf("%s@%d", st.Tool, st.VideoAtMS))
		}
		return fmt.Sprintf("recording %v, %d ms; steps %v", detail.Recording, detail.RecordingMS, marks)
	})
	e2e.Do(t, ctx, chromedp.Navigate(base+"/#history/"+task.ID))
	e2e.WaitJS(t, ctx, "the recording loads", `(v => v && v.readyState >= 1 && v.duration > 0)(document.getElementById('recording'))`)
	seek(t, ctx, "#task-detail .step-mark")

	// The export opens from disk and shows the steps and the video.
	dir := filepath.Join(t.TempDir(), "report")
	if _, errs, code := e.Run("export", task.ID, dir); code != 0 {
		t.Fatalf("pinky export: %s", errs)
	}
	e2e.Do(t, ctx, chromedp.Navigate("file://"+filepath.Join(dir, "index.html")))
	e2e.WaitJS(t, ctx, "the report shows the steps", `document.body.innerText.includes('phone_open_url') && document.body.innerText.includes('console: look at notes')`)
	e2e.WaitJS(t, ctx, "the report's video loads", `(v => v && v.readyState >= 1 && v.duration > 0)(document.getElementById('recording'))`)
	seek(t, ctx, ".step-mark")
}

// seek clicks the last step mark (sel) and checks that the video went to
// its time.
func seek(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	at := e2e.JS[float64](t, ctx, `(() => { const m = [...document.querySelectorAll('`+sel+`')]; const l = m[m.length - 1]; l.click(); return +l.dataset.at; })()`)
	if at <= 0 {
		t.Fatalf("the last step mark is at %v s; the task lasted seconds", at)
	}
	e2e.WaitJS(t, ctx, fmt.Sprintf("the video is at the mark's %.3f s", at),
		fmt.Sprintf(`Math.abs(document.getElementById('recording').currentTime - %f) < 0.25`, at))
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
