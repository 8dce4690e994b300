package wda

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Status is what GET /status says about WDA and the phone.
type Status struct {
	// Ready is true when WDA accepts commands.
	Ready bool
	// Message is WDA's word on its state, e.g. "WebDriverAgent is ready to
	// accept commands".
	Message string
	OS      OSInfo
	// IP is the phone's Wi-Fi address, when WDA knows it.
	IP string
	// Device is the kind of device: "iphone", "ipad"…
	Device string
	// BuildVersion is WDA's version, when its build reports one.
	BuildVersion string
	// BundleID is the bundle id WDA's runner was built with.
	BundleID string
	// SessionID is the session WDA considers active, "" when none. It may
	// belong to another client.
	SessionID string
}

// OSInfo names the phone's operating system.
type OSInfo struct {
	Name       string // "iOS"
	Version    string // "17.5.1"
	SDKVersion string // the SDK WDA was built with
}

// ScreenInfo is the screen's size in points and the points-to-pixels scale.
type ScreenInfo struct {
	Width, Height float64 // points
	Scale         float64 // pixels per point, e.g. 3
}

// AppInfo names the app in front.
type AppInfo struct {
	BundleID string
	Name     string
	PID      int
}

// DeviceInfo describes the phone.
type DeviceInfo struct {
	Name        string // the name the person gave the phone
	Model       string // e.g. "iPhone"
	UUID        string
	Locale      string // e.g. "en_US"
	TimeZone    string // e.g. "Europe/Paris"
	IsSimulator bool
}

// App states, as AppState returns them (XCUIApplicationState).
const (
	AppStateUnknown                    = 0
	AppStateNotRunning                 = 1
	AppStateRunningBackgroundSuspended = 2
	AppStateRunningBackground          = 3
	AppStateRunningForeground          = 4
)

// Status returns WDA's status (GET /status). It needs no session and is the
// cheapest way to see whether WDA answers.
func (c *Client) Status(ctx context.Context) (Status, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/status"})
	if err != nil {
		return Status{}, err
	}
	var s struct {
		Ready   *bool  `json:"ready"`
		Message string `json:"message"`
		State   string `json:"state"`
		OS      struct {
			Name       string `json:"name"`
			Version    string `json:"version"`
			SDKVersion string `json:"sdkVersion"`
		} `json:"os"`
		IOS struct {
			IP string `json:"ip"`
		} `json:"ios"`
		Build struct {
			Version  string `json:"version"`
			BundleID string `json:"productBundleIdentifier"`
		} `json:"build"`
		Device string `json:"device"`
	}
	if err := unmarshal("GET /status", v.Value, &s); err != nil {
		return Status{}, err
	}
	return Status{
		// Older WDAs have no "ready" but say state "success".
		Ready:        (s.Ready != nil && *s.Ready) || (s.Ready == nil && s.State == "success"),
		Message:      s.Message,
		OS:           OSInfo{Name: s.OS.Name, Version: s.OS.Version, SDKVersion: s.OS.SDKVersion},
		IP:           s.IOS.IP,
		Device:       s.Device,
		BuildVersion: s.Build.Version,
		BundleID:     s.Build.BundleID,
		SessionID:    v.SessionID,
	}, nil
}

