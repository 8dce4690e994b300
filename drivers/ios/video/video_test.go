package video

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

var arrangements = []struct {
	name          string
	sourceListens bool
}{
	{"sink listens", false},
	{"source listens", true},
}

// kinds reads n packets and describes them.
func (p *packets) kinds(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	for range n {
		got = append(got, kind(p.next(t)))
	}
	return got
}

func TestStream(t *testing.T) {
	for _, tt := range arrangements {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			p, _ := newPair(t, pairOptions{sourceListens: tt.sourceListens})
			sub := subscribe(t, p.rx)
			p.runSource(t)
			p.waitLive(t, true)

			cfg := sub.next(t)
			want := sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: 720, Height: 1560, Data: testParams}
			if diff := cmp.Diff(want, cfg); diff != "" {
				t.Errorf("config (-want +got):\n%s", diff)
			}
			p.enc.sendFrames(3, false)
			var got []sdk.VideoPacket
			for range 4 {
				pkt := sub.next(t)
				pkt.Data = pkt.Data[:13] // start code, NAL header, seq
				got = append(got, pkt)
			}
			wantFrames := []sdk.VideoPacket{
				{Codec: sdk.CodecH264, KeyFrame: true, PTS: 33 * time.Millisecond, Width: 720, Height: 1560, Data: testFrame(1, true, 13)},
				{Codec: sdk.CodecH264, PTS: 66 * time.Millisecond, Width: 720, Height: 1560, Data: testFrame(2, false, 13)},
				{Codec: sdk.CodecH264, PTS: 99 * time.Millisecond, Width: 720, Height: 1560, Data: testFrame(3, false, 13)},
				{Codec: sdk.CodecH264, PTS: 132 * time.Millisecond, Width: 720, Height: 1560, Data: testFrame(4, false, 13)},
			}
			if diff := cmp.Diff(wantFrames, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}

			if !p.rx.Live() {
				t.Error("Live: got false; want true")
			}
			f, ok := p.rx.Format()
			if diff := cmp.Diff(Format{Codec: sdk.CodecH264, Width: 720, Height: 1560}, f); !ok || diff != "" {
				t.Errorf("Format (-want +got), ok %t:\n%s", ok, diff)
			}
			jpeg, err := p.rx.Still(context.Background(), 640, 80)
			if err != nil || !bytes.HasSuffix(jpeg, []byte("still 640 80")) {
				t.Errorf("Still: got %q, %v; want the source's still of 640 at 80", jpeg, err)
			}
			if err := p.rx.RequestKeyFrame(); err != nil {
				t.Errorf("RequestKeyFrame: %v", err)
			}
			testkit.WaitUntil(t, "the key frame request", func() bool { return p.enc.keyCalls.Load() >= 1 })

			rs, ss := p.rx.Stats(), p.src.Stats()
			if rs.Sessions != 1 || rs.FramesIn != 4 || rs.BytesIn != 4*100 || rs.FramesDropped != 0 || rs.AuthFailures != 0 || rs.ProtocolErrors != 0 {
				t.Errorf("receiver stats: %+v", rs)
			}
			if ss.Sessions != 1 || ss.FramesOut != 4 || ss.KeyFrameRequests != 1 {
				t.Errorf("source stats: %+v", ss)
			}
		})
	}
}

func TestWrongSecret(t *testing.T) {
	other := bytes.Repeat([]byte{0xa5}, SecretSize)
	for _, tt := range arrangements {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			p, _ := newPair(t, pairOptions{sourceListens: tt.sourceListens, sourceSecret: other})
			if tt.sourceListens {
				p.runSource(t) // the receiver dials, fails, and keeps trying
				testkit.WaitUntil(t, "an auth failure on both sides", func() bool {
					return p.rx.Stats().AuthFailures >= 1 && p.src.Stats().AuthFailures >= 1
				})
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), waitFor)
				defer cancel()
				err := p.src.Run(ctx) // a dialing source gives up: the person must be told
				if !errors.Is(err, ErrAuth) {
					t.Fatalf("Source.Run: got %v; want ErrAuth", err)
				}
				testkit.WaitUntil(t, "the receiver's auth failure", func() bool { return p.rx.Stats().AuthFailures == 1 })
			}
			if p.rx.Live() {
				t.Error("Live: got true; want false")
			}
			logs := p.logs.String()
			for _, want := range []string{"authentication failed", "device=" + testDevice} {
				if !strings.Contains(logs, want) {
					t.Errorf("the logs do not say %q:\n%s", want, logs)
				}
			}
		})
	}
}

