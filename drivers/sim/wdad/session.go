package wdad

import (
	"crypto/rand"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// What /status reports about the WebDriverAgent build.
const (
	wdaVersion      = "16.7.0"
	wdaBuildTime    = "Aug 12 2026 09:41:00"
	wdaRunnerBundle = "com.facebook.WebDriverAgentRunner"
	springboard     = "com.apple.springboard"
)

// status answers GET /status (FBSessionCommands handleGetStatus).
func (s *Server) status(*request) (any, error) {
	var ip any
	if host, _, err := net.SplitHostPort(s.ln.Addr().String()); err == nil {
		if a := net.ParseIP(host); a != nil && !a.IsUnspecified() {
			ip = a.String()
		}
	}
	v := s.osVersion()
	return map[string]any{
		"ready":   true,
		"message": "WebDriverAgent is ready to accept commands",
		"state":   "success",
		"os": map[string]any{
			"name": "iOS", "version": v, "sdkVersion": v, "testmanagerdVersion": 65,
		},
		"ios":    map[string]any{"ip": ip},
		"build":  map[string]any{"time": wdaBuildTime, "productBundleIdentifier": wdaRunnerBundle, "version": wdaVersion},
		"device": "iphone",
	}, nil
}

func (s *Server) osVersion() string {
	if s.dev.OSVersion != "" {
		return s.dev.OSVersion
	}
	return "18.0"
}

// sessionInfo is what POST /session and GET /session/{id} answer.
func (s *Server) sessionInfo() map[string]any {
	var id any
	if sid := s.sessionID(); sid != "" {
		id = sid
	}
	return map[string]any{
		"sessionId":    id,
		"capabilities": map[string]any{"device": "iphone", "sdkVersion": s.osVersion()},
	}
}

func (s *Server) getSession(*request) (any, error) { return s.sessionInfo(), nil }

// deleteSession kills the session, terminating the app under test unless
// the session asked otherwise (FBSession kill).
func (s *Server) deleteSession(r *request) (any, error) {
	s.kill(r, r.sess)
	return nil, nil
}

// kill ends sess if it is still the active one.
func (s *Server) kill(r *request, sess *session) {
	s.mu.Lock()
	if s.session != sess || sess == nil {
		s.mu.Unlock()
		return
	}
	s.session = nil
	s.mu.Unlock()
	if sess.bundleID == "" || !sess.terminate || sess.bundleID == springboard {
		return
	}
	if st, err := s.appState(r.ctx, sess.bundleID); err == nil && st >= stateBackground {
		if _, err := s.terminate(r.ctx, sess.bundleID); err != nil {
			s.log.Debug("wdad: terminate the app under test", "bundle", sess.bundleID, "err", err)
		}
	}
}

// createSession answers POST /session (FBSessionCommands
// handleCreateSession): it kills the previous session, then launches or
// attaches to the app the capabilities name.
func (s *Server) createSession(r *request) (any, error) {
	s.mu.Lock()
	old := s.session
	s.mu.Unlock()
	s.kill(r, old)

	raw, ok := r.args["capabilities"].(map[string]any)
	if !ok {
		return nil, sessionNotCreated("'capabilities' is mandatory to create a new session")
	}
	caps, err := parseCapabilities(raw)
	if err != nil {
		return nil, sessionNotCreated(err.Error())
	}
	sess := &session{id: newSessionID(), terminate: true}
	if v, ok := caps["shouldTerminateApp"]; ok {
		b, ok := v.(bool)
		if !ok {
			return nil, sessionNotCreated("shouldTerminateApp: want a boolean")
		}
		sess.terminate = b
	}
	initialURL, _ := caps["initialUrl"].(string)
	if v, ok := caps["bundleId"]; ok {
		bundle, ok := v.(string)
		if !ok || bundle == "" {
			return nil, sessionNotCreated("bundleId: want a bundle identifier string")
		}
		force := true
		if v, ok := caps["forceAppLaunch"]; ok {
			if force, ok = v.(bool); !ok {
				return nil, sessionNotCreated("forceAppLaunch: want a boolean")
			}
		}
		args, env, err := launchArgs(caps["arguments"], caps["environment"])
		if err != nil {
			return nil, sessionNotCreated(err.Error())
		}
		if err := s.startApp(r, bundle, force, initialURL, args, env); err != nil {
			return nil, err
		}
		sess.bundleID = bundle
		// The app under test waits for quiescence unless the capability
		// says otherwise (FBSessionCommands); an attached session has no
		// app under test, and the apps it reaches inherit false (FBSession
		// launchApplicationWithBundleId).
		sess.quiescence = true
		if v, ok := caps["shouldWaitForQuiescence"]; ok {
			b, ok := v.(bool)
			if !ok {
				return nil, sessionNotCreated("shouldWaitForQuiescence: want a boolean")
			}
			sess.quiescence = b
		}
	} else if initialURL != "" {
		if err := s.open(r, initialURL, ""); err != nil {
			return nil, sessionNotCreated(fmt.Sprintf("Cannot open the URL %s with the default application. Original error: %v", initialURL, err))
		}
	}
	s.mu.Lock()
	s.session = sess
	s.mu.Unlock()
	s.log.Debug("wdad: session created", "session", sess.id, "bundle", sess.bundleID)
	return s.sessionInfo(), nil
}

// startApp brings the session's app up as handleCreateSession does: a
// running app is relaunched unless forceAppLaunch is false, in which case
// one in the background is only activated.
func (s *Server) startApp(r *request, bundle string, force bool, initialURL string, args []string, env map[string]string) error {
	installed, err := s.installed(r.ctx, bundle)
	if err != nil {
		return err
	}
	if !installed {
		return sessionNotCreated(notInstalled(bundle))
	}
	st, err := s.appState(r.ctx, bundle)
	if err != nil {
		return err
	}
	running := st >= stateBackground
	switch {
	case !running || force:
		if running {
			if _, err := s.terminate(r.ctx, bundle); err != nil {
				return sessionNotCreated(err.Error())
			}
		}
		if initialURL != "" {
			if err := s.open(r, initialURL, bundle); err != nil {
				return sessionNotCreated(fmt.Sprintf("Cannot open the URL %s with the %s application. Original error: %v", initialURL, bundle, err))
			}
			return nil
		}
		if err := s.launch(r.ctx, bundle, args, env); err != nil {
			return sessionNotCreated(err.Error())
		}
	case st == stateBackground:
		if initialURL != "" {
			if err := s.open(r, initialURL, bundle); err != nil {
				return sessionNotCreated(fmt.Sprintf("Cannot open the URL %s with the %s application. Original error: %v", initialURL, bundle, err))
			}
			return nil
		}
		return s.launch(r.ctx, bundle, nil, nil)
	}
	return nil
}

// parseCapabilities merges W3C alwaysMatch with the first firstMatch entry
// and drops vendor prefixes such as "appium:" (FBParseCapabilities).
func parseCapabilities(raw map[string]any) (map[string]any, error) {
	out := map[string]any{}
	add := func(m map[string]any) error {
		for k, v := range m {
			if _, name, ok := strings.Cut(k, ":"); ok {
				k = name
			}
			if old, ok := out[k]; ok && fmt.Sprint(old) != fmt.Sprint(v) {
				return fmt.Errorf("the capability %q is set in both alwaysMatch and firstMatch", k)
			}
			out[k] = v
		}
		return nil
	}
	if am, ok := raw["alwaysMatch"]; ok {
		m, ok := am.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("alwaysMatch: want an object")
		}
		if err := add(m); err != nil {
			return nil, err
		}
	}
	if fm, ok := raw["firstMatch"]; ok {
		list, ok := fm.([]any)
		if !ok {
			return nil, fmt.Errorf("firstMatch: want an array")
		}
		if len(list) > 0 {
			m, ok := list[0].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("firstMatch[0]: want an object")
			}
			if err := add(m); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// launchArgs reads the arguments and environment capabilities.
func launchArgs(a, e any) ([]string, map[string]string, error) {
	args := []string{}
	if a != nil {
		list, ok := a.([]any)
		if !ok {
			return nil, nil, fmt.Errorf("arguments: want an array of strings")
		}
		for _, v := range list {
			str, ok := v.(string)
			if !ok {
				return nil, nil, fmt.Errorf("arguments: want an array of strings")
			}
			args = append(args, str)
		}
	}
	env := map[string]string{}
	if e != nil {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("environment: want an object of strings")
		}
		for k, v := range m {
			str, ok := v.(string)
			if !ok {
				return nil, nil, fmt.Errorf("environment: want an object of strings")
			}
			env[k] = str
		}
	}
	return args, env, nil
}

// newSessionID makes an id shaped like NSUUID's UUIDString.
func newSessionID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return strings.ToUpper(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// defaultSettings are the /appium/settings a fresh WebDriverAgent has.
func defaultSettings() map[string]any {
	return map[string]any{
		"mjpegServerFramerate":         10,
		"mjpegServerScreenshotQuality": 25,
		"mjpegScalingFactor":           100,
		"mjpegFixOrientation":          false,
		"screenshotQuality":            3,
		"shouldUseCompactResponses":    true,
		"elementResponseAttributes":    "type,label",
		"keyboardAutocorrection":       false,
		"keyboardPrediction":           false,
		"snapshotMaxDepth":             50,
		"useFirstMatch":                false,
		"waitForIdleTimeout":           10.0, // NSTimeInterval: seconds, fractions allowed
		"animationCoolOffTimeout":      2.0,
		"boundElementsByIndex":         false,
		"reduceMotion":                 false,
		"defaultActiveApplication":     "auto",
		"activeAppDetectionPoint":      "64.00,64.00",
		"includeNonModalElements":      false,
		"acceptAlertButtonSelector":    "",
		"dismissAlertButtonSelector":   "",
		"defaultAlertAction":           "",
		"maxTypingFrequency":           60,
		"screenshotOrientation":        "auto",
	}
}

func (s *Server) getSettings(*request) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]any, len(s.settings))
	for k, v := range s.settings {
		out[k] = v
	}
	return out, nil
}

