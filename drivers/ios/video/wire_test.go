package video

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGolden checks the byte layouts that VIDEO.md §5 gives as examples.
func TestGolden(t *testing.T) {
	var nonce [32]byte
	for i := range nonce {
		nonce[i] = byte(i)
	}
	tests := []struct {
		name string
		msg  outMsg
		want string
	}{
		{"HELLO", hello{minVersion: 2, maxVersion: 2, role: roleSource, nonce: nonce, device: "ana"}.msg(),
			"0000002e 01 504e4b56 0002 0002 01 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f 03 616e61"},
		{"HANDSHAKE", handshakeMsg(make([]byte, noiseMsgSize)), "00000031 0c" + strings.Repeat("00", noiseMsgSize)},
		{"CONFIG", config{codec: codecH264, rotation: 0, width: 720, height: 1560, params: testParams}.msg(),
			"00000017 03 01 00 02d0 0618 00000001 6742c01f 00000001 68ce3c80"},
		{"FRAME", frame{pts: 1_000_000, key: true, data: []byte{0, 0, 0, 1, 0x65, 0x88}}.msg(),
			"00000010 04 00000000000f4240 01 00000001 6588"},
		{"KEYFRAME", newMsg(msgKeyFrame, 0, nil), "00000001 05"},
		{"STILL_REQUEST", stillRequest{id: 7, maxSide: 1280, quality: 80}.msg(), "00000008 06 00000007 0500 50"},
		{"STILL ok", still{id: 7, status: stillOK, data: []byte{0xff, 0xd8, 0xff}}.msg(), "00000009 07 00000007 00 ffd8ff"},
		{"STILL no frame", still{id: 7, status: stillNoFrame, data: []byte("none")}.msg(), "0000000a 07 00000007 01 6e6f6e65"},
		{"PING", pingMsg(msgPing, [8]byte{0, 0, 0, 0, 0, 0, 0, 42}), "00000009 08 000000000000002a"},
		{"STOP", textMsg(msgStop, uint8(stopUser), "bye"), "00000005 0a 01 627965"},
		{"ERROR", textMsg(msgError, uint8(codeAuth), "no"), "00000004 0b 03 6e6f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(unhex(t, tt.want), tt.msg.bytes()); diff != "" {
				t.Errorf("bytes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRoundTrip writes each message and reads it back.
func TestRoundTrip(t *testing.T) {
	var nonce [32]byte
	nonce[31] = 9
	h := hello{minVersion: 1, maxVersion: 3, role: roleSink, nonce: nonce, device: "Ana’s iPhone"}
	c := config{codec: codecH264, rotation: 3, width: 1560, height: 720, params: testParams}
	f := frame{pts: maxPTS, key: false, data: testFrame(1, false, 300)}
	sr := stillRequest{id: 1 << 31, maxSide: 8191, quality: 100}
	st := still{id: 3, status: stillFailed, data: []byte("encoder gone")}

	var buf bytes.Buffer
	for _, m := range []outMsg{h.msg(), c.msg(), f.msg(), sr.msg(), st.msg()} {
		buf.Write(m.bytes())
	}
	br := bufio.NewReader(&buf)
	read := func(want msgType) []byte {
		t.Helper()
		got, p, err := readMessage(br, anyMessage)
		if err != nil || got != want {
			t.Fatalf("readMessage: got %v, %v; want %v", got, err, want)
		}
		return p
	}
	opts := cmp.AllowUnexported(hello{}, config{}, frame{}, stillRequest{}, still{})
	for _, tt := range []struct {
		name  string
		t     msgType
		parse func([]byte) (any, error)
		want  any
	}{
		{"hello", msgHello, func(p []byte) (any, error) { return parseHello(p) }, h},
		{"config", msgConfig, func(p []byte) (any, error) { return parseConfig(p) }, c},
		{"frame", msgFrame, func(p []byte) (any, error) { return parseFrame(p) }, f},
		{"still request", msgStillRequest, func(p []byte) (any, error) { return parseStillRequest(p) }, sr},
		{"still", msgStill, func(p []byte) (any, error) { return parseStill(p) }, st},
	} {
		got, err := tt.parse(read(tt.t))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got, opts); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
	if _, _, err := readMessage(br, anyMessage); err != io.EOF {
		t.Errorf("after the last message: got %v; want io.EOF", err)
	}
}

// TestReadMessageErrors feeds malformed streams to readMessage.
func TestReadMessageErrors(t *testing.T) {
	handshakeSet := setOf("during the handshake", msgHello, msgError)
	tests := []struct {
		name   string
		in     string
		accept msgSet
		want   string // in the error; "" for a clean io.EOF
	}{
		{"empty stream", "", anyMessage, ""},
		{"zero length", "00000000 01", anyMessage, "length 0"},
		{"over the limit", "00800001 04", anyMessage, "limit 8388608"},
		{"http", hex.EncodeToString([]byte("GET / HTTP/1.1\r\n")), anyMessage, "length"},
		{"unknown type", "00000001 7f", anyMessage, "unknown message type 0x7f"},
		{"type zero", "00000001 00", anyMessage, "unknown message type 0x00"},
		{"not now", "00000010 04 00000000000f4240 01 00000001 6588", handshakeSet, "unexpected FRAME during the handshake"},
		{"too short for its type", "00000005 08 00000000", anyMessage, "PING of 4 bytes"},
		{"too long for its type", "0000000a 08 000000000000000000", anyMessage, "PING of 9 bytes"},
		{"big hello", "00000500 01", anyMessage, "HELLO of 1279 bytes"},
		{"version 1's AUTH", "00000021 02", anyMessage, "unexpected AUTH: version 1's message"},
		{"short handshake", "00000030 0c", anyMessage, "HANDSHAKE of 47 bytes: want 48 to 48"},
		{"type 13", "00000001 0d", anyMessage, "unknown message type 0x0d"},
		{"truncated header", "000000", anyMessage, "inside a message header"},
		{"truncated payload", "00000009 08 0000", anyMessage, "inside PING"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readMessage(bytes.NewReader(unhex(t, tt.in)), tt.accept)
			if tt.want == "" {
				if err != io.EOF {
					t.Fatalf("got %v; want io.EOF", err)
				}
				return
			}
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want a protocol error saying %q", err, tt.want)
			}
		})
	}
}

// TestParseErrors feeds payloads of valid size but bad content to the
// parsers.
func TestParseErrors(t *testing.T) {
	hello := func(mutate func([]byte)) []byte {
		m := hello{minVersion: 1, maxVersion: 1, role: roleSource, device: "ana"}.msg()
		p := m.head[headerSize:]
		mutate(p)
		return p
	}
	cfg := func(mutate func([]byte)) []byte {
		p := config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()[headerSize:]
		mutate(p)
		return p
	}
	tests := []struct {
		name  string
		parse func([]byte) error
		in    []byte
		want  string
	}{
		{"hello magic", parseHelloErr, hello(func(p []byte) { p[0] = 'X' }), "magic"},
		{"hello version 0", parseHelloErr, hello(func(p []byte) { p[5] = 0 }), "versions 0..1"},
		{"hello min above max", parseHelloErr, hello(func(p []byte) { p[5] = 2 }), "versions 2..1"},
		{"hello role", parseHelloErr, hello(func(p []byte) { p[8] = 3 }), "role 3"},
		{"hello no device", parseHelloErr, hello(func(p []byte) { p[41] = 0 }), "device id of 0 bytes"},
		{"hello device past the end", parseHelloErr, hello(func(p []byte) { p[41] = 9 }), "holds no device id"},
		{"hello device control char", parseHelloErr, hello(func(p []byte) { p[42] = '\n' }), "control"},
		{"config codec", parseConfigErr, cfg(func(p []byte) { p[0] = 2 }), "codec 2"},
		{"config rotation", parseConfigErr, cfg(func(p []byte) { p[1] = 4 }), "rotation 4"},
		{"config width 0", parseConfigErr, cfg(func(p []byte) { p[2], p[3] = 0, 0 }), "size 0x1560"},
		{"config too high", parseConfigErr, cfg(func(p []byte) { p[4], p[5] = 0xff, 0xff }), "size 720x65535"},
		{"config AVCC", parseConfigErr, cfg(func(p []byte) { p[9] = 0x0c }), "start code"},
		{"config no PPS", parseConfigErr, cfg(func(p []byte) { p[18] = 0x67 }), "PPS false"},
		{"frame negative PTS", parseFrameErr, append(unhex(t, "ffffffffffffffff 00"), 0, 0, 1, 0x41), "PTS -1"},
		{"frame AVCC", parseFrameErr, unhex(t, "0000000000000000 00 00000002 4188"), "start code"},
		{"still request quality", parseStillRequestErr, unhex(t, "00000001 0000 65"), "quality 101"},
		{"still status", parseStillErr, unhex(t, "00000001 05"), "status 5"},
		{"still ok empty", parseStillErr, unhex(t, "00000001 00"), "without JPEG"},
		{"still long text", parseStillErr, append(unhex(t, "00000001 03"), bytes.Repeat([]byte("x"), MaxText+1)...), "text of 1025 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse(tt.in)
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want a protocol error saying %q", err, tt.want)
			}
		})
	}
}

