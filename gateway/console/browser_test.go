package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
)

// The browser tests drive the real page in headless Chromium against a
// console whose daemon is fakeDaemon and whose phone screen is real H.264
// from the virtual phones' encoder.

const screenW, screenH = 320, 240

// browser is one headless Chromium shared by the tests; each test gets its
// own tab in its own browser context (no shared cookies).
var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel context.CancelFunc
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	os.Exit(code)
}

// tab returns a chromedp context for a new tab with a fresh cookie jar.
func tab(t *testing.T) context.Context {
	t.Helper()
	path := testdep.Need(t, "chromium", "chromium-browser", "google-chrome")
	browser.once.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:],
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
			chromedp.WindowSize(1200, 900),
		)
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel() }
		browser.err = chromedp.Do(bctx) // starts the browser, with no timeout
	})
	if browser.err != nil {
		t.Fatalf("starting chromium: %v", browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("new tab: %v", err)
	}
	tctx, tcancel := context.WithTimeout(ctx, 45*time.Second)
	t.Cleanup(tcancel)
	return tctx
}

// fakeDaemon answers the console's calls like the daemon would, and
// records them.
type fakeDaemon struct {
	mu        sync.Mutex
	calls     []fakeCall
	events    []map[string]any
	notify    chan struct{} // closed and replaced when an event is published
	approvals []map[string]any
	task      map[string]any
	held      bool
	history   map[string]any   // status's history; nil is a writable one
	devices   []map[string]any // devices.list's answer; newFakeDaemon gives one phone, d1
	drivers   []map[string]any // status's drivers
	checks    []map[string]any // drivers.checks' answer
	hosts     map[string]any   // status's phone hosts; nil when the daemon does not listen for them
}

type fakeCall struct {
	method string
	params json.RawMessage
}

func newFakeDaemon() *fakeDaemon {
	return &fakeDaemon{notify: make(chan struct{}), devices: []map[string]any{{
		"id": "d1", "driver": "sim", "online": true, "name": "Test phone", "platform": "android",
		"connection": "virtual", "state": "ready", "lock_state": "unlocked",
	}}}
}

func (f *fakeDaemon) publish(ev map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev["seq"] = len(f.events) + 1
	ev["time"] = time.Now()
	f.events = append(f.events, ev)
	close(f.notify)
	f.notify = make(chan struct{})
}

