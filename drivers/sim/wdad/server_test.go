package wdad_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sim/timing"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestListenErrors(t *testing.T) {
	w := testWorld(t)
	tests := []struct {
		name string
		cfg  wdad.Config
	}{
		{"no driver", wdad.Config{}},
		{"unknown device", wdad.Config{DeviceID: "nope"}},
		{"negative scale", wdad.Config{Scale: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, w, wdad.Config{})
			cfg := tt.cfg
			if tt.name != "no driver" {
				cfg.Driver = g.d
			}
			if srv, err := wdad.Listen("127.0.0.1:0", cfg); err == nil {
				srv.Close()
				t.Fatalf("Listen(%+v) succeeded; want an error", tt.cfg)
			}
		})
	}
}

func TestDefaultDeviceIsTheFirstIPhone(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	if got := g.srv.Device(); got != iphone {
		t.Errorf("Device() = %q; want %q", got, iphone)
	}
	if g.srv.MJPEGAddr() != nil {
		t.Errorf("MJPEGAddr() = %v without MJPEG; want nil", g.srv.MJPEGAddr())
	}
}

func TestStatus(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	var v struct {
		Ready   bool   `json:"ready"`
		Message string `json:"message"`
		State   string `json:"state"`
		OS      struct {
			Name, Version, SDKVersion string
		} `json:"os"`
		IOS struct {
			IP *string `json:"ip"`
		} `json:"ios"`
		Build struct {
			ProductBundleIdentifier string `json:"productBundleIdentifier"`
			Time                    string `json:"time"`
		} `json:"build"`
		Device string `json:"device"`
	}
	r := g.ok("GET", "/status", nil, &v)
	if !v.Ready || v.State != "success" || v.Message == "" || v.Device != "iphone" {
		t.Errorf("status %s; want ready, success, a message, device iphone", r.value)
	}
	if v.OS.Name != "iOS" || v.OS.Version != "18.1" || v.OS.SDKVersion == "" {
		t.Errorf("os = %+v; want iOS 18.1 with an sdkVersion", v.OS)
	}
	if v.IOS.IP == nil || *v.IOS.IP != "127.0.0.1" {
		t.Errorf("ios.ip = %v; want 127.0.0.1", v.IOS.IP)
	}
	if v.Build.ProductBundleIdentifier != "com.facebook.WebDriverAgentRunner" || v.Build.Time == "" {
		t.Errorf("build = %+v; want WebDriverAgentRunner's bundle and a time", v.Build)
	}
	if r.sessionID != nil {
		t.Errorf("sessionId = %q without a session; want null", *r.sessionID)
	}
	// NSJSONSerialization's pretty printing.
	if !strings.Contains(string(r.body), `"ready" : true`) {
		t.Errorf("body %s; want WebDriverAgent's pretty printing (\"ready\" : true)", r.body)
	}
	if r := g.do("GET", "/wda/healthcheck", nil); r.status != http.StatusOK || string(r.value) != "null" {
		t.Errorf("healthcheck: %d %s; want 200 null", r.status, r.value)
	}
}

