package scrcpyd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// These tests speak to the face with bytes laid out as the real server's
// Java reads and writes them, without the Android driver's client.

// hang bounds a read that should not block: a guard against a hung test,
// not a timing assertion.
const hang = 30 * time.Second

type raw struct {
	t              *testing.T
	v4             bool
	video, control net.Conn
	hw, hh         int // 3.x: the size in the stream's header
	srv            *server
	serveErr       error
	served         chan struct{}
}

// rawStart runs a server of version with args after the version, and
// connects its video and control sockets as a client would.
func rawStart(t *testing.T, d sdk.Driver, version string, args ...string) *raw {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &raw{t: t, v4: strings.HasPrefix(version, "4."), srv: &server{}, served: make(chan struct{})}
	go func() {
		defer close(r.served)
		all := append([]string{version, "scid=1", "tunnel_forward=true", "audio=false", "log_level=debug"}, args...)
		r.serveErr = Server{Version: version, Driver: d, Device: android}.Serve(ctx, all, lis, &r.srv.stdout, &r.srv.stderr)
	}()
	dial := func() net.Conn {
		c, err := net.DialTimeout("tcp", lis.Addr().String(), hang)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(hang))
		return c
	}
	r.video = dial()
	r.readFull(r.video, 1) // the dummy byte
	r.control = dial()
	if name := r.readFull(r.video, 64); !bytes.HasPrefix(name, []byte("Pixel 8\x00")) {
		t.Fatalf("device name % x; want Pixel 8", name)
	}
	if r.v4 {
		r.readFull(r.video, 4) // the codec id
	} else {
		hdr := r.readFull(r.video, 12) // the codec id and the size
		r.hw, r.hh = int(binary.BigEndian.Uint32(hdr[4:])), int(binary.BigEndian.Uint32(hdr[8:]))
	}
	t.Cleanup(func() {
		r.video.Close()
		r.control.Close()
		select {
		case <-r.served:
		case <-time.After(hang):
			t.Error("Serve did not return after the client closed")
		}
		cancel()
	})
	return r
}

func (r *raw) readFull(c net.Conn, n int) []byte {
	r.t.Helper()
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		r.t.Fatalf("read %d bytes: %v (server stderr: %s)", n, err, r.srv.stderr.String())
	}
	return b
}

func (r *raw) send(b ...byte) {
	r.t.Helper()
	if _, err := r.control.Write(b); err != nil {
		r.t.Fatal(err)
	}
}

// item is what the video socket carries: a session packet (4.x) or a
// media packet.
type item struct {
	session     bool
	w, h        int
	config, key bool
	pts         uint64
}

// next reads the next item of the video socket.
func (r *raw) next() item {
	r.t.Helper()
	hdr := r.readFull(r.video, 12)
	be := binary.BigEndian
	if r.v4 && hdr[0]&0x80 != 0 {
		return item{session: true, w: int(be.Uint32(hdr[4:])), h: int(be.Uint32(hdr[8:]))}
	}
	ptsFlags := be.Uint64(hdr)
	r.readFull(r.video, int(be.Uint32(hdr[8:])))
	if r.v4 {
		return item{config: ptsFlags&(1<<62) != 0, key: ptsFlags&(1<<61) != 0, pts: ptsFlags & (1<<61 - 1)}
	}
	return item{config: ptsFlags&(1<<63) != 0, key: ptsFlags&(1<<62) != 0, pts: ptsFlags & (1<<62 - 1)}
}

// firstKeyFrame reads the stream's start up to its first key frame and
// returns the video size (3.x: the header's; 4.x: the session packet's).
func (r *raw) firstKeyFrame() (int, int) {
	r.t.Helper()
	w, h := r.hw, r.hh
	for {
		it := r.next()
		if it.session {
			w, h = it.w, it.h
		}
		if it.key {
			return w, h
		}
	}
}

