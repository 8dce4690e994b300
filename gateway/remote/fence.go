package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"

	"google.golang.org/grpc"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/atomicfile"
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
// another (ServeOptions.Fences). The zero value keeps the fences in memory
// only; OpenFences keeps them in a file too, so that a host restarted
// still refuses the stale gateway.
type Fences struct {
	mu   sync.Mutex
	high map[string]int64 // by device id, as the host's driver knows it
	path string           // the file they are kept in; empty: memory only
	log  *slog.Logger
}

// OpenFences returns Fences kept in the file at path (JSON, a fence per
// device id), read back from it when it exists. Each raise is written
// before the call it came with goes on; when the write fails the call
// still goes on, the raise held in memory, and log hears of it.
func OpenFences(path string, log *slog.Logger) (*Fences, error) {
	if log == nil {
		log = slog.Default()
	}
	f := &Fences{path: path, log: log, high: map[string]int64{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the lease fences: %w", err)
	}
	if err := json.Unmarshal(data, &f.high); err != nil {
		return nil, fmt.Errorf("the lease fences %s: %w (remove the file to start again: a stale gateway's calls then pass until a gateway sends a newer fence)", path, err)
	}
	return f, nil
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
	if fence > f.high[device] {
		f.high[device] = fence
		f.save()
	}
	return nil
}

// save writes the fences to their file, if they have one. It runs under
// f.mu: raises are rare (one per new holder of a lease), and a call must
// not go on before its raise is kept.
func (f *Fences) save() {
	if f.path == "" {
		return
	}
	data, err := json.Marshal(f.high)
	if err == nil {
		err = atomicfile.Write(f.path, data)
	}
	if err != nil {
		f.log.Error("the lease fences cannot be written: after a restart this host may let a stale gateway's call through until a newer fence arrives", "path", f.path, "err", err)
	}
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
