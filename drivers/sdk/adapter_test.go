package sdk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// fake is a driver that records what it was given and answers with err
// when err is set. It implements every optional interface.
type fake struct {
	mu     sync.Mutex
	err    error
	got    []any
	files  map[string][]byte
	block  chan struct{} // when set, Screen blocks until it closes or ctx ends
	events []DeviceEvent
}

func (f *fake) record(v any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, v)
	return f.err
}

func (f *fake) last() any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.got[len(f.got)-1]
}

func (f *fake) Info(context.Context) (Info, error) {
	return Info{Name: "fake", Version: "1", Platforms: []Platform{PlatformOther}, Capabilities: []Capability{"ignored"}}, f.record("info")
}

func (f *fake) WatchDevices(ctx context.Context, send func(DeviceEvent) error) error {
	if err := f.record("watch"); err != nil {
		return err
	}
	for _, e := range f.events {
		if err := send(e); err != nil {
			return err
		}
	}
	<-ctx.Done()
	return nil
}

func (f *fake) Screen(ctx context.Context, id string, display int) (*Screen, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s := fullScreen
	return &s, f.record(fmt.Sprintf("screen %s %d", id, display))
}

func (f *fake) Screenshot(_ context.Context, r ScreenshotRequest) (*Image, error) {
	i := fullImage
	return &i, f.record(r)
}

func (f *fake) Act(_ context.Context, id string, a Action) (ActResult, error) {
	return ActResult{Detail: "did " + string(a.Kind)}, f.record(a)
}

func (f *fake) Input(_ context.Context, next func() (InputEvent, error)) (int64, error) {
	var n int64
	for {
		e, err := next()
		if errors.Is(err, io.EOF) {
			return n, f.record("input done")
		}
		if err != nil {
			return n, err
		}
		f.record(e)
		n++
	}
}

func (f *fake) StreamVideo(ctx context.Context, r VideoRequest, send func(VideoPacket) error) error {
	if err := f.record(r); err != nil {
		return err
	}
	for i := 0; ; i++ {
		p := fullPacket
		p.Config, p.KeyFrame, p.PTS = i == 0, i == 1, time.Duration(i)*time.Millisecond
		if err := send(p); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Millisecond):
		}
	}
}

func (f *fake) RequestKeyFrame(_ context.Context, id string, d int) error {
	return f.record(fmt.Sprintf("keyframe %s %d", id, d))
}

func (f *fake) CaptureFrame(_ context.Context, r ScreenshotRequest) (*Image, error) {
	i := fullImage
	return &i, f.record(r)
}

func (f *fake) Wake(_ context.Context, id string) error { return f.record("wake " + id) }

func (f *fake) Unlock(_ context.Context, id, pin string) error {
	return f.record("unlock " + id + " " + pin)
}

func (f *fake) LockEvents() bool { return true }

func (f *fake) Pinches() bool { return true }

func (f *fake) WaitIdle(_ context.Context, id string, d time.Duration) (bool, error) {
	return true, f.record(fmt.Sprintf("idle %s %v", id, d))
}

func (f *fake) ListApps(_ context.Context, id string) ([]App, error) {
	return []App{fullScreen.App}, f.record("apps " + id)
}

func (f *fake) ListFiles(_ context.Context, id, path string) ([]FileInfo, error) {
	return []FileInfo{fullFile}, f.record("files " + id + " " + path)
}

func (f *fake) PullFile(_ context.Context, id, path string, w io.Writer) error {
	if err := f.record("pull " + path); err != nil {
		return err
	}
	f.mu.Lock()
	b, ok := f.files[path]
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("%q: %w", path, ErrFileNotFound)
	}
	_, err := w.Write(b)
	return err
}

func (f *fake) PushFile(_ context.Context, id, path string, r io.Reader) (int64, error) {
	if err := f.record("push " + path); err != nil {
		return 0, err
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return 0, err
	}
	f.mu.Lock()
	f.files[path] = b
	f.mu.Unlock()
	return int64(len(b)), nil
}

