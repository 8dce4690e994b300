package wdad_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// texts lists the texts a screen shows, sorted, without the status bar's
// clock (which may tick between two reads).
func texts(s *sdk.Screen) []string {
	var out []string
	for _, e := range s.Elements {
		if e.Text != "" && e.ResourceID != "clock" && e.Visible {
			out = append(out, e.Text)
		}
	}
	slices.Sort(out)
	return out
}

func TestSourceJSONMatchesTheSimScreen(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	src := g.sourceJSON(sid)
	sim := g.simScreen(iphone)
	if src.Width != 393 || src.Height != 852 {
		t.Errorf("source root %dx%d; want 393x852 points", src.Width, src.Height)
	}
	for _, e := range sim.Elements {
		if e.Text == "" || e.ResourceID == "clock" || !e.Visible {
			continue
		}
		got, ok := find(src, e.Text)
		if !ok {
			t.Errorf("sim text %q (%s) is not in the JSON source", e.Text, e.Class)
			continue
		}
		// Bounds in points: the sim's pixels ÷ 3, rounded by the parser.
		want := []int{e.Bounds.Left, e.Bounds.Top, e.Bounds.Right, e.Bounds.Bottom}
		gotB := []int{got.Bounds.Left, got.Bounds.Top, got.Bounds.Right, got.Bounds.Bottom}
		for i := range want {
			if math.Abs(float64(want[i])/3-float64(gotB[i])) > 1 {
				t.Errorf("%q bounds %v points; want the sim's %v pixels ÷ 3", e.Text, gotB, want)
				break
			}
		}
	}
}

func TestSourceJSONShape(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	r := g.ok("GET", "/source?format=json", nil, nil)
	var root map[string]any
	if err := json.Unmarshal(r.value, &root); err != nil {
		t.Fatal(err)
	}
	if root["type"] != "Application" || root["name"] != "Home Screen" {
		t.Errorf("root type %v, name %v; want Application, Home Screen", root["type"], root["name"])
	}
	leaves, withID := 0, 0
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		for _, k := range []string{"type", "rawIdentifier", "name", "label", "value", "rect", "frame", "nativeFrame", "isEnabled", "isVisible", "isAccessible", "isFocused"} {
			if _, ok := n[k]; !ok {
				t.Errorf("%v lacks %q", n["type"], k)
			}
		}
		if strings.HasPrefix(n["type"].(string), "XCUIElementType") {
			t.Errorf("type %v keeps the XCUIElementType prefix", n["type"])
		}
		for _, k := range []string{"isEnabled", "isVisible", "isAccessible", "isFocused"} {
			if v := n[k]; v != "1" && v != "0" {
				t.Errorf("%v %s = %#v; want the string \"1\" or \"0\"", n["type"], k, v)
			}
		}
		rect, _ := n["rect"].(map[string]any)
		for _, k := range []string{"x", "y", "width", "height"} {
			if _, ok := rect[k].(float64); !ok {
				t.Errorf("%v rect.%s = %#v; want a number", n["type"], k, rect[k])
			}
		}
		if f, _ := n["frame"].(string); !strings.HasPrefix(f, "{{") {
			t.Errorf("%v frame %#v; want \"{{x, y}, {w, h}}\"", n["type"], n["frame"])
		}
		if n["rawIdentifier"] != nil {
			withID++
		}
		kids, has := n["children"]
		if has {
			list, _ := kids.([]any)
			if len(list) == 0 {
				t.Errorf("%v has an empty children list; want it omitted", n["type"])
			}
			for _, c := range list {
				walk(c.(map[string]any))
			}
		} else {
			leaves++
		}
	}
	walk(root)
	if leaves == 0 {
		t.Error("no element without children")
	}
	if withID == 0 {
		t.Error("no element with a rawIdentifier; the status bar's should have one")
	}
}

