package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// goneWait is how long a call that lost its connection waits for the plugin
// host to report the process's exit before calling the error a device fault.
// The exit is normally seen within milliseconds of the socket closing.
const goneWait = time.Second

// deadlineSkew is how early a server may end a call before the caller's deadline.
const deadlineSkew = 100 * time.Millisecond

// Client adapts the gRPC service to a Driver. It implements every optional
// interface; whether the driver serves one is in Info().Capabilities, and a
// call to one it does not serve returns ErrUnsupported.
type Client struct {
	c    pb.DriverServiceClient
	gone <-chan struct{}
}

var (
	_ Driver        = (*Client)(nil)
	_ Inputter      = (*Client)(nil)
	_ Streamer      = (*Client)(nil)
	_ FrameCapturer = (*Client)(nil)
	_ Waker         = (*Client)(nil)
	_ Unlocker      = (*Client)(nil)
	_ IdleWaiter    = (*Client)(nil)
	_ AppLister     = (*Client)(nil)
	_ Filer         = (*Client)(nil)
	_ Displayer     = (*Client)(nil)

	_ NotificationLister = (*Client)(nil)
)

// NewClient returns a Driver that calls the driver served on conn. gone is
// closed when the driver's process exits (go-plugin's context does this);
// from then on, and for calls cut by the exit, errors are ErrDriverGone. A nil
// gone means the process is not watched.
func NewClient(conn grpc.ClientConnInterface, gone <-chan struct{}) *Client {
	return &Client{c: pb.NewDriverServiceClient(conn), gone: gone}
}

func (c *Client) isGone(wait time.Duration) bool {
	if c.gone == nil {
		return false
	}
	if wait <= 0 {
		select {
		case <-c.gone:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.gone:
		return true
	case <-t.C:
		return false
	}
}

// check fails fast once the driver is known to be gone.
func (c *Client) check() error {
	if c.isGone(0) {
		return ErrDriverGone
	}
	return nil
}

// err is the client side of the process boundary: a status becomes a
// category, and a broken connection of a dead process becomes ErrDriverGone.
func (c *Client) err(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	// The server sees a deadline pass slightly before the client does and
	// resets the stream; report that as the caller's deadline, as it is.
	if code := status.Code(err); code == codes.Canceled || code == codes.DeadlineExceeded {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < deadlineSkew {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(deadlineSkew):
			}
		}
	}
	// A request that cannot be encoded (a string that is not UTF-8) never
	// left this process: it is the caller's argument that is wrong.
	if st, ok := status.FromError(err); ok && st.Code() == codes.Internal && strings.HasPrefix(st.Message(), "grpc: error while marshaling") {
		return fmt.Errorf("%s: %w", st.Message(), ErrInvalidArgument)
	}
	out, transport := fromStatus(ctx, err)
	if out == nil || !transport {
		return out
	}
	wait := time.Duration(0)
	if errors.Is(out, ErrDeviceOffline) { // a bare UNAVAILABLE: the usual sign of a dead peer
		wait = goneWait
	}
	if c.isGone(wait) {
		return fmt.Errorf("%s: %w", out.Error(), ErrDriverGone)
	}
	return out
}

// Info implements Driver.
func (c *Client) Info(ctx context.Context) (Info, error) {
	if err := c.check(); err != nil {
		return Info{}, err
	}
	r, err := c.c.GetInfo(ctx, &pb.GetInfoRequest{})
	if err != nil {
		return Info{}, c.err(ctx, err)
	}
	return infoFromProto(r), nil
}

// WatchDevices implements Driver.
func (c *Client) WatchDevices(ctx context.Context, send func(DeviceEvent) error) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.WatchDevices(ctx, &pb.WatchDevicesRequest{})
	if err != nil {
		return c.err(ctx, err)
	}
	err = receive(c, ctx, stream.Recv, func(m *pb.WatchDevicesResponse) error { return send(deviceEventFromProto(m)) })
	return untilCancel(ctx, err)
}

// untilCancel is err, or nil when err only says that the caller ended a
// stream that runs until cancelled.
func untilCancel(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}

// receive reads a server stream until it ends, handing each message to
// each. A stream the caller cancelled ends with ctx's error.
func receive[M any](c *Client, ctx context.Context, recv func() (M, error), each func(M) error) error {
	for {
		m, err := recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return c.err(ctx, err)
		}
		if err := each(m); err != nil {
			return err
		}
	}
}

