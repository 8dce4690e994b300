package scrcpy

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/h264"
)

func sps(t testing.TB, w, h int) []byte {
	t.Helper()
	e, err := h264.NewEncoder(w, h)
	if err != nil {
		t.Fatal(err)
	}
	return e.Config()
}

func TestH264Size(t *testing.T) {
	for _, sz := range [][2]int{{1080, 2400}, {360, 800}, {800, 360}, {16, 16}, {18, 34}, {1920, 1080}} {
		w, h, err := h264Size(sps(t, sz[0], sz[1]))
		if err != nil || w != sz[0] || h != sz[1] {
			t.Errorf("h264Size(sps of %dx%d) = %dx%d, %v; want %dx%d", sz[0], sz[1], w, h, err, sz[0], sz[1])
		}
	}
	// A high-profile SPS as x264 writes it (1280x720, with cropping of 8 lines).
	high := unhex(t, "00000001 6764001f acd9405005bb011000000300100000030320f183196000")
	if w, h, err := h264Size(high); err != nil || w != 1280 || h != 720 {
		t.Errorf("h264Size(high profile sps) = %dx%d, %v; want 1280x720", w, h, err)
	}
	if _, _, err := h264Size([]byte{0, 0, 0, 1, 0x68, 1, 2}); err == nil {
		t.Error("h264Size(pps only): got nil error; want one")
	}
}

// stream is a test server's video bytes, written by hand from reference 1.3.
type stream struct{ b []byte }

func (s *stream) u32(v uint32) *stream  { s.b = binary.BigEndian.AppendUint32(s.b, v); return s }
func (s *stream) u64(v uint64) *stream  { s.b = binary.BigEndian.AppendUint64(s.b, v); return s }
func (s *stream) raw(b ...byte) *stream { s.b = append(s.b, b...); return s }
func (s *stream) packet(header uint64, data []byte) *stream {
	return s.u64(header).u32(uint32(len(data))).raw(data...)
}

func deviceName(name string) []byte {
	b := make([]byte, DeviceNameLength)
	copy(b, name)
	return b
}