// Screen returns the screen's size in points and its scale (GET
// /wda/screen). Every coordinate the Client takes is in points; multiply by
// Scale for pixels.
func (c *Client) Screen(ctx context.Context) (ScreenInfo, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/wda/screen"})
	if err != nil {
		return ScreenInfo{}, err
	}
	var s struct {
		ScreenSize struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"screenSize"`
		Scale float64 `json:"scale"`
	}
	if err := unmarshal("GET /wda/screen", v.Value, &s); err != nil {
		return ScreenInfo{}, err
	}
	return ScreenInfo{Width: s.ScreenSize.Width, Height: s.ScreenSize.Height, Scale: s.Scale}, nil
}

// Source returns the page source as JSON: the raw tree object of GET
// /session/{id}/source?format=json, for dump.ParseWDA. When no session can
// be made it asks the bare /source. It has the slow timeout: a large tree
// takes seconds.
func (c *Client) Source(ctx context.Context) ([]byte, error) {
	path := "/source?format=json"
	if c.excluded != "" {
		path += "&excluded_attributes=" + url.QueryEscape(c.excluded)
	}
	v, err := c.call(ctx, request{method: http.MethodGet, path: path, session: true, orBare: true, slow: true})
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(v.Value); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("wda GET /source: value is not a tree object: %s: %w", quotePrefix(t, 32), ErrProtocol)
	}
	return v.Value, nil
}

// Settings returns WDA's settings (GET /session/{id}/appium/settings).
func (c *Client) Settings(ctx context.Context) (map[string]any, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/appium/settings", session: true})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, unmarshal("GET /appium/settings", v.Value, &out)
}

// UpdateSettings changes settings in the current session (POST
// /session/{id}/appium/settings) and keeps them for the sessions the Client
// creates later. It returns every setting as WDA then has it; WDA skips a
// setting it does not know.
func (c *Client) UpdateSettings(ctx context.Context, settings map[string]any) (map[string]any, error) {
	c.mu.Lock()
	for k, v := range settings {
		c.settings[k] = v
	}
	c.mu.Unlock()
	body := struct {
		Settings map[string]any `json:"settings"`
	}{settings}
	v, err := c.call(ctx, request{method: http.MethodPost, path: "/appium/settings", session: true, body: body, idempotent: true})
	if err != nil {
		return nil, err
	}
	var out map[string]any
	return out, unmarshal("POST /appium/settings", v.Value, &out)
}

// ActiveApp returns the app in front (GET /wda/activeAppInfo); on the home
// screen that is SpringBoard, "com.apple.springboard".
func (c *Client) ActiveApp(ctx context.Context) (AppInfo, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/wda/activeAppInfo"})
	if err != nil {
		return AppInfo{}, err
	}
	var a struct {
		BundleID string `json:"bundleId"`
		Name     string `json:"name"`
		PID      int    `json:"pid"`
	}
	if err := unmarshal("GET /wda/activeAppInfo", v.Value, &a); err != nil {
		return AppInfo{}, err
	}
	return AppInfo(a), nil
}

// DeviceInfo describes the phone (GET /wda/device/info).
func (c *Client) DeviceInfo(ctx context.Context) (DeviceInfo, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/wda/device/info"})
	if err != nil {
		return DeviceInfo{}, err
	}
	var d struct {
		Name        string `json:"name"`
		Model       string `json:"model"`
		UUID        string `json:"uuid"`
		Locale      string `json:"currentLocale"`
		TimeZone    string `json:"timeZone"`
		IsSimulator bool   `json:"isSimulator"`
	}
	if err := unmarshal("GET /wda/device/info", v.Value, &d); err != nil {
		return DeviceInfo{}, err
	}
	return DeviceInfo(d), nil
}

// Locked reports whether the phone is locked (GET /wda/locked).
func (c *Client) Locked(ctx context.Context) (bool, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/wda/locked"})
	if err != nil {
		return false, err
	}
	var locked bool
	return locked, unmarshal("GET /wda/locked", v.Value, &locked)
}

// Lock locks the phone (POST /wda/lock).
func (c *Client) Lock(ctx context.Context) error {
	return c.post(ctx, request{path: "/wda/lock"})
}

// Unlock wakes the phone and, when it has no passcode, unlocks it (POST
// /wda/unlock). With a passcode the lock screen stays; check Locked.
func (c *Client) Unlock(ctx context.Context) error {
	return c.post(ctx, request{path: "/wda/unlock", slow: true})
}

// Tap taps at (x, y) in points (POST /wda/tap).
func (c *Client) Tap(ctx context.Context, x, y float64) error {
	return c.post(ctx, request{path: "/wda/tap", session: true, body: point{x, y}})
}

// DoubleTap taps twice at (x, y) in points (POST /wda/doubleTap).
func (c *Client) DoubleTap(ctx context.Context, x, y float64) error {
	return c.post(ctx, request{path: "/wda/doubleTap", session: true, body: point{x, y}})
}

// TouchAndHold presses at (x, y) in points for d (POST /wda/touchAndHold).
func (c *Client) TouchAndHold(ctx context.Context, x, y float64, d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("wda: touch and hold: negative duration %v", d)
	}
	body := struct {
		X        float64 `json:"x"`
		Y        float64 `json:"y"`
		Duration float64 `json:"duration"`
	}{x, y, d.Seconds()}
	return c.post(ctx, request{path: "/wda/touchAndHold", session: true, body: body, extra: d})
}

// Keys types text into the focused element (POST /wda/keys). The text goes
// as user-perceived characters, so accents, CJK and emoji arrive whole;
// "\b" is delete and "\n" return. Typing takes time: the deadline grows
// with the text. The text is never logged.
func (c *Client) Keys(ctx context.Context, text string) error {
	chars := splitGraphemes(text)
	if len(chars) == 0 {
		return nil
	}
	body := struct {
		Value []string `json:"value"`
	}{chars}
	return c.post(ctx, request{path: "/wda/keys", session: true, body: body, secret: text,
		extra: time.Duration(len(chars)) * typingTime})
}

// PressButton presses a hardware button (POST /wda/pressButton): "home",
// "volumeUp" or "volumeDown" (and "action" or "camera" on phones that have
// them).
func (c *Client) PressButton(ctx context.Context, name string) error {
	if name == "" {
		return fmt.Errorf("wda: press button: no button name")
	}
	body := struct {
		Name string `json:"name"`
	}{name}
	return c.post(ctx, request{path: "/wda/pressButton", session: true, body: body})
}

// Home goes to the home screen (POST /wda/homescreen).
func (c *Client) Home(ctx context.Context) error {
	return c.post(ctx, request{path: "/wda/homescreen"})
}

// Launch starts the app with bundleID, or brings it to the front when it
// runs (POST /wda/apps/launch).
func (c *Client) Launch(ctx context.Context, bundleID string) error {
	return c.app(ctx, request{path: "/wda/apps/launch", slow: true}, bundleID, nil)
}

// Activate brings the app with bundleID to the front (POST
// /wda/apps/activate).
func (c *Client) Activate(ctx context.Context, bundleID string) error {
	return c.app(ctx, request{path: "/wda/apps/activate", slow: true, idempotent: true}, bundleID, nil)
}

// Terminate stops the app with bundleID (POST /wda/apps/terminate) and
// reports whether it was running.
func (c *Client) Terminate(ctx context.Context, bundleID string) (bool, error) {
	var stopped bool
	err := c.app(ctx, request{path: "/wda/apps/terminate", slow: true}, bundleID, &stopped)
	return stopped, err
}

// AppState returns the state of the app with bundleID (POST
// /wda/apps/state): one of the AppState constants.
func (c *Client) AppState(ctx context.Context, bundleID string) (int, error) {
	var state int
	err := c.app(ctx, request{path: "/wda/apps/state", idempotent: true}, bundleID, &state)
	return state, err
}

// app sends r, an /wda/apps/ command, for bundleID and decodes the answer
// into out unless out is nil.
func (c *Client) app(ctx context.Context, r request, bundleID string, out any) error {
	if bundleID == "" {
		return fmt.Errorf("wda POST %s: no bundle id", r.path)
	}
	r.method, r.session = http.MethodPost, true
	r.body = struct {
		BundleID string `json:"bundleId"`
	}{bundleID}
	v, err := c.call(ctx, r)
	if err != nil || out == nil {
		return err
	}
	return unmarshal("POST "+r.path, v.Value, out)
}

// OpenURL opens url, a web address or an app's deep link (POST /url).
func (c *Client) OpenURL(ctx context.Context, url string) error {
	if url == "" {
		return fmt.Errorf("wda POST /url: no URL")
	}
	body := struct {
		URL string `json:"url"`
	}{url}
	return c.post(ctx, request{path: "/url", session: true, body: body, slow: true})
}

// Screenshot returns the screen as PNG at its native pixel size (GET
// /screenshot). It has the slow timeout: WDA may take seconds to re-encode.
func (c *Client) Screenshot(ctx context.Context) ([]byte, error) {
	v, err := c.call(ctx, request{method: http.MethodGet, path: "/screenshot", slow: true})
	if err != nil {
		return nil, err
	}
	png, err := decodeBase64("GET /screenshot", v.Value)
	if err != nil {
		return nil, err
	}
	if len(png) == 0 {
		return nil, fmt.Errorf("wda GET /screenshot: empty image: %w", ErrProtocol)
	}
	return png, nil
}

// SetPasteboard puts text on the pasteboard (POST /wda/setPasteboard). The
// text is never logged.
func (c *Client) SetPasteboard(ctx context.Context, text string) error {
	body := struct {
		Content     string `json:"content"`
		ContentType string `json:"contentType"`
	}{base64.StdEncoding.EncodeToString([]byte(text)), "plaintext"}
	return c.post(ctx, request{path: "/wda/setPasteboard", body: body, idempotent: true, secret: text})
}

// GetPasteboard returns the text on the pasteboard (POST
// /wda/getPasteboard). iOS may show the person a paste prompt.
func (c *Client) GetPasteboard(ctx context.Context) (string, error) {
	body := struct {
		ContentType string `json:"contentType"`
	}{"plaintext"}
	v, err := c.call(ctx, request{method: http.MethodPost, path: "/wda/getPasteboard", body: body, idempotent: true})
	if err != nil {
		return "", err
	}
	b, err := decodeBase64("POST /wda/getPasteboard", v.Value)
	return string(b), err
}

// post sends a POST whose answer carries nothing.
func (c *Client) post(ctx context.Context, r request) error {
	r.method = http.MethodPost
	_, err := c.call(ctx, r)
	return err
}

// point is the body of the tap endpoints.
type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// unmarshal decodes a value, with the endpoint in the error.
func unmarshal(op string, v json.RawMessage, out any) error {
	if err := json.Unmarshal(v, out); err != nil {
		return fmt.Errorf("wda %s: unexpected value %s: %w", op, quotePrefix(v, 64), ErrProtocol)
	}
	return nil
}

// decodeBase64 decodes a value that is a base64 string. WDA sends it
// without line breaks, but tolerating them costs nothing.
func decodeBase64(op string, v json.RawMessage) ([]byte, error) {
	var s string
	if err := unmarshal(op, v, &s); err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(stripSpace(s))
	if err != nil {
		return nil, fmt.Errorf("wda %s: value is not base64: %w", op, ErrProtocol)
	}
	return b, nil
}

func stripSpace(s string) string {
	if !strings.ContainsAny(s, "\r\n\t ") {
		return s
	}
	return strings.Join(strings.Fields(s), "")
}