// TestReplayToReceiver replays a recorded handshake to a receiver.
func TestReplayToReceiver(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	addr := p.rx.Addr().String()

	first := dialRaw(t, addr)
	rec := &recorder{Conn: first.nc}
	first.nc = rec
	if err := first.handshake(roleSource, testSecret); err != nil {
		t.Fatal(err)
	}
	first.nc.Close()

	replay := dialRaw(t, addr)
	replay.write(rec.out.Bytes())
	if got := replay.closed(); !strings.HasPrefix(got, "AUTH:") {
		t.Errorf("the receiver's answer: got %q; want an AUTH error", got)
	}
	testkit.WaitUntil(t, "the auth failure", func() bool { return p.rx.Stats().AuthFailures == 1 })
	if logs := p.logs.String(); !strings.Contains(logs, "device="+testDevice) {
		t.Errorf("the logs do not name the device:\n%s", logs)
	}
}

func TestUnknownVersion(t *testing.T) {
	for _, tt := range []struct {
		name     string
		version  uint16
		wantText string
	}{
		{"an old clear version", 1, "the peer speaks version 1, this side speaks version 2 (version 1 sends the screen unencrypted and is refused"},
		{"a later version", 3, "the peer speaks version 3, this side speaks version 2"},
	} {
		t.Run(tt.name+" to a receiver", func(t *testing.T) {
			checkLeaks(t)
			p, _ := newPair(t, pairOptions{})
			peer := dialRaw(t, p.rx.Addr().String())
			err := peer.handshakeWith(handshakeConfig{
				role: roleSource, device: testDevice, secret: testSecret, timeout: waitFor, minVersion: tt.version, maxVersion: tt.version,
			})
			if !errors.Is(err, ErrVersion) {
				t.Fatalf("handshake: got %v; want ErrVersion", err)
			}
			testkit.WaitUntil(t, "the protocol error", func() bool { return p.rx.Stats().ProtocolErrors == 1 })
			logs := p.logs.String()
			for _, want := range []string{"level=ERROR", "no common protocol version", tt.wantText} {
				if !strings.Contains(logs, want) {
					t.Errorf("the logs do not say %q:\n%s", want, logs)
				}
			}
		})
		t.Run(tt.name+" to a dialing source", func(t *testing.T) {
			checkLeaks(t)
			addr, accept := acceptRaw(t)
			enc := newEncoder()
			src, err := NewSource(SourceConfig{DeviceID: testDevice, Secret: testSecret, Dial: addr, Stream: enc.Stream})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- src.Run(context.Background()) }()
			peer := accept()
			peer.nc.(*net.TCPConn).SetLinger(0)
			err = peer.handshakeWith(handshakeConfig{
				role: roleSink, device: testDevice, secret: testSecret, timeout: waitFor, minVersion: tt.version, maxVersion: tt.version,
			})
			if !errors.Is(err, ErrVersion) {
				t.Errorf("sink: got %v; want ErrVersion", err)
			}
			select {
			case err := <-done:
				want := fmt.Sprintf("version %d", tt.version)
				if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "version 2") {
					t.Errorf("Source.Run: got %v; want ErrVersion naming versions %d and 2", err, tt.version)
				}
			case <-time.After(waitFor):
				t.Fatal("Source.Run did not give up")
			}
		})
	}
}

// v1Hello is the HELLO of a version-1 peer.
func v1Hello(r role, nonce byte) outMsg {
	return hello{minVersion: 1, maxVersion: 1, role: r, nonce: [32]byte{nonce}, device: testDevice}.msg()
}

// TestOldClearBroadcastRefused plays a broadcast app of version 1, which
// holds the right pairing secret and sends its AUTH, CONFIG and a key
// frame in clear: the receiver must refuse it at its HELLO, never answer
// with an AUTH, and take none of its video.
func TestOldClearBroadcastRefused(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	sub := subscribe(t, p.rx)
	old := dialRaw(t, p.rx.Addr().String())
	mine := v1Hello(roleSource, 7)
	old.writeClear(mine.bytes())
	typ, theirs := old.read()
	if typ != msgHello {
		t.Fatalf("the receiver's first message: %s; want HELLO", typ)
	}
	// An old app that does not check the version goes on as version 1 did.
	auth := newMsg(msgAuthV1, 32, nil)
	auth.head = append(auth.head, v1AuthMAC(testSecret, roleSource, 1, mine.head[headerSize:], theirs)...)
	for _, m := range []outMsg{auth, config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg(),
		frame{pts: 1, key: true, data: testFrame(1, true, 100)}.msg()} {
		old.nc.Write(m.bytes()) // the receiver may have closed already
	}
	if got := old.closed(); !strings.HasPrefix(got, "VERSION:") || !strings.Contains(got, "unencrypted") {
		t.Errorf("the receiver's answer: got %q; want a VERSION error saying version 1 is unencrypted", got)
	}
	testkit.WaitUntil(t, "the refusal counted", func() bool { return p.rx.Stats().ProtocolErrors == 1 })
	if s := p.rx.Stats(); s.Sessions != 0 || s.FramesIn != 0 || p.rx.Live() {
		t.Errorf("after an old clear broadcast: stats %+v, live %t; want no session, no frame", s, p.rx.Live())
	}
	select {
	case pkt := <-sub.ch:
		t.Errorf("a subscriber got a packet of the old clear broadcast: %s", kind(pkt))
	case <-time.After(100 * time.Millisecond):
	}
}

