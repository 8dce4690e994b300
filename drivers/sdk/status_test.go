package sdk

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
)

// withInfo is a status of code with an ErrorInfo of domain and reason.
func withInfo(t *testing.T, code codes.Code, domain, reason string) error {
	t.Helper()
	st, err := status.New(code, "the driver's message").WithDetails(&errdetails.ErrorInfo{Domain: domain, Reason: reason})
	if err != nil {
		t.Fatal(err)
	}
	return st.Err()
}

// withAny is a status of code whose one detail is a of the given type and bytes.
func withAny(code codes.Code, typeURL string, value []byte) error {
	return status.FromProto(&spb.Status{Code: int32(code), Message: "the driver's message",
		Details: []*anypb.Any{{TypeUrl: typeURL, Value: value}}}).Err()
}

func TestFromStatus(t *testing.T) {
	infoURL := "type.googleapis.com/google.rpc.ErrorInfo"
	good, err := proto.Marshal(&errdetails.ErrorInfo{Domain: ErrorDomain, Reason: "DEVICE_NOT_FOUND"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		err    error
		cat    *Error
		detail Detail
		reason string
	}{
		{"known reason", withInfo(t, codes.NotFound, ErrorDomain, "APP_NOT_FOUND"), ErrAppNotFound, DetailKnown, "APP_NOT_FOUND"},
		{"new reason no focus", withInfo(t, codes.FailedPrecondition, ErrorDomain, "NO_FOCUSED_FIELD"), ErrNoFocus, DetailKnown, "NO_FOCUSED_FIELD"},
		{"new reason storage full", withInfo(t, codes.ResourceExhausted, ErrorDomain, "STORAGE_FULL"), ErrStorageFull, DetailKnown, "STORAGE_FULL"},
		{"bare not found", status.Error(codes.NotFound, "x"), ErrDeviceNotFound, DetailNone, ""},
		{"bare failed precondition is not locked", status.Error(codes.FailedPrecondition, "x"), ErrFailedPrecondition, DetailNone, ""},
		{"bare resource exhausted is not busy", status.Error(codes.ResourceExhausted, "x"), ErrResourceExhausted, DetailNone, ""},
		{"other domain", withInfo(t, codes.NotFound, "example.com", "APP_NOT_FOUND"), ErrDeviceNotFound, DetailNone, ""},
		{"unknown reason", withInfo(t, codes.FailedPrecondition, ErrorDomain, "NO_SUCH_REASON"), ErrFailedPrecondition, DetailUnknownReason, "NO_SUCH_REASON"},
		{"detail bytes do not parse", withAny(codes.NotFound, infoURL, []byte{0xff, 0xff}), ErrDeviceNotFound, DetailBroken, ""},
		{"detail of an unknown type", withAny(codes.NotFound, "type.googleapis.com/example.Nothing", good), ErrDeviceNotFound, DetailBroken, ""},
		{"good detail beside a broken one", status.FromProto(&spb.Status{Code: int32(codes.NotFound), Message: "m",
			Details: []*anypb.Any{{TypeUrl: infoURL, Value: []byte{0xff}}, {TypeUrl: infoURL, Value: good}}}).Err(), ErrDeviceNotFound, DetailBroken, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _ := fromStatus(context.Background(), tt.err)
			if !errors.Is(out, tt.cat) {
				t.Errorf("category: got %v; want %v", Category(out).Reason(), tt.cat.Reason())
			}
			w, ok := WireOf(out)
			if !ok {
				t.Fatalf("WireOf(%v): got nothing; want what came", out)
			}
			if w.Detail != tt.detail || w.Reason != tt.reason {
				t.Errorf("wire: got %v %q; want %v %q", w.Detail, w.Reason, tt.detail, tt.reason)
			}
			if w.Code != status.Code(tt.err) {
				t.Errorf("wire code: got %v; want %v", w.Code, status.Code(tt.err))
			}
		})
	}
}

func TestWireOfLocalError(t *testing.T) {
	if w, ok := WireOf(ErrLocked); ok {
		t.Errorf("WireOf(a local error): got %+v; want nothing", w)
	}
}