func TestSessionLifecycle(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	first := g.session(nil)

	var info struct {
		SessionID    string         `json:"sessionId"`
		Capabilities map[string]any `json:"capabilities"`
	}
	g.ok("GET", "/session/"+first, nil, &info)
	if info.SessionID != first || info.Capabilities["device"] != "iphone" {
		t.Errorf("GET /session/%s = %+v; want its id and device iphone", first, info)
	}
	// Reused: every session route takes it, and the envelope names it.
	if r := g.ok("GET", "/session/"+first+"/window/size", nil, nil); r.sessionID == nil || *r.sessionID != first {
		t.Errorf("envelope sessionId = %v; want %s", r.sessionID, first)
	}

	second := g.session(nil)
	if second == first {
		t.Fatalf("a new session reused the id %s", first)
	}
	e := g.fails("GET", "/session/"+first+"/window/size", nil, http.StatusNotFound, "invalid session id")
	if e.Message != "Session does not exist" || e.Traceback != "" {
		t.Errorf("replaced session: message %q, traceback %q; want \"Session does not exist\" and \"\"", e.Message, e.Traceback)
	}
	g.ok("GET", "/session/"+second+"/window/size", nil, nil)

	g.srv.Restart()
	g.fails("GET", "/session/"+second, nil, http.StatusNotFound, "invalid session id")
	if r := g.ok("GET", "/status", nil, nil); r.sessionID != nil {
		t.Errorf("after Restart the envelope names session %q; want null", *r.sessionID)
	}

	third := g.session(nil)
	if r := g.ok("DELETE", "/session/"+third, nil, nil); r.sessionID != nil {
		t.Errorf("DELETE answered with sessionId %q; want null", *r.sessionID)
	}
	g.fails("GET", "/session/"+third+"/source", nil, http.StatusNotFound, "invalid session id")
}

func TestCreateSessionErrors(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	tests := []struct {
		name string
		body any
	}{
		{"no capabilities", map[string]any{}},
		{"capabilities not an object", map[string]any{"capabilities": "yes"}},
		{"unknown bundle", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"bundleId": "com.example.nope"}}}},
		{"bundleId not a string", map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{"bundleId": 3}}}},
		{"conflicting firstMatch", map[string]any{"capabilities": map[string]any{
			"alwaysMatch": map[string]any{"bundleId": "com.apple.Preferences"},
			"firstMatch":  []any{map[string]any{"appium:bundleId": "com.apple.mobilemail"}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := g.on(t)
			g.fails("POST", "/session", tt.body, http.StatusInternalServerError, "session not created")
		})
	}
}

func TestSessionLaunchesTheApp(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	const mail = "com.apple.mobilemail"
	// A new session kills the old one, which terminates its app unless
	// shouldTerminateApp is false.
	sid := g.session(map[string]any{"appium:bundleId": mail, "appium:shouldTerminateApp": false})
	if got := g.activeApp(); got != mail {
		t.Fatalf("active app %q after a session for Mail; want %s", got, mail)
	}
	g.tapOn(sid, "Compose")
	if !has(g.sourceJSON(sid), "Subject") {
		t.Fatal("tapping Compose did not open it")
	}

	// forceAppLaunch false attaches to the running app as it is.
	sid = g.session(map[string]any{"bundleId": mail, "forceAppLaunch": false, "shouldTerminateApp": false})
	if !has(g.sourceJSON(sid), "Subject") {
		t.Error("forceAppLaunch false relaunched the app; want it left on Compose")
	}
	// The default relaunches it on its start screen.
	sid = g.session(map[string]any{"bundleId": mail})
	s := g.sourceJSON(sid)
	if has(s, "Subject") || !has(s, "Inbox") {
		t.Error("forceAppLaunch (default true) did not relaunch Mail on its start screen")
	}
	// Deleting the session terminates the app under test.
	g.ok("DELETE", "/session/"+sid, nil, nil)
	if got := g.activeApp(); got != "com.apple.springboard" {
		t.Errorf("active app %q after DELETE /session; want the app terminated (com.apple.springboard)", got)
	}
	// No bundleId attaches to what is in front.
	g.ok("POST", "/wda/apps/launchUnattached", map[string]any{"bundleId": "com.apple.Preferences"}, nil)
	sid = g.session(nil)
	if !has(g.sourceJSON(sid), "Wi-Fi") {
		t.Error("a session without bundleId did not attach to Settings in front")
	}
}

