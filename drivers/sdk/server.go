package sdk

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// chunkSize is the largest file chunk sent in one message (SPEC.md: 1 MiB).
const chunkSize = 1 << 20

// server adapts a Driver to the generated gRPC service. It is the only place
// where a driver's errors become gRPC statuses.
type server struct {
	pb.UnimplementedDriverServiceServer
	d    Driver
	caps []Capability
}

// NewServer returns the gRPC service for d; Serve uses it, and so can a test
// or a driver that runs its own gRPC server.
func NewServer(d Driver) pb.DriverServiceServer {
	return &server{d: d, caps: Capabilities(d)}
}

func unsupported(ctx context.Context, what string) error {
	return toStatus(ctx, Errorf(ErrUnsupported, "%s is not served by this driver", what))
}

func needDevice(ctx context.Context, id string) error {
	if id == "" {
		return toStatus(ctx, Invalid("device_id is required"))
	}
	return nil
}

func checkImageRequest(ctx context.Context, maxSide, quality int32) error {
	if maxSide < 0 {
		return toStatus(ctx, Invalid("max_side %d is negative", maxSide))
	}
	if quality < 0 || quality > 100 {
		return toStatus(ctx, Invalid("quality %d is outside 0..100", quality))
	}
	return nil
}

func validPIN(pin string) bool {
	if len(pin) < 4 || len(pin) > 16 {
		return false
	}
	for _, c := range pin {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (s *server) GetInfo(ctx context.Context, _ *pb.GetInfoRequest) (*pb.GetInfoResponse, error) {
	info, err := s.d.Info(ctx)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	info.Capabilities = s.declared()
	return infoToProto(info), nil
}

// declared is what the driver declares: the capabilities its optional
// interfaces give (Capabilities), or, for a Narrower, those of its
// NarrowCapabilities it implements, lock_events as it says.
func (s *server) declared() []Capability {
	n, ok := s.d.(Narrower)
	if !ok {
		return slices.Clone(s.caps)
	}
	var out []Capability
	for _, c := range n.NarrowCapabilities() {
		if (c == CapLockEvents || slices.Contains(s.caps, c)) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

func (s *server) WatchDevices(_ *pb.WatchDevicesRequest, stream pb.DriverService_WatchDevicesServer) error {
	ctx := stream.Context()
	err := s.d.WatchDevices(ctx, func(e DeviceEvent) error {
		return stream.Send(deviceEventToProto(e))
	})
	return toStatus(ctx, err)
}

func (s *server) GetScreen(ctx context.Context, r *pb.GetScreenRequest) (*pb.GetScreenResponse, error) {
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	sc, err := s.d.Screen(ctx, r.GetDeviceId(), int(r.GetDisplayId()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.GetScreenResponse{Screen: screenToProto(sc)}, nil
}

func (s *server) Screenshot(ctx context.Context, r *pb.ScreenshotRequest) (*pb.ScreenshotResponse, error) {
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := checkImageRequest(ctx, r.GetMaxSide(), r.GetQuality()); err != nil {
		return nil, err
	}
	img, err := s.d.Screenshot(ctx, screenshotRequestFromProto(r))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.ScreenshotResponse{Image: imageToProto(img)}, nil
}

func (s *server) Act(ctx context.Context, r *pb.ActRequest) (*pb.ActResponse, error) {
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	a, ok := actionFromProto(r)
	if !ok {
		return nil, toStatus(ctx, Invalid("the request carries no action"))
	}
	if a.Kind == ActPinch && !slices.Contains(s.caps, CapPinch) {
		return nil, unsupported(ctx, "A pinch")
	}
	if err := checkAction(a); err != nil {
		return nil, toStatus(ctx, err)
	}
	res, err := s.d.Act(ctx, r.GetDeviceId(), a)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.ActResponse{Detail: res.Detail}, nil
}

func (s *server) Input(stream pb.DriverService_InputServer) error {
	ctx := stream.Context()
	in, ok := s.d.(Inputter)
	if !ok {
		return unsupported(ctx, "Input")
	}
	n, err := in.Input(ctx, func() (InputEvent, error) {
		m, err := stream.Recv()
		if err != nil {
			return InputEvent{}, err // io.EOF ends the input
		}
		e, ok := inputEventFromProto(m)
		if !ok {
			return e, Invalid("input message carries no event")
		}
		return e, checkInput(e)
	})
	if err != nil {
		return toStatus(ctx, err)
	}
	return stream.SendAndClose(&pb.InputResponse{Applied: n})
}

func (s *server) StreamVideo(r *pb.StreamVideoRequest, stream pb.DriverService_StreamVideoServer) error {
	ctx := stream.Context()
	v, ok := s.d.(Streamer)
	if !ok {
		return unsupported(ctx, "StreamVideo")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return err
	}
	err := v.StreamVideo(ctx, videoRequestFromProto(r), func(p VideoPacket) error {
		return stream.Send(&pb.StreamVideoResponse{Packet: videoPacketToProto(p)})
	})
	return toStatus(ctx, err)
}

func (s *server) RequestKeyFrame(ctx context.Context, r *pb.RequestKeyFrameRequest) (*pb.RequestKeyFrameResponse, error) {
	v, ok := s.d.(Streamer)
	if !ok {
		return nil, unsupported(ctx, "RequestKeyFrame")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	return &pb.RequestKeyFrameResponse{}, toStatus(ctx, v.RequestKeyFrame(ctx, r.GetDeviceId(), int(r.GetDisplayId())))
}

func (s *server) CaptureFrame(ctx context.Context, r *pb.CaptureFrameRequest) (*pb.CaptureFrameResponse, error) {
	f, ok := s.d.(FrameCapturer)
	if !ok {
		return nil, unsupported(ctx, "CaptureFrame")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := checkImageRequest(ctx, r.GetMaxSide(), 0); err != nil {
		return nil, err
	}
	req := ScreenshotRequest{DeviceID: r.GetDeviceId(), DisplayID: int(r.GetDisplayId()), Format: formatFromProto[r.GetFormat()], MaxSide: int(r.GetMaxSide())}
	if req.Format == "" {
		req.Format = FormatJPEG
	}
	img, err := f.CaptureFrame(ctx, req)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.CaptureFrameResponse{Image: imageToProto(img)}, nil
}

func (s *server) Wake(ctx context.Context, r *pb.WakeRequest) (*pb.WakeResponse, error) {
	w, ok := s.d.(Waker)
	if !ok {
		return nil, unsupported(ctx, "Wake")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := w.Wake(ctx, r.GetDeviceId()); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.WakeResponse{}, nil
}

func (s *server) Unlock(ctx context.Context, r *pb.UnlockRequest) (*pb.UnlockResponse, error) {
	u, ok := s.d.(Unlocker)
	if !ok {
		return nil, unsupported(ctx, "Unlock")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if !validPIN(r.GetPin()) {
		return nil, toStatus(ctx, Invalid("the PIN must be 4 to 16 digits"))
	}
	if err := u.Unlock(ctx, r.GetDeviceId(), r.GetPin()); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.UnlockResponse{}, nil
}

func (s *server) WaitIdle(ctx context.Context, r *pb.WaitIdleRequest) (*pb.WaitIdleResponse, error) {
	w, ok := s.d.(IdleWaiter)
	if !ok {
		return nil, unsupported(ctx, "WaitIdle")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if t := r.GetTimeoutMs(); t < 1 || t > 30000 {
		return nil, toStatus(ctx, Invalid("timeout_ms %d is outside 1..30000", t))
	}
	idle, err := w.WaitIdle(ctx, r.GetDeviceId(), msDuration(r.GetTimeoutMs()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.WaitIdleResponse{Idle: idle}, nil
}

func (s *server) ListApps(ctx context.Context, r *pb.ListAppsRequest) (*pb.ListAppsResponse, error) {
	l, ok := s.d.(AppLister)
	if !ok {
		return nil, unsupported(ctx, "ListApps")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	apps, err := l.ListApps(ctx, r.GetDeviceId())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	resp := &pb.ListAppsResponse{Apps: make([]*pb.App, len(apps))}
	for i, a := range apps {
		resp.Apps[i] = appToProto(a)
	}
	return resp, nil
}

func (s *server) ListFiles(ctx context.Context, r *pb.ListFilesRequest) (*pb.ListFilesResponse, error) {
	f, ok := s.d.(Filer)
	if !ok {
		return nil, unsupported(ctx, "ListFiles")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := CheckPath(r.GetPath()); err != nil {
		return nil, toStatus(ctx, err)
	}
	files, err := f.ListFiles(ctx, r.GetDeviceId(), r.GetPath())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	resp := &pb.ListFilesResponse{Files: make([]*pb.FileInfo, len(files))}
	for i, fi := range files {
		resp.Files[i] = fileInfoToProto(fi)
	}
	return resp, nil
}

// chunkWriter sends what is written to it as PullFile chunks of at most chunkSize.
type chunkWriter struct {
	send func(*pb.PullFileResponse) error
}

func (w chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		c := p[:min(len(p), chunkSize)]
		if err := w.send(&pb.PullFileResponse{Chunk: c}); err != nil {
			return n, err
		}
		n += len(c)
		p = p[len(c):]
	}
	return n, nil
}

func (s *server) PullFile(r *pb.PullFileRequest, stream pb.DriverService_PullFileServer) error {
	ctx := stream.Context()
	f, ok := s.d.(Filer)
	if !ok {
		return unsupported(ctx, "PullFile")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return err
	}
	if err := CheckPath(r.GetPath()); err != nil {
		return toStatus(ctx, err)
	}
	return toStatus(ctx, f.PullFile(ctx, r.GetDeviceId(), r.GetPath(), chunkWriter{stream.Send}))
}

// chunkReader reads PushFile chunks as one byte stream. When the header
// gave a size (> 0), a stream that carries more or fewer bytes ends with
// ErrInvalidArgument instead of io.EOF, so that the driver, which writes
// beside the target and renames only after a clean end, keeps the old file.
type chunkReader struct {
	recv func() (*pb.PushFileRequest, error)
	buf  []byte
	want int64 // the header's size; 0 or -1 when unknown
	got  int64
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		m, err := r.recv()
		if errors.Is(err, io.EOF) && r.want > 0 && r.got != r.want {
			return 0, Invalid("PushFile stream ended after %d of the %d bytes its header announced", r.got, r.want)
		}
		if err != nil {
			return 0, err
		}
		if m.GetHeader() != nil {
			return 0, Invalid("a second header in one PushFile stream")
		}
		r.buf = m.GetChunk()
		if r.got += int64(len(r.buf)); r.want > 0 && r.got > r.want {
			return 0, Invalid("PushFile stream sent more than the %d bytes its header announced", r.want)
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (s *server) PushFile(stream pb.DriverService_PushFileServer) error {
	ctx := stream.Context()
	f, ok := s.d.(Filer)
	if !ok {
		return unsupported(ctx, "PushFile")
	}
	first, err := stream.Recv()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return toStatus(ctx, Invalid("PushFile stream ended before its header"))
		}
		return err
	}
	h := first.GetHeader()
	if h == nil {
		return toStatus(ctx, Invalid("the first PushFile message must be a header"))
	}
	if err := needDevice(ctx, h.GetDeviceId()); err != nil {
		return err
	}
	if err := CheckPath(h.GetPath()); err != nil {
		return toStatus(ctx, err)
	}
	if h.GetSize() < -1 {
		return toStatus(ctx, Invalid("PushFile header size %d: want the file's size, or 0 or -1 when unknown", h.GetSize()))
	}
	n, err := f.PushFile(ctx, h.GetDeviceId(), h.GetPath(), &chunkReader{recv: stream.Recv, want: h.GetSize()})
	if err != nil {
		return toStatus(ctx, err)
	}
	return stream.SendAndClose(&pb.PushFileResponse{Size: n})
}

func (s *server) DeleteFile(ctx context.Context, r *pb.DeleteFileRequest) (*pb.DeleteFileResponse, error) {
	f, ok := s.d.(Filer)
	if !ok {
		return nil, unsupported(ctx, "DeleteFile")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := CheckPath(r.GetPath()); err != nil {
		return nil, toStatus(ctx, err)
	}
	if strings.Trim(r.GetPath(), "/.") == "" {
		return nil, toStatus(ctx, Invalid("path %q is the Pinky folder itself; name something inside it", r.GetPath()))
	}
	if err := f.DeleteFile(ctx, r.GetDeviceId(), r.GetPath(), r.GetRecursive()); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.DeleteFileResponse{}, nil
}

func (s *server) ListNotifications(ctx context.Context, r *pb.ListNotificationsRequest) (*pb.ListNotificationsResponse, error) {
	l, ok := s.d.(NotificationLister)
	if !ok {
		return nil, unsupported(ctx, "ListNotifications")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	ns, err := l.ListNotifications(ctx, r.GetDeviceId())
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	resp := &pb.ListNotificationsResponse{Notifications: make([]*pb.Notification, len(ns))}
	for i, n := range ns {
		resp.Notifications[i] = notificationToProto(n)
	}
	return resp, nil
}

func (s *server) CreateDisplay(ctx context.Context, r *pb.CreateDisplayRequest) (*pb.CreateDisplayResponse, error) {
	d, ok := s.d.(Displayer)
	if !ok {
		return nil, unsupported(ctx, "CreateDisplay")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	id, err := d.CreateDisplay(ctx, r.GetDeviceId(), int(r.GetWidth()), int(r.GetHeight()), int(r.GetDensityDpi()))
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.CreateDisplayResponse{DisplayId: int32(id)}, nil
}

func (s *server) RemoveDisplay(ctx context.Context, r *pb.RemoveDisplayRequest) (*pb.RemoveDisplayResponse, error) {
	d, ok := s.d.(Displayer)
	if !ok {
		return nil, unsupported(ctx, "RemoveDisplay")
	}
	if err := needDevice(ctx, r.GetDeviceId()); err != nil {
		return nil, err
	}
	if err := d.RemoveDisplay(ctx, r.GetDeviceId(), int(r.GetDisplayId())); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.RemoveDisplayResponse{}, nil
}
