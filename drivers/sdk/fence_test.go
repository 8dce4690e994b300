package sdk

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"path"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// seen is what a server in front of the adapter saw of each call's fence:
// the method, and the device and fence it carried ("" and 0 for none).
type seen struct {
	Method, Device string
	Fence          int64
}

// fenceRecorder records the fence of every call a server receives, as a
// phone host's interceptor reads it.
type fenceRecorder struct {
	mu   sync.Mutex
	got  []seen
	errs []error
}

func (r *fenceRecorder) note(ctx context.Context, method string) {
	device, f, _, err := IncomingFence(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, seen{path.Base(method), device, f})
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

func (r *fenceRecorder) take() ([]seen, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got, errs := r.got, r.errs
	r.got, r.errs = nil, nil
	return got, errs
}

// dialRecorded serves srv behind r and returns a client of it.
func dialRecorded(t *testing.T, srv pb.DriverServiceServer, r *fenceRecorder) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			r.note(ctx, info.FullMethod)
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			r.note(ss.Context(), info.FullMethod)
			return h(srv, ss)
		}))
	pb.RegisterDriverServiceServer(s, srv)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); s.Stop() })
	return NewClient(conn, nil)
}

// TestFenceSent: the calls that act on a device carry the fence of the
// lease on that device; reads, calls on another device and a zero fence
// carry none.
func TestFenceSent(t *testing.T) {
	r := &fenceRecorder{}
	c := dialRecorded(t, NewServer(newFake()), r)
	fenced := WithFence(context.Background(), "d1", 7)
	oneEvent := func() func() (InputEvent, error) {
		sent := false
		return func() (InputEvent, error) {
			if sent {
				return InputEvent{}, io.EOF
			}
			sent = true
			return InputEvent{DeviceID: "d1", Text: "a"}, nil
		}
	}
	tests := []struct {
		name string
		ctx  context.Context
		call func(ctx context.Context) error
		want seen
	}{
		{"act", fenced, func(ctx context.Context) error { _, err := c.Act(ctx, "d1", Action{Kind: ActTap}); return err }, seen{"Act", "d1", 7}},
		{"input", fenced, func(ctx context.Context) error { _, err := c.Input(ctx, oneEvent()); return err }, seen{"Input", "d1", 7}},
		{"wake", fenced, func(ctx context.Context) error { return c.Wake(ctx, "d1") }, seen{"Wake", "d1", 7}},
		{"unlock", fenced, func(ctx context.Context) error { return c.Unlock(ctx, "d1", "1234") }, seen{"Unlock", "d1", 7}},
		{"push", fenced, func(ctx context.Context) error {
			_, err := c.PushFile(ctx, "d1", "a.txt", bytes.NewReader([]byte("hi")))
			return err
		}, seen{"PushFile", "d1", 7}},
		{"delete", fenced, func(ctx context.Context) error { return c.DeleteFile(ctx, "d1", "a.txt", false) }, seen{"DeleteFile", "d1", 7}},
		{"create display", fenced, func(ctx context.Context) error { _, err := c.CreateDisplay(ctx, "d1", 100, 200, 160); return err }, seen{"CreateDisplay", "d1", 7}},
		{"remove display", fenced, func(ctx context.Context) error { return c.RemoveDisplay(ctx, "d1", 3) }, seen{"RemoveDisplay", "d1", 7}},
		{"a read", fenced, func(ctx context.Context) error { _, err := c.Screen(ctx, "d1", 0); return err }, seen{"GetScreen", "", 0}},
		{"another device", fenced, func(ctx context.Context) error { _, err := c.Act(ctx, "d2", Action{Kind: ActTap}); return err }, seen{"Act", "", 0}},
		{"a qualified id", WithFence(context.Background(), "host-a/d1", 9), func(ctx context.Context) error {
			_, err := c.Act(ctx, "d1", Action{Kind: ActTap})
			return err
		}, seen{"Act", "d1", 9}},
		{"fence zero", WithFence(context.Background(), "d1", 0), func(ctx context.Context) error {
			_, err := c.Act(ctx, "d1", Action{Kind: ActTap})
			return err
		}, seen{"Act", "", 0}},
		{"no fence", context.Background(), func(ctx context.Context) error { _, err := c.Act(ctx, "d1", Action{Kind: ActTap}); return err }, seen{"Act", "", 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(tt.ctx); err != nil {
				t.Fatal(err)
			}
			got, errs := r.take()
			if diff := cmp.Diff([]seen{tt.want}, got); diff != "" || len(errs) > 0 {
				t.Errorf("fences seen (-want +got):\n%s\nerrors %v", diff, errs)
			}
		})
	}
}

func TestIncomingFence(t *testing.T) {
	tests := []struct {
		name    string
		md      metadata.MD
		device  string
		fence   int64
		ok, bad bool
	}{
		{"none", metadata.MD{}, "", 0, false, false},
		{"one", metadata.Pairs(FenceDeviceKey, "d1", FenceKey, "12"), "d1", 12, true, false},
		{"no device", metadata.Pairs(FenceKey, "12"), "", 0, false, true},
		{"two", metadata.Pairs(FenceDeviceKey, "d1", FenceKey, "12", FenceKey, "13"), "", 0, false, true},
		{"not a number", metadata.Pairs(FenceDeviceKey, "d1", FenceKey, "x"), "", 0, false, true},
		{"zero", metadata.Pairs(FenceDeviceKey, "d1", FenceKey, "0"), "", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			device, f, ok, err := IncomingFence(metadata.NewIncomingContext(context.Background(), tt.md))
			if device != tt.device || f != tt.fence || ok != tt.ok || (err != nil) != tt.bad {
				t.Errorf("got %q, %d, %v, %v; want %q, %d, %v, error %v", device, f, ok, err, tt.device, tt.fence, tt.ok, tt.bad)
			}
			if tt.bad && !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("got %v; want ErrInvalidArgument", err)
			}
		})
	}
}

// TestLeaseLostCrossesTheBoundary: a refusal made in front of the adapter
// with Status reaches the client as ErrLeaseLost.
func TestLeaseLostCrossesTheBoundary(t *testing.T) {
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer(grpc.UnaryInterceptor(func(context.Context, any, *grpc.UnaryServerInfo, grpc.UnaryHandler) (any, error) {
		return nil, Status(Errorf(ErrLeaseLost, "device %q: fence 4, seen 5", "d1"))
	}))
	pb.RegisterDriverServiceServer(s, NewServer(newFake()))
	go s.Serve(lis)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_, err = NewClient(conn, nil).Act(context.Background(), "d1", Action{Kind: ActTap})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("got %v; want ErrLeaseLost", err)
	}
	if w, ok := WireOf(err); !ok || w.Reason != "LEASE_LOST" || w.Detail != DetailKnown {
		t.Errorf("wire: got %+v, %v; want reason LEASE_LOST", w, ok)
	}
}