// touch is an INJECT_TOUCH_EVENT laid out as ControlMessageReader reads it.
func touch(action byte, x, y, w, h int) []byte {
	be := binary.BigEndian
	b := []byte{typeInjectTouch, action}
	b = be.AppendUint64(b, 0xffff_ffff_ffff_fffe) // POINTER_ID_GENERIC_FINGER (-2)
	b = be.AppendUint32(b, uint32(x))
	b = be.AppendUint32(b, uint32(y))
	b = be.AppendUint16(b, uint16(w))
	b = be.AppendUint16(b, uint16(h))
	pressure := uint16(0xffff)
	if action == motionUp {
		pressure = 0
	}
	b = be.AppendUint16(b, pressure)
	b = be.AppendUint32(b, 0) // action button
	return be.AppendUint32(b, 0)
}

// TestRawTapAfterMessagesTheClientNeverSends feeds the face messages as the
// Java reader lays them out, the client's unsent types first: the
// controller goes on, and a tap made of two touch events opens Settings.
func TestRawTapAfterMessagesTheClientNeverSends(t *testing.T) {
	// The Pixel 8's 1080x2400 within max_size 720: 3.x rounds 324 to the
	// nearest multiple of 8 (device/Size.java round8), 4.x aligns it down to
	// the encoder's 2 (model/Size.java constrain).
	for _, tt := range []struct {
		version string
		vw, vh  int
	}{{"3.3.4", 328, 720}, {"4.0", 324, 720}, {"4.1", 324, 720}} {
		version := tt.version
		t.Run(version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			r := rawStart(t, d, version, "max_size=720", "clipboard_autosync=false")
			// Touch events name the video size, which the face knows once
			// it has sent a frame; then keep the video flowing.
			if w, h := r.firstKeyFrame(); w != tt.vw || h != tt.vh {
				t.Fatalf("video size %dx%d; want %dx%d", w, h, tt.vw, tt.vh)
			}
			go io.Copy(io.Discard, r.video)
			r.send(typeUHIDCreate, 0, 1, 0x18, 0xd1, 0x00, 0x01, 3, 'k', 'b', 'd', 0, 2, 0x05, 0x01)
			r.send(typeUHIDInput, 0, 1, 0, 3, 0, 0, 4)
			r.send(typeUHIDDestroy, 0, 1)
			if version == "4.1" {
				r.send(typeScanFile, 0, 0, 0, 10, '/', 's', 'd', 'c', 'a', 'r', 'd', '/', 'a', 'b')
			}
			// A GET_CLIPBOARD with the copy key, then a SET_CLIPBOARD whose
			// ack must come next: the empty clipboard gets no answer.
			r.send(typeGetClipboard, copyKeyCopy)
			r.send(typeSetClipboard, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0)
			if got := r.readFull(r.control, 9); !bytes.Equal(got, []byte{deviceAckClipboard, 0, 0, 0, 0, 0, 0, 0, 1}) {
				t.Fatalf("device message % x; want ACK_CLIPBOARD 1", got)
			}

			s := screen(t, d)
			e, ok := simtest.Find(s, "Settings")
			if !ok {
				t.Fatal("no Settings on the home screen")
			}
			vw, vh := tt.vw, tt.vh
			p := e.Bounds.Center()
			x, y := p.X*vw/s.Width, p.Y*vh/s.Height
			r.send(touch(motionDown, x, y, vw, vh)...)
			r.send(touch(motionUp, x, y, vw, vh)...)
			testkit.WaitUntil(t, "Settings in front", func() bool { return screen(t, d).App.ID == "com.android.settings" })
		})
	}
}

