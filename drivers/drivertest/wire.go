package drivertest

import (
	"context"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// connect returns a client for d. An *sdk.Client already talks over gRPC;
// any other driver is served in-process through the SDK's server adapter,
// which is where capabilities are derived and errors become status codes.
// The returned function stops what connect started.
func connect(d sdk.Driver) (*sdk.Client, func(), error) {
	if c, ok := d.(*sdk.Client); ok {
		return c, func() {}, nil
	}
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(sdk.MaxMessageBytes), grpc.MaxSendMsgSize(sdk.MaxMessageBytes))
	pb.RegisterDriverServiceServer(srv, sdk.NewServer(d))
	go srv.Serve(lis) //nolint:errcheck // Serve returns when Stop closes the listener
	conn, err := grpc.NewClient("passthrough:///drivertest",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(sdk.MaxMessageBytes), grpc.MaxCallSendMsgSize(sdk.MaxMessageBytes)),
	)
	if err != nil {
		srv.Stop()
		return nil, nil, err
	}
	stop := func() {
		conn.Close()
		srv.Stop()
	}
	return sdk.NewClient(conn, nil), stop, nil
}
