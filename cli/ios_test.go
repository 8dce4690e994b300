package cli_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"

	"github.com/chromedp/chromedp"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/testdep"
)

// iPhoneTask starts a daemon in a new env with a virtual iPhone behind its
// WebDriverAgent face and no broadcast (iPhone), waits until the daemon
// lists it online, opens pinky mcp, connects a task on it (the phone is
// locked) and lets the person unlock it.
func iPhoneTask(t *testing.T, task string) (e *env, id string, h *e2e.Host, dev func(kv ...any) map[string]any) {
	t.Helper()
	e = newEnv(t)
	id, _, _ = e.iPhone(t, false)
	e.Daemon("--console", "off")
	e.waitOnlyPhone("the daemon lists the iPhone", id, nil)
	h = e.StdioHost()
	h.Initialize()
	dev = e2e.OnDevice(id)
	h.OK("phone_connect", dev("task", task), "LOCKED")
	e.Unlock(id)
	return e, id, h, dev
}

// iPhone gives e a virtual iPhone reached the real way: `pinky ios add`
// lists it with a broadcast, its WebDriverAgent face (and, with broadcast,
// the broadcast) runs in a process of its own (pinky-driver-sim
// --wda-listen --video-dial), and pinky-driver-ios is in e's data folder.
// It returns the phone's id, a function that starts the phone's face
// again, with or without its broadcast, and one that stops it.
func (e *env) iPhone(t *testing.T, broadcast bool) (id string, restart func(broadcast bool), stop func()) {
	t.Helper()
	return e.addIPhone(t, true, broadcast)
}

// addIPhone is iPhone, with the phone listed with a broadcast (configured:
// `pinky ios add --video-listen`) or without one (its face then never
// broadcasts).
func (e *env) addIPhone(t *testing.T, configured, broadcast bool) (id string, restart func(broadcast bool), stop func()) {
	t.Helper()
	drivers := filepath.Join(e.Home, "drivers")
	os.MkdirAll(drivers, 0o700)
	b, err := os.ReadFile(e2e.Bin.IOS)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drivers, "pinky-driver-ios"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	wdaPort, videoPort := freeTCPPort(t), freeTCPPort(t)
	args := []string{"ios", "add", "Test iPhone", "--wda", "http://127.0.0.1:" + wdaPort, "--mjpeg", "off", "--app", "com.pinky.sim.shop=Shop"}
	if configured {
		args = append(args, "--video-listen", "127.0.0.1:"+videoPort)
	}
	out, errs, code := e.Run(args...)
	if code != 0 {
		t.Fatalf("pinky ios add: exit %d: %s%s", code, out, errs)
	}
	var secret string
	if configured {
		m := regexp.MustCompile(`added Test iPhone \((\S+)\)\npairing secret: (\S+)\n.*device id (\S+),`).FindStringSubmatch(out)
		if m == nil || m[3] != m[1] {
			t.Fatalf("pinky ios add printed %q; want the id, the pairing secret, and what the phone's broadcast app needs", out)
		}
		id, secret = m[1], m[2]
		if !strings.Contains(out, "encrypted with this secret") {
			t.Errorf("pinky ios add printed %q; want it to say the broadcast is encrypted with the secret", out)
		}
	} else {
		m := regexp.MustCompile(`^added Test iPhone \((\S+)\)\n`).FindStringSubmatch(out)
		if m == nil || strings.Contains(out, "pairing secret") {
			t.Fatalf("pinky ios add without a broadcast printed %q; want the id and no pairing secret", out)
		}
		id = m[1]
	}
	if st, err := os.Stat(filepath.Join(e.Home, "ios.yaml")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ios.yaml, which holds the pairing secret: %v, %v; want mode 0600", st, err)
	}
	if !strings.Contains(errs, "WDA not answering") {
		t.Errorf("pinky ios add before WDA runs: stderr %q; want it to say WDA is not answering", errs)
	}
	var face func() // stops the running face
	start := func(broadcast bool) {
		if face != nil {
			face()
		}
		args := []string{"--wda-listen", "127.0.0.1:" + wdaPort, "--wda-mjpeg=false"}
		if broadcast && configured {
			args = append(args, "--video-dial", "127.0.0.1:"+videoPort, "--video-device", id)
		}
		// The secret goes in the environment, not on the command line.
		var env []string
		if secret != "" {
			env = []string{"PINKY_SIM_VIDEO_SECRET=" + secret}
		}
		face = startFace(t, env, args...)
		e.Eventually("pinky ios list shows the phone online", func() bool {
			out, _, _ := e.Run("ios", "list")
			return strings.Contains(out, id) && strings.Contains(out, "online")
		})
	}
	start(broadcast)
	return id, start, func() { face() }
}