// setSettings answers POST /appium/settings as FBSettingsHandler
// applySettings does: unknown settings and null values are skipped, a
// body without "settings" changes nothing, and the answer is every
// setting. WebDriverAgent reads a value with intValue, doubleValue or
// boolValue, so a number may come as a string of digits; a value that
// cannot be read so is refused here (WebDriverAgent would raise). The
// MJPEG stream follows mjpegServerFramerate, mjpegServerScreenshotQuality
// and mjpegScalingFactor; the page source follows snapshotMaxDepth, and
// the idle waits waitForIdleTimeout and animationCoolOffTimeout (see
// waitStable).
func (s *Server) setSettings(r *request) (any, error) {
	raw, present := r.args["settings"]
	in, ok := raw.(map[string]any)
	if present && raw != nil && !ok {
		return nil, invalidArgument("settings must be a dictionary")
	}
	s.mu.Lock()
	next := make(map[string]any, len(in))
	for k, v := range in {
		old, known := s.settings[k]
		if !known || v == nil {
			continue
		}
		nv, err := settingValue(old, v)
		if err != nil {
			s.mu.Unlock()
			return nil, invalidArgument("setting %q: %v", k, err)
		}
		next[k] = nv
	}
	for k, v := range next {
		s.settings[k] = v
	}
	s.mu.Unlock()
	return s.getSettings(r)
}