func TestRawProtocolErrorEndsTheServer(t *testing.T) {
	tests := []struct {
		version string
		msg     []byte
		log     string // what stderr has; "" for nothing
	}{
		{"3.3.4", []byte{typeCameraSetTorch, 1}, ""},
		{"4.0", []byte{typeScanFile, 0, 0, 0, 0}, "[server] ERROR: Control protocol error\ncom.genymobile.scrcpy.control.ControlProtocolException: Unknown event type: 22\n"},
		{"4.1", []byte{23}, "[server] ERROR: Control protocol error\ncom.genymobile.scrcpy.control.ControlProtocolException: Unknown event type: 23\n"},
	}
	for _, tt := range tests {
		t.Run(tt.version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			r := rawStart(t, d, tt.version)
			go io.Copy(io.Discard, r.video)
			r.send(tt.msg...)
			// The real controller's end is fatal: the server closes the
			// sockets and exits with status 0.
			if _, err := io.Copy(io.Discard, r.control); err != nil {
				t.Fatalf("control socket: %v; want it closed by the server", err)
			}
			<-r.served
			if r.serveErr != nil {
				t.Errorf("Serve = %v; want nil", r.serveErr)
			}
			stderr := r.srv.stderr.String()
			if tt.log == "" && strings.Contains(stderr, "protocol") {
				t.Errorf("stderr = %q; want no protocol error logged", stderr)
			}
			if tt.log != "" && !strings.Contains(stderr, tt.log) {
				t.Errorf("stderr = %q; want it to contain %q", stderr, tt.log)
			}
			if !strings.Contains(r.srv.stdout.String(), "[server] DEBUG: Controller stopped\n") {
				t.Errorf("stdout = %q; want Controller stopped", r.srv.stdout.String())
			}
		})
	}
}

func TestRawUncaughtExceptions(t *testing.T) {
	tests := []struct {
		name string
		msg  []byte
		want string
	}{
		{"camera message on a display", []byte{typeCameraZoomIn}, "java.lang.AssertionError: Unexpected message type: 19"},
		{"resize of a display it did not make", []byte{typeResizeDisplay, 2, 0, 2, 0}, "java.lang.ClassCastException"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			r := rawStart(t, d, "4.1")
			go io.Copy(io.Discard, r.video)
			r.send(tt.msg...)
			io.Copy(io.Discard, r.control)
			<-r.served
			if !errors.Is(r.serveErr, errCrashed) {
				t.Errorf("Serve = %v; want errCrashed", r.serveErr)
			}
			stderr := r.srv.stderr.String()
			if !strings.Contains(stderr, "[server] ERROR: Exception on thread Thread[control-recv,5,main]\n"+tt.want) {
				t.Errorf("stderr = %q; want the exception %q", stderr, tt.want)
			}
		})
	}
}

// setClipboard is a SET_CLIPBOARD laid out as the Java reader reads it.
func setClipboard(seq uint64, paste bool, text string) []byte {
	b := binary.BigEndian.AppendUint64([]byte{typeSetClipboard}, seq)
	if paste {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(text)))
	return append(b, text...)
}

func TestRawClipboard(t *testing.T) {
	ack := func(seq uint64) []byte { return ackClipboardMessage(seq) }
	clip := func(text string) []byte {
		return binary.BigEndian.AppendUint32([]byte{deviceClipboard}, uint32(len(text))) // then the text
	}
	t.Run("autosync", func(t *testing.T) {
		// With clipboard_autosync (the default), GET_CLIPBOARD answers
		// nothing: the ack of the next SET_CLIPBOARD comes first.
		d := simtest.New(t, simtest.Unlocked(android))
		r := rawStart(t, d, "4.1")
		go io.Copy(io.Discard, r.video)
		r.send(setClipboard(5, false, "kept")...)
		r.send(typeGetClipboard, copyKeyNone)
		r.send(setClipboard(6, false, "kept")...)
		for _, seq := range []uint64{5, 6} {
			if got := r.readFull(r.control, 9); !bytes.Equal(got, ack(seq)) {
				t.Fatalf("device message % x; want ACK_CLIPBOARD %d", got, seq)
			}
		}
	})
	t.Run("no autosync", func(t *testing.T) {
		d := simtest.New(t, simtest.Unlocked(android))
		r := rawStart(t, d, "3.3.4", "clipboard_autosync=false")
		go io.Copy(io.Discard, r.video)
		r.send(typeGetClipboard, copyKeyNone) // empty: no answer
		r.send(setClipboard(3, false, "héllo")...)
		if got := r.readFull(r.control, 9); !bytes.Equal(got, ack(3)) {
			t.Fatalf("device message % x; want ACK_CLIPBOARD 3 (an empty clipboard is not sent)", got)
		}
		got, err := d.Clipboard(context.Background(), android)
		if err != nil || got != "héllo" {
			t.Errorf("the phone's clipboard = %q, %v; want héllo", got, err)
		}
		r.send(setClipboard(0, false, "b✓")...) // sequence 0: no ack
		r.send(typeGetClipboard, copyKeyCut)
		want := append(clip("b✓"), "b✓"...)
		if got := r.readFull(r.control, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("device message % x; want CLIPBOARD b✓ (% x)", got, want)
		}
		// The phone's own clipboard, set by the phone, is what GET reads.
		if err := d.SetClipboard(context.Background(), android, "from the phone"); err != nil {
			t.Fatal(err)
		}
		r.send(typeGetClipboard, copyKeyNone)
		want = append(clip("from the phone"), "from the phone"...)
		if got := r.readFull(r.control, len(want)); !bytes.Equal(got, want) {
			t.Fatalf("device message %q; want CLIPBOARD %q", got, want)
		}
		if !strings.Contains(r.srv.stdout.String(), "[server] INFO: Device clipboard set\n") {
			t.Errorf("stdout = %q; want Device clipboard set", r.srv.stdout.String())
		}
	})
}

