package sdk

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/metadata"
)

// The gRPC metadata that carries a lease's fence to a phone host: the
// device the fence is for, and the fence in decimal.
const (
	FenceDeviceKey = "pinky-fence-device"
	FenceKey       = "pinky-fence"
)

// fenceCtx is the context key of WithFence.
type fenceCtx struct{}

// fence is a lease's fencing token on one device.
type fence struct {
	device string
	value  int64
}

// WithFence returns ctx carrying the fence of the lease on device. The
// Client sends it, as gRPC metadata, with the calls that act on that
// device (Act, Input, Unlock, Wake, PushFile, DeleteFile, CreateDisplay,
// RemoveDisplay); a Pinky phone host refuses a call whose fence is lower
// than one it has seen for the device, with ErrLeaseLost. A fence of zero
// or less carries nothing. A device that a gateway lists as NAME/ID (a
// phone host's device whose id clashed) matches the host's ID.
func WithFence(ctx context.Context, device string, f int64) context.Context {
	if f <= 0 {
		return ctx
	}
	return context.WithValue(ctx, fenceCtx{}, fence{device: device, value: f})
}

// FenceOf returns the fence WithFence put in ctx, and its device: what a
// driver served in the same process (no metadata) can read.
func FenceOf(ctx context.Context) (device string, f int64, ok bool) {
	fc, ok := ctx.Value(fenceCtx{}).(fence)
	return fc.device, fc.value, ok
}

// withFenceMD adds ctx's fence, when it is for device, to the outgoing
// metadata of a call on device; "" is the fence's own device (a stream
// that names its device in its messages).
func withFenceMD(ctx context.Context, device string) context.Context {
	f, ok := ctx.Value(fenceCtx{}).(fence)
	if !ok {
		return ctx
	}
	switch {
	case device == "":
		device = f.device
	case f.device != device && !strings.HasSuffix(f.device, "/"+device):
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, FenceDeviceKey, device, FenceKey, strconv.FormatInt(f.value, 10))
}

// IncomingFence returns the fence a call carries in its incoming metadata,
// for a server in front of a driver: the device, the fence, and whether
// there is one. A fence that does not parse is an ErrInvalidArgument.
func IncomingFence(ctx context.Context) (device string, f int64, ok bool, err error) {
	md, _ := metadata.FromIncomingContext(ctx)
	values := md.Get(FenceKey)
	if len(values) == 0 {
		return "", 0, false, nil
	}
	devices := md.Get(FenceDeviceKey)
	if len(values) != 1 || len(devices) != 1 || devices[0] == "" {
		return "", 0, false, Invalid("a call carries %d fences for %d devices; want one of each", len(values), len(devices))
	}
	f, perr := strconv.ParseInt(values[0], 10, 64)
	if perr != nil || f <= 0 {
		return "", 0, false, Invalid("fence %q is not a positive integer", values[0])
	}
	return devices[0], f, true, nil
}
