package adb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The error categories. The device ones wrap the matching sdk error, so a
// driver can return them as they are: errors.Is(err, sdk.ErrDeviceOffline)
// holds for an error that wraps ErrOffline.
var (
	// ErrDeviceNotFound means the adb server knows no device with that serial.
	ErrDeviceNotFound = fmt.Errorf("adb: %w", sdk.ErrDeviceNotFound)
	// ErrUnauthorized means the phone has not accepted this computer's key:
	// the person must accept the "Allow USB debugging?" prompt on the phone.
	ErrUnauthorized = fmt.Errorf("adb: %w", sdk.ErrDeviceUnauthorized)
	// ErrOffline means the device is known but cannot run services: offline,
	// still connecting or authorizing, or in bootloader, recovery or sideload.
	ErrOffline = fmt.Errorf("adb: %w", sdk.ErrDeviceOffline)
	// ErrNoPermission means this user may not open the USB device (udev
	// rules on Linux). It counts as offline for the gateway.
	ErrNoPermission = fmt.Errorf("adb: no permission to open the USB device: %w", sdk.ErrDeviceOffline)
	// ErrFileNotFound means a path on the device does not exist.
	ErrFileNotFound = fmt.Errorf("adb: %w", sdk.ErrFileNotFound)
	// ErrServerNotRunning means nothing listens at the adb server address
	// and the client could not, or was told not to, start a server.
	ErrServerNotRunning = errors.New("adb server is not running")
	// ErrADBNotInstalled means no server listens and no adb binary was found
	// to start one.
	ErrADBNotInstalled = errors.New("adb is not installed")
	// ErrProtocol means the peer sent something that is not the adb protocol.
	ErrProtocol = errors.New("adb protocol error")
)

// ServerError is a FAIL reply from the adb server or from the device, with
// the message it carried. It unwraps to one of the categories above when the
// message names one (device not found, unauthorized, offline…).
type ServerError struct {
	// Request is the service the reply answered, e.g. "host:transport:SERIAL".
	Request string
	// Message is the server's text, as sent.
	Message string
	kind    error
}

func (e *ServerError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = "failed without a message"
	}
	if e.Request == "" {
		return "adb: " + msg
	}
	return "adb " + e.Request + ": " + msg
}

// Unwrap returns the error category the message names, or nil.
func (e *ServerError) Unwrap() error { return e.kind }

func failError(request, msg string) *ServerError {
	return &ServerError{Request: request, Message: msg, kind: classify(msg)}
}

// classify maps the adb server's FAIL texts (transport.cpp
// acquire_one_transport, file_sync_service.cpp) to a category.
func classify(msg string) error {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "unauthorized"):
		return ErrUnauthorized
	case strings.Contains(m, "no permissions"), strings.Contains(m, "insufficient permissions"):
		return ErrNoPermission
	case strings.Contains(m, "offline"), strings.Contains(m, "still authorizing"),
		strings.Contains(m, "still connecting"):
		return ErrOffline
	case strings.Contains(m, "no such file"):
		return ErrFileNotFound
	case strings.HasPrefix(m, "device ") && strings.Contains(m, "not found"),
		strings.HasPrefix(m, "no devices"), strings.HasPrefix(m, "no emulators"),
		strings.HasPrefix(m, "no such device"):
		return ErrDeviceNotFound
	}
	return nil
}

// errNoReply is an ErrProtocol for a connection closed before the status.
var errNoReply = fmt.Errorf("%w", ErrProtocol)

// errClosed is an ErrProtocol for a connection closed where a message
// could start.
var errClosed = fmt.Errorf("%w", ErrProtocol)

// protoErrorf returns an ErrProtocol with a formatted message in front.
func protoErrorf(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrProtocol)
}