// serve connects a client to a fake server that writes video and then
// control, and returns the client.
func serve(t *testing.T, version string, video, control []byte) *Client {
	t.Helper()
	vc, vs := net.Pipe()
	cc, cs := net.Pipe()
	go func() { vs.Write(video) }()
	go func() { cs.Write(control); io.Copy(io.Discard, cs) }()
	t.Cleanup(func() { vs.Close(); cs.Close() })
	c, err := Connect(version, vc, cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func readAll(t *testing.T, c *Client, n int) []sdk.VideoPacket {
	t.Helper()
	var out []sdk.VideoPacket
	for range n {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("ReadPacket %d: %v", len(out), err)
		}
		out = append(out, p)
	}
	return out
}

func TestVideo3(t *testing.T) {
	cfg1, cfg2 := sps(t, 360, 800), sps(t, 800, 360)
	s := (&stream{}).raw(0).raw(deviceName("Pixel 8")...).u32(codecH264).u32(360).u32(800).
		packet(1<<63, cfg1).
		packet(1<<62|1000, []byte{0, 0, 0, 1, 0x65, 1}).
		packet(2000, []byte{0, 0, 0, 1, 0x41, 2}).
		packet(1<<63, cfg2). // rotation: only the SPS says the new size
		packet(1<<62|3000, []byte{0, 0, 0, 1, 0x65, 3})
	c := serve(t, "3.3.4", s.b, nil)
	if c.DeviceName() != "Pixel 8" {
		t.Errorf("DeviceName() = %q; want Pixel 8", c.DeviceName())
	}
	if w, h := c.VideoSize(); w != 360 || h != 800 {
		t.Errorf("VideoSize() = %dx%d; want 360x800", w, h)
	}
	got := readAll(t, c, 5)
	want := []sdk.VideoPacket{
		{Codec: sdk.CodecH264, Config: true, Width: 360, Height: 800, Data: cfg1},
		{Codec: sdk.CodecH264, KeyFrame: true, PTS: time.Millisecond, Width: 360, Height: 800, Data: []byte{0, 0, 0, 1, 0x65, 1}},
		{Codec: sdk.CodecH264, PTS: 2 * time.Millisecond, Width: 360, Height: 800, Data: []byte{0, 0, 0, 1, 0x41, 2}},
		{Codec: sdk.CodecH264, Config: true, Width: 800, Height: 360, Data: cfg2},
		{Codec: sdk.CodecH264, KeyFrame: true, PTS: 3 * time.Millisecond, Width: 800, Height: 360, Data: []byte{0, 0, 0, 1, 0x65, 3}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("packets mismatch (-want +got):\n%s", diff)
	}
	if w, h := c.VideoSize(); w != 800 || h != 360 {
		t.Errorf("VideoSize() after rotation = %dx%d; want 800x360", w, h)
	}
}

func TestVideo4(t *testing.T) {
	cfg := []byte{0, 0, 0, 1, 0x67, 9} // 4.x does not need the SPS: session packets carry the size
	s := (&stream{}).raw(0).raw(deviceName("Ana's phone, a very long name that fills all of the sixty-four bytes")...).u32(codecH264).
		u32(1<<31).u32(360).u32(800).
		packet(1<<62, cfg).
		packet(1<<61|1000, []byte{0, 0, 0, 1, 0x65, 1}).
		packet(2000, []byte{0, 0, 0, 1, 0x41, 2}).
		u32(1<<31|1).u32(800).u32(360). // a new session: rotated
		packet(1<<62, cfg).
		packet(1<<61|(1<<40)|3000, []byte{0, 0, 0, 1, 0x65, 3})
	c := serve(t, "4.1", s.b, nil)
	if want := "Ana's phone, a very long name that fills all of the sixty-four "[:63]; c.DeviceName() != want {
		t.Errorf("DeviceName() = %q; want %q (63 bytes)", c.DeviceName(), want)
	}
	if w, h := c.VideoSize(); w != 360 || h != 800 {
		t.Errorf("VideoSize() = %dx%d; want 360x800", w, h)
	}
	got := readAll(t, c, 5)
	want := []sdk.VideoPacket{
		{Codec: sdk.CodecH264, Config: true, Width: 360, Height: 800, Data: cfg},
		{Codec: sdk.CodecH264, KeyFrame: true, PTS: time.Millisecond, Width: 360, Height: 800, Data: []byte{0, 0, 0, 1, 0x65, 1}},
		{Codec: sdk.CodecH264, PTS: 2 * time.Millisecond, Width: 360, Height: 800, Data: []byte{0, 0, 0, 1, 0x41, 2}},
		{Codec: sdk.CodecH264, Config: true, Width: 800, Height: 360, Data: cfg},
		{Codec: sdk.CodecH264, KeyFrame: true, PTS: (1<<40 + 3000) * time.Microsecond, Width: 800, Height: 360, Data: []byte{0, 0, 0, 1, 0x65, 3}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("packets mismatch (-want +got):\n%s", diff)
	}
}

func TestVideoHeaderErrors(t *testing.T) {
	tests := []struct {
		name, version string
		video         []byte
	}{
		{"video disabled", "4.1", (&stream{}).raw(0).raw(deviceName("x")...).u32(codecDisabled).b},
		{"configuration error", "3.3.4", (&stream{}).raw(0).raw(deviceName("x")...).u32(codecError).b},
		{"unknown codec", "3.3.4", (&stream{}).raw(0).raw(deviceName("x")...).u32(0x41414141).u32(1).u32(1).b},
		{"4.x media before session", "4.1", (&stream{}).raw(0).raw(deviceName("x")...).u32(codecH264).packet(1<<62, []byte{1}).b},
		{"bad dummy byte", "4.1", (&stream{}).raw(7).raw(deviceName("x")...).b},
		{"closed before the dummy byte", "4.1", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vc, vs := net.Pipe()
			go func() { vs.Write(tt.video); vs.Close() }()
			c, err := ConnectWith(tt.version, func() Options { o := DefaultOptions(); o.Control = false; return o }(), vc, nil)
			if err == nil {
				c.Close()
				t.Fatal("Connect: got nil error; want one")
			}
			t.Log(err)
		})
	}
	if _, err := Connect("5.0", nil, nil); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("Connect(5.0) error = %v; want ErrUnsupportedVersion", err)
	}
}

func TestDeviceMessagesAndClipboard(t *testing.T) {
	vc, vs := net.Pipe()
	cc, cs := net.Pipe()
	defer vs.Close()
	defer cs.Close()
	go func() {
		vs.Write((&stream{}).raw(0).raw(deviceName("P")...).u32(codecH264).u32(16).u32(16).b)
	}()
	c, err := Connect("3.3.4", vc, cc)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The fake server: answers GET_CLIPBOARD with "old", acks SET_CLIPBOARD.
	v := mustVersion(t, "3.3.4")
	got := make(chan Message, 10)
	go func() {
		for {
			m, err := ReadMessage(cs, v)
			if err != nil {
				close(got)
				return
			}
			got <- m
			var reply DeviceMessage
			switch m := m.(type) {
			case GetClipboard:
				reply = DeviceClipboard{Text: "old"}
			case SetClipboard:
				reply = AckClipboard{Sequence: m.Sequence}
			default:
				continue
			}
			b, _ := MarshalDevice(reply)
			cs.Write(b)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.PasteText(ctx, "héllo"); err != nil {
		t.Fatal(err)
	}
	if err := c.Tap(3, 4); err != nil {
		t.Fatal(err)
	}
	var msgs []Message
	for range 5 {
		msgs = append(msgs, <-got)
	}
	want := []Message{
		GetClipboard{},
		SetClipboard{Sequence: 1, Paste: true, Text: "héllo"},
		SetClipboard{Sequence: 2, Text: "old"},
		InjectTouch{Action: MotionDown, PointerID: PointerGenericFinger, X: 3, Y: 4, Width: 16, Height: 16, Pressure: 65535.0 / 65536},
		InjectTouch{Action: MotionUp, PointerID: PointerGenericFinger, X: 3, Y: 4, Width: 16, Height: 16},
	}
	if diff := cmp.Diff(want, msgs); diff != "" {
		t.Errorf("messages mismatch (-want +got):\n%s", diff)
	}
	if s, ok := c.LastClipboard(); !ok || s != "old" {
		t.Errorf("LastClipboard() = %q, %v; want old, true", s, ok)
	}
}

func TestVersionMismatch(t *testing.T) {
	// A 3.x stream read as 4.x: the size after the codec id is not a session packet.
	vc, vs := net.Pipe()
	defer vs.Close()
	go func() { vs.Write((&stream{}).raw(0).raw(deviceName("P")...).u32(codecH264).u32(16).u32(16).b) }()
	o := DefaultOptions()
	o.Control = false
	if c, err := ConnectWith("4.0", o, vc, nil); err == nil {
		c.Close()
		t.Fatal("ConnectWith(4.0) on a 3.x stream: got nil error; want one")
	}
}

func TestTextSplits(t *testing.T) {
	// Text splitting needs only the control socket.
	o := DefaultOptions()
	o.Video = false
	cc2, cs2 := net.Pipe()
	defer cs2.Close()
	go func() { cs2.Write(append([]byte{0}, deviceName("P")...)) }()
	c2, err := ConnectWith("4.1", o, nil, cc2)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	text := ""
	for range 150 {
		text += "é" // 2 bytes each: 300 bytes
	}
	text += "✓abc"
	done := make(chan []string)
	go func() {
		var parts []string
		v := mustVersion(t, "4.1")
		for len(parts) < 2 {
			m, err := ReadMessage(cs2, v)
			if err != nil {
				break
			}
			parts = append(parts, m.(InjectText).Text)
		}
		done <- parts
	}()
	if err := c2.Text(text); err != nil {
		t.Fatal(err)
	}
	parts := <-done
	if len(parts) != 2 || len(parts[0]) != 300 || parts[0]+parts[1] != text {
		t.Errorf("Text split into %d parts of %v bytes; want 300 bytes then the rest", len(parts), func() []int {
			var n []int
			for _, p := range parts {
				n = append(n, len(p))
			}
			return n
		}())
	}
}