func (f *fake) DeleteFile(_ context.Context, id, path string, recursive bool) error {
	if err := f.record(fmt.Sprintf("delete %s %v", path, recursive)); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.files[path]; !ok {
		return fmt.Errorf("%q: %w", path, ErrFileNotFound)
	}
	delete(f.files, path)
	return nil
}

func (f *fake) ListNotifications(_ context.Context, id string) ([]Notification, error) {
	return []Notification{fullNote}, f.record("notifications " + id)
}

func (f *fake) CreateDisplay(_ context.Context, id string, w, h, dpi int) (int, error) {
	return 7, f.record(fmt.Sprintf("display %s %dx%d@%d", id, w, h, dpi))
}

func (f *fake) RemoveDisplay(_ context.Context, id string, d int) error {
	return f.record(fmt.Sprintf("remove %s %d", id, d))
}

// minimal implements only Driver.
type minimal struct{ f *fake }

func (m minimal) Info(ctx context.Context) (Info, error) { return m.f.Info(ctx) }
func (m minimal) WatchDevices(ctx context.Context, send func(DeviceEvent) error) error {
	return m.f.WatchDevices(ctx, send)
}
func (m minimal) Screen(ctx context.Context, id string, d int) (*Screen, error) {
	return m.f.Screen(ctx, id, d)
}
func (m minimal) Screenshot(ctx context.Context, r ScreenshotRequest) (*Image, error) {
	return m.f.Screenshot(ctx, r)
}
func (m minimal) Act(ctx context.Context, id string, a Action) (ActResult, error) {
	return m.f.Act(ctx, id, a)
}

// dial serves srv in-process over real gRPC and returns a client whose gone
// channel the test controls.
func dial(t *testing.T, srv pb.DriverServiceServer) (*Client, func()) {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	s := grpc.NewServer()
	pb.RegisterDriverServiceServer(s, srv)
	go s.Serve(lis)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	gone := make(chan struct{})
	var once sync.Once
	kill := func() { once.Do(func() { s.Stop(); close(gone) }) }
	t.Cleanup(func() { conn.Close(); kill() })
	return NewClient(conn, gone), kill
}

func newFake() *fake { return &fake{files: map[string][]byte{}} }

func TestAdapterUnaryCalls(t *testing.T) {
	f := newFake()
	c, _ := dial(t, NewServer(f))
	ctx := context.Background()

	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Capability{CapInput, CapVideo, CapFrameCapture, CapWake, CapUnlock, CapLockEvents, CapWaitIdle, CapApps, CapFiles, CapDisplays, CapNotifications, CapPinch}; !cmp.Equal(info.Capabilities, want) {
		t.Errorf("capabilities: got %v; want %v (from the interfaces, not from Info)", info.Capabilities, want)
	}
	s, err := c.Screen(ctx, "d1", 2)
	if err != nil || !cmp.Equal(*s, fullScreen) || f.last() != "screen d1 2" {
		t.Errorf("Screen: got %+v, %v, recorded %v", s, err, f.last())
	}
	img, err := c.Screenshot(ctx, fullScreenshot)
	if err != nil || !cmp.Equal(*img, fullImage) || !cmp.Equal(f.last(), fullScreenshot) {
		t.Errorf("Screenshot: got %+v, %v, recorded %v", img, err, f.last())
	}
	a := Action{Kind: ActSwipe, Point: Point{X: 1, Y: 2}, To: Point{X: 3, Y: 4}, Duration: time.Second}
	res, err := c.Act(ctx, "d1", a)
	if err != nil || res.Detail != "did swipe" || !cmp.Equal(f.last(), a) {
		t.Errorf("Act: got %+v, %v, recorded %v", res, err, f.last())
	}
	frame, err := c.CaptureFrame(ctx, ScreenshotRequest{DeviceID: "d1"})
	if err != nil || frame.Format != FormatJPEG || f.last().(ScreenshotRequest).Format != FormatJPEG {
		t.Errorf("CaptureFrame: got %+v, %v; the format should default to JPEG", frame, err)
	}
	for _, tt := range []struct {
		call func() error
		want string
	}{
		{func() error { return c.Wake(ctx, "d1") }, "wake d1"},
		{func() error { return c.Unlock(ctx, "d1", "1234") }, "unlock d1 1234"},
		{func() error { _, err := c.WaitIdle(ctx, "d1", 1500*time.Millisecond); return err }, "idle d1 1.5s"},
		{func() error { _, err := c.ListApps(ctx, "d1"); return err }, "apps d1"},
		{func() error { _, err := c.ListFiles(ctx, "d1", "sub"); return err }, "files d1 sub"},
		{func() error { return c.RequestKeyFrame(ctx, "d1", 1) }, "keyframe d1 1"},
		{func() error { _, err := c.CreateDisplay(ctx, "d1", 640, 480, 160); return err }, "display d1 640x480@160"},
		{func() error {
			ns, err := c.ListNotifications(ctx, "d1")
			if err == nil && (len(ns) != 1 || ns[0] != fullNote) {
				err = fmt.Errorf("got %+v; want [%+v]", ns, fullNote)
			}
			return err
		}, "notifications d1"},
		{func() error { return c.RemoveDisplay(ctx, "d1", 7) }, "remove d1 7"},
	} {
		if err := tt.call(); err != nil || f.last() != tt.want {
			t.Errorf("got %v, recorded %v; want recorded %q", err, f.last(), tt.want)
		}
	}
}

