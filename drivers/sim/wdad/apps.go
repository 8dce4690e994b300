package wdad

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// XCUIApplicationState values.
const (
	stateNotRunning = 1
	stateBackground = 3 // XCUIApplicationStateRunningBackground
	stateForeground = 4
)

// screen reads the phone's own screen and notes the app in front as running.
func (s *Server) screen(ctx context.Context) (*sdk.Screen, error) {
	scr, err := s.d.Screen(ctx, s.id, 0)
	if err != nil {
		return nil, err
	}
	s.observe(scr)
	return scr, nil
}

// observe notes the app in front as running: the sim knows no processes, so
// WebDriverAgent's app states come from what was seen in front since.
func (s *Server) observe(scr *sdk.Screen) {
	id := scr.App.ID
	if id == "" || id == springboard || !scr.ScreenOn || scr.LockState == sdk.LockLocked {
		return
	}
	s.mu.Lock()
	if s.running[id] == nil {
		s.running[id] = &appRun{args: []string{}, env: map[string]string{}}
	}
	s.mu.Unlock()
}

// isLocked is what WebDriverAgent calls locked: the lock screen is up, or
// the screen is off (which shows the lock screen once it wakes).
func isLocked(scr *sdk.Screen) bool { return !scr.ScreenOn || scr.LockState == sdk.LockLocked }

// frontApp is the bundle id of the app in front: SpringBoard on the home
// and lock screens.
func frontApp(scr *sdk.Screen) string {
	if isLocked(scr) || scr.App.ID == "" {
		return springboard
	}
	return scr.App.ID
}

// installed reports whether the phone has an app with this bundle id.
func (s *Server) installed(ctx context.Context, bundle string) (bool, error) {
	if bundle == springboard {
		return true, nil
	}
	apps, err := s.d.ListApps(ctx, s.id)
	if err != nil {
		return false, err
	}
	for _, a := range apps {
		if a.ID == bundle {
			return true, nil
		}
	}
	return false, nil
}

func notInstalled(bundle string) string {
	return fmt.Sprintf("The application '%s' is not installed on the device under test", bundle)
}

// appState is XCUIApplication's state for bundle. An app that is not
// installed is not running, as XCTest reports it.
func (s *Server) appState(ctx context.Context, bundle string) (int, error) {
	scr, err := s.screen(ctx)
	if err != nil {
		return 0, err
	}
	if frontApp(scr) == bundle {
		return stateForeground, nil
	}
	if bundle == springboard {
		return stateBackground, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[bundle] != nil {
		return stateBackground, nil
	}
	return stateNotRunning, nil
}

// launch opens bundle on its start screen and notes its launch arguments.
// The sim does not keep an app's screens in the background, so activating
// an app also lands on its start screen.
func (s *Server) launch(ctx context.Context, bundle string, args []string, env map[string]string) error {
	if bundle == springboard {
		return s.goHome(ctx)
	}
	if _, err := s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActLaunch, AppID: bundle}); err != nil {
		switch {
		case errors.Is(err, sdk.ErrAppNotFound):
			return unknownError(notInstalled(bundle))
		case errors.Is(err, sdk.ErrLocked), errors.Is(err, sdk.ErrScreenOff):
			return unknownError(lockedLaunch(bundle))
		}
		return err
	}
	if args == nil {
		args = []string{}
	}
	if env == nil {
		env = map[string]string{}
	}
	s.mu.Lock()
	s.running[bundle] = &appRun{args: args, env: env}
	s.mu.Unlock()
	return nil
}

func lockedLaunch(bundle string) string {
	return fmt.Sprintf("The request to open \"%s\" failed. Unable to launch %s because the device was not, or could not be, unlocked.", bundle, bundle)
}

// terminate stops bundle when it runs and reports whether it did.
func (s *Server) terminate(ctx context.Context, bundle string) (bool, error) {
	if bundle == springboard {
		return false, nil
	}
	st, err := s.appState(ctx, bundle)
	if err != nil || st < stateBackground {
		return false, err
	}
	if _, err := s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActStop, AppID: bundle}); err != nil {
		if errors.Is(err, sdk.ErrLocked) || errors.Is(err, sdk.ErrScreenOff) {
			// The sim closes an app's screens only on a lit, unlocked phone.
			return false, unknownError(fmt.Sprintf("The virtual phone cannot terminate '%s' while it is locked", bundle))
		}
		return false, err
	}
	s.mu.Lock()
	delete(s.running, bundle)
	s.mu.Unlock()
	return true, nil
}