// settingValue reads v as the kind of the setting's current value old.
func settingValue(old, v any) (any, error) {
	num := func() (float64, bool) {
		switch v := v.(type) {
		case float64:
			return v, true
		case bool:
			if v {
				return 1, true
			}
			return 0, true
		case string:
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
		return 0, false
	}
	switch old.(type) {
	case int:
		f, ok := num()
		if !ok {
			return nil, fmt.Errorf("want a number")
		}
		return int(f), nil
	case float64:
		f, ok := num()
		if !ok {
			return nil, fmt.Errorf("want a number")
		}
		return f, nil
	case bool:
		if f, ok := num(); ok {
			return f != 0, nil
		}
		return nil, fmt.Errorf("want a boolean")
	case string:
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("want a string")
		}
		return str, nil
	}
	return v, nil
}

// setting reads an integer setting.
func (s *Server) setting(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch v := s.settings[name].(type) {
	case int:
		return v
	case float64:
		return int(v)
	}
	return 0
}

// seconds reads a setting in seconds (waitForIdleTimeout,
// animationCoolOffTimeout) as a duration.
func (s *Server) seconds(name string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch v := s.settings[name].(type) {
	case float64:
		return time.Duration(v * float64(time.Second))
	case int:
		return time.Duration(v) * time.Second
	}
	return 0
}