func TestUnknownRoutes(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	tests := []struct{ method, path string }{
		{"GET", "/nope"},
		{"GET", "/wda/nope"},
		{"DELETE", "/status"},
		{"PUT", "/source"},
		{"POST", "/wda/tap"},                   // [S] only
		{"POST", "/wda/keys"},                  // [S] only
		{"GET", "/session"},                    // no such route
		{"POST", "/session/" + sid},            // GET and DELETE only
		{"GET", "/session/" + sid + "/status"}, // bare only
		{"GET", "/session/" + sid + "/nope"},
		{"GET", "/session/stale/nope"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			g := g.on(t)
			e := g.fails(tt.method, tt.path, nil, http.StatusNotFound, "unknown command")
			if !strings.HasPrefix(e.Message, "Unhandled endpoint: ") || e.Traceback != "" {
				t.Errorf("message %q, traceback %q; want \"Unhandled endpoint: …\" and \"\"", e.Message, e.Traceback)
			}
		})
	}
}

func TestBadBodies(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	s := "/session/" + sid
	tests := []struct {
		name, path string
		body       any
	}{
		{"not JSON", s + "/wda/tap", "{x: 1"},
		{"not an object", s + "/wda/tap", "[1, 2]"},
		{"x not a number", s + "/wda/tap", map[string]any{"x": "10", "y": 10}},
		{"only x", s + "/wda/tap", map[string]any{"x": 10}},
		{"doubleTap without y", s + "/wda/doubleTap", map[string]any{"x": 10}},
		{"touchAndHold without duration", s + "/wda/touchAndHold", map[string]any{"x": 10, "y": 10}},
		{"drag without toY", s + "/wda/dragfromtoforduration", map[string]any{"fromX": 1, "fromY": 1, "toX": 1, "duration": 1}},
		{"keys not an array", s + "/wda/keys", map[string]any{"value": "hi"}},
		{"keys with a number", s + "/wda/keys", map[string]any{"value": []any{"h", 1}}},
		{"actions missing", s + "/actions", map[string]any{}},
		{"actions of an unknown type", s + "/actions", map[string]any{"actions": []any{map[string]any{"type": "wheel", "id": "w"}}}},
		{"pointerDown before a move", s + "/actions", map[string]any{"actions": []any{map[string]any{
			"type": "pointer", "id": "f", "actions": []any{map[string]any{"type": "pointerDown", "button": 0}},
		}}}},
		{"element origin", s + "/actions", map[string]any{"actions": []any{map[string]any{
			"type": "pointer", "id": "f", "actions": []any{map[string]any{"type": "pointerMove", "x": 1, "y": 1, "origin": map[string]any{"element-6066-11e4-a52e-4f735466cecf": "x"}}},
		}}}},
		{"url missing", s + "/url", map[string]any{}},
		{"bundleId missing", s + "/wda/apps/launch", map[string]any{}},
		{"pasteboard not base64", "/wda/setPasteboard", map[string]any{"content": "abc"}},
		{"settings not an object", s + "/appium/settings", map[string]any{"settings": 3}},
		{"unknown source format", s + "/source?format=yaml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := g.on(t)
			method := "POST"
			if strings.Contains(tt.path, "/source") {
				method = "GET"
			}
			g.fails(method, tt.path, tt.body, http.StatusBadRequest, "invalid argument")
		})
	}
}

func TestScreenInfo(t *testing.T) {
	tests := []struct {
		name               string
		scale, wantScale   int
		wantW, wantH, barH float64
	}{
		{"default scale 3", 0, 3, 393, 852, 23},
		{"scale 2", 2, 2, 589.5, 1278, 34.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil, wdad.Config{Scale: tt.scale})
			g.unlock()
			var v struct {
				ScreenSize    struct{ Width, Height float64 }
				StatusBarSize struct{ Width, Height float64 }
				Scale         int
			}
			g.ok("GET", "/wda/screen", nil, &v)
			scale := tt.wantScale
			if v.ScreenSize.Width != tt.wantW || v.ScreenSize.Height != tt.wantH || v.Scale != scale || v.StatusBarSize.Height != tt.barH || v.StatusBarSize.Width != tt.wantW {
				t.Errorf("/wda/screen = %+v; want %vx%v points, a %v-point status bar, scale %d", v, tt.wantW, tt.wantH, tt.barH, scale)
			}
			var size struct{ Width, Height float64 }
			g.ok("GET", "/window/size", nil, &size)
			if size.Width != tt.wantW || size.Height != tt.wantH {
				t.Errorf("/window/size = %+v; want %vx%v", size, tt.wantW, tt.wantH)
			}
		})
	}
}