// Screen implements Driver.
func (c *Client) Screen(ctx context.Context, deviceID string, displayID int) (*Screen, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.GetScreen(ctx, &pb.GetScreenRequest{DeviceId: deviceID, DisplayId: int32(displayID)})
	if err != nil {
		return nil, c.err(ctx, err)
	}
	return screenFromProto(r.GetScreen()), nil
}

// Screenshot implements Driver.
func (c *Client) Screenshot(ctx context.Context, req ScreenshotRequest) (*Image, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.Screenshot(ctx, screenshotRequestToProto(req))
	if err != nil {
		return nil, c.err(ctx, err)
	}
	return imageFromProto(r.GetImage()), nil
}

// Act implements Driver.
func (c *Client) Act(ctx context.Context, deviceID string, a Action) (ActResult, error) {
	if err := c.check(); err != nil {
		return ActResult{}, err
	}
	ctx = withFenceMD(ctx, deviceID)
	r, err := c.c.Act(ctx, actionToProto(deviceID, a))
	if err != nil {
		return ActResult{}, c.err(ctx, err)
	}
	return ActResult{Detail: r.GetDetail()}, nil
}

// Input implements Inputter.
func (c *Client) Input(ctx context.Context, next func() (InputEvent, error)) (int64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(withFenceMD(ctx, ""))
	defer cancel()
	stream, err := c.c.Input(ctx)
	if err != nil {
		return 0, c.err(ctx, err)
	}
	for {
		e, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		if err := stream.Send(inputEventToProto(e)); err != nil {
			break // the server ended the stream; CloseAndRecv says why
		}
	}
	r, err := stream.CloseAndRecv()
	if err != nil {
		return 0, c.err(ctx, err)
	}
	return r.GetApplied(), nil
}

// StreamVideo implements Streamer.
func (c *Client) StreamVideo(ctx context.Context, req VideoRequest, send func(VideoPacket) error) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.StreamVideo(ctx, videoRequestToProto(req))
	if err != nil {
		return c.err(ctx, err)
	}
	err = receive(c, ctx, stream.Recv, func(m *pb.StreamVideoResponse) error { return send(videoPacketFromProto(m.GetPacket())) })
	return untilCancel(ctx, err)
}

// RequestKeyFrame implements Streamer.
func (c *Client) RequestKeyFrame(ctx context.Context, deviceID string, displayID int) error {
	if err := c.check(); err != nil {
		return err
	}
	_, err := c.c.RequestKeyFrame(ctx, &pb.RequestKeyFrameRequest{DeviceId: deviceID, DisplayId: int32(displayID)})
	return c.err(ctx, err)
}

// CaptureFrame implements FrameCapturer.
func (c *Client) CaptureFrame(ctx context.Context, req ScreenshotRequest) (*Image, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.CaptureFrame(ctx, &pb.CaptureFrameRequest{
		DeviceId: req.DeviceID, DisplayId: int32(req.DisplayID), Format: formatToProto[req.Format], MaxSide: int32(req.MaxSide),
	})
	if err != nil {
		return nil, c.err(ctx, err)
	}
	return imageFromProto(r.GetImage()), nil
}

// Wake implements Waker.
func (c *Client) Wake(ctx context.Context, deviceID string) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx = withFenceMD(ctx, deviceID)
	_, err := c.c.Wake(ctx, &pb.WakeRequest{DeviceId: deviceID})
	return c.err(ctx, err)
}

// Unlock implements Unlocker.
func (c *Client) Unlock(ctx context.Context, deviceID, pin string) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx = withFenceMD(ctx, deviceID)
	_, err := c.c.Unlock(ctx, &pb.UnlockRequest{DeviceId: deviceID, Pin: pin})
	return c.err(ctx, err)
}

// WaitIdle implements IdleWaiter.
func (c *Client) WaitIdle(ctx context.Context, deviceID string, timeout time.Duration) (bool, error) {
	if err := c.check(); err != nil {
		return false, err
	}
	r, err := c.c.WaitIdle(ctx, &pb.WaitIdleRequest{DeviceId: deviceID, TimeoutMs: durationMS(timeout)})
	if err != nil {
		return false, c.err(ctx, err)
	}
	return r.GetIdle(), nil
}