func TestSourceXML(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.apple.Preferences"})
	x := g.sourceXML(sid)
	const head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<XCUIElementTypeApplication type=\"XCUIElementTypeApplication\" name=\"Settings\" label=\"Settings\""
	if !strings.HasPrefix(x, head) {
		t.Errorf("XML source starts %q; want %q", x[:min(len(x), len(head))], head)
	}
	for _, want := range []string{` bundleId="com.apple.Preferences"`, ` processId="`, `<XCUIElementTypeWindow type="XCUIElementTypeWindow"`, `<XCUIElementTypeSwitch type="XCUIElementTypeSwitch" value="1" name="wifi_switch" label="Wi-Fi"`} {
		if !strings.Contains(x, want) {
			t.Errorf("XML source lacks %s", want)
		}
	}
	xs, err := dump.ParseWDA([]byte(x))
	if err != nil {
		t.Fatalf("ParseWDA(xml): %v", err)
	}
	js := g.sourceJSON(sid)
	if diff := cmp.Diff(texts(js), texts(xs)); diff != "" {
		t.Errorf("texts (-json +xml):\n%s", diff)
	}
	if len(xs.Elements) != len(js.Elements) {
		t.Errorf("XML has %d elements, JSON %d", len(xs.Elements), len(js.Elements))
	}

	var scoped string
	g.ok("GET", "/source?format=xml&scope=AppiumAUT&excluded_attributes=visible,traits", nil, &scoped)
	if !strings.HasPrefix(scoped, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<AppiumAUT>\n  <XCUIElementTypeApplication ") {
		t.Errorf("scoped source starts %q; want it inside <AppiumAUT>", scoped[:min(len(scoped), 90)])
	}
	if strings.Contains(scoped, " visible=") || strings.Contains(scoped, " traits=") {
		t.Error("excluded_attributes=visible,traits left them in")
	}
	if _, err := dump.ParseWDA([]byte(scoped)); err != nil {
		t.Errorf("ParseWDA(scoped xml): %v", err)
	}
	var desc string
	g.ok("GET", "/source?format=description", nil, &desc)
	if !strings.HasPrefix(desc, "Application, pid: ") || !strings.Contains(desc, "label: 'Wi-Fi'") {
		t.Errorf("description source:\n%s\nwant an outline from the application down", desc)
	}
}

func TestSourceValues(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.apple.mobilenotes"})
	g.tapOn(sid, "New note")
	// An empty text field's value is its placeholder, as XCTest reports it.
	field, ok := find(g.sourceJSON(sid), "Note")
	if !ok || !field.Editable || field.Text != "Note" || field.Hint != "Note" {
		t.Errorf("empty note field %+v; want an editable field whose value and placeholder are \"Note\"", field)
	}
}

func TestSourceFixtures(t *testing.T) {
	theapp, err := os.ReadFile("testdata/theapp-login-securefield-appium.xml")
	if err != nil {
		t.Fatal(err)
	}
	board, err := os.ReadFile("testdata/springboard-home-wda-legacy.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		device   string
		launch   string
		worldDir string
		scale    int
		format   string
		want     []byte // the file, byte for byte; nil: a built source
		wantText string
	}{
		{name: "app screen as XML", device: "wda-theapp", launch: "io.cloudgrey.the-app", worldDir: "testdata", format: "xml", want: theapp},
		{name: "app screen as JSON is built", device: "wda-theapp", launch: "io.cloudgrey.the-app", worldDir: "testdata", format: "json", wantText: "Login"},
		{name: "phone dump as JSON", device: "wda-springboard", worldDir: "testdata", format: "json", want: board},
		{name: "phone dump as XML is built", device: "wda-springboard", worldDir: "testdata", format: "xml", wantText: "Settings"},
		{name: "unreadable capture is built", device: "wda-theapp", launch: "io.cloudgrey.the-app", worldDir: "nowhere", format: "xml", wantText: "Login"},
		{name: "capture at another scale is built", device: "wda-theapp", launch: "io.cloudgrey.the-app", worldDir: "testdata", scale: 2, format: "xml", wantText: "Login"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, testWorld(t), wdad.Config{DeviceID: tt.device, WorldDir: tt.worldDir, Scale: tt.scale})
			caps := map[string]any{}
			if tt.launch != "" {
				caps["bundleId"] = tt.launch
			}
			sid := g.session(caps)
			r := g.ok("GET", "/session/"+sid+"/source?format="+tt.format, nil, nil)
			var got []byte
			if tt.format == "xml" {
				var x string
				if err := json.Unmarshal(r.value, &x); err != nil {
					t.Fatal(err)
				}
				got = []byte(x)
			} else {
				got = r.body
			}
			if tt.want != nil {
				if !bytes.Equal(got, tt.want) {
					t.Fatalf("source is not the captured file byte for byte:\n%s", got[:min(len(got), 400)])
				}
				return
			}
			if bytes.Equal(got, theapp) || bytes.Equal(got, board) {
				t.Fatal("source is the captured file; want one built from the screen")
			}
			s, err := dump.ParseWDA(got)
			if err != nil {
				t.Fatalf("ParseWDA: %v", err)
			}
			if !has(s, tt.wantText) {
				t.Errorf("built source lacks %q", tt.wantText)
			}
		})
	}
}