func TestAdapterErrorsCrossTheBoundary(t *testing.T) {
	for _, cat := range allErrors {
		if cat == ErrDriverGone {
			continue // never sent by a driver
		}
		t.Run(cat.Reason(), func(t *testing.T) {
			f := newFake()
			f.err = fmt.Errorf("device %q: %w", "d1", cat)
			c, _ := dial(t, NewServer(f))
			_, err := c.Act(context.Background(), "d1", Action{Kind: ActTap})
			if !errors.Is(err, cat) {
				t.Fatalf("got %v; want errors.Is %v", err, cat)
			}
			if !strings.Contains(err.Error(), `device "d1"`) {
				t.Errorf("the driver's message was lost: %q", err)
			}
		})
	}
}

func TestAdapterUntypedErrorIsInternal(t *testing.T) {
	f := newFake()
	f.err = errors.New("boom")
	c, _ := dial(t, NewServer(f))
	if _, err := c.Screen(context.Background(), "d1", 0); !errors.Is(err, ErrInternal) {
		t.Errorf("got %v; want ErrInternal", err)
	}
}

func TestAdapterValidation(t *testing.T) {
	c, _ := dial(t, NewServer(newFake()))
	ctx := context.Background()
	if _, err := c.Screen(ctx, "", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("empty device id: got %v; want ErrInvalidArgument", err)
	}
	if _, err := c.Act(ctx, "d1", Action{Kind: "bogus"}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("no action: got %v; want ErrInvalidArgument", err)
	}
	if _, err := c.WaitIdle(ctx, "d1", 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero timeout: got %v; want ErrInvalidArgument", err)
	}
	long := strings.Repeat("é", 4097)
	for _, a := range []Action{
		{Kind: ActLongPress, Duration: 10001 * time.Millisecond},
		{Kind: ActSwipe, Duration: -time.Millisecond},
		{Kind: ActScroll},
		{Kind: ActScroll, Direction: ScrollUp, Amount: 1001},
		{Kind: ActType},
		{Kind: ActType, Text: long},
		{Kind: ActType, Text: "a\xffb"},
		{Kind: ActKey},
		{Kind: ActLaunch},
		{Kind: ActStop},
		{Kind: ActOpenURL, URL: "example.com/relative"},
		{Kind: ActOpenURL, URL: "https://x/" + strings.Repeat("a", 8192)},
	} {
		if _, err := c.Act(ctx, "d1", a); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("act %+v: got %v; want ErrInvalidArgument", a, err)
		}
	}
	for _, p := range []string{"..", "a/../b", "/etc", `a\b`, "a\x00b", "\xff"} {
		if _, err := c.ListFiles(ctx, "d1", p); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("ListFiles(%q): got %v; want ErrInvalidArgument", p, err)
		}
		if err := c.PullFile(ctx, "d1", p, io.Discard); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("PullFile(%q): got %v; want ErrInvalidArgument", p, err)
		}
		if _, err := c.PushFile(ctx, "d1", p, strings.NewReader("x")); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("PushFile(%q): got %v; want ErrInvalidArgument", p, err)
		}
	}
	for _, p := range []string{"", "a", "a/b.txt", "..a", "a..b"} {
		if _, err := c.ListFiles(ctx, "d1", p); err != nil {
			t.Errorf("ListFiles(%q): got %v; want it accepted", p, err)
		}
	}
	for _, pin := range []string{"", "123", "12345678901234567", "12a4"} {
		if err := c.Unlock(ctx, "d1", pin); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("PIN %q: got %v; want ErrInvalidArgument", pin, err)
		}
	}
	for _, r := range []ScreenshotRequest{{DeviceID: "d1", MaxSide: -1}, {DeviceID: "d1", Quality: 101}} {
		if _, err := c.Screenshot(ctx, r); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("screenshot %+v: got %v; want ErrInvalidArgument", r, err)
		}
	}
}