// TestTamperedFrame alters one byte of an encrypted FRAME on its way: the
// receiver must refuse the record, close the connection, and pass nothing
// of it on; the frames before it arrive intact.
func TestTamperedFrame(t *testing.T) {
	for _, tt := range []struct {
		name   string
		record func(peer *rawPeer) []byte // what goes on the wire instead of the frame's record
	}{
		{"a flipped bit", func(peer *rawPeer) []byte {
			r := peer.sealed(frame{pts: 2, data: testFrame(2, false, 100)}.msg().bytes())
			r[len(r)/2] ^= 0x40
			return r
		}},
		{"a record replayed", func(peer *rawPeer) []byte { return peer.lastRecord }},
		{"a clear frame in place of a record", func(peer *rawPeer) []byte {
			return frame{pts: 2, data: testFrame(2, false, 100)}.msg().bytes()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			p, _ := newPair(t, pairOptions{})
			sub := subscribe(t, p.rx)
			peer := dialRaw(t, p.rx.Addr().String())
			if err := peer.handshake(roleSource, testSecret); err != nil {
				t.Fatal(err)
			}
			peer.writeClear(peer.sealed(config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()))
			peer.writeClear(peer.sealed(frame{pts: 1, key: true, data: testFrame(1, true, 100)}.msg().bytes()))
			if diff := cmp.Diff([]string{"config 720x1560", "key"}, sub.kinds(t, 2)); diff != "" {
				t.Fatalf("before the attack (-want +got):\n%s", diff)
			}
			peer.writeClear(tt.record(peer))
			if got := peer.closed(); !strings.HasPrefix(got, "PROTOCOL:") || !strings.Contains(got, "record") {
				t.Errorf("the receiver's ERROR: got %q; want a protocol error about the record", got)
			}
			testkit.WaitUntil(t, "the connection's end", func() bool { return !p.rx.Live() && p.rx.Stats().ProtocolErrors == 1 })
			if s := p.rx.Stats(); s.FramesIn != 1 || s.ProtocolErrors != 1 {
				t.Errorf("stats: %+v; want the key frame in and one protocol error", s)
			}
			select {
			case pkt := <-sub.ch:
				t.Errorf("a subscriber got %s after the attack", kind(pkt))
			case <-time.After(100 * time.Millisecond):
			}
		})
	}
}