func parseHelloErr(p []byte) error        { _, err := parseHello(p); return err }
func parseConfigErr(p []byte) error       { _, err := parseConfig(p); return err }
func parseFrameErr(p []byte) error        { _, err := parseFrame(p); return err }
func parseStillRequestErr(p []byte) error { _, err := parseStillRequest(p); return err }
func parseStillErr(p []byte) error        { _, err := parseStill(p); return err }

func TestParseTextAndClip(t *testing.T) {
	code, text := parseText([]byte{3, 'o', 0xff, 'k'})
	if code != 3 || text != "o\uFFFDk" {
		t.Errorf("parseText: got %d %q; want 3 %q", code, text, "o\uFFFDk")
	}
	long := strings.Repeat("é", MaxText) // 2 bytes each
	m := textMsg(msgError, 1, long)
	if n := len(m.body); n > MaxText || n%2 != 0 {
		t.Errorf("clipped text of %d bytes; want at most %d whole characters", n, MaxText)
	}
}

// FuzzReadMessage reads arbitrary bytes as a stream of messages and parses
// each. It must never panic, never return a payload outside its type's
// bounds, and never allocate more than the input's size plus one message
// of the largest size (the one whose header claims more than follows).
func FuzzReadMessage(f *testing.F) {
	var nonce [32]byte
	for _, m := range []outMsg{
		hello{minVersion: 1, maxVersion: 1, role: roleSource, nonce: nonce, device: "ana"}.msg(),
		config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg(),
		frame{pts: 42, key: true, data: testFrame(1, true, 20)}.msg(),
		stillRequest{id: 1, maxSide: 100, quality: 50}.msg(),
		still{id: 1, status: stillOK, data: []byte{0xff, 0xd8, 0xff}}.msg(),
		textMsg(msgStop, 1, "bye"),
	} {
		f.Add(m.bytes())
	}
	f.Add([]byte{0x7f, 0xff, 0xff, 0xff, 4}) // a huge length
	f.Add([]byte{0, 0, 0, 9, 8, 0})          // truncated
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := bytes.NewReader(data)
		for range 64 {
			typ, p, err := readMessage(r, anyMessage)
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrProtocol) {
					t.Fatalf("readMessage: got %v; want io.EOF or a protocol error", err)
				}
				break
			}
			if b := payloadBounds[typ]; len(p) < b.min || len(p) > b.max || len(p) > len(data) {
				t.Fatalf("%s payload of %d bytes from %d bytes of input", typ, len(p), len(data))
			}
			parseAny(typ, p)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(data))+MaxMessage+1<<16 {
			t.Fatalf("allocated %d bytes for %d bytes of input", got, len(data))
		}
	})
}

// parseAny runs the parser of t on p.
func parseAny(t msgType, p []byte) {
	switch t {
	case msgHello:
		parseHello(p)
	case msgConfig:
		parseConfig(p)
	case msgFrame:
		parseFrame(p)
	case msgStillRequest:
		parseStillRequest(p)
	case msgStill:
		parseStill(p)
	case msgStop, msgError:
		parseText(p)
	case msgPing, msgPong:
		binary.BigEndian.Uint64(p)
	}
}
