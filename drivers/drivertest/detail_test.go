package drivertest

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// rewrite changes the status of every failed call before it leaves the
// server, as a driver in another language might get it wrong.
type rewrite func(*status.Status) *status.Status

// breakDetail keeps each detail's type and replaces its bytes with ones
// that do not parse.
func breakDetail(st *status.Status) *status.Status {
	p := st.Proto()
	for _, d := range p.Details {
		d.Value = []byte{0xff, 0xff, 0xff}
	}
	return status.FromProto(p)
}

// dropDetail sends the bare code and message.
func dropDetail(st *status.Status) *status.Status {
	return status.New(st.Code(), st.Message())
}

// rewritingClient serves srv through f on a Unix socket and returns a
// client of it.
func rewritingClient(t *testing.T, srv pb.DriverServiceServer, f rewrite) *sdk.Client {
	t.Helper()
	fix := func(err error) error {
		if err == nil {
			return nil
		}
		return f(status.Convert(err)).Err()
	}
	lis, err := net.Listen("unix", filepath.Join(t.TempDir(), "driver.sock"))
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			return resp, fix(err)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return fix(h(srv, ss))
		}),
	)
	pb.RegisterDriverServiceServer(g, srv)
	go g.Serve(lis) //nolint:errcheck // Serve returns when Stop closes the listener
	t.Cleanup(g.Stop)
	conn, err := grpc.NewClient("unix://"+lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sdk.NewClient(conn, nil)
}

// TestCheckReportsWhatCame: a report names what the driver sent, a broken
// or missing detail as such, never a reason the driver did not send; a
// broken detail fails unknown-device although its code is right.
func TestCheckReportsWhatCame(t *testing.T) {
	tests := []struct {
		name    string
		bug     string
		f       rewrite
		failing string
		status  Status
		want    string // in the case's messages when it fails
		notWant string
	}{
		{"broken detail fails unknown-device", "", breakDetail, "unknown-device", Fail, "NOT_FOUND with a detail that does not parse", "got DEVICE_NOT_FOUND"},
		{"bare NOT_FOUND passes unknown-device", "", dropDetail, "unknown-device", Pass, "", ""},
		{"bare UNAVAILABLE is reported bare", "unknown-offline", dropDetail, "unknown-device", Fail, "UNAVAILABLE with no error detail", "got DEVICE_OFFLINE"},
		{"a sent reason is named", "unknown-offline", func(st *status.Status) *status.Status { return st }, "unknown-device", Fail, "got DEVICE_OFFLINE", "no error detail"},
		{"broken detail on a wrong PIN", "", breakDetail, "unlock-wrong-pin", Fail, "PERMISSION_DENIED with a detail that does not parse", "got WRONG_PIN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := rewritingClient(t, sdk.NewServer(newFake(tt.bug)), tt.f)
			opts := quick
			opts.Run = "^" + tt.failing + "$"
			var out bytes.Buffer
			sum, err := Check(context.Background(), c, opts, &out)
			if err != nil {
				t.Fatal(err)
			}
			r := resultOf(t, sum, tt.failing)
			msgs := strings.Join(r.Messages, "\n")
			if r.Status != tt.status {
				t.Fatalf("case %s: got %s %q; want %s. Report:\n%s", tt.failing, r.Status, msgs, tt.status, out.String())
			}
			if tt.want != "" && !strings.Contains(msgs, tt.want) {
				t.Errorf("case %s: messages %q; want one containing %q", tt.failing, msgs, tt.want)
			}
			if tt.notWant != "" && strings.Contains(msgs, tt.notWant) {
				t.Errorf("case %s: messages %q; want none containing %q", tt.failing, msgs, tt.notWant)
			}
		})
	}
}