// TestGarbage sends a listening receiver what no source sends. Each
// connection must be closed, counted and logged, and the receiver must go
// on serving.
func TestGarbage(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	addr := p.rx.Addr().String()
	goodHello := hello{minVersion: Version, maxVersion: Version, role: roleSource, device: testDevice}.msg().bytes()
	cfg := config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()
	authed := func(then ...[]byte) func(*rawPeer) {
		return func(peer *rawPeer) {
			if err := peer.handshake(roleSource, testSecret); err != nil {
				peer.t.Fatalf("handshake: %v", err)
			}
			for _, b := range then {
				peer.write(b)
			}
			peer.nc.(*net.TCPConn).CloseWrite()
		}
	}
	raw := func(b ...[]byte) func(*rawPeer) {
		return func(peer *rawPeer) {
			for _, b := range b {
				peer.write(b)
			}
			peer.nc.(*net.TCPConn).CloseWrite()
		}
	}
	protocolErrors := func(s Stats) int64 { return s.ProtocolErrors }
	authFailures := func(s Stats) int64 { return s.AuthFailures }
	tests := []struct {
		name    string
		do      func(*rawPeer)
		want    string // in the ERROR the receiver sends
		counter func(Stats) int64
	}{
		{"http", raw([]byte("GET / HTTP/1.1\r\nHost: phone\r\n\r\n")), "PROTOCOL: video: protocol error: message length", protocolErrors},
		{"bad type", raw(unhex(t, "00000001 7f")), "unknown message type 0x7f", protocolErrors},
		{"zero length", raw(unhex(t, "00000000 01")), "message length 0", protocolErrors},
		{"huge length", raw(unhex(t, "7fffffff 01")), "limit 8388608", protocolErrors},
		{"bad magic", raw(append(goodHello[:5:5], append([]byte("XXXX"), goodHello[9:]...)...)), "magic", protocolErrors},
		{"frame first", raw(frame{pts: 1, key: true, data: testFrame(1, true, 20)}.msg().bytes()), "unexpected FRAME during the handshake", protocolErrors},
		{"truncated hello", raw(goodHello[:20]), "inside HELLO", protocolErrors},
		{"a sink", func(peer *rawPeer) { peer.handshake(roleSink, testSecret) }, "ROLE:", protocolErrors},
		{"another device", func(peer *rawPeer) {
			peer.handshakeWith(handshakeConfig{role: roleSource, device: "other", secret: testSecret, timeout: waitFor})
		}, "DEVICE:", authFailures},
		{"bad noise message", raw(goodHello, append(unhex(t, "00000031 0c"), bytes.Repeat([]byte{7}, 48)...)), "AUTH:", authFailures},
		{"version 1", raw(v1Hello(roleSource, 1).bytes()), "VERSION:", protocolErrors},
		{"version 1's AUTH", raw(goodHello, append(unhex(t, "00000021 02"), bytes.Repeat([]byte{7}, 32)...)), "unexpected AUTH", protocolErrors},
		{"clear config after the handshake", func(peer *rawPeer) {
			if err := peer.handshake(roleSource, testSecret); err != nil {
				peer.t.Fatalf("handshake: %v", err)
			}
			peer.writeClear(cfg)
		}, "record of 0 bytes", protocolErrors},
		{"truncated record", func(peer *rawPeer) {
			if err := peer.handshake(roleSource, testSecret); err != nil {
				peer.t.Fatalf("handshake: %v", err)
			}
			peer.writeClear(peer.sealed(cfg)[:20])
			peer.nc.(*net.TCPConn).CloseWrite()
		}, "inside a record", protocolErrors},
		{"frame before config", authed(frame{pts: 1, key: true, data: testFrame(1, true, 20)}.msg().bytes()),
			"unexpected FRAME from the source before its first CONFIG", protocolErrors},
		{"keyframe from a source", authed(cfg, newMsg(msgKeyFrame, 0, nil).bytes()), "unexpected KEYFRAME from a source", protocolErrors},
		{"config of another codec", authed(config{codec: 2, width: 720, height: 1560, params: testParams}.msg().bytes()), "codec 2", protocolErrors},
		{"AVCC frame", authed(cfg, frame{pts: 1, key: true, data: []byte{0, 0, 0, 2, 0x65, 0x88}}.msg().bytes()), "start code", protocolErrors},
		{"truncated frame", authed(cfg, frame{pts: 1, key: true, data: testFrame(1, true, 1000)}.msg().bytes()[:100]), "inside FRAME", protocolErrors},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.counter(p.rx.Stats())
			peer := dialRaw(t, addr)
			tt.do(peer)
			if got := peer.closed(); !strings.Contains(got, tt.want) {
				t.Errorf("the receiver's ERROR: got %q; want one saying %q", got, tt.want)
			}
			testkit.WaitUntil(t, "the counter", func() bool { return tt.counter(p.rx.Stats()) == before+1 })
		})
	}
	if logs := p.logs.String(); !strings.Contains(logs, "unexpected FRAME from the source before its first CONFIG") {
		t.Errorf("the logs do not give the reason:\n%s", logs)
	}

	// The receiver still serves a real source.
	sub := subscribe(t, p.rx)
	p.runSource(t)
	p.waitLive(t, true)
	if diff := cmp.Diff([]string{"config 720x1560", "key"}, sub.kinds(t, 2)); diff != "" {
		t.Errorf("after the garbage (-want +got):\n%s", diff)
	}
}

func TestReconnect(t *testing.T) {
	for _, tt := range arrangements {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			p, px := newPair(t, pairOptions{sourceListens: tt.sourceListens, viaProxy: true})
			sub := subscribe(t, p.rx)
			p.runSource(t)
			p.enc.sendFrames(2, false)
			if diff := cmp.Diff([]string{"config 720x1560", "key", "frame", "frame"}, sub.kinds(t, 4)); diff != "" {
				t.Errorf("first connection (-want +got):\n%s", diff)
			}

			px.cut()
			testkit.WaitUntil(t, "a second session", func() bool { return p.rx.Stats().Sessions == 2 && p.rx.Live() })
			p.enc.sendFrames(2, false)
			if diff := cmp.Diff([]string{"config 720x1560", "key", "frame", "frame"}, sub.kinds(t, 4)); diff != "" {
				t.Errorf("after the reconnect (-want +got):\n%s", diff)
			}
			if n := p.enc.streams.Load(); n != 2 {
				t.Errorf("Stream calls: got %d; want 2", n)
			}
		})
	}
}