// ListApps implements AppLister.
func (c *Client) ListApps(ctx context.Context, deviceID string) ([]App, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.ListApps(ctx, &pb.ListAppsRequest{DeviceId: deviceID})
	if err != nil {
		return nil, c.err(ctx, err)
	}
	apps := make([]App, len(r.GetApps()))
	for i, a := range r.GetApps() {
		apps[i] = appFromProto(a)
	}
	return apps, nil
}

// ListFiles implements Filer.
func (c *Client) ListFiles(ctx context.Context, deviceID, path string) ([]FileInfo, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.ListFiles(ctx, &pb.ListFilesRequest{DeviceId: deviceID, Path: path})
	if err != nil {
		return nil, c.err(ctx, err)
	}
	files := make([]FileInfo, len(r.GetFiles()))
	for i, f := range r.GetFiles() {
		files[i] = fileInfoFromProto(f)
	}
	return files, nil
}

// PullFile implements Filer.
func (c *Client) PullFile(ctx context.Context, deviceID, path string, w io.Writer) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.c.PullFile(ctx, &pb.PullFileRequest{DeviceId: deviceID, Path: path})
	if err != nil {
		return c.err(ctx, err)
	}
	return receive(c, ctx, stream.Recv, func(m *pb.PullFileResponse) error {
		_, err := w.Write(m.GetChunk())
		return err
	})
}

// PushFile implements Filer.
func (c *Client) PushFile(ctx context.Context, deviceID, path string, r io.Reader) (int64, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	ctx, cancel := context.WithCancel(withFenceMD(ctx, deviceID))
	defer cancel()
	stream, err := c.c.PushFile(ctx)
	if err != nil {
		return 0, c.err(ctx, err)
	}
	size := int64(-1)
	if s, ok := r.(interface{ Len() int }); ok {
		size = int64(s.Len())
	}
	hdr := &pb.PushFileRequest{Part: &pb.PushFileRequest_Header{Header: &pb.PushFileHeader{DeviceId: deviceID, Path: path, Size: size}}}
	if err := stream.Send(hdr); err == nil {
		buf := make([]byte, chunkSize)
		for {
			n, rerr := r.Read(buf)
			if n > 0 {
				if err := stream.Send(&pb.PushFileRequest{Part: &pb.PushFileRequest_Chunk{Chunk: buf[:n]}}); err != nil {
					break // the server ended the stream; CloseAndRecv says why
				}
			}
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				return 0, fmt.Errorf("reading the file to push: %w", rerr)
			}
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return 0, c.err(ctx, err)
	}
	return resp.GetSize(), nil
}

// DeleteFile implements Filer.
func (c *Client) DeleteFile(ctx context.Context, deviceID, path string, recursive bool) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx = withFenceMD(ctx, deviceID)
	_, err := c.c.DeleteFile(ctx, &pb.DeleteFileRequest{DeviceId: deviceID, Path: path, Recursive: recursive})
	return c.err(ctx, err)
}

// ListNotifications implements NotificationLister.
func (c *Client) ListNotifications(ctx context.Context, deviceID string) ([]Notification, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	r, err := c.c.ListNotifications(ctx, &pb.ListNotificationsRequest{DeviceId: deviceID})
	if err != nil {
		return nil, c.err(ctx, err)
	}
	ns := make([]Notification, len(r.GetNotifications()))
	for i, n := range r.GetNotifications() {
		ns[i] = notificationFromProto(n)
	}
	return ns, nil
}

// CreateDisplay implements Displayer.
func (c *Client) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	if err := c.check(); err != nil {
		return 0, err
	}
	ctx = withFenceMD(ctx, deviceID)
	r, err := c.c.CreateDisplay(ctx, &pb.CreateDisplayRequest{DeviceId: deviceID, Width: int32(width), Height: int32(height), DensityDpi: int32(densityDPI)})
	if err != nil {
		return 0, c.err(ctx, err)
	}
	return int(r.GetDisplayId()), nil
}

// RemoveDisplay implements Displayer.
func (c *Client) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	if err := c.check(); err != nil {
		return err
	}
	ctx = withFenceMD(ctx, deviceID)
	_, err := c.c.RemoveDisplay(ctx, &pb.RemoveDisplayRequest{DeviceId: deviceID, DisplayId: int32(displayID)})
	return c.err(ctx, err)
}