// goHome shows the home screen, as XCUIDevice's home button does.
func (s *Server) goHome(ctx context.Context) error {
	scr, err := s.screen(ctx)
	if err != nil {
		return err
	}
	if isLocked(scr) {
		return unknownError(nsError("Timeout waiting until the home screen is visible"))
	}
	_, err = s.d.Act(ctx, s.id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
	return err
}

// bundleArg reads the bundleId argument.
func bundleArg(r *request) (string, error) {
	b, ok := r.args["bundleId"].(string)
	if !ok || b == "" {
		return "", invalidArgument("'bundleId' argument must be a non-empty string")
	}
	return b, nil
}

// installedBundle is the request's bundleId, of an installed app.
func (s *Server) installedBundle(r *request) (string, error) {
	bundle, err := bundleArg(r)
	if err != nil {
		return "", err
	}
	if ok, err := s.installed(r.ctx, bundle); err != nil || !ok {
		if err == nil {
			err = unknownError(notInstalled(bundle))
		}
		return "", err
	}
	return bundle, nil
}

// bringToFront leaves an app in front as it is, brings one in the
// background back with the arguments it was launched with, and launches
// one that is not running with args and env.
func (s *Server) bringToFront(ctx context.Context, bundle string, args []string, env map[string]string) error {
	st, err := s.appState(ctx, bundle)
	if err != nil || st == stateForeground {
		return err
	}
	s.mu.Lock()
	if run := s.running[bundle]; run != nil { // the app is in the background
		args, env = run.args, run.env
	}
	s.mu.Unlock()
	return s.launch(ctx, bundle, args, env)
}

// launchApp answers POST /wda/apps/launch: a running app is activated, one
// that is not is launched with its arguments and environment.
func (s *Server) launchApp(r *request) (any, error) {
	bundle, err := s.installedBundle(r)
	if err != nil {
		return nil, err
	}
	args, env, err := launchArgs(r.args["arguments"], r.args["environment"])
	if err != nil {
		return nil, invalidArgument("%v", err)
	}
	return nil, s.bringToFront(r.ctx, bundle, args, env)
}

// activateApp answers POST /wda/apps/activate.
func (s *Server) activateApp(r *request) (any, error) {
	bundle, err := s.installedBundle(r)
	if err != nil {
		return nil, err
	}
	return nil, s.bringToFront(r.ctx, bundle, nil, nil)
}

// terminateApp answers POST /wda/apps/terminate: true when the app ran.
func (s *Server) terminateApp(r *request) (any, error) {
	bundle, err := bundleArg(r)
	if err != nil {
		return nil, err
	}
	return s.terminate(r.ctx, bundle)
}

// appStateRoute answers POST /wda/apps/state.
func (s *Server) appStateRoute(r *request) (any, error) {
	bundle, err := bundleArg(r)
	if err != nil {
		return nil, err
	}
	return s.appState(r.ctx, bundle)
}

// activeApps answers GET /wda/apps/list.
func (s *Server) activeApps(r *request) (any, error) {
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	b := frontApp(scr)
	return []any{map[string]any{"pid": pid(b), "bundleId": b}}, nil
}

// launchUnattached answers POST /wda/apps/launchUnattached.
func (s *Server) launchUnattached(r *request) (any, error) {
	bundle, err := bundleArg(r)
	if err != nil {
		return nil, err
	}
	if ok, err := s.installed(r.ctx, bundle); err != nil || !ok {
		if err == nil {
			err = unknownError("LSApplicationWorkspace failed to launch app")
		}
		return nil, err
	}
	return nil, s.launch(r.ctx, bundle, nil, nil)
}

// deactivateApp answers POST /wda/deactivateApp: home, a pause of duration
// seconds (3 by default), then the app again.
func (s *Server) deactivateApp(r *request) (any, error) {
	d := 3.0
	if v, ok := r.args["duration"]; ok {
		f, ok := v.(float64)
		if !ok || f < 0 {
			return nil, invalidArgument("'duration' must be a number of seconds")
		}
		d = f
	}
	scr, err := s.screen(r.ctx)
	if err != nil {
		return nil, err
	}
	app := frontApp(scr)
	if err := s.goHome(r.ctx); err != nil {
		return nil, err
	}
	t := time.NewTimer(time.Duration(d * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
	if app == springboard {
		return nil, nil
	}
	return nil, s.launch(r.ctx, app, nil, nil)
}

// openURL answers POST /url.
func (s *Server) openURL(r *request) (any, error) {
	u, ok := r.args["url"].(string)
	if !ok {
		return nil, invalidArgument("URL is required")
	}
	bundle, _ := r.args["bundleId"].(string)
	if err := s.open(r, u, bundle); err != nil {
		var we *wdaError
		if errors.As(err, &we) {
			return nil, we
		}
		return nil, unknownError(nsError(err.Error()))
	}
	return nil, nil
}

// open opens a URL in the phone's browser, as a deep link would.
func (s *Server) open(r *request, raw, bundle string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("'%s' is not a valid URL", raw)
	}
	if bundle != "" {
		ok, err := s.installed(r.ctx, bundle)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New(notInstalled(bundle))
		}
	}
	if _, err := s.d.Act(r.ctx, s.id, sdk.Action{Kind: sdk.ActOpenURL, URL: raw}); err != nil {
		if errors.Is(err, sdk.ErrLocked) || errors.Is(err, sdk.ErrScreenOff) || errors.Is(err, sdk.ErrAppNotFound) {
			//lint:ignore ST1005 WDA's own message, word for word
			return fmt.Errorf("The URL %s cannot be opened", raw)
		}
		return err
	}
	_, err = s.screen(r.ctx)
	return err
}

// pid is a stable made-up process id for a bundle.
func pid(bundle string) int {
	if bundle == springboard {
		return 58
	}
	h := fnv.New32a()
	h.Write([]byte(bundle))
	return 300 + int(h.Sum32()%60000)
}