func TestKeepalive(t *testing.T) {
	const ping, dead = 20 * time.Millisecond, 300 * time.Millisecond
	t.Run("receiver drops a silent source", func(t *testing.T) {
		checkLeaks(t)
		p, _ := newPair(t, pairOptions{ping: ping, dead: dead})
		peer := dialRaw(t, p.rx.Addr().String())
		if err := peer.handshake(roleSource, testSecret); err != nil {
			t.Fatal(err)
		}
		peer.write(config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes())
		p.waitLive(t, true)
		peer.closed() // reading, but never answering
		p.waitLive(t, false)
		testkit.WaitUntil(t, "the timeout", func() bool { return p.rx.Stats().Timeouts == 1 })
		if p.rx.Live() {
			t.Error("Live: got true; want false")
		}
	})
	t.Run("source drops a silent sink and reconnects", func(t *testing.T) {
		checkLeaks(t)
		addr, accept := acceptRaw(t)
		enc := newEncoder()
		src, err := NewSource(SourceConfig{DeviceID: testDevice, Secret: testSecret, Dial: addr, Stream: enc.Stream, Ping: ping, Dead: dead})
		if err != nil {
			t.Fatal(err)
		}
		runInBackground(t, "Source", src.Run)
		peer := accept()
		if err := peer.handshake(roleSink, testSecret); err != nil {
			t.Fatal(err)
		}
		peer.closed()
		testkit.WaitUntil(t, "the timeout", func() bool { return src.Stats().Timeouts == 1 })
		if err := accept().handshake(roleSink, testSecret); err != nil {
			t.Fatalf("second connection: %v", err)
		}
	})
}

