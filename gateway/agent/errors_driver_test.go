package agent

import (
	"context"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// TestFromDriverCategories: every condition a driver names reads to the
// agent with its own code and keeps the driver's message; only what may
// have reached the phone is uncertain.
func TestFromDriverCategories(t *testing.T) {
	msg := `device "x": the message field is not focused`
	tests := []struct {
		name   string
		cat    *sdk.Error
		acting bool
		code   Code
		text   []string // each must be in the agent's sentence
	}{
		{"no focus", sdk.ErrNoFocus, true, CodeInvalidArgument, []string{"tap the field first", msg}},
		{"screen protected", sdk.ErrScreenProtected, false, CodeUnsupported, []string{"without a screenshot", msg}},
		{"unlock method", sdk.ErrUnlockMethod, false, CodeDeviceLocked, []string{"phone_ask_person", msg}},
		{"storage full while pushing", sdk.ErrStorageFull, true, CodeUnsupported, []string{"storage of x is full", msg}},
		{"bare failed precondition", sdk.ErrFailedPrecondition, true, CodeUnsupported, []string{msg}},
		{"bare resource exhausted", sdk.ErrResourceExhausted, true, CodeUnsupported, []string{msg}},
		{"locked", sdk.ErrLocked, true, CodeDeviceLocked, []string{"ask the person to unlock"}},
		{"invalid", sdk.ErrInvalidArgument, true, CodeInvalidArgument, []string{msg}},
		{"app not found", sdk.ErrAppNotFound, false, CodeNotFound, []string{msg, "phone_apps"}},
		{"unsupported", sdk.ErrUnsupported, false, CodeUnsupported, []string{msg}},
		{"internal while acting", sdk.ErrInternal, true, CodeUncertain, []string{"may or may not", msg}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := wantCode(t, tt.name, fromDriver("x", sdk.Errorf(tt.cat, "%s", msg), tt.acting), tt.code)
			for _, s := range tt.text {
				if !strings.Contains(e.Message, s) {
					t.Errorf("message %q; want it to contain %q", e.Message, s)
				}
			}
			if strings.Contains(e.Message, ": "+tt.cat.Error()) && tt.cat != sdk.ErrInternal {
				t.Errorf("message %q; want it without the category's suffix %q", e.Message, tt.cat.Error())
			}
		})
	}
}

// TestDefinite: the conditions a driver names (and the bare codes SPEC.md
// says did not happen) are definite; a fault or a timeout is not.
func TestDefinite(t *testing.T) {
	for _, cat := range definiteErrors {
		if !definite(sdk.Errorf(cat.(*sdk.Error), "x")) {
			t.Errorf("definite(%v): got false; want true", cat)
		}
	}
	for _, cat := range []*sdk.Error{sdk.ErrInternal, sdk.ErrTimeout, sdk.ErrDeviceOffline, sdk.ErrDriverGone, sdk.ErrBusy} {
		if definite(sdk.Errorf(cat, "x")) {
			t.Errorf("definite(%v): got true; want false", cat)
		}
	}
}

// TestDriverMessageIsSafe: what the driver writes reaches the agent with
// its controls visible and its length bounded.
func TestDriverMessageIsSafe(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "no field", "no field"},
		{"escape sequence", "evil\x1b[2J\nfake", `evil\x1b[2J\nfake`},
		{"bidi control", "pay \u202e001$", `pay ‹U+202E›001$`},
		{"empty is the category", "", "no text field has the focus"},
		{"long is cut", strings.Repeat("a", 1000), strings.Repeat("a", maxDriverMessage-1) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := error(sdk.ErrNoFocus)
			if tt.in != "" {
				err = sdk.Errorf(sdk.ErrNoFocus, "%s", tt.in)
			}
			if got := driverMessage(err); got != tt.want {
				t.Errorf("driverMessage: got %q; want %q", got, tt.want)
			}
		})
	}
}

// bareDriver answers Act with a status that has no error detail, as a
// driver in another language may.
type bareDriver struct {
	pb.UnimplementedDriverServiceServer
	code codes.Code
	msg  string
}

func (b bareDriver) Act(context.Context, *pb.ActRequest) (*pb.ActResponse, error) {
	return nil, status.Error(b.code, b.msg)
}

// TestFromDriverBareCodesOverTheWire: a bare FAILED_PRECONDITION (typing
// with no focused field) is not device_locked, a bare RESOURCE_EXHAUSTED
// (storage full) is not uncertain, and both keep the driver's message,
// through a real gRPC connection and the SDK's client.
func TestFromDriverBareCodesOverTheWire(t *testing.T) {
	tests := []struct {
		code codes.Code
		msg  string
	}{
		{codes.FailedPrecondition, "no text field has the focus; tap one first"},
		{codes.ResourceExhausted, "the phone's storage is full: 12 KiB left"},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			c := bareClient(t, bareDriver{code: tt.code, msg: tt.msg})
			_, err := c.Act(context.Background(), "x", sdk.Action{Kind: sdk.ActType, Text: "hi"})
			if err == nil {
				t.Fatal("Act: got no error; want the driver's")
			}
			e, ok := AsError(fromDriver("x", err, true))
			if !ok {
				t.Fatalf("fromDriver(%v): not an agent error", err)
			}
			if e.Code == CodeDeviceLocked || e.Code == CodeUncertain {
				t.Errorf("code: got %s; want neither device_locked nor uncertain", e.Code)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q; want the driver's %q in it", e.Message, tt.msg)
			}
		})
	}
}

func bareClient(t *testing.T, srv pb.DriverServiceServer) *sdk.Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	g := grpc.NewServer()
	pb.RegisterDriverServiceServer(g, srv)
	go g.Serve(lis) //nolint:errcheck // Serve returns when Stop closes the listener
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("passthrough:///bare",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sdk.NewClient(conn, nil)
}
