package wdad

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"math"
	"net/http"
	"os"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// points converts pixels to points.
func (s *Server) points(px int) float64 { return float64(px) / s.scale }

// wdaScreen answers GET /wda/screen: sizes in points and the scale.
func (s *Server) wdaScreen(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	var bar sdk.Rect
	for _, e := range scr.Elements {
		if e.Class == "XCUIElementTypeStatusBar" {
			bar = e.Bounds
			break
		}
	}
	return map[string]any{
		"screenSize":    map[string]any{"width": s.points(s.width()), "height": s.points(s.height())},
		"statusBarSize": map[string]any{"width": s.points(bar.Width()), "height": s.points(bar.Height())},
		"scale":         s.cfg.Scale,
	}, nil
}

// windowSize answers GET /window/size in points.
func (s *Server) windowSize(*request) (any, error) {
	return map[string]any{"width": s.points(s.width()), "height": s.points(s.height())}, nil
}

// windowRect answers GET /session/{id}/window/rect: the application's
// frame in whole points.
func (s *Server) windowRect(*request) (any, error) {
	return map[string]any{"x": 0, "y": 0, "width": math.Ceil(s.points(s.width())), "height": math.Ceil(s.points(s.height()))}, nil
}

// activeAppInfo answers GET /wda/activeAppInfo.
func (s *Server) activeAppInfo(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	b := frontApp(scr)
	args, env := []string{}, map[string]string{}
	s.mu.Lock()
	if run := s.running[b]; run != nil {
		args, env = run.args, run.env
	}
	s.mu.Unlock()
	return map[string]any{
		"pid": pid(b), "bundleId": b,
		// XCUIApplication's identifier, which is empty for apps.
		"name":             "",
		"processArguments": map[string]any{"args": args, "env": env},
	}, nil
}

// deviceInfo answers GET /wda/device/info.
func (s *Server) deviceInfo(*request) (any, error) {
	sum := sha256.Sum256([]byte("pinky-sim-" + s.id))
	uuid := strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16]))
	tz := os.Getenv("TZ")
	if tz == "" {
		tz = "Etc/UTC"
	}
	name := s.dev.Name
	if name == "" {
		name = "iPhone"
	}
	return map[string]any{
		"currentLocale":      "en_US",
		"timeZone":           tz,
		"name":               name,
		"model":              "iPhone",
		"uuid":               uuid,
		"userInterfaceIdiom": 0, // UIUserInterfaceIdiomPhone
		"userInterfaceStyle": "light",
		"isSimulator":        false,
		"thermalState":       0,
	}, nil
}

func (s *Server) batteryInfo(*request) (any, error) {
	return map[string]any{"level": 1, "state": 3}, nil // full
}

// locked answers GET /wda/locked.
func (s *Server) locked(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	return isLocked(scr), nil
}

// lock answers POST /wda/lock: the side button, which turns the screen off
// (and locks a phone with a PIN).
func (s *Server) lock(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil || isLocked(scr) {
		return nil, err
	}
	_, err = s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeySleep})
	return nil, err
}

// unlock answers POST /wda/unlock: two presses of the home button. That
// unlocks a phone without a passcode; with one it only wakes the screen and
// shows the passcode pad, and WebDriverAgent reports that the screen did not
// unlock (at once here, where the real one waits about seven seconds).
func (s *Server) unlock(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil || !isLocked(scr) {
		return nil, err
	}
	if err := s.pressHome(r, scr); err != nil {
		return nil, err
	}
	if scr, err = s.screen(r.ctx); err != nil {
		return nil, err
	}
	if isLocked(scr) {
		return nil, unknownError(nsError("Timed out while waiting until the screen gets unlocked"))
	}
	return nil, nil
}

// pressHome is the home button: it wakes a dark screen, does nothing more on
// the lock screen (its passcode pad is up) and goes home otherwise.
func (s *Server) pressHome(r *request, scr *sdk.Screen) error {
	switch {
	case !scr.ScreenOn:
		_, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake})
		return err
	case scr.LockState == sdk.LockLocked:
		return nil
	}
	_, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	return err
}

// homescreen answers POST /wda/homescreen.
func (s *Server) homescreen(r *request) (any, error) { return nil, s.goHome(r.ctx) }

// pressButton answers POST /wda/pressButton: home, volumeUp and volumeDown
// (names match case-insensitively), as on a real iPhone.
func (s *Server) pressButton(r *request) (any, error) {
	name, _ := r.args["name"].(string)
	switch strings.ToLower(name) {
	case "home":
		scr, err := s.screen(r.ctx)
		if err != nil {
			return nil, err
		}
		return nil, s.pressHome(r, scr)
	case "volumeup":
		_, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyVolumeUp})
		return nil, err
	case "volumedown":
		_, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyVolumeDown})
		return nil, err
	}
	if name == "" {
		name = "(null)"
	}
	return nil, unknownError(nsError(fmt.Sprintf(
		"The button '%s' is unknown. Only the following button names are supported: (\n    home,\n    volumeUp,\n    volumeDown\n)", name)))
}

// contentType reads the pasteboard's contentType argument.
func contentType(r *request) (string, error) {
	ct := "plaintext"
	if v, ok := r.args["contentType"]; ok {
		if ct, ok = v.(string); !ok {
			return "", invalidArgument("'contentType' must be a string")
		}
	}
	switch ct {
	case "plaintext", "url":
		return ct, nil
	case "image":
		return "", &wdaError{http.StatusInternalServerError, "unsupported operation",
			"The virtual phone's pasteboard holds text only; 'image' content is not supported"}
	}
	return "", unknownError(nsError(fmt.Sprintf("Unsupported content type: %s", ct)))
}

// setPasteboard answers POST /wda/setPasteboard: base64 content.
func (s *Server) setPasteboard(r *request) (any, error) {
	if _, err := contentType(r); err != nil {
		return nil, err
	}
	enc, ok := r.args["content"].(string)
	if !ok {
		return nil, invalidArgument("Cannot decode the pasteboard content from base64")
	}
	// NSDataBase64DecodingIgnoreUnknownCharacters: what is not base64 is skipped.
	clean := strings.Map(func(c rune) rune {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=' {
			return c
		}
		return -1
	}, enc)
	data, err := base64.StdEncoding.DecodeString(clean)
	if err != nil {
		return nil, invalidArgument("Cannot decode the pasteboard content from base64")
	}
	return nil, s.d.SetClipboard(r.ctx, s.id, string(data))
}

// getPasteboard answers POST /wda/getPasteboard with base64 content.
func (s *Server) getPasteboard(r *request) (any, error) {
	if _, err := contentType(r); err != nil {
		return nil, err
	}
	text, err := s.d.Clipboard(r.ctx, s.id)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString([]byte(text)), nil
}

// screenshot answers GET /screenshot: a base64 PNG at native pixels.
func (s *Server) screenshot(r *request) (any, error) {
	img, err := s.d.Screenshot(r.ctx, sdk.ScreenshotRequest{DeviceID: s.id, Format: sdk.FormatPNG})
	if err != nil {
		return nil, &wdaError{http.StatusInternalServerError, "unable to capture screen", err.Error()}
	}
	return base64.StdEncoding.EncodeToString(img.Data), nil
}