func TestAdapterUnsupportedCapabilities(t *testing.T) {
	c, _ := dial(t, NewServer(minimal{f: newFake()}))
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil || len(info.Capabilities) != 0 {
		t.Fatalf("Info: got %v, %v; want no capabilities", info.Capabilities, err)
	}
	calls := map[string]func() error{
		"Wake":      func() error { return c.Wake(ctx, "d1") },
		"Unlock":    func() error { return c.Unlock(ctx, "d1", "1") },
		"WaitIdle":  func() error { _, err := c.WaitIdle(ctx, "d1", time.Second); return err },
		"ListApps":  func() error { _, err := c.ListApps(ctx, "d1"); return err },
		"ListFiles": func() error { _, err := c.ListFiles(ctx, "d1", ""); return err },
		"PullFile":  func() error { return c.PullFile(ctx, "d1", "a", io.Discard) },
		"PushFile":  func() error { _, err := c.PushFile(ctx, "d1", "a", strings.NewReader("x")); return err },
		"Input": func() error {
			_, err := c.Input(ctx, func() (InputEvent, error) { return InputEvent{}, io.EOF })
			return err
		},
		"StreamVideo": func() error {
			return c.StreamVideo(ctx, VideoRequest{DeviceID: "d1"}, func(VideoPacket) error { return nil })
		},
		"RequestKeyFrame": func() error { return c.RequestKeyFrame(ctx, "d1", 0) },
		"CaptureFrame":    func() error { _, err := c.CaptureFrame(ctx, ScreenshotRequest{DeviceID: "d1"}); return err },
		"CreateDisplay":   func() error { _, err := c.CreateDisplay(ctx, "d1", 1, 1, 1); return err },
		"RemoveDisplay":   func() error { return c.RemoveDisplay(ctx, "d1", 1) },
		"Notifications":   func() error { _, err := c.ListNotifications(ctx, "d1"); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: got %v; want ErrUnsupported", name, err)
		}
	}
}

