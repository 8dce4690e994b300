package sdk

import (
	"errors"
	"fmt"
)

// Error is a category of driver failure. It crosses the process boundary as
// a gRPC status code plus a reason (google.rpc.ErrorInfo, domain
// "pinky.driver.v1"); the table in SPEC.md lists them. Wrap one with context:
//
//	fmt.Errorf("device %q: %w", id, sdk.ErrDeviceOffline)
type Error struct {
	reason string
	text   string
}

func (e *Error) Error() string { return e.text }

// Reason is the stable reason string sent on the wire, e.g. "DEVICE_OFFLINE".
func (e *Error) Reason() string { return e.reason }

// The error categories. Drivers return them (wrapped or not); the client
// adapter returns them, wrapped with the driver's message, so errors.Is works
// on both sides of the process boundary.
var (
	ErrDeviceNotFound     = &Error{"DEVICE_NOT_FOUND", "device not found"}
	ErrDeviceOffline      = &Error{"DEVICE_OFFLINE", "device offline"}
	ErrDeviceUnauthorized = &Error{"DEVICE_UNAUTHORIZED", "device has not authorized this computer"}
	ErrLocked             = &Error{"DEVICE_LOCKED", "device locked"}
	ErrScreenOff          = &Error{"SCREEN_OFF", "screen off"}
	ErrNoFocus            = &Error{"NO_FOCUSED_FIELD", "no text field has the focus"}
	ErrScreenProtected    = &Error{"SCREEN_PROTECTED", "the screen cannot be captured"}
	ErrUnlockMethod       = &Error{"UNLOCK_METHOD_UNSUPPORTED", "the phone is not locked with a PIN"}
	ErrWrongPIN           = &Error{"WRONG_PIN", "wrong PIN"}
	ErrStorageFull        = &Error{"STORAGE_FULL", "the phone's storage is full"}
	ErrAppNotFound        = &Error{"APP_NOT_FOUND", "app not found"}
	ErrFileNotFound       = &Error{"FILE_NOT_FOUND", "file not found"}
	ErrInvalidArgument    = &Error{"INVALID_ARGUMENT", "invalid argument"}
	ErrUnsupported        = &Error{"UNSUPPORTED", "unsupported"}
	ErrBusy               = &Error{"BUSY", "busy"}
	ErrTimeout            = &Error{"TIMEOUT", "timed out"}
	ErrInternal           = &Error{"INTERNAL", "internal driver error"}
	// ErrFailedPrecondition and ErrResourceExhausted are what a bare
	// FAILED_PRECONDITION or RESOURCE_EXHAUSTED (a status with no reason)
	// becomes: a condition the driver did not name, which only its message
	// describes. Drivers name the condition instead (ErrLocked,
	// ErrNoFocus, ErrStorageFull…).
	ErrFailedPrecondition = &Error{"FAILED_PRECONDITION", "failed precondition"}
	ErrResourceExhausted  = &Error{"RESOURCE_EXHAUSTED", "resource exhausted"}
	// ErrDriverGone is returned by the client adapter when the driver process
	// exited before or during a call. Drivers never return it.
	ErrDriverGone = &Error{"DRIVER_GONE", "driver process gone"}
	// ErrLeaseLost is what a Pinky phone host answers a call whose lease
	// fence (WithFence) is lower than one it has seen for the device:
	// another gateway holds the lease on the phone now, and nothing reached
	// it. Drivers never return it.
	ErrLeaseLost = &Error{"LEASE_LOST", "another gateway holds the lease on this phone"}
)

var allErrors = []*Error{
	ErrDeviceNotFound, ErrDeviceOffline, ErrDeviceUnauthorized, ErrLocked, ErrScreenOff,
	ErrNoFocus, ErrScreenProtected, ErrUnlockMethod, ErrWrongPIN, ErrStorageFull,
	ErrAppNotFound, ErrFileNotFound, ErrInvalidArgument, ErrUnsupported,
	ErrBusy, ErrTimeout, ErrInternal, ErrFailedPrecondition, ErrResourceExhausted, ErrDriverGone,
	ErrLeaseLost,
}

// Errorf returns an error of category cat with a formatted message in front.
func Errorf(cat *Error, format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), cat)
}

// Invalid returns an ErrInvalidArgument with a formatted message in front.
func Invalid(format string, args ...any) error {
	return Errorf(ErrInvalidArgument, format, args...)
}

// Category returns the *Error that err wraps, or ErrInternal when it wraps none.
func Category(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return ErrInternal
}
