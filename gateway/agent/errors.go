package agent

import (
	"errors"
	"fmt"
)

// Code is a stable error code that agents see in a tool result.
type Code string

// The codes agents react to. Each Error carries a sentence that says what to
// do next; the Safety issue adds its own codes.
const (
	CodeNotFound         Code = "not_found"
	CodeInvalidArgument  Code = "invalid_argument"
	CodeLeaseHeld        Code = "lease_held"
	CodeNotLeased        Code = "not_leased"
	CodeDeviceOffline    Code = "device_offline"
	CodeUncertain        Code = "uncertain"
	CodeDriverRestarting Code = "driver_restarting"
	CodeUnsupported      Code = "unsupported"
	CodeDeviceLocked     Code = "device_locked"
	CodeTimeout          Code = "timeout"
	CodeLeaseLost        Code = "lease_lost"
	// The Safety codes.
	CodeDenied          Code = "denied"
	CodeScopeDenied     Code = "scope_denied"
	CodeBlockedApp      Code = "blocked_app"
	CodeCredentials     Code = "credentials"
	CodeApprovalPending Code = "approval_pending"
	CodeStale           Code = "stale"
	CodePersonInControl Code = "person_in_control"
	CodeStopped         Code = "stopped"
	CodeInternal        Code = "internal"
)

// Error is a failure an agent should react to: a code and a sentence for a
// model. Infrastructure faults are other errors.
type Error struct {
	Code    Code
	Message string // what happened and what to do next
	// withheld marks a read whose screen the agent may not see (a blocked
	// app, an app outside the task): only a way out may run on it.
	withheld bool
	// refusal is the driver's unsupported answer this Error was made from
	// (fromDriver), which refused turns into the answer for the call that
	// met it (errors_driver.go); nil for any other Error.
	refusal error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsError returns the *Error in err's chain, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