func TestAdapterStreams(t *testing.T) {
	f := newFake()
	f.events = []DeviceEvent{{Kind: DeviceAdded, Device: fullDevice}, {Kind: DevicesSynced}}
	c, _ := dial(t, NewServer(f))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	t.Run("watch", func(t *testing.T) {
		var got []DeviceEvent
		wctx, stop := context.WithCancel(ctx)
		err := c.WatchDevices(wctx, func(e DeviceEvent) error {
			got = append(got, e)
			if e.Kind == DevicesSynced {
				stop()
			}
			return nil
		})
		if err != nil || !cmp.Equal(got, f.events) {
			t.Errorf("got %v, %v; want %v", got, err, f.events)
		}
	})
	t.Run("input", func(t *testing.T) {
		events := []InputEvent{
			{DeviceID: "d1", Pointer: &PointerEvent{Action: PointerDown, Point: Point{X: 1, Y: 1}}},
			{DeviceID: "d1", Pointer: &PointerEvent{Action: PointerUp, Point: Point{X: 1, Y: 1}}},
			{DeviceID: "d1", Text: "hi"},
		}
		i := 0
		n, err := c.Input(ctx, func() (InputEvent, error) {
			if i == len(events) {
				return InputEvent{}, io.EOF
			}
			i++
			return events[i-1], nil
		})
		if err != nil || n != 3 || f.last() != "input done" {
			t.Errorf("got %d, %v, recorded %v; want 3 applied", n, err, f.last())
		}
	})
	t.Run("video stops on cancel", func(t *testing.T) {
		vctx, stop := context.WithCancel(ctx)
		var got []VideoPacket
		done := make(chan error, 1)
		go func() {
			done <- c.StreamVideo(vctx, fullVideoReq, func(p VideoPacket) error {
				if got = append(got, p); len(got) == 5 {
					stop()
				}
				return nil
			})
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("got %v; want nil after cancel", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("StreamVideo did not return after cancel")
		}
		if len(got) < 5 || !got[0].Config || !got[1].KeyFrame || got[4].PTS != 4*time.Millisecond {
			t.Errorf("packets: got %+v", got[:min(len(got), 5)])
		}
	})
	t.Run("files cross chunks", func(t *testing.T) {
		body := bytes.Repeat([]byte("0123456789abcdef"), 3*chunkSize/16+5) // three chunks and a bit
		n, err := c.PushFile(ctx, "d1", "big.bin", bytes.NewReader(body))
		if err != nil || n != int64(len(body)) {
			t.Fatalf("push: got %d, %v; want %d", n, err, len(body))
		}
		var out bytes.Buffer
		if err := c.PullFile(ctx, "d1", "big.bin", &out); err != nil || !bytes.Equal(out.Bytes(), body) {
			t.Errorf("pull: got %d bytes, %v; want the %d pushed", out.Len(), err, len(body))
		}
		if err := c.PullFile(ctx, "d1", "missing", &out); !errors.Is(err, ErrFileNotFound) {
			t.Errorf("missing file: got %v; want ErrFileNotFound", err)
		}
		if err := c.DeleteFile(ctx, "d1", "big.bin", true); err != nil || f.last() != "delete big.bin true" {
			t.Errorf("delete: got %v, recorded %v", err, f.last())
		}
		if err := c.DeleteFile(ctx, "d1", "big.bin", false); !errors.Is(err, ErrFileNotFound) {
			t.Errorf("second delete: got %v; want ErrFileNotFound", err)
		}
		for _, p := range []string{"", ".", "/", "../x"} {
			if err := c.DeleteFile(ctx, "d1", p, true); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("DeleteFile(%q): got %v; want ErrInvalidArgument", p, err)
			}
		}
	})
}

func TestPushFileNeedsHeaderFirst(t *testing.T) {
	lis := bufconn.Listen(1 << 16)
	s := grpc.NewServer()
	pb.RegisterDriverServiceServer(s, NewServer(newFake()))
	go s.Serve(lis)
	defer s.Stop()
	conn, _ := grpc.NewClient("passthrough:///x",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	defer conn.Close()
	stream, err := pb.NewDriverServiceClient(conn).PushFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	stream.Send(&pb.PushFileRequest{Part: &pb.PushFileRequest_Chunk{Chunk: []byte("x")}})
	_, err = stream.CloseAndRecv()
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("got %v; want INVALID_ARGUMENT", err)
	}
}