// TestPingPong checks that a source pings, answers pings, and measures the
// round trip.
func TestPingPong(t *testing.T) {
	checkLeaks(t)
	addr, accept := acceptRaw(t)
	enc := newEncoder()
	src, err := NewSource(SourceConfig{DeviceID: testDevice, Secret: testSecret, Dial: addr, Stream: enc.Stream, Ping: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runInBackground(t, "Source", src.Run)
	peer := accept()
	if err := peer.handshake(roleSink, testSecret); err != nil {
		t.Fatal(err)
	}
	peer.write(pingMsg(msgPing, [8]byte{1, 2, 3, 4, 5, 6, 7, 8}).bytes())
	var sawPing, sawPong bool
	for !sawPing || !sawPong {
		typ, p := peer.read()
		switch typ {
		case msgPing:
			if !sawPing {
				peer.write(pingMsg(msgPong, [8]byte(p)).bytes())
			}
			sawPing = true
		case msgPong:
			if !bytes.Equal(p, []byte{1, 2, 3, 4, 5, 6, 7, 8}) {
				t.Errorf("PONG: got %x; want the PING's bytes", p)
			}
			sawPong = true
		}
	}
	testkit.WaitUntil(t, "a round-trip time", func() bool { return src.Stats().RTT > 0 })
}

func TestStop(t *testing.T) {
	streamErr := errors.New("encoder failed")
	tests := []struct {
		name    string
		stop    func(p *pair)
		wantRun error
		wantLog string
	}{
		{"person stops", func(p *pair) { p.src.Stop("stopped from Control Center") }, nil, "stop_reason=USER text=\"stopped from Control Center\""},
		{"stream ends", func(p *pair) { p.enc.cmds <- func(func(sdk.VideoPacket) error) error { return errEndStream } }, nil, "stop_reason=ENDED"},
		{"stream fails", func(p *pair) { p.enc.cmds <- func(func(sdk.VideoPacket) error) error { return streamErr } }, streamErr, "stop_reason=ERROR text=\"encoder failed\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			var p *pair
			p, _ = newPair(t, pairOptions{stream: func(ctx context.Context, send func(sdk.VideoPacket) error) error {
				err := p.enc.Stream(ctx, send)
				if errors.Is(err, errEndStream) {
					return nil
				}
				return err
			}})
			done := make(chan error, 1)
			go func() { done <- p.src.Run(context.Background()) }()
			p.waitLive(t, true)

			tt.stop(p)
			select {
			case err := <-done:
				if !errors.Is(err, tt.wantRun) || (tt.wantRun == nil) != (err == nil) {
					t.Errorf("Source.Run: got %v; want %v", err, tt.wantRun)
				}
			case <-time.After(waitFor):
				t.Fatal("Source.Run did not return")
			}
			p.waitLive(t, false)
			if p.rx.Live() {
				t.Error("Live: got true; want false")
			}
			testkit.WaitUntil(t, "the log line", func() bool { return strings.Contains(p.logs.String(), tt.wantLog) })
			if _, err := p.rx.Still(context.Background(), 0, 0); !errors.Is(err, ErrNoBroadcast) {
				t.Errorf("Still: got %v; want ErrNoBroadcast", err)
			}
			if err := p.rx.RequestKeyFrame(); !errors.Is(err, ErrNoBroadcast) {
				t.Errorf("RequestKeyFrame: got %v; want ErrNoBroadcast", err)
			}
		})
	}
}

var errEndStream = errors.New("end the stream")

// TestSlowSubscriber checks a subscriber that falls behind: it misses
// frames up to a key frame that is requested for it, its queue stays
// bounded, and another subscriber misses nothing.
func TestSlowSubscriber(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	fast := subscribe(t, p.rx)

	gate := make(chan struct{})
	var openGate sync.Once
	var mu sync.Mutex
	var slow []sdk.VideoPacket
	ctx, cancel := context.WithCancel(context.Background())
	slowDone := make(chan error, 1)
	go func() {
		slowDone <- p.rx.Subscribe(ctx, func(pkt sdk.VideoPacket) error {
			if !pkt.Config && !pkt.KeyFrame {
				<-gate // stuck on its first frame until released
			}
			mu.Lock()
			slow = append(slow, pkt)
			mu.Unlock()
			return nil
		})
	}()
	defer func() {
		openGate.Do(func() { close(gate) })
		cancel()
		if err := <-slowDone; err != nil {
			t.Errorf("slow Subscribe: %v", err)
		}
	}()
	waitSubscribers(t, p.rx, 2)
	p.runSource(t)
	p.waitLive(t, true)

	// In batches, so that the source's own queue never overflows.
	const batch, burst = 10, 300
	for i := batch; i <= burst; i += batch {
		p.enc.sendFrames(batch, false)
		testkit.WaitUntil(t, "the batch", func() bool { return p.rx.Stats().FramesIn == int64(1+i) })
	}
	p.rx.mu.Lock()
	for sub := range p.rx.subs {
		sub.mu.Lock()
		if n := sub.q.len(); n > subscriberPackets {
			t.Errorf("a subscriber queues %d packets; limit %d", n, subscriberPackets)
		}
		sub.mu.Unlock()
	}
	p.rx.mu.Unlock()
	if s := p.rx.Stats(); s.FramesDropped == 0 || s.KeyFrameRequests == 0 {
		t.Errorf("stats: %d frames dropped, %d key frame requests; want some of each", s.FramesDropped, s.KeyFrameRequests)
	}
	testkit.WaitUntil(t, "the encoder asked for a key frame", func() bool { return p.enc.keyCalls.Load() >= 1 })
	openGate.Do(func() { close(gate) })
	p.enc.KeyFrame()
	p.enc.sendFrames(5, false) // a key frame, then 4

	last := 1 + burst + 5
	for pkt := fast.next(t); ; pkt = fast.next(t) {
		if !pkt.Config && frameSeq(pkt.Data) == last {
			break
		}
	}
	testkit.WaitUntil(t, "the slow subscriber's last frame", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := len(slow)
		return n > 0 && !slow[n-1].Config && frameSeq(slow[n-1].Data) == last
	})
	mu.Lock()
	defer mu.Unlock()
	prev, gaps := 0, 0
	for _, pkt := range slow[1:] { // after the config
		seq := frameSeq(pkt.Data)
		if seq != prev+1 {
			gaps++
			if !pkt.KeyFrame {
				t.Errorf("frame %d follows frame %d: want a key frame after a gap", seq, prev)
			}
		}
		prev = seq
	}
	if gaps == 0 || len(slow) >= 1+1+burst+5 {
		t.Errorf("the slow subscriber got %d packets with %d gaps; want fewer than were sent", len(slow), gaps)
	}
}