func TestTapOpensAnApp(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	if !has(g.sourceJSON(sid), "Mail") {
		t.Fatal("the home screen has no Mail icon")
	}
	g.tapOn(sid, "Mail")
	if s := g.simScreen(iphone); s.App.ID != "com.apple.mobilemail" {
		t.Errorf("after tapping Mail the sim shows %q", s.App.ID)
	}
	if !has(g.sourceJSON(sid), "Inbox") {
		t.Error("after tapping Mail the source has no Inbox")
	}
	if got := g.activeApp(); got != "com.apple.mobilemail" {
		t.Errorf("active app %q; want com.apple.mobilemail", got)
	}
}

func TestKeys(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.apple.mobilenotes"})
	keys := "/session/" + sid + "/wda/keys"
	g.fails("POST", keys, map[string]any{"value": []any{"x"}}, http.StatusBadRequest, "invalid element state")

	g.tapOn(sid, "New note")
	g.tapOn(sid, "Note")
	g.ok("POST", keys, map[string]any{"value": []any{"h", "é", "llo 👋 ", "日本"}}, nil)
	if _, ok := find(g.sourceJSON(sid), "héllo 👋 日本"); !ok {
		t.Errorf("the note field does not show the text typed; sim texts %q", texts(g.simScreen(iphone)))
	}
	g.ok("POST", keys, map[string]any{"value": []any{"\b"}}, nil)
	if !has(g.sourceJSON(sid), "héllo 👋 日") {
		t.Error("\\b did not delete the last character")
	}

	dismiss := "/session/" + sid + "/wda/keyboard/dismiss"
	g.fails("POST", dismiss, map[string]any{}, http.StatusBadRequest, "invalid element state")
	g.ok("POST", dismiss, map[string]any{"keyNames": []any{"Done"}}, nil)
	if g.simScreen(iphone).KeyboardShown {
		t.Error("keyboard still shown after dismiss with keyNames [Done]")
	}
	g.ok("POST", dismiss, map[string]any{}, nil) // no keyboard: nothing to do
	g.fails("POST", keys, map[string]any{"value": []any{"x"}}, http.StatusBadRequest, "invalid element state")
}