func (f *fakeDaemon) Call(ctx context.Context, method string, params json.RawMessage) (any, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fakeCall{method, params})
	defer f.mu.Unlock()
	switch method {
	case "devices.list":
		return append([]map[string]any{}, f.devices...), nil
	case "leases.list":
		return []map[string]any{{"device": "d1", "agent": "claude", "task": "Send the report", "task_id": "t1", "with_person": f.held}}, nil
	case "devices.takeover":
		f.held = true
		return map[string]any{}, nil
	case "devices.handback":
		f.held = false
		return map[string]any{}, nil
	case "devices.input", "leases.stop", "devices.unlock":
		return map[string]any{}, nil
	case "approvals.list":
		return f.approvals, nil
	case "approvals.decide":
		var p struct{ ID string }
		json.Unmarshal(params, &p)
		f.approvals = nil
		return map[string]any{"id": p.ID, "status": "approved"}, nil
	case "tasks.list":
		return []map[string]any{{"id": "t1", "agent": "claude", "device": "d1", "text": "Send the report", "steps": 2, "started_at": time.Now()}}, nil
	case "tasks.show":
		if f.task == nil {
			return nil, errors.New("no such task")
		}
		return f.task, nil
	case "status":
		h := f.history
		if h == nil {
			h = map[string]any{"path": "/home/p/.local/share/pinky/history.db", "writable": true}
		}
		st := map[string]any{"pid": 1, "history": h, "drivers": append([]map[string]any{}, f.drivers...)}
		if f.hosts != nil {
			st["hosts"] = f.hosts
		}
		return st, nil
	case "drivers.checks":
		return append([]map[string]any{}, f.checks...), nil
	case "settings.get", "settings.set":
		return map[string]any{"recording": true, "retention_days": 30, "read_only": false}, nil
	case "events.since":
		var p struct {
			After  int `json:"after"`
			WaitMS int `json:"wait_ms"`
			Max    int `json:"max"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		deadline := time.After(time.Duration(p.WaitMS) * time.Millisecond)
		for len(f.events) <= p.After && p.WaitMS > 0 {
			ch := f.notify
			f.mu.Unlock()
			select {
			case <-ch:
			case <-deadline:
				p.WaitMS = 0
			case <-ctx.Done():
				f.mu.Lock()
				return nil, ctx.Err()
			}
			f.mu.Lock()
		}
		evs := []map[string]any{}
		if p.After < len(f.events) {
			evs = f.events[p.After:]
		}
		if p.Max > 0 && len(evs) > p.Max {
			evs = evs[:p.Max]
		}
		return map[string]any{"events": evs, "next": p.After + len(evs), "last": len(f.events)}, nil
	}
	return nil, fmt.Errorf("fake daemon: no method %s", method)
}

// waitCall waits for a call of method and returns its params; with
// contains, only a call whose params contain it counts.
func (f *fakeDaemon) waitCall(t *testing.T, method string, contains ...string) json.RawMessage {
	t.Helper()
	var params json.RawMessage
	called := func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.calls {
			if c.method == method && (len(contains) == 0 || strings.Contains(string(c.params), contains[0])) {
				params = c.params
				return true
			}
		}
		return false
	}
	if !testkit.PollEvery(30*time.Second, 50*time.Millisecond, called) {
		t.Fatalf("the page never called %s", method)
	}
	return params
}

// fakeScreen is a phone screen of one colour; every viewer gets its own
// encoder, a config packet, a key frame, then a picture per change.
type fakeScreen struct {
	mu      sync.Mutex
	col     color.RGBA
	ver     int
	changed chan struct{}
}

func newFakeScreen(c color.RGBA) *fakeScreen {
	return &fakeScreen{col: c, changed: make(chan struct{})}
}

func (s *fakeScreen) set(c color.RGBA) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.col = c
	s.ver++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *fakeScreen) Mirror(context.Context, string, int) (Packets, error) {
	enc, err := h264.NewEncoder(screenW, screenH)
	if err != nil {
		return nil, err
	}
	return &screenPackets{screen: s, enc: enc, ver: -1, start: time.Now()}, nil
}

type screenPackets struct {
	screen *fakeScreen
	enc    *h264.Encoder
	sent   int // packets sent
	ver    int // the screen version last sent
	start  time.Time
}

func solid(c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, screenW, screenH))
	draw.Draw(img, img.Bounds(), &image.Uniform{c}, image.Point{}, draw.Src)
	return img
}

func (p *screenPackets) Next(ctx context.Context) (sdk.VideoPacket, error) {
	pkt := sdk.VideoPacket{Codec: sdk.CodecH264, Width: screenW, Height: screenH, PTS: time.Since(p.start)}
	if p.sent == 0 {
		p.sent++
		pkt.Config, pkt.Data = true, p.enc.Config()
		return pkt, nil
	}
	for {
		p.screen.mu.Lock()
		ver, col, changed := p.screen.ver, p.screen.col, p.screen.changed
		p.screen.mu.Unlock()
		if ver != p.ver {
			fr, err := p.enc.Encode(solid(col), p.ver == -1)
			if err != nil {
				return pkt, err
			}
			p.ver = ver
			if fr.Data != nil {
				p.sent++
				pkt.KeyFrame, pkt.Data, pkt.PTS = fr.Key, fr.Data, time.Since(p.start)
				return pkt, nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return pkt, ctx.Err()
		}
	}
}

func (p *screenPackets) Close() {}

// startBrowserConsole starts a console on the fakes and logs a new tab in
// through a one-time link.
func startBrowserConsole(t *testing.T, f *fakeDaemon, screen *fakeScreen, cfg Config) (context.Context, *Server) {
	t.Helper()
	ctx := tab(t)
	cfg.Addr = "127.0.0.1:0"
	cfg.Call = f.Call
	cfg.Mirror = screen.Mirror
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.pinky ? window.pinky.log : []`))
			t.Logf("page log:\n%s", strings.Join(logs, "\n"))
		}
	})
	if err := chromedp.Do(ctx, chromedp.Navigate(s.Link())); err != nil {
		t.Fatal(err)
	}
	path, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname`))
	if err != nil || path != "/" {
		t.Fatalf("after the login link: at %q (%v); want /", path, err)
	}
	// Fail fast when the script did not run (a syntax error, a CSP refusal).
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!window.pinky`, chromedp.WithPollingTimeout(5*time.Second))); err != nil {
		t.Fatalf("app.js did not start: %v", err)
	}
	return ctx, s
}

// pixel reads the colour in the middle of a phone's mirror canvas and the
// frames it has drawn.
func pixel(ctx context.Context, device string) ([4]int, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[[4]int](fmt.Sprintf(`(() => {
		const c = document.getElementById(%q);
		if (!c) return [0, 0, 0, 0];
		const p = c.getContext('2d').getImageData(c.width >> 1, c.height >> 1, 1, 1).data;
		return [p[0], p[1], p[2], +c.dataset.frames];
	})()`, "mirror-"+device)))
}

