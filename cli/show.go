package cli

import "github.com/pinky-gateway/pinky/internal/safetext"

// show is how the CLI prints a value that came from an agent or a phone
// (a name, a task, typed text, screen text, a driver's message) on one
// line: control characters and bidirectional controls become visible
// escapes (\x1b, \n, ‹U+202E›), so nothing in it acts on the terminal,
// starts a line of its own or reorders what the person reads. --json
// output is exact data instead: JSON escapes control characters itself.
func show(s string) string { return safetext.Line(s) }
