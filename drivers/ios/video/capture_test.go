package video_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// tap relays TCP connections to target and keeps every byte that crosses
// it, both ways: what an eavesdropper on the Wi-Fi records.
type tap struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	wire   bytes.Buffer
	wg     sync.WaitGroup
}

func newTap(t *testing.T, target string) *tap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tap{ln: ln, target: target}
	var conns []net.Conn
	tp.wg.Go(func() {
		for {
			a, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", target)
			if err != nil {
				a.Close()
				continue
			}
			tp.mu.Lock()
			conns = append(conns, a, b)
			tp.mu.Unlock()
			tp.wg.Go(func() { io.Copy(io.MultiWriter(b, tp), a); a.Close(); b.Close() })
			tp.wg.Go(func() { io.Copy(io.MultiWriter(a, tp), b); a.Close(); b.Close() })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		tp.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		tp.mu.Unlock()
		tp.wg.Wait()
	})
	return tp
}

func (tp *tap) Write(p []byte) (int, error) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.wire.Write(p)
}

func (tp *tap) captured() []byte {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return bytes.Clone(tp.wire.Bytes())
}

// TestWireCapture sends the virtual iPhone's broadcast (its real sender,
// the one `pinky-driver-sim --video-dial` runs) through a tap to a
// receiver. The receiver gets H.264 that ffprobe decodes, and a JPEG
// still; the tap's recording holds neither the stream's parameter sets,
// nor any frame's bytes, nor the still's, nor even an H.264 start code
// before a parameter set or slice.
func TestWireCapture(t *testing.T) {
	ffprobe := testdep.Need(t, "ffprobe")
	const device = "capture-iphone"
	secret, err := video.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	phone := simtest.New(t)

	rx, err := video.NewReceiver(video.ReceiverConfig{DeviceID: device, Secret: secret, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() { rx.Run(ctx) })
	tp := newTap(t, rx.Addr().String())
	src, err := wdad.Broadcast(phone, "sim-ios-1", wdad.BroadcastConfig{DeviceID: device, Secret: secret, Dial: tp.ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { src.Run(ctx) })

	// A viewer keeps what the receiver passes on: the config, then frames.
	got := make(chan sdk.VideoPacket, 256)
	wg.Go(func() {
		rx.Subscribe(ctx, func(p sdk.VideoPacket) error {
			select {
			case got <- p:
			default:
			}
			return nil
		})
	})
	var packets []sdk.VideoPacket
	timeout := time.After(20 * time.Second)
	for keys := 0; keys < 4; {
		select {
		case p := <-got:
			packets = append(packets, p)
			if p.KeyFrame {
				keys++
				rx.RequestKeyFrame() // another picture, another key frame
			}
		case <-timeout:
			t.Fatalf("the receiver passed on %d packets; want a config and 4 key frames", len(packets))
		}
	}
	jpeg, err := rx.Still(context.Background(), 640, 80)
	if err != nil {
		t.Fatalf("Still: %v", err)
	}
	if !packets[0].Config {
		t.Fatalf("the first packet is no config: %+v", packets[0])
	}

	// The receiver decodes what crossed: ffprobe reads every frame.
	var annexB []byte
	for _, p := range packets {
		annexB = append(annexB, p.Data...)
	}
	file := filepath.Join(t.TempDir(), "broadcast.h264")
	if err := os.WriteFile(file, annexB, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ffprobe, "-v", "error", "-f", "h264", "-count_frames", "-select_streams", "v:0",
		"-show_entries", "stream=codec_name,width,height,nb_read_frames", "-of", "default=nw=1", file).CombinedOutput()
	if err != nil {
		t.Fatalf("ffprobe refuses the received stream: %v\n%s", err, out)
	}
	info := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		info[k] = v
	}
	frames, _ := strconv.Atoi(info["nb_read_frames"])
	if info["codec_name"] != "h264" || info["width"] != strconv.Itoa(packets[0].Width) || frames < len(packets)-1 {
		t.Errorf("ffprobe of the received stream: %v; want h264, %d wide, %d frames", info, packets[0].Width, len(packets)-1)
	}

	// The eavesdropper's recording: nothing of the picture in clear.
	wire := tp.captured()
	if len(wire) < len(annexB) {
		t.Fatalf("the tap recorded %d bytes; want at least the %d of the stream", len(wire), len(annexB))
	}
	patterns := []struct {
		name string
		b    []byte
	}{
		{"the parameter sets (SPS and PPS)", packets[0].Data},
		{"a start code before an SPS", []byte{0, 0, 0, 1, 0x67}},
		{"a start code before an IDR slice", []byte{0, 0, 0, 1, 0x65}},
		{"a start code before a slice", []byte{0, 0, 0, 1, 0x41}},
		{"the still's JPEG header", jpeg[:min(len(jpeg), 20)]},
		{"the still's middle", jpeg[len(jpeg)/2 : min(len(jpeg), len(jpeg)/2+32)]},
	}
	for i, p := range packets[1:] {
		patterns = append(patterns, struct {
			name string
			b    []byte
		}{"frame " + strconv.Itoa(i+1), p.Data[:min(len(p.Data), 32)]})
	}
	for _, p := range patterns {
		if bytes.Contains(wire, p.b) {
			t.Errorf("the recording of the Wi-Fi holds %s in clear (% x)", p.name, p.b[:min(len(p.b), 12)])
		}
	}
}
