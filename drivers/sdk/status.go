package sdk

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of driver errors.
const ErrorDomain = "pinky.driver.v1"

// codeOf is the gRPC code each category travels as (SPEC.md, "Errors").
var codeOf = map[*Error]codes.Code{
	ErrDeviceNotFound:     codes.NotFound,
	ErrDeviceOffline:      codes.Unavailable,
	ErrDeviceUnauthorized: codes.FailedPrecondition,
	ErrLocked:             codes.FailedPrecondition,
	ErrScreenOff:          codes.FailedPrecondition,
	ErrWrongPIN:           codes.PermissionDenied,
	ErrAppNotFound:        codes.NotFound,
	ErrFileNotFound:       codes.NotFound,
	ErrInvalidArgument:    codes.InvalidArgument,
	ErrUnsupported:        codes.Unimplemented,
	ErrBusy:               codes.ResourceExhausted,
	ErrTimeout:            codes.DeadlineExceeded,
	ErrInternal:           codes.Internal,
	ErrDriverGone:         codes.Unavailable,
}

// byCode is the category of a status that carries no known reason, as
// SPEC.md defines for drivers that send bare codes.
var byCode = map[codes.Code]*Error{
	codes.NotFound:           ErrDeviceNotFound,
	codes.Unavailable:        ErrDeviceOffline,
	codes.FailedPrecondition: ErrLocked,
	codes.PermissionDenied:   ErrWrongPIN,
	codes.InvalidArgument:    ErrInvalidArgument,
	codes.OutOfRange:         ErrInvalidArgument,
	codes.Unimplemented:      ErrUnsupported,
	codes.ResourceExhausted:  ErrBusy,
	codes.DeadlineExceeded:   ErrTimeout,
}

var byReason = func() map[string]*Error {
	m := make(map[string]*Error, len(allErrors))
	for _, e := range allErrors {
		m[e.reason] = e
	}
	return m
}()

// toStatus is the server side of the boundary: a driver's error becomes a
// status with the category's code and reason and the error's text.
func toStatus(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return status.FromContextError(ctx.Err()).Err()
	}
	cat := Category(err)
	st := status.New(codeOf[cat], err.Error())
	if d, derr := st.WithDetails(&errdetails.ErrorInfo{Reason: cat.reason, Domain: ErrorDomain}); derr == nil {
		st = d
	}
	return st.Err()
}

// remoteError is an error that came over the wire: the peer's text, and the
// category it belongs to for errors.Is.
type remoteError struct {
	msg string
	cat *Error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cat }

// fromStatus is the client side of the boundary. It returns ctx's error when
// the caller gave up, and a category otherwise. transport reports whether
// the status came from the connection rather than from the driver.
func fromStatus(ctx context.Context, err error) (out error, transport bool) {
	if err == nil {
		return nil, false
	}
	if ctx.Err() != nil {
		return ctx.Err(), false
	}
	st, ok := status.FromError(err)
	if !ok {
		return &remoteError{msg: err.Error(), cat: ErrInternal}, true
	}
	msg := st.Message()
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			if cat, ok := byReason[info.GetReason()]; ok {
				return &remoteError{msg: msg, cat: cat}, false
			}
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.Canceled, codes.Unknown, codes.Internal:
		// A bare status of these codes is what grpc-go makes when the
		// connection breaks; the client decides whether the driver is gone.
		cat := byCode[st.Code()]
		if cat == nil {
			cat = ErrInternal
		}
		return &remoteError{msg: msg, cat: cat}, true
	}
	if cat, ok := byCode[st.Code()]; ok {
		return &remoteError{msg: msg, cat: cat}, false
	}
	return &remoteError{msg: fmt.Sprintf("%s (%s)", msg, st.Code()), cat: ErrInternal}, false
}