func TestDeviceInfo(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	var v map[string]any
	g.ok("GET", "/wda/device/info", nil, &v)
	for _, k := range []string{"currentLocale", "timeZone", "name", "model", "uuid", "userInterfaceIdiom", "userInterfaceStyle", "isSimulator", "thermalState"} {
		if _, ok := v[k]; !ok {
			t.Errorf("device info lacks %q: %v", k, v)
		}
	}
	if v["name"] != "Ana's iPhone" || v["model"] != "iPhone" || v["isSimulator"] != false {
		t.Errorf("device info %v; want name Ana's iPhone, model iPhone, not a simulator", v)
	}
}

func TestHangSource(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	g.srv.HangSource(true)

	for _, path := range []string{"/source", "/session/" + sid + "/source?format=json"} {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := g.send(ctx, "GET", path, nil)
			done <- err
		}()
		// /status still answers while the source hangs.
		g.ok("GET", "/status", nil, nil)
		select {
		case err := <-done:
			t.Fatalf("GET %s answered (%v) while the source hangs", path, err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("GET %s after cancel: %v; want context.Canceled", path, err)
		}
	}

	g.srv.HangSource(false)
	g.ok("GET", "/source", nil, nil)
}

func TestCloseEndsHangingRequests(t *testing.T) {
	g := newRig(t, nil, wdad.Config{MJPEG: true})
	g.srv.HangSource(true)
	done := make(chan error, 1)
	go func() {
		_, err := g.send(context.Background(), "GET", "/source", nil)
		done <- err
	}()
	g.ok("GET", "/status", nil, nil)
	if err := g.srv.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("a hanging /source answered after Close; want its connection dropped")
	}
	if err := g.srv.Close(); err != nil {
		t.Errorf("second Close: %v; want nil", err)
	}
	if _, err := g.send(context.Background(), "GET", "/status", nil); err == nil {
		t.Error("GET /status succeeded after Close")
	}
}

func TestSetDelay(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.srv.SetDelay(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.send(ctx, "GET", "/status", nil)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("GET /status with an hour's delay, cancelled: %v; want context.Canceled", err)
	}
	g.srv.SetDelay(0)
	g.ok("GET", "/status", nil, nil)
}

func TestSettings(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	var v map[string]any
	g.ok("POST", "/session/"+sid+"/appium/settings", map[string]any{"settings": map[string]any{"mjpegServerFramerate": 5, "madeUp": 1}}, &v)
	if v["mjpegServerFramerate"] != 5.0 {
		t.Errorf("mjpegServerFramerate = %v after setting 5", v["mjpegServerFramerate"])
	}
	if _, ok := v["madeUp"]; ok {
		t.Error("an unknown setting was stored")
	}
	g.ok("GET", "/session/"+sid+"/appium/settings", nil, &v)
	if v["mjpegServerFramerate"] != 5.0 || v["mjpegServerScreenshotQuality"] != 25.0 {
		t.Errorf("settings %v; want framerate 5 and quality 25", v)
	}
}

func TestPasteboard(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	const text = "héllo 📋 日本"
	g.ok("POST", "/wda/setPasteboard", map[string]any{"content": b64(text)}, nil)
	if got, err := g.d.Clipboard(context.Background(), iphone); err != nil || got != text {
		t.Errorf("sim clipboard = %q, %v; want %q", got, err, text)
	}
	var got string
	g.ok("POST", "/session/"+sid+"/wda/getPasteboard", map[string]any{"contentType": "plaintext"}, &got)
	if got != b64(text) {
		t.Errorf("getPasteboard = %q; want %q", got, b64(text))
	}
	g.fails("POST", "/wda/setPasteboard", map[string]any{"content": b64("x"), "contentType": "image"}, http.StatusInternalServerError, "unsupported operation")
}