func TestGestures(t *testing.T) {
	pointer := func(acts ...map[string]any) map[string]any {
		list := make([]any, len(acts))
		for i, a := range acts {
			list[i] = a
		}
		return map[string]any{"actions": []any{map[string]any{
			"type": "pointer", "id": "finger1", "parameters": map[string]any{"pointerType": "touch"}, "actions": list,
		}}}
	}
	move := func(x, y, ms float64) map[string]any {
		return map[string]any{"type": "pointerMove", "duration": ms, "x": x, "y": y}
	}
	down := map[string]any{"type": "pointerDown", "button": 0}
	up := map[string]any{"type": "pointerUp", "button": 0}
	pause := func(ms float64) map[string]any { return map[string]any{"type": "pause", "duration": ms} }
	scrolled := func(g *rig, sid string) bool {
		s := g.sourceJSON(sid)
		return !has(s, "Wi-Fi") && has(s, "About phone")
	}

	tests := []struct {
		name  string
		app   string
		setup func(g *rig, sid string)
		path  string
		body  func(g *rig, sid string) any
		check func(g *rig, sid string) bool
	}{
		{
			name: "W3C tap opens an app",
			path: "/actions",
			body: func(g *rig, sid string) any {
				e, _ := find(g.sourceJSON(sid), "Mail")
				c := e.Bounds.Center()
				return pointer(move(float64(c.X), float64(c.Y), 0), down, pause(50), up)
			},
			check: func(g *rig, sid string) bool { return has(g.sourceJSON(sid), "Inbox") },
		},
		{
			name: "W3C swipe scrolls a list",
			app:  "com.apple.Preferences",
			path: "/actions",
			body: func(*rig, string) any {
				return pointer(move(196, 800, 0), down, move(196, 100, 300), up)
			},
			check: scrolled,
		},
		{
			name:  "W3C long press pastes into a field",
			app:   "com.apple.mobilenotes",
			setup: func(g *rig, sid string) { g.tapOn(sid, "New note") },
			path:  "/actions",
			body: func(g *rig, sid string) any {
				g.ok("POST", "/wda/setPasteboard", map[string]any{"content": b64("pasted!")}, nil)
				e, _ := find(g.sourceJSON(sid), "Note")
				c := e.Bounds.Center()
				return pointer(move(float64(c.X), float64(c.Y), 0), down, pause(800), up)
			},
			check: func(g *rig, sid string) bool { return has(g.sourceJSON(sid), "pasted!") },
		},
		{
			name: "drag scrolls a list",
			app:  "com.apple.Preferences",
			path: "/wda/dragfromtoforduration",
			body: func(*rig, string) any {
				return map[string]any{"fromX": 196, "fromY": 800, "toX": 196, "toY": 100, "duration": 0.1}
			},
			check: scrolled,
		},
		{
			name: "swipe route scrolls a list",
			app:  "com.apple.Preferences",
			path: "/wda/swipe",
			body: func(*rig, string) any { return map[string]any{"direction": "up"} },
			check: func(g *rig, sid string) bool {
				return !has(g.sourceJSON(sid), "Wi-Fi")
			},
		},
		{
			name:  "touch and hold pastes into a field",
			app:   "com.apple.mobilenotes",
			setup: func(g *rig, sid string) { g.tapOn(sid, "New note") },
			path:  "/wda/touchAndHold",
			body: func(g *rig, sid string) any {
				g.ok("POST", "/wda/setPasteboard", map[string]any{"content": b64("held")}, nil)
				e, _ := find(g.sourceJSON(sid), "Note")
				c := e.Bounds.Center()
				return map[string]any{"x": c.X, "y": c.Y, "duration": 1.0}
			},
			check: func(g *rig, sid string) bool { return has(g.sourceJSON(sid), "held") },
		},
		{
			name: "double tap opens an app",
			path: "/wda/doubleTap",
			body: func(g *rig, sid string) any {
				e, _ := find(g.sourceJSON(sid), "Shop")
				c := e.Bounds.Center()
				return map[string]any{"x": c.X, "y": c.Y}
			},
			check: func(g *rig, sid string) bool { return has(g.sourceJSON(sid), "Wireless Headphones") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil, wdad.Config{})
			g.unlock()
			caps := map[string]any{}
			if tt.app != "" {
				caps["bundleId"] = tt.app
			}
			sid := g.session(caps)
			if tt.setup != nil {
				tt.setup(g, sid)
			}
			if tt.check(g, sid) {
				t.Fatal("the outcome is there before the gesture")
			}
			g.ok("POST", "/session/"+sid+tt.path, tt.body(g, sid), nil)
			if !tt.check(g, sid) {
				t.Errorf("POST %s had no effect; sim texts %q", tt.path, texts(g.simScreen(iphone)))
			}
		})
	}
}

// TestMultiTouchIsUnsupported: beyond two fingers (a pinch, in
// pinch_test.go) the virtual phone takes no multi-touch.
func TestMultiTouchIsUnsupported(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	finger := func(id string, x float64) map[string]any {
		return map[string]any{"type": "pointer", "id": id, "actions": []any{
			map[string]any{"type": "pointerMove", "x": x, "y": 400},
			map[string]any{"type": "pointerDown"},
			map[string]any{"type": "pointerUp"},
		}}
	}
	g.fails("POST", "/session/"+sid+"/actions", map[string]any{"actions": []any{finger("a", 100), finger("b", 200), finger("c", 300)}},
		http.StatusInternalServerError, "unsupported operation")
}

