package wdad

import "net/http"

// routes is every route served, after WebDriverAgent's Commands/*.m: [S]
// routes live under /session/{id} only, bare ones at the bare path only, and
// many are registered both ways.
var routes = []route{
	// FBSessionCommands
	{method: http.MethodPost, path: "/session", bare: true, h: (*Server).createSession},
	{method: http.MethodGet, path: "", session: true, h: (*Server).getSession},
	{method: http.MethodDelete, path: "", session: true, h: (*Server).deleteSession},
	{method: http.MethodGet, path: "/status", bare: true, h: (*Server).status},
	{method: http.MethodGet, path: "/wda/healthcheck", bare: true, h: (*Server).ok},
	{method: http.MethodGet, path: "/appium/settings", session: true, h: (*Server).getSettings},
	{method: http.MethodPost, path: "/appium/settings", session: true, h: (*Server).setSettings},
	{method: http.MethodPost, path: "/url", session: true, h: (*Server).openURL},
	{method: http.MethodPost, path: "/wda/apps/launch", session: true, h: (*Server).launchApp},
	{method: http.MethodPost, path: "/wda/apps/activate", session: true, h: (*Server).activateApp},
	{method: http.MethodPost, path: "/wda/apps/terminate", session: true, h: (*Server).terminateApp},
	{method: http.MethodPost, path: "/wda/apps/state", session: true, h: (*Server).appStateRoute},
	{method: http.MethodGet, path: "/wda/apps/list", session: true, h: (*Server).activeApps},

	// FBCustomCommands
	{method: http.MethodPost, path: "/timeouts", session: true, h: (*Server).ok},
	{method: http.MethodPost, path: "/wda/homescreen", bare: true, h: (*Server).homescreen},
	{method: http.MethodPost, path: "/wda/deactivateApp", session: true, h: (*Server).deactivateApp},
	{method: http.MethodPost, path: "/wda/keyboard/dismiss", session: true, h: (*Server).dismissKeyboard},
	{method: http.MethodPost, path: "/wda/lock", session: true, bare: true, h: (*Server).lock},
	{method: http.MethodPost, path: "/wda/unlock", session: true, bare: true, h: (*Server).unlock},
	{method: http.MethodGet, path: "/wda/locked", session: true, bare: true, h: (*Server).locked},
	{method: http.MethodGet, path: "/wda/screen", session: true, bare: true, h: (*Server).wdaScreen},
	{method: http.MethodGet, path: "/wda/activeAppInfo", session: true, bare: true, h: (*Server).activeAppInfo},
	{method: http.MethodPost, path: "/wda/setPasteboard", session: true, bare: true, h: (*Server).setPasteboard},
	{method: http.MethodPost, path: "/wda/getPasteboard", session: true, bare: true, h: (*Server).getPasteboard},
	{method: http.MethodGet, path: "/wda/batteryInfo", session: true, h: (*Server).batteryInfo},
	{method: http.MethodPost, path: "/wda/pressButton", session: true, h: (*Server).pressButton},
	{method: http.MethodPost, path: "/wda/apps/launchUnattached", bare: true, h: (*Server).launchUnattached},
	{method: http.MethodGet, path: "/wda/device/info", session: true, bare: true, h: (*Server).deviceInfo},

	// FBDebugCommands, FBScreenshotCommands, FBOrientationCommands
	{method: http.MethodGet, path: "/source", session: true, bare: true, h: (*Server).source},
	{method: http.MethodGet, path: "/screenshot", session: true, bare: true, h: (*Server).screenshot},
	{method: http.MethodGet, path: "/orientation", session: true, bare: true, h: (*Server).orientation},
	{method: http.MethodPost, path: "/orientation", session: true, bare: true, h: (*Server).setOrientation},
	{method: http.MethodGet, path: "/rotation", session: true, bare: true, h: (*Server).rotation},
	{method: http.MethodPost, path: "/rotation", session: true, bare: true, h: (*Server).setRotation},
	{method: http.MethodGet, path: "/wda/deviceOrientation", session: true, bare: true, h: (*Server).deviceOrientation},

	// FBElementCommands, FBTouchActionCommands
	{method: http.MethodGet, path: "/window/size", session: true, bare: true, h: (*Server).windowSize},
	{method: http.MethodGet, path: "/window/rect", session: true, h: (*Server).windowRect},
	{method: http.MethodPost, path: "/wda/tap", session: true, h: (*Server).tapRoute},
	{method: http.MethodPost, path: "/wda/doubleTap", session: true, h: (*Server).doubleTap},
	{method: http.MethodPost, path: "/wda/touchAndHold", session: true, h: (*Server).touchAndHold},
	{method: http.MethodPost, path: "/wda/dragfromtoforduration", session: true, h: (*Server).drag},
	{method: http.MethodPost, path: "/wda/swipe", session: true, h: (*Server).swipeRoute},
	{method: http.MethodPost, path: "/wda/keys", session: true, h: (*Server).keys},
	{method: http.MethodPost, path: "/actions", session: true, h: (*Server).actions},

	// FBAlertViewCommands
	{method: http.MethodGet, path: "/alert/text", session: true, bare: true, h: (*Server).alertText},
	{method: http.MethodPost, path: "/alert/accept", session: true, bare: true, h: (*Server).alertAccept},
	{method: http.MethodPost, path: "/alert/dismiss", session: true, bare: true, h: (*Server).alertDismiss},
	{method: http.MethodGet, path: "/wda/alert/buttons", session: true, h: (*Server).alertButtons},
}

// ok answers null, as FBResponseWithOK does.
func (s *Server) ok(*request) (any, error) { return nil, nil }
