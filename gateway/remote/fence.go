package remote

import (
	"context"
	"sync"

	"google.golang.org/grpc"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Fences keeps, per device, the highest lease fence that a call to the
// host carried (sdk.WithFence), and refuses a call whose fence is lower
// with sdk.ErrLeaseLost: the gateway that sent it lost its lease on the
// phone to another, which took it with a higher fence. A call without a
// fence passes (a gateway without a shared lease table sends none).
//
// One Fences serves every link of a process, so that what it learnt holds
// across reconnects and across several gateways linked to the host; the
// zero value is ready, and Serve uses the process's own unless told
// another (ServeOptions.Fences).
type Fences struct {
	mu   sync.Mutex
	high map[string]int64 // by device id, as the host's driver knows it
}

// processFences is the process's Fences: every Serve of the process
// shares it unless told another.
var processFences = &Fences{}

// check refuses a call whose fence is below the device's highest, and
// raises the highest to the call's fence otherwise.
func (f *Fences) check(ctx context.Context) error {
	device, fence, ok, err := sdk.IncomingFence(ctx)
	if err != nil || !ok {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if high := f.high[device]; fence < high {
		return sdk.Errorf(sdk.ErrLeaseLost, "device %q: the call carries lease fence %d, and a gateway has taken the phone with fence %d since", device, fence, high)
	}
	if f.high == nil {
		f.high = map[string]int64{}
	}
	f.high[device] = fence
	return nil
}

// unary is the check as a unary interceptor.
func (f *Fences) unary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := f.check(ctx); err != nil {
		return nil, sdk.Status(err)
	}
	return h(ctx, req)
}

// stream is the check as a stream interceptor, done when the stream
// opens: the metadata comes with its start.
func (f *Fences) stream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := f.check(ss.Context()); err != nil {
		return sdk.Status(err)
	}
	return h(srv, ss)
}