func near(got [4]int, want color.RGBA) bool {
	const tol = 40
	return math.Abs(float64(got[0]-int(want.R))) <= tol && math.Abs(float64(got[1]-int(want.G))) <= tol &&
		math.Abs(float64(got[2]-int(want.B))) <= tol && got[3] > 0
}

func waitColor(t *testing.T, ctx context.Context, device string, want color.RGBA) {
	t.Helper()
	var got [4]int
	var err error
	if testkit.PollEvery(30*time.Second, 100*time.Millisecond, func() bool {
		got, err = pixel(ctx, device)
		return err == nil && near(got, want)
	}) {
		return
	}
	t.Fatalf("mirror-%s: got rgb %v after %d frames (err %v); want about %v", device, got[:3], got[3], err, want)
}

var (
	red  = color.RGBA{220, 40, 40, 255}
	blue = color.RGBA{40, 60, 220, 255}
)

func TestBrowserMirrorShowsTheScreen(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	waitColor(t, ctx, "d1", red)
	screen.set(blue)
	waitColor(t, ctx, "d1", blue)
	screen.set(red)
	waitColor(t, ctx, "d1", red)
	text, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`['agent-d1', 'task-d1', 'lock-d1'].map(id => document.getElementById(id).textContent)`))
	if err != nil || strings.Join(text, "|") != "claude|Send the report|unlocked" {
		t.Errorf("phone card: got %q (%v); want claude, the task and the lock state", text, err)
	}
}

