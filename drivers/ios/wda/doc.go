// Package wda is a client of WebDriverAgent (WDA), the XCTest runner that
// lets a computer drive an iPhone over HTTP, written for a phone on Wi-Fi:
// every request has a deadline, a lost answer is told apart from a refused
// one, and a session WDA forgot is recreated by itself.
//
//	c, err := wda.New("http://192.168.1.20:8100")
//	st, err := c.Status(ctx)             // is WDA there?
//	si, err := c.Screen(ctx)             // points and scale
//	err = c.Tap(ctx, 120, 300)           // points, never pixels
//	err = c.Keys(ctx, "héllo 👋🏽")
//	src, err := c.Source(ctx)            // JSON tree for dump.ParseWDA
//	err = wda.MJPEG(ctx, "192.168.1.20:9100", func(jpeg []byte) error { … })
//	defer c.Close(ctx)
//
// # Sessions
//
// Commands marked [S] in WDA's routes need a session. A Client creates one
// lazily, on its first such command, and keeps it: never one per action.
// The session attaches to whatever app is in front, without a bundle id and
// with forceAppLaunch false, so creating it never relaunches or switches
// apps. Creating a session ends the previous one (WDA keeps one), so a
// Client runs one creation at a time and concurrent callers share it.
//
// When WDA answers that the session does not exist (it restarted, or
// another client took over), the Client creates a new one and sends the
// command once more; WDA rejected the first attempt, so the retry cannot
// repeat an action. A second such answer is returned as ErrInvalidSession.
//
// # Settings
//
// WDA resets its settings (/appium/settings) whenever a session is
// created. WithSettings gives settings that the Client sets in every
// session it creates, before the session's first command, and
// UpdateSettings changes them in the current session and in later ones.
// WithExcludedAttributes makes Source leave attributes out of the tree.
//
// # Deadlines
//
// Each request has its own deadline: WithTimeout (5 s) for ordinary
// commands, WithSlowTimeout (20 s) for /source, /screenshot, creating a
// session, launching or activating an app, opening a URL and unlocking.
// Gestures add their duration and typing adds time per character. A call
// makes at most four requests (create, send, recreate, resend), so it is
// bounded even when the caller's context has no deadline. No lock is held
// across a request: a hung /source does not hold up a Tap on the same
// Client, although WDA itself runs commands one at a time.
//
// # Errors
//
// An error answer from WDA is an *Error with the HTTP status, the W3C code
// and the message. Errors match the categories with errors.Is:
// ErrInvalidSession, ErrNoSuchElement, ErrUnknownCommand, ErrUnreachable
// (nothing answered; safe to repeat), ErrTimeout (also
// context.DeadlineExceeded), ErrProtocol (not WDA's JSON) and ErrUncertain.
// ErrUncertain comes with a mutating command whose request was written but
// whose answer was lost to a broken connection, a timeout or a cancelled
// context: the tap may or may not have landed, so look at the screen before
// repeating it. A read (GET) is never uncertain, nor is a POST that is safe
// to repeat (AppState, Activate, the pasteboard).
//
// # Privacy
//
// The Client logs the method, endpoint, status and duration of requests,
// never a body: /wda/keys and /wda/setPasteboard carry passwords and
// one-time codes. Errors from those endpoints have the text (of four bytes
// or more) cut out of WDA's message too.
//
// # Coordinates
//
// WDA speaks points, with the origin at the top left of the screen in its
// current orientation. Screen returns the size in points and the scale;
// Screenshot and MJPEG frames are in pixels.
package wda