// TestSourceBackPressure checks a source whose sink stops reading: it drops
// frames up to a key frame and asks its encoder for one.
func TestSourceBackPressure(t *testing.T) {
	checkLeaks(t)
	addr, accept := acceptRaw(t)
	enc := newEncoder()
	enc.size = 64 << 10
	src, err := NewSource(SourceConfig{
		DeviceID: testDevice, Secret: testSecret, Dial: addr, Stream: enc.Stream, KeyFrame: enc.KeyFrame,
		Ping: time.Second, Dead: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	runInBackground(t, "Source", src.Run)
	peer := accept()
	if err := peer.handshake(roleSink, testSecret); err != nil {
		t.Fatal(err)
	}
	peer.nc.SetDeadline(time.Now().Add(time.Minute))

	const burst = 500 // 32 MiB: more than the socket buffers hold
	enc.sendFrames(burst, false)
	testkit.WaitUntil(t, "frames dropped", func() bool { return src.Stats().FramesDropped > 0 && enc.keyCalls.Load() > 0 })
	enc.sendFrames(1, true) // a key frame is never dropped
	last := 1 + burst + 1

	var kinds []sdk.VideoPacket
	for done := false; !done; {
		typ, p := peer.readUntil()
		switch typ {
		case msgConfig:
		case msgFrame:
			f, err := parseFrame(p)
			if err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, sdk.VideoPacket{KeyFrame: f.key, Data: f.data[:13]})
			done = frameSeq(f.data) == last
		default:
			t.Fatalf("unexpected %s", typ)
		}
	}
	prev, gaps := 0, 0
	for _, pkt := range kinds {
		seq := frameSeq(pkt.Data)
		if seq != prev+1 {
			gaps++
			if !pkt.KeyFrame {
				t.Errorf("frame %d follows frame %d: want a key frame after a gap", seq, prev)
			}
		}
		prev = seq
	}
	s := src.Stats()
	if gaps == 0 || s.FramesDropped == 0 || int(s.FramesOut)+int(s.FramesDropped) > last {
		t.Errorf("%d gaps, stats %+v; want gaps, and frames out plus dropped at most %d", gaps, s, last)
	}
}

func TestRotation(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	sub := subscribe(t, p.rx)
	p.runSource(t)
	p.enc.rotate()
	p.enc.sendFrames(1, false)
	want := []string{"config 720x1560", "key", "config 1560x720", "key", "frame"}
	if diff := cmp.Diff(want, sub.kinds(t, 5)); diff != "" {
		t.Errorf("packets (-want +got):\n%s", diff)
	}
	f, _ := p.rx.Format()
	if f.Width != 1560 || f.Height != 720 {
		t.Errorf("Format: got %dx%d; want 1560x720", f.Width, f.Height)
	}
}

func TestStill(t *testing.T) {
	tests := []struct {
		name    string
		o       pairOptions
		noSrc   bool
		maxSide int
		quality int
		want    string // the JPEG's text
		wantErr []error
	}{
		{"ok", pairOptions{}, false, 1280, 75, "still 1280 75", nil},
		{"defaults", pairOptions{}, false, 0, 0, "still 0 0", nil},
		{"larger than any picture", pairOptions{}, false, 100000, 50, "still 0 50", nil},
		{"no broadcast", pairOptions{}, true, 0, 0, "", []error{ErrNoBroadcast}},
		{"no frame yet", pairOptions{still: func(context.Context, int, int) ([]byte, error) {
			return nil, fmt.Errorf("nothing captured: %w", ErrNoFrame)
		}}, false, 0, 0, "", []error{ErrStill, ErrNoFrame}},
		{"failed", pairOptions{still: func(context.Context, int, int) ([]byte, error) {
			return nil, errors.New("out of memory")
		}}, false, 0, 0, "", []error{ErrStill}},
		{"not a JPEG", pairOptions{still: func(context.Context, int, int) ([]byte, error) {
			return []byte("PNG"), nil
		}}, false, 0, 0, "", []error{ErrStill}},
		{"unsupported", pairOptions{noStill: true}, false, 0, 0, "", []error{ErrStill}},
		{"bad quality", pairOptions{}, false, 0, 101, "", []error{sdk.ErrInvalidArgument}},
		{"bad max side", pairOptions{}, false, -1, 0, "", []error{sdk.ErrInvalidArgument}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			p, _ := newPair(t, tt.o)
			if !tt.noSrc {
				p.runSource(t)
				p.waitLive(t, true)
			}
			got, err := p.rx.Still(context.Background(), tt.maxSide, tt.quality)
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("Still: got %v; want %v", err, want)
				}
			}
			if tt.wantErr == nil && (err != nil || !bytes.HasSuffix(got, []byte(tt.want))) {
				t.Errorf("Still: got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestReplace connects a second source while one streams: the newer one
// wins, since the older may be a leftover of a network change.
func TestReplace(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	cfg := config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()
	old := dialRaw(t, p.rx.Addr().String())
	if err := old.handshake(roleSource, testSecret); err != nil {
		t.Fatal(err)
	}
	old.write(cfg)
	testkit.WaitUntil(t, "the first broadcast", p.rx.Live)

	newer := dialRaw(t, p.rx.Addr().String())
	if err := newer.handshake(roleSource, testSecret); err != nil {
		t.Fatal(err)
	}
	if got := old.closed(); !strings.HasPrefix(got, "REPLACED:") {
		t.Errorf("the old connection's ERROR: got %q; want REPLACED", got)
	}
	newer.write(config{codec: codecH264, width: 1560, height: 720, params: testParams}.msg().bytes())
	testkit.WaitUntil(t, "the newer broadcast", func() bool { f, _ := p.rx.Format(); return f.Width == 1560 })
}

// TestClosed checks what a stopped receiver does.
func TestClosed(t *testing.T) {
	checkLeaks(t)
	rx, err := NewReceiver(ReceiverConfig{DeviceID: testDevice, Secret: testSecret, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- rx.Run(ctx) }()
	subscribed := make(chan error, 1)
	go func() {
		subscribed <- rx.Subscribe(context.Background(), func(sdk.VideoPacket) error { return nil })
	}()
	waitSubscribers(t, rx, 1)
	cancel()
	if err := <-ran; err != nil {
		t.Errorf("Run: got %v; want nil", err)
	}
	if err := <-subscribed; !errors.Is(err, ErrClosed) {
		t.Errorf("waiting Subscribe: got %v; want ErrClosed", err)
	}
	if err := rx.Subscribe(context.Background(), nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Subscribe after Run: got %v; want ErrClosed", err)
	}
	if err := rx.Run(context.Background()); err == nil {
		t.Error("a second Run: got nil; want an error")
	}
	if _, err := net.Dial("tcp", rx.Addr().String()); err == nil {
		t.Error("the listener still accepts after Run returned")
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  ReceiverConfig
		want string
	}{
		{"no device", ReceiverConfig{Secret: testSecret, Listen: ":0"}, "device id of 0 bytes"},
		{"short secret", ReceiverConfig{DeviceID: "a", Secret: testSecret[:16], Listen: ":0"}, "secret of 16 bytes"},
		{"neither", ReceiverConfig{DeviceID: "a", Secret: testSecret}, "exactly one"},
		{"both", ReceiverConfig{DeviceID: "a", Secret: testSecret, Listen: ":0", Dial: "h:1"}, "exactly one"},
		{"dial without port", ReceiverConfig{DeviceID: "a", Secret: testSecret, Dial: "phone"}, "missing port"},
		{"ping not below dead", ReceiverConfig{DeviceID: "a", Secret: testSecret, Dial: "h:1", Ping: time.Second, Dead: time.Second}, "0 < ping < dead"},
		{"bad listen", ReceiverConfig{DeviceID: "a", Secret: testSecret, Listen: "no such host:x"}, "device \"a\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReceiver(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewReceiver: got %v; want an error saying %q", err, tt.want)
			}
		})
	}
	if _, err := NewSource(SourceConfig{DeviceID: "a", Secret: testSecret, Dial: "h:1"}); err == nil || !strings.Contains(err.Error(), "no Stream") {
		t.Errorf("NewSource without Stream: got %v; want an error", err)
	}
}

// TestNoKeyAfterConfig checks the sink's leniency towards a source that
// follows its CONFIG with a non-key frame: subscribers skip it, the sink
// asks for a key frame, and the connection stays.
func TestNoKeyAfterConfig(t *testing.T) {
	checkLeaks(t)
	p, _ := newPair(t, pairOptions{})
	sub := subscribe(t, p.rx)
	peer := dialRaw(t, p.rx.Addr().String())
	if err := peer.handshake(roleSource, testSecret); err != nil {
		t.Fatal(err)
	}
	peer.write(config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes())
	peer.write(frame{pts: 1, data: testFrame(1, false, 20)}.msg().bytes())
	if typ, _ := peer.readUntil(); typ != msgKeyFrame {
		t.Fatalf("the sink sent %s; want KEYFRAME", typ)
	}
	peer.write(frame{pts: 2, key: true, data: testFrame(2, true, 20)}.msg().bytes())
	peer.write(frame{pts: 3, data: testFrame(3, false, 20)}.msg().bytes())
	if diff := cmp.Diff([]string{"config 720x1560", "key", "frame"}, sub.kinds(t, 3)); diff != "" {
		t.Errorf("packets (-want +got):\n%s", diff)
	}
	if s := p.rx.Stats(); s.ProtocolErrors != 0 || s.FramesIn != 3 {
		t.Errorf("stats: %+v; want 3 frames in and no protocol error", s)
	}
}