func TestBrowserTakeOverTap(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(blue)
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	waitColor(t, ctx, "d1", blue)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("takeover-d1"))); err != nil {
		t.Fatal(err)
	}
	if got := string(f.waitCall(t, "devices.takeover")); got != `{"device":"d1"}` {
		t.Errorf("takeover params: got %s", got)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById('handback-d1').disabled`)); err != nil {
		t.Fatalf("hand back never enabled: %v", err)
	}
	// Make the canvas twice the video's size on screen, so CSS pixels and
	// phone pixels differ.
	rect, err := chromedp.Run(ctx, chromedp.Evaluate[[4]float64](`(() => {
		const c = document.getElementById('mirror-d1');
		c.style.width = '640px'; c.style.maxHeight = 'none';
		c.closest('.phone').style.width = '700px';
		c.scrollIntoView();
		const r = c.getBoundingClientRect();
		return [r.left, r.top, r.width, r.height];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if rect[2] != 2*screenW || rect[3] != 2*screenH {
		t.Fatalf("canvas on screen: %v; want %dx%d", rect, 2*screenW, 2*screenH)
	}
	// A click at a quarter of the width and two thirds of the height.
	if err := chromedp.Do(ctx, chromedp.MouseClickXY(rect[0]+rect[2]/4, rect[1]+rect[3]*2/3)); err != nil {
		t.Fatal(err)
	}
	var in struct {
		Device, Kind  string
		X, Y          int
		Width, Height int
	}
	if err := json.Unmarshal(f.waitCall(t, "devices.input"), &in); err != nil {
		t.Fatal(err)
	}
	if in.Device != "d1" || in.Kind != "tap" || abs(in.X-screenW/4) > 1 || abs(in.Y-screenH*2/3) > 1 || in.Width != screenW || in.Height != screenH {
		t.Errorf("input: got %+v; want a tap on d1 at (%d, %d) of a %dx%d picture", in, screenW/4, screenH*2/3, screenW, screenH)
	}
}

func abs(x int) int { return max(x, -x) }

func TestBrowserApproval(t *testing.T) {
	dir := t.TempDir()
	shot := filepath.Join(dir, "shot.png")
	img := image.NewRGBA(image.Rect(0, 0, 200, 400))
	draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{200, 200, 200, 255}}, image.Point{}, draw.Src)
	fh, err := os.Create(shot)
	if err != nil {
		t.Fatal(err)
	}
	png.Encode(fh, img)
	fh.Close()
	f, screen := newFakeDaemon(), newFakeScreen(red)
	ctx, _ := startBrowserConsole(t, f, screen, Config{Media: func(_ context.Context, id string) (string, error) {
		if id != "m1" {
			return "", errors.New("no such screenshot")
		}
		return shot, nil
	}})
	// The page has loaded its state and waits for events.
	f.waitCall(t, "events.since", `"wait_ms":25000`)
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.approval').length`)); n != 0 {
		t.Fatalf("got %d approval cards before any; want 0", n)
	}
	f.mu.Lock()
	f.approvals = []map[string]any{{
		"id": "ap1", "agent": "claude", "task": "Send the report", "device": "d1", "tool": "tap",
		"target": `[7] button "Send"`, "commit": "send", "screenshot": "m1", "status": "pending",
		"opened_at": time.Now(), "expires_at": time.Now().Add(45 * time.Second),
		"target_box": []int{50, 100, 100, 40}, "screen_size": []int{200, 400},
	}}
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "approval.opened", "device": "d1", "data": map[string]string{"id": "ap1", "tool": "tap"}})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.getElementById('allow-ap1')`)); err != nil {
		t.Fatalf("the approval card never appeared: %v", err)
	}
	info, err := chromedp.Run(ctx, chromedp.Poll[[]string](`(() => {
		const img = document.getElementById('shot-ap1'), box = document.getElementById('box-ap1');
		if (!img.complete || !img.naturalWidth) return null;
		return [String(img.naturalWidth), box.style.left, box.style.top, box.style.width, box.style.height, String(box.hidden),
			document.getElementById('countdown-ap1').textContent, document.getElementById('approval-ap1').textContent];
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if info[0] != "200" || strings.Join(info[1:6], " ") != "25% 25% 50% 10% false" {
		t.Errorf("screenshot and box: got %q; want a 200 px image and the box at 25%% 25%% 50%% 10%%", info)
	}
	if !strings.HasPrefix(info[6], "0:4") || !strings.Contains(info[7], `[7] button "Send"`) || !strings.Contains(info[7], "claude") {
		t.Errorf("card: countdown %q, text %q; want about 0:45, the agent and the target", info[6], info[7])
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("allow-ap1"))); err != nil {
		t.Fatal(err)
	}
	var d struct {
		ID      string `json:"id"`
		Allow   bool   `json:"allow"`
		ForTask bool   `json:"for_task"`
	}
	if err := json.Unmarshal(f.waitCall(t, "approvals.decide"), &d); err != nil {
		t.Fatal(err)
	}
	if d.ID != "ap1" || !d.Allow || d.ForTask {
		t.Errorf("decide: got %+v; want allow ap1, not for the task", d)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById('approval-ap1') && document.getElementById('approvals').hidden`)); err != nil {
		t.Errorf("the card stayed after the answer: %v", err)
	}
}

// makeMP4 encodes 2 s of video (50 pictures at ffmpeg's default 25 fps for
// raw H.264) and wraps it in MP4 with ffmpeg.
func makeMP4(t *testing.T) string {
	t.Helper()
	ffmpeg := testdep.Need(t, "ffmpeg")
	enc, err := h264.NewEncoder(160, 96)
	if err != nil {
		t.Fatal(err)
	}
	stream := enc.Config()
	for i := range 50 {
		img := image.NewRGBA(image.Rect(0, 0, 160, 96))
		draw.Draw(img, img.Bounds(), &image.Uniform{color.RGBA{30, 120, 60, 255}}, image.Point{}, draw.Src)
		draw.Draw(img, image.Rect(i*2, 40, i*2+16, 56), &image.Uniform{color.RGBA{250, 250, 250, 255}}, image.Point{}, draw.Src)
		fr, err := enc.Encode(img, i%25 == 0)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, fr.Data...)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.h264"), filepath.Join(dir, "out.mp4")
	if err := os.WriteFile(in, stream, 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(ffmpeg, "-loglevel", "error", "-f", "h264", "-i", in, "-c", "copy", out).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	return out
}

func TestBrowserHistoryRecording(t *testing.T) {
	mp4 := makeMP4(t)
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.task = map[string]any{
		"id": "t1", "agent": "claude", "device": "d1", "text": "Send the report", "started_at": time.Now(),
		"steps": 2, "recording": true,
		"step_list": []map[string]any{
			{"seq": 1, "tool": "tap", "outcome": "ok", "diff": "+ [3] text \"Sent\"", "before": "m1", "after": "m2", "video_at_ms": 500, "duration_ms": 40},
			{"seq": 2, "tool": "read_screen", "outcome": "ok", "video_at_ms": 1500, "duration_ms": 10},
			{"seq": 3, "tool": "screenshot", "outcome": "ok", "video_at_ms": -1, "duration_ms": 10},
		},
	}
	var asked atomic.Value // the task whose recording the page asked for
	ctx, _ := startBrowserConsole(t, f, screen, Config{Recording: func(_ context.Context, task string) (string, error) {
		asked.Store(task)
		return mp4, nil
	}})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("nav-history"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#task-t1 a.task-link"))); err != nil {
		t.Fatal(err)
	}
	dur, err := chromedp.Run(ctx, chromedp.Poll[float64](`(() => { const v = document.getElementById('recording'); return v && v.readyState >= 1 && v.duration; })()`))
	if err != nil {
		t.Fatalf("the recording never loaded: %v", err)
	}
	if dur < 1.9 || dur > 2.1 || asked.Load() != "t1" {
		t.Errorf("recording: duration %v s of task %v; want 2 s of t1", dur, asked.Load())
	}
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.step-mark')].map(m => m.dataset.at)`))
	if err != nil || strings.Join(marks, ",") != "0.5,1.5" {
		t.Errorf("step marks: got %q (%v); want 0.5 and 1.5 (none for the step without video)", marks, err)
	}
	href, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('export').getAttribute('href')`))
	if href != "/export?task=t1" {
		t.Errorf("export link: got %q; want /export?task=t1", href)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`.step-mark[data-seq="2"]`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const v = document.getElementById('recording'); return Math.abs(v.currentTime - 1.5) < 0.05 && !v.seeking && v.readyState >= 2; })()`)); err != nil {
		ct, _ := chromedp.Run(ctx, chromedp.Evaluate[float64](`document.getElementById('recording').currentTime`))
		t.Fatalf("the step mark did not seek the video: currentTime %v (%v)", ct, err)
	}
	// It plays: time moves on from the mark.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById('recording').play()`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("play: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('recording').currentTime > 1.6`)); err != nil {
		t.Errorf("the video did not play: %v", err)
	}
}