func TestPressButton(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.apple.mobilemail"})
	p := "/session/" + sid + "/wda/pressButton"
	g.ok("POST", p, map[string]any{"name": "volumeUp"}, nil)
	g.ok("POST", p, map[string]any{"name": "VOLUMEDOWN"}, nil)
	if got := g.activeApp(); got != "com.apple.mobilemail" {
		t.Errorf("volume keys changed the app in front to %q", got)
	}
	g.ok("POST", p, map[string]any{"name": "Home"}, nil)
	if got := g.activeApp(); got != "com.apple.springboard" {
		t.Errorf("after home the app in front is %q; want com.apple.springboard", got)
	}
	for _, name := range []any{"power", nil} {
		e := g.fails("POST", p, map[string]any{"name": name}, http.StatusInternalServerError, "unknown error")
		if !strings.Contains(e.Message, "is unknown. Only the following button names are supported") {
			t.Errorf("pressButton %v: message %q; want WebDriverAgent's unknown-button message", name, e.Message)
		}
	}
}

func TestScreenshot(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	for _, path := range []string{"/screenshot", "/session/" + sid + "/screenshot"} {
		var enc string
		g.ok("GET", path, nil, &enc)
		w, h := pngSize(t, enc)
		var screen struct {
			ScreenSize struct{ Width, Height float64 }
			Scale      float64
		}
		g.ok("GET", "/wda/screen", nil, &screen)
		want := []int{int(screen.ScreenSize.Width * screen.Scale), int(screen.ScreenSize.Height * screen.Scale)}
		if diff := cmp.Diff(want, []int{w, h}); diff != "" {
			t.Errorf("GET %s: PNG size (-points×scale +got):\n%s", path, diff)
		}
	}
}

func TestOrientation(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	var o string
	g.ok("GET", "/orientation", nil, &o)
	if o != "PORTRAIT" {
		t.Errorf("orientation %q; want PORTRAIT", o)
	}
}

// TestTimingProfile: under a slow profile the page source, gestures and
// screenshots take their time, and the other routes answer at once. The
// slow routes are given an hour, so only a route the profile leaves alone
// can answer within the client's patience.
func TestTimingProfile(t *testing.T) {
	hour := timing.Range{Min: time.Hour, Max: time.Hour}
	g := newRig(t, nil, wdad.Config{Timing: timing.Profile{Source: hour, Tap: hour, Screenshot: hour}})
	sid := g.session(nil)
	slow := func(method, path string) bool {
		ctx, cancel := context.WithTimeout(context.Background(), testkit.Scaled(1500*time.Millisecond))
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, method, g.base+path, strings.NewReader(`{"x":10,"y":10}`))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return errors.Is(err, context.DeadlineExceeded)
	}
	for _, tt := range []struct {
		method, path string
		slow         bool
	}{
		{"GET", "/source", true},
		{"GET", "/screenshot", true},
		{"POST", "/session/" + sid + "/wda/tap", true},
		{"GET", "/status", false},
		{"GET", "/wda/locked", false},
		{"GET", "/window/size", false},
	} {
		if got := slow(tt.method, tt.path); got != tt.slow {
			t.Errorf("%s %s waited: %v; want %v", tt.method, tt.path, got, tt.slow)
		}
	}
	p, err := timing.Parse("phone")
	if err != nil || p.Source.Min < 500*time.Millisecond || p.Tap.Min < time.Second {
		t.Errorf("the phone profile = %+v, %v; want a real phone's source and tap times", p, err)
	}
}
