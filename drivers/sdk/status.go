package sdk

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	ErrNoFocus:            codes.FailedPrecondition,
	ErrScreenProtected:    codes.FailedPrecondition,
	ErrUnlockMethod:       codes.FailedPrecondition,
	ErrWrongPIN:           codes.PermissionDenied,
	ErrStorageFull:        codes.ResourceExhausted,
	ErrAppNotFound:        codes.NotFound,
	ErrFileNotFound:       codes.NotFound,
	ErrInvalidArgument:    codes.InvalidArgument,
	ErrUnsupported:        codes.Unimplemented,
	ErrBusy:               codes.ResourceExhausted,
	ErrTimeout:            codes.DeadlineExceeded,
	ErrInternal:           codes.Internal,
	ErrFailedPrecondition: codes.FailedPrecondition,
	ErrResourceExhausted:  codes.ResourceExhausted,
	ErrDriverGone:         codes.Unavailable,
	ErrLeaseLost:          codes.FailedPrecondition,
}

// byCode is the category of a status that carries no known reason, as
// SPEC.md defines for drivers that send bare codes. A bare
// FAILED_PRECONDITION or RESOURCE_EXHAUSTED names no condition: it stays
// what it is, and the message says the rest.
var byCode = map[codes.Code]*Error{
	codes.NotFound:           ErrDeviceNotFound,
	codes.Unavailable:        ErrDeviceOffline,
	codes.FailedPrecondition: ErrFailedPrecondition,
	codes.PermissionDenied:   ErrWrongPIN,
	codes.InvalidArgument:    ErrInvalidArgument,
	codes.OutOfRange:         ErrInvalidArgument,
	codes.Unimplemented:      ErrUnsupported,
	codes.ResourceExhausted:  ErrResourceExhausted,
	codes.DeadlineExceeded:   ErrTimeout,
}

var byReason = func() map[string]*Error {
	m := make(map[string]*Error, len(allErrors))
	for _, e := range allErrors {
		m[e.reason] = e
	}
	return m
}()

// Status is the gRPC status err travels as: its category's code and
// reason, and its text. It is for a server that answers in front of the
// adapter (an interceptor); the adapter's own methods use it already.
func Status(err error) error { return toStatus(context.Background(), err) }

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

// remoteError is an error that came over the wire: the peer's text, the
// category it belongs to for errors.Is, and what the status carried.
type remoteError struct {
	msg  string
	cat  *Error
	wire Wire
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cat }

// Detail says what a status carried in place of the ErrorInfo detail that
// SPEC.md asks for.
type Detail int

// The states of a status's detail.
const (
	// DetailNone: no ErrorInfo of domain pinky.driver.v1 (a bare code).
	DetailNone Detail = iota
	// DetailKnown: an ErrorInfo with a reason that SPEC.md defines.
	DetailKnown
	// DetailUnknownReason: an ErrorInfo with a reason SPEC.md does not
	// define; the code decides the category.
	DetailUnknownReason
	// DetailBroken: a detail that does not parse (bytes that are not the
	// message its type names, or a type this side does not know), or a
	// detail status whose code differs from the status's own.
	DetailBroken
)

func (d Detail) String() string {
	switch d {
	case DetailKnown:
		return "a known reason"
	case DetailUnknownReason:
		return "a reason SPEC.md does not define"
	case DetailBroken:
		return "a detail that does not parse"
	}
	return "no error detail"
}

// Wire is what a failed call carried across the process boundary, for
// reports that must say what came (the conformance suite) rather than the
// category the client settled on.
type Wire struct {
	Code    codes.Code // the status code
	Reason  string     // the ErrorInfo reason of domain pinky.driver.v1, "" when none
	Detail  Detail
	Message string // the status message
}

// WireOf returns what the status behind err carried, when err came from a
// driver over gRPC through this package's client.
func WireOf(err error) (Wire, bool) {
	var re *remoteError
	if !errors.As(err, &re) || re.wire.Code == codes.OK {
		return Wire{}, false
	}
	return re.wire, true
}

// detailMismatch starts the message grpc-go gives a status whose
// grpc-status-details-bin holds another code than grpc-status.
const detailMismatch = "grpc-status-details-bin mismatch"

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
	w := Wire{Code: st.Code(), Message: msg}
	if strings.HasPrefix(msg, detailMismatch) {
		w.Detail = DetailBroken
	}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case error:
			w.Detail = DetailBroken
		case *errdetails.ErrorInfo:
			if d.GetDomain() != ErrorDomain || w.Detail == DetailBroken {
				continue
			}
			w.Reason = d.GetReason()
			if cat, ok := byReason[w.Reason]; ok {
				w.Detail = DetailKnown
				return &remoteError{msg: msg, cat: cat, wire: w}, false
			}
			w.Detail = DetailUnknownReason
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
		return &remoteError{msg: msg, cat: cat, wire: w}, true
	}
	if cat, ok := byCode[st.Code()]; ok {
		return &remoteError{msg: msg, cat: cat, wire: w}, false
	}
	return &remoteError{msg: fmt.Sprintf("%s (%s)", msg, st.Code()), cat: ErrInternal, wire: w}, false
}