func TestDriverGone(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	c, kill := dial(t, NewServer(f))
	ctx := context.Background()
	if _, err := c.Info(ctx); err != nil {
		t.Fatal(err)
	}
	const inFlight = 8
	errs := make(chan error, inFlight)
	for range inFlight {
		go func() { _, err := c.Screen(ctx, "d1", 0); errs <- err }()
	}
	time.Sleep(100 * time.Millisecond) // let the calls reach the server
	kill()
	for range inFlight {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrDriverGone) {
				t.Errorf("in-flight call: got %v; want ErrDriverGone", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("an in-flight call hung after the driver went away")
		}
	}
	if _, err := c.Act(ctx, "d1", Action{Kind: ActTap}); !errors.Is(err, ErrDriverGone) {
		t.Errorf("call after exit: got %v; want ErrDriverGone", err)
	}
}

func TestCallerCancel(t *testing.T) {
	f := newFake()
	f.block = make(chan struct{})
	c, _ := dial(t, NewServer(f))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Screen(ctx, "d1", 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v; want context.DeadlineExceeded", err)
	}
}

// TestPushFileSizeMustMatch: a header's size above 0 is a promise; a stream
// that breaks it is INVALID_ARGUMENT and leaves no file. 0 and -1 mean
// unknown.
func TestPushFileSizeMustMatch(t *testing.T) {
	tests := []struct {
		name   string
		size   int64
		chunks []string
		code   codes.Code
	}{
		{"exact", 3, []string{"ab", "c"}, codes.OK},
		{"unknown -1", -1, []string{"abc"}, codes.OK},
		{"unknown 0", 0, []string{"abc"}, codes.OK},
		{"empty with 0", 0, nil, codes.OK},
		{"fewer bytes", 5, []string{"abc"}, codes.InvalidArgument},
		{"more bytes", 2, []string{"ab", "c"}, codes.InvalidArgument},
		{"negative", -2, []string{"abc"}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake()
			lis := bufconn.Listen(1 << 16)
			s := grpc.NewServer()
			pb.RegisterDriverServiceServer(s, NewServer(f))
			go s.Serve(lis)
			defer s.Stop()
			conn, _ := grpc.NewClient("passthrough:///x",
				grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
				grpc.WithTransportCredentials(insecure.NewCredentials()))
			defer conn.Close()
			stream, err := pb.NewDriverServiceClient(conn).PushFile(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			stream.Send(&pb.PushFileRequest{Part: &pb.PushFileRequest_Header{Header: &pb.PushFileHeader{DeviceId: "d1", Path: "f.txt", Size: tt.size}}})
			for _, c := range tt.chunks {
				stream.Send(&pb.PushFileRequest{Part: &pb.PushFileRequest_Chunk{Chunk: []byte(c)}})
			}
			_, err = stream.CloseAndRecv()
			if got := status.Code(err); got != tt.code {
				t.Fatalf("got %v; want %v", err, tt.code)
			}
			f.mu.Lock()
			_, kept := f.files["f.txt"]
			f.mu.Unlock()
			if kept != (tt.code == codes.OK) {
				t.Errorf("file kept: got %v; want %v", kept, tt.code == codes.OK)
			}
		})
	}
}

// narrowFake is the fake as a driver over other drivers: it implements
// every interface and declares what it names.
type narrowFake struct {
	*fake
	names []Capability
}

func (n narrowFake) NarrowCapabilities() []Capability { return n.names }

// TestAdapterNarrower: a Narrower declares the capabilities it names that
// it implements, lock_events as named, and nothing it does not implement.
func TestAdapterNarrower(t *testing.T) {
	for _, c := range []struct {
		names, want []Capability
	}{
		{[]Capability{CapFiles, "bogus", CapLockEvents, CapFiles}, []Capability{CapFiles, CapLockEvents}},
		{nil, nil},
		{[]Capability{CapVideo, CapInput}, []Capability{CapVideo, CapInput}},
	} {
		cl, _ := dial(t, NewServer(narrowFake{fake: newFake(), names: c.names}))
		info, err := cl.Info(context.Background())
		if err != nil || !cmp.Equal(info.Capabilities, c.want, cmpopts.EquateEmpty()) {
			t.Errorf("named %v: declared %v, %v; want %v", c.names, info.Capabilities, err, c.want)
		}
	}
}
