// Package wdad gives a virtual iPhone a WebDriverAgent face: an HTTP server
// shaped like appium/WebDriverAgent v16.7.0 (protocols.md section 3), so
// that Pinky's iOS driver can be tested end to end as it talks to a phone.
//
//	srv, err := wdad.Listen("127.0.0.1:0", wdad.Config{Driver: simDriver, MJPEG: true})
//	// GET http://ADDR/status, POST /session, GET /source?format=json, …
//	defer srv.Close()
//
// # Shapes
//
// Every answer is WebDriverAgent's envelope {"value": …, "sessionId": …},
// pretty-printed as NSJSONSerialization does; errors are W3C errors in
// value ({"error", "message", "traceback"}) with WebDriverAgent's HTTP
// status: an unknown route is 404 "unknown command", a stale or unknown
// session 404 "invalid session id", a bad body 400 "invalid argument".
// Coordinates are points; the sim works in pixels, and Config.Scale (3)
// converts. Screenshots are PNGs at native pixels.
//
// # Routes
//
// Bare and under /session/{id} as WebDriverAgent registers them ([S]:
// session only; [B]: bare only; the rest both):
//
//	[B] POST /session            W3C capabilities: bundleId, forceAppLaunch (default true:
//	                             a running app is relaunched), arguments, environment,
//	                             initialUrl, shouldTerminateApp. No bundleId attaches to
//	                             what is in front. A new session kills the old one.
//	[S] GET, DELETE /session/{id}  DELETE terminates the app under test.
//	[B] GET /status, /wda/healthcheck
//	GET /source                  format=xml (default), json or description; scope;
//	                             excluded_attributes
//	GET /screenshot, /window/size, /wda/screen, /orientation, /rotation,
//	    /wda/deviceOrientation   sizes in points of the current orientation,
//	                             the screenshot upright in it
//	POST /orientation, /rotation  turn the phone (orientation.go); refused, as
//	                             WebDriverAgent refuses, when the interface
//	                             does not follow (upside down, a locked app)
//	GET /wda/activeAppInfo, /wda/device/info, /wda/locked
//	POST /wda/lock, /wda/unlock, /wda/setPasteboard, /wda/getPasteboard
//	GET /alert/text; POST /alert/accept, /alert/dismiss
//	[B] POST /wda/homescreen, /wda/apps/launchUnattached
//	[S] POST /wda/tap, /wda/doubleTap, /wda/touchAndHold, /wda/dragfromtoforduration,
//	    /wda/swipe, /actions, /wda/keys, /wda/keyboard/dismiss, /wda/pressButton,
//	    /wda/apps/launch|activate|terminate|state, /url, /wda/deactivateApp, /timeouts
//	[S] GET /wda/apps/list, /wda/batteryInfo, /wda/alert/buttons, /appium/settings
//	[S] POST /appium/settings    as FBSettingsHandler: unknown settings and nulls skipped,
//	                             numbers read as intValue/doubleValue would; mjpegServerFramerate,
//	                             mjpegServerScreenshotQuality and mjpegScalingFactor drive the
//	                             MJPEG stream, snapshotMaxDepth cuts the source (the application
//	                             is depth 0), waitForIdleTimeout and animationCoolOffTimeout
//	                             drive the idle waits below
//
// # Page source
//
// The source is built from the sim's screen: an XCUIElementTypeApplication
// (bundleId and processId on the XML root), a window per top-level part
// (status bar, app, dialog, keyboard), the elements in points. JSON is
// WebDriverAgent's current shape (type without its prefix, rawIdentifier,
// name, label, value, rect, frame and nativeFrame, customActions, "1"/"0"
// flags with isNativeAccessibilityElement, children only when there are
// some); XML is FBXPath's default attributes on iOS (no focused, which is
// tvOS's). rect, frame and the XML's x, y, width and height are the frame
// rounded outward to whole points (CGRectIntegral), as wdFrame gives them;
// only nativeFrame keeps fractions. An element inside an accessibility
// element is not accessible itself (isWDAccessible). name, label and value follow
// WebDriverAgent's rules: name is the identifier or the label, a static
// text's value is its label, an empty text field's value is its
// placeholder, a switch's value is "1" or "0". A screen that is a captured
// WebDriverAgent source (a world's dump:, read again from Config.WorldDir)
// is served byte for byte when the format matches and the capture's size
// times Scale is the phone's.
//
// # Lock screen
//
// /wda/locked is true while the lock screen is up or the screen is off.
// /wda/unlock presses home twice: it wakes the phone, which unlocks one
// without a PIN; with a PIN the passcode pad shows and the call fails with
// WebDriverAgent's "Timed out while waiting until the screen gets
// unlocked" (at once, not after seven seconds). The pad's keys are Buttons
// named and labelled "1"…"9", "0", "Delete" and "Cancel"; taps on them work
// as on an iPhone: the code is checked once it has the PIN's length, a
// wrong one shows "Wrong PIN" and the phone stays locked, Cancel clears.
//
// # MJPEG
//
// With Config.MJPEG a second listener serves FBMjpegServer's stream: raw
// TCP, silent until the client sends something, then "HTTP/1.0 200 OK"
// headers with the quirky boundary=--BoundaryString and a JPEG frame about
// ten times a second, each "--BoundaryString" with Content-Length.
//
// # Idle waits
//
// Under a timing profile with a Quiescence cost (timing.Phone), the face
// waits as WebDriverAgent's XCTest does: before each event of a session
// that waits for quiescence (one with a bundleId, unless
// shouldWaitForQuiescence is false), up to waitForIdleTimeout; after W3C
// /actions and before an XML source, up to animationCoolOffTimeout. Each
// wait costs the quiescence check, then lasts until the virtual phone's
// animation ends or the timeout passes; a timeout of 0 skips it. The JSON
// source waits for nothing. Each element's visible attribute costs
// Timing.Visible unless excluded_attributes leaves it out. The fast
// profile waits for nothing.
//
// # Faults
//
// Restart forgets the sessions (WebDriverAgent relaunched), HangSource makes
// /source hang until its request is cancelled, SetDelay delays every answer.
//
// # What is not emulated
//
// No element finding (/element, /elements) or element-relative commands
// (so no /wda/element/:uuid/pinch), no multi-touch beyond a pinch of two
// W3C pointers that each touch once, no rotate, no video recording, no
// image pasteboard.
// The sim keeps no app state in the background: activating or relaunching
// an app lands on its start screen. Touches on a dark screen or off the
// screen do nothing.
package wdad