func TestBrowserRefusedWithoutSession(t *testing.T) {
	ctx := tab(t)
	s, err := New(Config{Addr: "127.0.0.1:0", Call: newFakeDaemon().Call})
	if err != nil {
		t.Fatal(err)
	}
	addr, err := s.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse("http://"+addr+"/"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 401 || !strings.Contains(text, "pinky open") {
		t.Errorf("without a session: got %d %q; want 401 saying to run pinky open", resp.Status, text)
	}
	if has, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.getElementById('phones')`)); has {
		t.Error("the console page was served without a session")
	}
}

func TestBrowserSettingsAndUnlock(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("nav-settings"))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('set-retention').value === '30' && document.getElementById('unlock-device').value === 'd1'`)); err != nil {
		t.Fatalf("settings never loaded: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("set-retention"), "7"),
		chromedp.Click(chromedp.ID("set-readonly")),
		chromedp.Click(chromedp.ID("settings-save")),
	); err != nil {
		t.Fatal(err)
	}
	if got := string(f.waitCall(t, "settings.set")); got != `{"recording":true,"retention_days":7,"read_only":true}` {
		t.Errorf("settings.set: got %s", got)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("unlock-pin"), "1234"),
		chromedp.Click(chromedp.ID("unlock-go")),
	); err != nil {
		t.Fatal(err)
	}
	if got := string(f.waitCall(t, "devices.unlock")); got != `{"device":"d1","pin":"1234"}` {
		t.Errorf("devices.unlock: got %s", got)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('unlock-pin').value === '' && document.getElementById('unlock-status').textContent === 'Unlocked.'`)); err != nil {
		t.Errorf("the PIN field was not cleared: %v", err)
	}
}

// TestBrowserHistoryHealth: while the history cannot be written the page
// says so, why and what to do, and stops saying it once writes work.
func TestBrowserHistoryHealth(t *testing.T) {
	f, screen := newFakeDaemon(), newFakeScreen(red)
	f.history = map[string]any{
		"path": "/home/p/.local/share/pinky/history.db", "writable": false, "failures": 30,
		"since": time.Now().Add(-time.Minute), "cause": "the disk is full (no space left on device)",
		"fix": "free space on the disk that holds /home/p/.local/share/pinky",
	}
	ctx, _ := startBrowserConsole(t, f, screen, Config{})
	text, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => { const b = document.getElementById('history-health'); return !b.hidden && b.textContent; })()`))
	if err != nil {
		t.Fatalf("the page never showed that the history cannot be written: %v", err)
	}
	for _, want := range []string{"cannot be written", "the disk is full", "30 failed writes", "refused", "free space on the disk"} {
		if !strings.Contains(text, want) {
			t.Errorf("the banner %q does not say %q", text, want)
		}
	}
	f.mu.Lock()
	f.history = nil
	f.mu.Unlock()
	f.publish(map[string]any{"kind": "step", "device": "d1", "task": "t1"})
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById('history-health').hidden`)); err != nil {
		t.Errorf("the banner stayed after the history could be written again: %v", err)
	}
}