// TestRawResetVideo checks what SurfaceEncoder sends when RESET_VIDEO
// restarts it: 4.x a session packet, then a config packet and a key
// frame; 3.x a config packet and a key frame. Timestamps go on.
func TestRawResetVideo(t *testing.T) {
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			d := simtest.New(t, simtest.Unlocked(android))
			r := rawStart(t, d, version, "max_size=640")
			w, h := r.firstKeyFrame()
			if r.v4 && w == 0 {
				t.Fatal("no session packet before the first key frame")
			}
			r.send(typeResetVideo)
			var prev, it item
			var last uint64
			for {
				prev, it = it, r.next()
				if it.config {
					break
				}
				last = max(last, it.pts)
			}
			if r.v4 && (!prev.session || prev.w != w || prev.h != h) {
				t.Errorf("before the new config packet: %+v; want a session packet of %dx%d", prev, w, h)
			}
			key := r.next()
			if !key.key || key.config {
				t.Errorf("after the new config packet: %+v; want a key frame", key)
			}
			if key.pts < last {
				t.Errorf("key frame pts %d after reset; want at least the last one, %d", key.pts, last)
			}
			testkit.WaitUntil(t, "the log line", func() bool {
				return strings.Contains(r.srv.stdout.String(), "[server] INFO: Video capture reset\n")
			})
		})
	}
}

// keyEvery records the interval the face asks the sim's stream for.
type keyEvery struct {
	*sim.Driver
	mu   sync.Mutex
	got  []time.Duration
	seen chan struct{}
}

func (k *keyEvery) StreamVideoFit(ctx context.Context, req sdk.VideoRequest, every time.Duration, fit func(w, h int) (int, int), send func(sdk.VideoPacket) error) error {
	k.record(every)
	return k.Driver.StreamVideoFit(ctx, req, every, fit, send)
}

func (k *keyEvery) record(every time.Duration) {
	k.mu.Lock()
	k.got = append(k.got, every)
	k.mu.Unlock()
	select {
	case k.seen <- struct{}{}:
	default:
	}
}

func (k *keyEvery) StreamVideoKeyEvery(ctx context.Context, req sdk.VideoRequest, every time.Duration, send func(sdk.VideoPacket) error) error {
	k.record(every)
	return k.Driver.StreamVideoKeyEvery(ctx, req, every, send)
}

func TestKeyFrameInterval(t *testing.T) {
	k := &keyEvery{Driver: simtest.New(t, simtest.Unlocked(android)), seen: make(chan struct{}, 1)}
	r := rawStart(t, k, "4.1")
	r.firstKeyFrame()
	<-k.seen
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.got) != 1 || k.got[0] != 10*time.Second {
		t.Errorf("key frame intervals asked = %v; want [10s], DEFAULT_I_FRAME_INTERVAL", k.got)
	}
}
