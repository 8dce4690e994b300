// Package console is Pinky's web console: a small HTTP server on a loopback
// address that gives the person, in a browser, what the CLI gives in a
// terminal, and more: each phone's live screen (and the phone itself, once
// taken over), the approvals waiting for an answer, the history of agent
// tasks with their recordings, and the settings.
//
// The console knows nothing of the daemon's internals. It runs the daemon's
// local API methods through Config.Call (only those in Methods), joins
// screen streams through Config.Mirror, and asks Config.Media,
// Config.Recording and Config.Export for files. The daemon starts it with
// New and Start, and `pinky open` opens a link from Server.Link.
//
// # What it serves
//
//	GET  /login?t=TOKEN        trades a one-time token for a session cookie, then redirects to /
//	GET  /                     the page (web/index.html); the app lives in /static/app.js and app.css
//	POST /api/call             {"method": M, "params": {…}} → M's result as JSON, or 400 {"error": "…"}
//	GET  /media/{id}           a screenshot (JPEG or PNG)
//	GET  /still/{device}       a JPEG of the screen now (?display=N), for a mirror without video
//	GET  /recordings/{task}.mp4  a task's recording, with Range requests so the video can seek
//	GET  /export?task=ID&…     a zip of the tasks' report folder (made in a temporary folder, then removed)
//	GET  /ws/mirror/{device}   a WebSocket with the phone's screen (see below)
//
// The page is plain HTML, CSS and hand-written JavaScript embedded in the
// binary: no build step and nothing fetched from elsewhere. Its element ids
// are listed at the top of web/app.js. Live updates come from long polling
// events.since. While the history cannot be written (status says so), a
// banner says why and what to fix: agents' actions are refused meanwhile.
// Above the phones, each driver that does not run, or that reports a
// failing check of itself (drivers.checks, read as `pinky doctor` reads
// them), says what is wrong and what to do; with no phone at all, the page
// says how to connect one. A phone on another machine names its phone host
// and the host's state (online, or offline since when, and its version),
// read from status's hosts; its mirror and take-over work as for any phone.
//
// # Security model
//
// Anything on the computer can reach a loopback port, and any web page the
// person visits can make the browser send requests to it, so:
//
//   - New refuses an address that is not loopback (ErrNotLoopback).
//   - Nothing works without a session. Server.Link makes a login link with
//     32 random bytes, valid for LinkTTL and usable once; opening it sets a
//     random session cookie (HttpOnly, SameSite=Strict, Path=/). Every other
//     route, WebSocket and file included, answers 401 with a page that says to
//     run `pinky open`. Sessions live in memory: a daemon restart logs
//     everyone out. Tokens and cookies are kept only as SHA-256 hashes.
//   - The Host header must be the address the console listens on (or
//     localhost with its port), which defeats DNS rebinding: a page whose
//     name was made to resolve to 127.0.0.1 still sends its own name.
//   - Requests that change state (any method but GET, HEAD, OPTIONS) and
//     WebSockets are refused when they carry an Origin other than the
//     console's own. SameSite=Strict already keeps the cookie off
//     cross-site requests; this is the second lock.
//   - POST /api/call runs only the methods in Methods.
//   - Parameters are never logged: devices.unlock carries the PIN and
//     devices.input the text the person types. The page clears the PIN
//     field as soon as it sends it.
//   - Every answer carries a strict Content-Security-Policy (only the
//     console's own scripts, styles, images and sockets), X-Frame-Options
//     DENY and Referrer-Policy no-referrer (the login URL holds a token).
//   - The API's JSON is the exact data; the page shows what agents and
//     phones wrote as text only (text nodes and textContent, never markup),
//     and through its function show: control characters and escape
//     sequences become visible escapes (\x1b, \r) and bidirectional
//     controls ‹U+202E›, as internal/safetext does for the CLI and the
//     export, so nothing reorders what the person reads on a card.
//
// # The mirror protocol
//
// GET /ws/mirror/{device} upgrades to a WebSocket on which the server sends
// one binary message per video packet from Config.Mirror and the browser
// sends nothing. A message is a header, all integers big-endian:
//
//	offset  size  field
//	0       1     flags: bit 0 config (parameter sets, not a picture), bit 1 key frame
//	1       4     width in pixels (0 when unknown)
//	5       4     height in pixels
//	9       8     PTS in microseconds (signed)
//	17      1     n, the length of the codec name
//	18      n     codec name, e.g. "h264" or "h265"
//
// followed by the packet's data in Annex B. When the stream ends the server
// closes the socket with a reason (e.g. "stream ended: device offline");
// when the mirror cannot start, with status 1013 (try again later) and the
// reason. The page decodes H.264 with WebCodecs: it configures a
// VideoDecoder with "avc1.PPCCLL" read from the SPS and no description
// (Annex B input), prepends the last parameter sets to each key frame,
// drops pictures until the first key frame, and draws each decoded frame on
// the phone's canvas. A viewer that cannot take a packet within 10 seconds
// is dropped.
package console