// wdaURL is the WDA address of phone id in e's list.
func wdaURL(t *testing.T, e *env, id string) string {
	t.Helper()
	var rows []struct{ ID, WDA string }
	e.JSON(&rows, "ios", "list")
	for _, r := range rows {
		if r.ID == id {
			return r.WDA
		}
	}
	t.Fatalf("%s is not in pinky ios list", id)
	return ""
}

// TestIOSAgentTask: an agent's task through pinky mcp on an iPhone driven by
// pinky-driver-ios through WebDriverAgent, with its screen recorded from the
// broadcast: connect, the person's unlock (PIN on the passcode pad),
// observe, launch by label, tap, typing non-ASCII text, swipe, keys, and
// waking the phone after it locked.
func TestIOSAgentTask(t *testing.T) {
	testdep.Need(t, "ffprobe")
	e := newEnv(t)
	id, _, stopFace := e.iPhone(t, true)
	e.Daemon("--console", "off")
	e.waitOnlyPhone("the daemon lists the iPhone", id, func(d api.Device) bool { return d.Driver == "ios" && d.Platform == "ios" })
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice(id)
	h.OK("phone_connect", dev("task", "ios: write to Ben"), "LOCKED")
	e.Unlock(id) // the person's PIN goes through the driver: home, then the passcode pad
	h.OK("phone_observe", dev("full", true), "Messages")
	h.OK("phone_launch", dev("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
	const typed = "Grüße aus Köln 🙂"
	h.OK("phone_type", dev("field", "Text message", "text", typed), typed)
	h.OK("phone_key", dev("key", "home"), "")
	h.OK("phone_launch", dev("app", "Shop"), "Wireless Headphones")
	h.OK("phone_swipe", dev("from", map[string]any{"x": 590, "y": 1900}, "to", map[string]any{"x": 590, "y": 900}), "")
	h.Fails("phone_key", dev("key", "back"), "unsupported") // an iPhone has no back key
	// The person locks the phone with its side button; the gateway wakes it
	// for the agent's next read, which finds the lock screen.
	resp, err := http.Post(wdaURL(t, e, id)+"/wda/lock", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	text := h.OK("phone_observe", dev(), "LOCKED")
	if strings.Contains(text, "screen off") {
		t.Errorf("the read after the phone locked: %q; want it woken to the lock screen", text)
	}
	h.OK("phone_release", dev(), "")

	task := e.lastTask(t)
	var d api.TaskDetail
	e.Eventually("the task's recording", func() bool {
		e.JSON(&d, "history", "show", task.ID)
		return d.Recording && d.RecordingMS > 0
	})
	e.wantH264(t, task.ID, "the recording from the broadcast")

	// WebDriverAgent goes away: pinky devices says so, and what to do.
	stopFace()
	e.Eventually("pinky devices says why the iPhone is offline", func() bool {
		out, _, _ := e.Run("devices")
		return strings.Contains(out, id+": WebDriverAgent is not answering")
	})
}

// TestIOSWithoutBroadcast: an iPhone added without a broadcast (pinky ios
// add without --video-listen) passes pinky driver check for what it
// declares, which names what it lacks, why and how to add a broadcast; and
// an agent's phone_observe with a screenshot gets the picture from
// WebDriverAgent.
func TestIOSWithoutBroadcast(t *testing.T) {
	e := newEnv(t)
	id, restart, _ := e.addIPhone(t, false, false)
	out, errs, code := e.Run("driver", "check", filepath.Join(e.Home, "drivers", "pinky-driver-ios"), "--device", id, "--pin", "1234")
	if code != 0 {
		t.Errorf("pinky driver check of an iPhone without a broadcast: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"no broadcast is configured for this iPhone", "pinky ios add", "--video-listen"} {
		if !strings.Contains(out, want) {
			t.Errorf("pinky driver check printed:\n%s\nwant it to say %q", out, want)
		}
	}
	restart(false) // a fresh virtual phone, locked, for the agent

	e.Daemon("--console", "off")
	e.waitOnlyPhone("the daemon lists the iPhone", id, nil)
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice(id)
	h.OK("phone_connect", dev("task", "ios: look without a broadcast"), "LOCKED")
	e.Unlock(id)
	r := h.Call("phone_observe", dev("full", true, "screenshot", true))
	if r.IsError || r.Images != 1 || !strings.Contains(r.Text, "Messages") {
		t.Errorf("phone_observe with a screenshot, without a broadcast: error=%v, %d images, %q; want the home screen and its picture", r.IsError, r.Images, r.Text)
	}
	h.OK("phone_release", dev(), "")
}

// TestIOSConsoleWithoutBroadcast: while an iPhone's broadcast does not run,
// the console's mirror shows pictures of its screen and says why; once the
// person starts the broadcast, live video replaces them.
func TestIOSConsoleWithoutBroadcast(t *testing.T) {
	e := newEnv(t)
	id, restart, _ := e.iPhone(t, false)
	e.Daemon("--console", "127.0.0.1:0")
	ctx := e2e.Chromium(t)
	link, errs, code := e.Run("open", "--no-browser")
	if code != 0 {
		t.Fatalf("pinky open --no-browser: exit %d: %s", code, errs)
	}
	e2e.Do(t, ctx, chromedp.Navigate(strings.TrimSpace(link)))
	canvas := `document.getElementById('mirror-` + id + `')`
	e2e.WaitJS(t, ctx, "the mirror shows a picture without video", canvas+` && +`+canvas+`.dataset.stills > 0 && !(+`+canvas+`.dataset.frames > 0)`)
	if status := e2e.JS[string](t, ctx, `document.getElementById('mirror-status-`+id+`').textContent`); !strings.Contains(status, "No video") {
		t.Errorf("the mirror's status without a broadcast: %q; want it to say there is no video", status)
	}
	if w := e2e.JS[int](t, ctx, canvas+`.width`); w < 100 {
		t.Errorf("the picture is %d px wide; want the phone's screen", w)
	}
	restart(true) // the person starts the broadcast
	e2e.WaitJS(t, ctx, "live video replaces the pictures", `+`+canvas+`.dataset.frames > 0`)
	stills := e2e.JS[string](t, ctx, canvas+`.dataset.stills`)
	time.Sleep(3 * time.Second)
	if again := e2e.JS[string](t, ctx, canvas+`.dataset.stills`); again != stills {
		t.Errorf("pictures still fetched with video running: %s, then %s", stills, again)
	}
}

// TestDriverRun: pinky runs a driver's own setup commands, found where the
// daemon finds drivers, and says so when there is no such driver.
func TestDriverRun(t *testing.T) {
	e := newEnv(t)
	if _, errs, code := e.Run("driver", "run", "nosuch", "help"); code == 0 || !strings.Contains(errs, `no driver "nosuch"`) {
		t.Errorf("driver run nosuch: exit %d %q; want it refused by name", code, errs)
	}
	if _, errs, code := e.Run("ios", "list"); code == 0 || !strings.Contains(errs, `no driver "ios"`) {
		t.Errorf("ios list with no iOS driver: exit %d %q", code, errs)
	}
	drivers := filepath.Join(e.Home, "drivers")
	os.MkdirAll(drivers, 0o700)
	b, err := os.ReadFile(e2e.Bin.IOS)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drivers, "pinky-driver-ios"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, _, code := e.Run("ios", "help"); code != 0 || !strings.Contains(out, "pinky ios add NAME --wda URL") {
		t.Errorf("ios help: exit %d %q", code, out)
	}
	if _, errs, code := e.Run("driver", "run", "ios", "add", "x"); code != 2 || !strings.Contains(errs, "--wda URL is required") {
		t.Errorf("driver run ios add without --wda: exit %d %q; want the driver's usage error and its status 2", code, errs)
	}
}

// waitOnlyPhone waits until the daemon lists one phone, id, online, and
// also as ok says when ok is given.
func (e *env) waitOnlyPhone(what, id string, ok func(api.Device) bool) {
	e.T.Helper()
	e.Eventually(what, func() bool {
		var devs []api.Device
		e.JSON(&devs, "devices")
		return len(devs) == 1 && devs[0].ID == id && devs[0].Online && (ok == nil || ok(devs[0]))
	})
}
