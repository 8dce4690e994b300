package video

import (
	"errors"
	"fmt"
)

// Errors of the protocol. Each failure wraps one of them with what went
// wrong, so callers test them with errors.Is.
var (
	// ErrAuth means the peer does not hold the device's pairing secret, or
	// speaks for another device.
	ErrAuth = errors.New("video: authentication failed")
	// ErrProtocol means the peer broke the protocol: a message of a bad
	// type, length or content, or one out of order.
	ErrProtocol = errors.New("video: protocol error")
	// ErrVersion means the two sides share no protocol version. It wraps
	// ErrProtocol.
	ErrVersion = fmt.Errorf("unsupported version: %w", ErrProtocol)
	// ErrNoBroadcast means no broadcast runs: no source is connected,
	// authenticated and configured.
	ErrNoBroadcast = errors.New("video: no broadcast")
	// ErrStill means the source could not make a still.
	ErrStill = errors.New("video: no still")
	// ErrNoFrame means the source has no frame to make a still of yet. A
	// Source's Still returns it to say so; a Receiver's Still wraps it with
	// ErrStill.
	ErrNoFrame = errors.New("video: no frame yet")
	// ErrClosed means the Receiver has stopped running.
	ErrClosed = errors.New("video: closed")
)

// Errors that end one connection without being the peer's fault.
var (
	errReplaced = errors.New("replaced by a newer connection")
	errShutdown = errors.New("shutting down")
	errStopped  = errors.New("broadcast stopped")
)

// errCode is an ERROR message's code.
type errCode uint8

// ERROR codes; VIDEO.md §5.11 says what each side does on each.
const (
	codeProtocol errCode = 1
	codeVersion  errCode = 2
	codeAuth     errCode = 3
	codeDevice   errCode = 4
	codeRole     errCode = 5
	codeReplaced errCode = 6
	codeShutdown errCode = 7
	codeInternal errCode = 8
)

func (c errCode) String() string {
	switch c {
	case codeProtocol:
		return "PROTOCOL"
	case codeVersion:
		return "VERSION"
	case codeAuth:
		return "AUTH"
	case codeDevice:
		return "DEVICE"
	case codeRole:
		return "ROLE"
	case codeReplaced:
		return "REPLACED"
	case codeShutdown:
		return "SHUTDOWN"
	case codeInternal:
		return "INTERNAL"
	}
	return fmt.Sprintf("code %d", uint8(c))
}

// peerError is an ERROR message received from the peer.
type peerError struct {
	code errCode
	text string
}

func (e *peerError) Error() string {
	return fmt.Sprintf("peer sent ERROR %s: %s", e.code, e.text)
}

// Unwrap maps the code to the sentinel the peer's complaint amounts to.
func (e *peerError) Unwrap() error {
	switch e.code {
	case codeAuth, codeDevice:
		return ErrAuth
	case codeVersion:
		return ErrVersion
	case codeProtocol, codeRole:
		return ErrProtocol
	}
	return nil
}

// codeOf is the ERROR code that tells the peer about err, our reason for
// closing the connection.
func codeOf(err error) errCode {
	var re *roleError
	var de *deviceError
	switch {
	case errors.As(err, &de):
		return codeDevice
	case errors.As(err, &re):
		return codeRole
	case errors.Is(err, ErrAuth):
		return codeAuth
	case errors.Is(err, ErrVersion):
		return codeVersion
	case errors.Is(err, ErrProtocol):
		return codeProtocol
	case errors.Is(err, errReplaced):
		return codeReplaced
	case errors.Is(err, errShutdown):
		return codeShutdown
	}
	return codeInternal
}

// roleError is a HELLO from a peer with our own role.
type roleError struct{ role role }

func (e *roleError) Error() string {
	return fmt.Sprintf("peer is a %s too; one side must be the source and the other the sink", e.role)
}

func (e *roleError) Unwrap() error { return ErrProtocol }

// deviceError is a HELLO for another device.
type deviceError struct{ ours, theirs string }

func (e *deviceError) Error() string {
	return fmt.Sprintf("peer is for device %q; this side is for %q", e.theirs, e.ours)
}

func (e *deviceError) Unwrap() error { return ErrAuth }
