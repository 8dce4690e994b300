package wda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The error categories. Every error a Client returns that falls into one of
// them matches it with errors.Is; most also carry a *Error with WDA's answer.
var (
	// ErrInvalidSession means WDA does not know the session: it restarted,
	// or another client created a session and so ended this one. The
	// Client recreates the session and retries once by itself, so callers
	// see this only when the retry failed the same way.
	ErrInvalidSession = errors.New("session does not exist")
	// ErrNoSuchElement means no element matched.
	ErrNoSuchElement = errors.New("no such element")
	// ErrUnknownCommand means this WDA does not offer the command: an
	// unknown endpoint or method (an older or newer WDA), or an operation
	// it does not support on this device (volume buttons on a simulator).
	ErrUnknownCommand = errors.New("unknown command")
	// ErrUnreachable means WDA did not answer at all: connection refused, no
	// route to the phone, a failed DNS lookup, or a connection that could
	// not be opened in time. Nothing reached WDA, so repeating is safe.
	ErrUnreachable = errors.New("not reachable")
	// ErrTimeout means a call exceeded its deadline, the Client's or the
	// caller's, or that WDA reported a timeout of its own. It also matches
	// context.DeadlineExceeded.
	ErrTimeout = fmt.Errorf("timed out: %w", context.DeadlineExceeded)
	// ErrUncertain means a mutating call's request may have reached WDA but
	// its answer was lost: the connection broke, or the call timed out or
	// was cancelled, after the request was written. The action may or may
	// not have happened; observe the screen before repeating it.
	ErrUncertain = errors.New("request sent but its outcome is unknown")
	// ErrProtocol means the peer answered with something that is not WDA's
	// protocol: a body that is not JSON or has no value, or a malformed
	// MJPEG stream.
	ErrProtocol = errors.New("protocol error")
)

// Error is an error answer from WDA: {"value":{"error":CODE,"message":…}}
// with an HTTP status. It unwraps to the matching category above, if any.
type Error struct {
	// HTTPStatus is the response's HTTP status code, e.g. 404.
	HTTPStatus int
	// Code is the W3C error code, e.g. "no such element"; empty when the
	// body carried none.
	Code string
	// Message is WDA's explanation, shortened to maxMessage bytes. The
	// traceback is dropped.
	Message string

	kind error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Code != "" {
		fmt.Fprintf(&b, "%s (HTTP %d)", e.Code, e.HTTPStatus)
	} else {
		fmt.Fprintf(&b, "HTTP %d", e.HTTPStatus)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// Unwrap returns the error's category, or nil.
func (e *Error) Unwrap() error { return e.kind }

// maxMessage bounds Error.Message: WDA's messages sometimes describe a whole
// element tree.
const maxMessage = 1024

// newError builds the Error for a W3C error answer and picks its category
// from the code (FBCommandStatus.m) or, for WDA's "Session does not exist",
// from the message.
func newError(status int, code, msg string) *Error {
	e := &Error{HTTPStatus: status, Code: code, Message: truncate(msg, maxMessage)}
	switch code {
	case "invalid session id":
		e.kind = ErrInvalidSession
	case "no such element":
		e.kind = ErrNoSuchElement
	case "unknown command", "unknown method", "unsupported operation":
		e.kind = ErrUnknownCommand
	case "timeout":
		e.kind = ErrTimeout
	case "":
		if status == 404 {
			e.kind = ErrUnknownCommand
		}
	}
	if strings.Contains(strings.ToLower(msg), "session does not exist") {
		e.kind = ErrInvalidSession
	}
	return e
}

// sessionGone reports whether err says the session is gone: "invalid
// session id", "Session does not exist", or a 404 without a W3C code on a
// session path. WDA rejected the request, so a retry is safe.
func sessionGone(err error) bool {
	if errors.Is(err, ErrInvalidSession) {
		return true
	}
	var e *Error
	return errors.As(err, &e) && e.HTTPStatus == 404 && e.Code == ""
}

// notJSON is the error for a body that is not WDA's JSON. It quotes a short
// prefix only: the body may be a large page, or binary.
func notJSON(status int, body []byte) *Error {
	return &Error{
		HTTPStatus: status,
		Message:    fmt.Sprintf("body is not JSON: %s", quotePrefix(body, 64)),
		kind:       ErrProtocol,
	}
}

// quotePrefix quotes up to n bytes of b, cut on a character boundary, with
// invalid UTF-8 and control characters escaped.
func quotePrefix(b []byte, n int) string {
	more := len(b) > n
	if more {
		b = b[:cut(b, n)]
	}
	q := fmt.Sprintf("%q", b)
	if more {
		q += "…"
	}
	return q
}

// truncate shortens s to at most n bytes, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:cut([]byte(s[:n+1]), n)] + "…"
}

// cut returns where to cut b, which is longer than n, to keep at most n
// bytes without splitting a UTF-8 sequence; binary data is cut at n.
func cut(b []byte, n int) int {
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return n
}