func TestApps(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	s := "/session/" + sid
	const mail = "com.apple.mobilemail"
	state := func(bundle string) int {
		t.Helper()
		var v int
		g.ok("POST", s+"/wda/apps/state", map[string]any{"bundleId": bundle}, &v)
		return v
	}
	if got := state(mail); got != 1 {
		t.Errorf("Mail state %d before launch; want 1 (not running)", got)
	}
	g.ok("POST", s+"/wda/apps/launch", map[string]any{"bundleId": mail, "arguments": []any{"-a"}, "environment": map[string]any{"K": "V"}}, nil)
	if got := state(mail); got != 4 {
		t.Errorf("Mail state %d after launch; want 4 (foreground)", got)
	}
	var info struct {
		BundleID         string `json:"bundleId"`
		PID              int    `json:"pid"`
		Name             string `json:"name"`
		ProcessArguments struct {
			Args []string          `json:"args"`
			Env  map[string]string `json:"env"`
		} `json:"processArguments"`
	}
	g.ok("GET", "/wda/activeAppInfo", nil, &info)
	if info.BundleID != mail || info.PID <= 0 || !slices.Equal(info.ProcessArguments.Args, []string{"-a"}) || info.ProcessArguments.Env["K"] != "V" {
		t.Errorf("activeAppInfo %+v; want Mail with a pid, args [-a] and env K=V", info)
	}

	g.ok("POST", "/wda/homescreen", nil, nil)
	if got, board := state(mail), state("com.apple.springboard"); got != 3 || board != 4 {
		t.Errorf("after home: Mail %d, SpringBoard %d; want 3 and 4", got, board)
	}
	g.ok("POST", s+"/wda/apps/activate", map[string]any{"bundleId": mail}, nil)
	if got := state(mail); got != 4 {
		t.Errorf("Mail state %d after activate; want 4", got)
	}
	var done bool
	g.ok("POST", s+"/wda/apps/terminate", map[string]any{"bundleId": mail}, &done)
	if !done || state(mail) != 1 || g.activeApp() != "com.apple.springboard" {
		t.Errorf("terminate: %v, state %d, in front %s; want true, 1, SpringBoard", done, state(mail), g.activeApp())
	}
	g.ok("POST", s+"/wda/apps/terminate", map[string]any{"bundleId": mail}, &done)
	if done {
		t.Error("terminating an app that is not running answered true")
	}
	var list []struct {
		BundleID string `json:"bundleId"`
	}
	g.ok("GET", s+"/wda/apps/list", nil, &list)
	if len(list) != 1 || list[0].BundleID != "com.apple.springboard" {
		t.Errorf("apps list %+v; want SpringBoard only", list)
	}
}

func TestUnknownApp(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	s := "/session/" + sid
	body := map[string]any{"bundleId": "com.example.nope"}
	for _, path := range []string{"/wda/apps/launch", "/wda/apps/activate"} {
		t.Run(path, func(t *testing.T) {
			g := g.on(t)
			e := g.fails("POST", s+path, body, http.StatusInternalServerError, "unknown error")
			if e.Message != "The application 'com.example.nope' is not installed on the device under test" {
				t.Errorf("message %q; want WebDriverAgent's not-installed message", e.Message)
			}
		})
	}
	// As in WebDriverAgent, terminate and state do not fail: the app simply
	// does not run.
	var done bool
	g.ok("POST", s+"/wda/apps/terminate", body, &done)
	var st int
	g.ok("POST", s+"/wda/apps/state", body, &st)
	if done || st != 1 {
		t.Errorf("terminate %v, state %d for an unknown app; want false and 1", done, st)
	}
}

func TestOpenURL(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(nil)
	const u = "https://pinky.example/path?q=1"
	g.ok("POST", "/session/"+sid+"/url", map[string]any{"url": u}, nil)
	if !has(g.sourceJSON(sid), u) {
		t.Errorf("the browser does not show %s", u)
	}
	if got := g.activeApp(); got != "com.apple.mobilesafari" {
		t.Errorf("active app %q; want com.apple.mobilesafari", got)
	}
	e := g.fails("POST", "/session/"+sid+"/url", map[string]any{"url": "no scheme"}, http.StatusInternalServerError, "unknown error")
	if !strings.Contains(e.Message, "is not a valid URL") {
		t.Errorf("message %q; want \"… is not a valid URL\"", e.Message)
	}

	// The initialUrl capability opens a link as the session starts.
	g.ok("POST", "/wda/homescreen", nil, nil)
	const u2 = "https://pinky.example/start"
	sid = g.session(map[string]any{"initialUrl": u2})
	if !has(g.sourceJSON(sid), u2) {
		t.Errorf("a session with initialUrl does not show %s", u2)
	}
}

