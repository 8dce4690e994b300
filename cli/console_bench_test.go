package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// BenchmarkConsoleMirror measures the time from a change of a virtual
// phone's screen to the changed picture in the console's mirror, in real
// headless Chromium: the person, holding the phone, taps (Settings, then
// Home) through the daemon's local API, and the page notes when the
// mirror's pixels change. The time runs from the input's send to the page's
// change (both on this machine's clock, in ms), so it holds the driver's
// tap, the virtual phone's frame poll (every 100 ms) and encode, the hub,
// the WebSocket, and the decode and draw in the browser; ms-act is the tap
// alone (the input call's round trip).
func BenchmarkConsoleMirror(b *testing.B) {
	testdep.Need(b, "chromium")
	home, err := os.MkdirTemp("", "ph")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	d := exec.Command(e2e.Bin.Pinky, "daemon", "--sim", "--console", "127.0.0.1:0")
	d.Env = append(os.Environ(), "PINKY_HOME="+home, "XDG_RUNTIME_DIR=", "PATH=/usr/bin:/bin")
	if err := d.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Process.Signal(syscall.SIGTERM); d.Wait() })
	ctx := context.Background()
	var c *api.Client
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err = api.Dial(ctx, filepath.Join(home, "pinky.sock")); err == nil {
			var devs []api.Device
			if c.Call(ctx, api.MethodDevices, nil, &devs) == nil && len(devs) > 0 && devs[0].Online {
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			b.Fatal("the daemon did not list its phones within 10 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	defer c.Close()
	const dev = "sim-android-1"
	must := func(method string, params, out any) {
		b.Helper()
		if err := c.Call(ctx, method, params, out); err != nil {
			b.Fatalf("%s: %v", method, err)
		}
	}
	must(api.MethodUnlock, api.UnlockParams{Device: dev, PIN: "1234"}, nil)
	must(api.MethodTakeOver, api.DeviceParams{Device: dev}, nil)
	var link api.ConsoleLink
	must(api.MethodConsoleLink, nil, &link)

	page := e2e.Chromium(b)
	e2e.Do(b, page, chromedp.Navigate(link.URL))
	e2e.WaitJS(b, page, "the mirror shows frames", `+(document.getElementById('mirror-sim-android-1') || {dataset: {}}).dataset.frames > 0`)

	inputs := []api.InputParams{
		{Device: dev, Kind: "tap", X: 150, Y: 262}, // Settings
		{Device: dev, Kind: "key", Key: "home"},
	}
	n := max(b.N, 20)
	var lat, acts []float64
	b.ResetTimer()
	for i := range n {
		time.Sleep(300 * time.Millisecond) // the screen settles; the mirror catches up
		e2e.JS[bool](b, page, `(() => { const before = `+mirrorPixels+`; window.__changedAt = 0;
			clearInterval(window.__watch);
			window.__watch = setInterval(() => { if (`+mirrorPixels+` !== before) { window.__changedAt = Date.now(); clearInterval(window.__watch); } }, 2);
			return true; })()`)
		sent := time.Now()
		must(api.MethodInput, inputs[i%2], nil)
		acts = append(acts, float64(time.Since(sent).Microseconds())/1000)
		e2e.WaitJS(b, page, "the mirror changes", `window.__changedAt > 0`)
		at := e2e.JS[float64](b, page, `window.__changedAt`)
		lat = append(lat, at-float64(sent.UnixMilli()))
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(acts)
	b.ReportMetric(lat[len(lat)/2], "ms-p50")
	b.ReportMetric(lat[len(lat)*95/100], "ms-p95")
	b.ReportMetric(acts[len(acts)/2], "ms-act")
}