func TestAlerts(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.pinky.sim.shop"})
	g.fails("GET", "/alert/text", nil, http.StatusNotFound, "no such alert")
	g.tapOn(sid, "Add to cart")
	g.tapOn(sid, "Place order")
	var text string
	g.ok("GET", "/alert/text", nil, &text)
	if !strings.Contains(text, "Confirm payment") || !strings.Contains(text, "Pay $59.99") {
		t.Errorf("alert text %q; want the payment confirmation", text)
	}
	var buttons []string
	g.ok("GET", "/session/"+sid+"/wda/alert/buttons", nil, &buttons)
	if diff := cmp.Diff([]string{"Cancel", "Pay"}, buttons); diff != "" {
		t.Errorf("alert buttons (-want +got):\n%s", diff)
	}
	g.ok("POST", "/alert/dismiss", nil, nil)
	g.fails("GET", "/alert/text", nil, http.StatusNotFound, "no such alert")

	g.tapOn(sid, "Place order")
	g.ok("POST", "/session/"+sid+"/alert/accept", map[string]any{}, nil)
	testkit.WaitUntil(t, "order placed", func() bool { return has(g.sourceJSON(sid), "Order placed") })
}

// TestSourceFramesAsWDA: rect, frame and the XML's x, y, width and height
// are XCTest's frame rounded outward to whole points (CGRectIntegral in
// wdFrame); only nativeFrame keeps the fractions a 3x screen gives. Each
// node has isNativeAccessibilityElement and customActions; an element
// inside an accessibility element is not accessible itself; the XML has no
// focused attribute (FBXPath writes it on tvOS only).
func TestSourceFramesAsWDA(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	g.unlock()
	sid := g.session(map[string]any{"bundleId": "com.apple.Preferences"})
	r := g.ok("GET", "/session/"+sid+"/source?format=json", nil, nil)
	var root map[string]any
	if err := json.Unmarshal(r.value, &root); err != nil {
		t.Fatal(err)
	}
	fractions := 0
	var walk func(n map[string]any, underAccessible bool)
	walk = func(n map[string]any, underAccessible bool) {
		rect := n["rect"].(map[string]any)
		x, y, w, h := rect["x"].(float64), rect["y"].(float64), rect["width"].(float64), rect["height"].(float64)
		for _, v := range []float64{x, y, w, h} {
			if v != math.Trunc(v) {
				t.Errorf("%v rect %v has a fraction; want whole points", n["type"], rect)
			}
		}
		if want := fmt.Sprintf("{{%g, %g}, {%g, %g}}", x, y, w, h); n["frame"] != want {
			t.Errorf("%v frame %v; want %s (the rect's)", n["type"], n["frame"], want)
		}
		var nx, ny, nw, nh float64
		if _, err := fmt.Sscanf(n["nativeFrame"].(string), "{{%g, %g}, {%g, %g}}", &nx, &ny, &nw, &nh); err != nil {
			t.Fatalf("%v nativeFrame %v: %v", n["type"], n["nativeFrame"], err)
		}
		if nx < x || ny < y || nx+nw > x+w || ny+nh > y+h || x <= nx-1 || x+w >= nx+nw+1 {
			t.Errorf("%v rect %v does not hold nativeFrame %v tightly", n["type"], rect, n["nativeFrame"])
		}
		if nx != math.Trunc(nx) || nw != math.Trunc(nw) {
			fractions++
		}
		native := n["isNativeAccessibilityElement"]
		if native != "1" && native != "0" {
			t.Errorf("%v isNativeAccessibilityElement %#v; want \"1\" or \"0\"", n["type"], native)
		}
		if v, has := n["customActions"]; !has || v != nil {
			t.Errorf("%v customActions %#v (present %v); want null", n["type"], v, has)
		}
		if underAccessible && n["isAccessible"] == "1" {
			t.Errorf("%v %v is accessible inside an accessibility element", n["type"], n["label"])
		}
		kids, _ := n["children"].([]any)
		for _, c := range kids {
			walk(c.(map[string]any), underAccessible || (native == "1" && n["type"] != "Table"))
		}
	}
	walk(root, false)
	if fractions == 0 {
		t.Error("no nativeFrame with a fraction: the test's screen does not exercise the rounding")
	}
	if x := g.sourceXML(sid); strings.Contains(x, " focused=") || strings.Contains(x, `.3333`) {
		t.Errorf("XML source has focused or fractional points:\n%.600s", x)
	}
	var wr map[string]float64
	g.ok("GET", "/session/"+sid+"/window/rect", nil, &wr)
	var ws map[string]float64
	g.ok("GET", "/window/size", nil, &ws)
	if wr["x"] != 0 || wr["y"] != 0 || wr["width"] != ws["width"] || wr["height"] != ws["height"] {
		t.Errorf("window/rect %v; want the origin and the window's size %v", wr, ws)
	}
}
