package video

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// waitFor bounds every wait of the tests. It only guards against hangs: no
// test asserts how fast something happens.
const waitFor = testkit.Limit

const testDevice = "test-iphone"

var testSecret = bytes.Repeat([]byte{0x5a}, SecretSize)

// testParams are an SPS and a PPS in Annex B (not a real stream: the
// protocol checks only their NAL types).
var testParams = []byte{0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1f, 0, 0, 0, 1, 0x68, 0xce, 0x3c, 0x80}

// testFrame is an access unit whose payload says seq: an IDR slice for a
// key frame, else a non-IDR slice, padded to size bytes.
func testFrame(seq int, key bool, size int) []byte {
	nal := byte(0x41)
	if key {
		nal = 0x65
	}
	b := make([]byte, max(size, 13))
	copy(b, []byte{0, 0, 0, 1, nal})
	binary.BigEndian.PutUint64(b[5:], uint64(seq))
	for rest := b[13:]; len(rest) > 0; {
		rest = rest[copy(rest, padding):] // no zero bytes: no accidental start codes
	}
	return b
}

var padding = bytes.Repeat([]byte{0xaa}, 64<<10)

// frameSeq reads back testFrame's seq.
func frameSeq(data []byte) int { return int(binary.BigEndian.Uint64(data[5:])) }

// checkLeaks fails the test when goroutines started during it are still
// running at its end (after the test's other cleanups).
func checkLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(waitFor)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				t.Errorf("goroutines: got %d; want at most %d\n%s", runtime.NumGoroutine(), before, buf)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// runInBackground runs run until the test ends, and checks that it returns
// nil once its context is cancelled.
func runInBackground(t *testing.T, name string, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s.Run: got %v; want nil", name, err)
			}
		case <-time.After(waitFor):
			t.Errorf("%s.Run did not return after its context ended", name)
		}
	})
}

// encoder is a fake encoder for Source.Stream: each stream starts with the
// current config and a key frame, then sends what the test commands.
type encoder struct {
	mu   sync.Mutex
	w, h int
	seq  int
	size int // frame size

	cmds      chan func(send func(sdk.VideoPacket) error) error
	keyWanted atomic.Bool
	keyCalls  atomic.Int64
	streams   atomic.Int64
}

func newEncoder() *encoder {
	return &encoder{w: 720, h: 1560, size: 100, cmds: make(chan func(func(sdk.VideoPacket) error) error, 1024)}
}

func (e *encoder) config() sdk.VideoPacket {
	e.mu.Lock()
	defer e.mu.Unlock()
	return sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: e.w, Height: e.h, Data: testParams}
}

// frame makes the next frame; a pending KeyFrame request makes it a key
// frame.
func (e *encoder) frame(key bool) sdk.VideoPacket {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.keyWanted.Swap(false) {
		key = true
	}
	e.seq++
	return sdk.VideoPacket{
		Codec: sdk.CodecH264, KeyFrame: key, PTS: time.Duration(e.seq) * 33 * time.Millisecond,
		Width: e.w, Height: e.h, Data: testFrame(e.seq, key, e.size),
	}
}

func (e *encoder) KeyFrame() {
	e.keyCalls.Add(1)
	e.keyWanted.Store(true)
}

func (e *encoder) Stream(ctx context.Context, send func(sdk.VideoPacket) error) error {
	e.streams.Add(1)
	e.keyWanted.Store(false)
	if err := send(e.config()); err != nil {
		return err
	}
	if err := send(e.frame(true)); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case cmd := <-e.cmds:
			if err := cmd(send); err != nil {
				return err
			}
		}
	}
}

// sendFrames commands n frames.
func (e *encoder) sendFrames(n int, key bool) {
	e.cmds <- func(send func(sdk.VideoPacket) error) error {
		for range n {
			if err := send(e.frame(key)); err != nil {
				return err
			}
		}
		return nil
	}
}

// rotate commands a new size: a config, then a key frame.
func (e *encoder) rotate() {
	e.cmds <- func(send func(sdk.VideoPacket) error) error {
		e.mu.Lock()
		e.w, e.h = e.h, e.w
		e.mu.Unlock()
		if err := send(e.config()); err != nil {
			return err
		}
		return send(e.frame(true))
	}
}

func (e *encoder) Still(ctx context.Context, maxSide, quality int) ([]byte, error) {
	return fmt.Appendf([]byte{0xff, 0xd8, 0xff, 0xe0}, "still %d %d", maxSide, quality), nil
}

// packets is a subscriber that collects what it is sent.
type packets struct {
	ch chan sdk.VideoPacket
}

func subscribe(t *testing.T, r *Receiver) *packets {
	t.Helper()
	p := &packets{ch: make(chan sdk.VideoPacket, 4096)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.Subscribe(ctx, func(pkt sdk.VideoPacket) error {
			p.ch <- pkt
			return nil
		})
	}()
	waitSubscribers(t, r, 1)
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("Subscribe: got %v; want nil", err)
		}
	})
	return p
}

// waitSubscribers waits until r has at least n subscribers.
func waitSubscribers(t *testing.T, r *Receiver, n int) {
	t.Helper()
	testkit.WaitUntil(t, "subscribers", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.subs) >= n
	})
}

// next returns the next packet.
func (p *packets) next(t *testing.T) sdk.VideoPacket {
	t.Helper()
	select {
	case pkt := <-p.ch:
		return pkt
	case <-time.After(waitFor):
		t.Fatal("no packet")
		return sdk.VideoPacket{}
	}
}

// kind describes a packet for comparisons.
func kind(p sdk.VideoPacket) string {
	switch {
	case p.Config:
		return fmt.Sprintf("config %dx%d", p.Width, p.Height)
	case p.KeyFrame:
		return "key"
	}
	return "frame"
}

// pair is a receiver and a source of the same device, connected.
type pair struct {
	rx   *Receiver
	src  *Source
	enc  *encoder
	logs *testkit.Buffer
	live chan bool
}

type pairOptions struct {
	sourceListens bool
	sourceSecret  []byte
	ping, dead    time.Duration
	viaProxy      bool // connect through a proxy the test can cut
	noStill       bool
	still         func(ctx context.Context, maxSide, quality int) ([]byte, error)
	stream        func(ctx context.Context, send func(sdk.VideoPacket) error) error
}

// newPair starts a receiver and a source. With a proxy, the dialing side
// dials the proxy, which forwards to the listening side.
func newPair(t *testing.T, o pairOptions) (*pair, *proxy) {
	t.Helper()
	p := &pair{enc: newEncoder(), logs: &testkit.Buffer{}, live: make(chan bool, 64)}
	secret := o.sourceSecret
	if secret == nil {
		secret = testSecret
	}
	rcfg := ReceiverConfig{
		DeviceID: testDevice, Secret: testSecret, Logger: p.logs.Logger(), Ping: o.ping, Dead: o.dead,
		OnLive: func(live bool) { p.live <- live },
	}
	scfg := SourceConfig{
		DeviceID: testDevice, Secret: secret, Logger: p.logs.Logger().With("side", "source"), Ping: o.ping, Dead: o.dead,
		Stream: p.enc.Stream, KeyFrame: p.enc.KeyFrame, Still: p.enc.Still,
	}
	if o.noStill {
		scfg.Still = nil
	}
	if o.still != nil {
		scfg.Still = o.still
	}
	if o.stream != nil {
		scfg.Stream = o.stream
	}
	var err error
	var px *proxy
	if o.sourceListens {
		scfg.Listen = "127.0.0.1:0"
		if p.src, err = NewSource(scfg); err != nil {
			t.Fatal(err)
		}
		rcfg.Dial = p.src.Addr().String()
		if o.viaProxy {
			px = newProxy(t, rcfg.Dial)
			rcfg.Dial = px.addr()
		}
		if p.rx, err = NewReceiver(rcfg); err != nil {
			t.Fatal(err)
		}
	} else {
		rcfg.Listen = "127.0.0.1:0"
		if p.rx, err = NewReceiver(rcfg); err != nil {
			t.Fatal(err)
		}
		scfg.Dial = p.rx.Addr().String()
		if o.viaProxy {
			px = newProxy(t, scfg.Dial)
			scfg.Dial = px.addr()
		}
		if p.src, err = NewSource(scfg); err != nil {
			t.Fatal(err)
		}
	}
	runInBackground(t, "Receiver", p.rx.Run)
	return p, px
}

// runSource runs the pair's source until the test ends.
func (p *pair) runSource(t *testing.T) { runInBackground(t, "Source", p.src.Run) }

// waitLive waits for OnLive(want).
func (p *pair) waitLive(t *testing.T, want bool) {
	t.Helper()
	select {
	case got := <-p.live:
		if got != want {
			t.Fatalf("OnLive(%t); want OnLive(%t)", got, want)
		}
	case <-time.After(waitFor):
		t.Fatalf("no OnLive(%t)", want)
	}
}

// proxy forwards TCP connections to target until cut closes them.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	p.wg.Go(p.serve)
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		a, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.target)
		if err != nil {
			a.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, a, b)
		p.mu.Unlock()
		p.wg.Go(func() { io.Copy(a, b); a.Close(); b.Close() })
		p.wg.Go(func() { io.Copy(b, a); a.Close(); b.Close() })
	}
}

// cut closes every connection through the proxy.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// rawPeer is a hand-driven end of the protocol, for misbehaving peers.
// Before its handshake it reads and writes messages in clear; after, in
// records, as a real peer does.
type rawPeer struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
	rd io.Reader     // br, then the peer's records
	rw *recordWriter // nil before the handshake
	// lastRecord is the last record sealed.
	lastRecord []byte
}

func newRawPeer(t testing.TB, nc net.Conn) *rawPeer {
	br := bufio.NewReader(nc)
	return &rawPeer{t: t, nc: nc, br: br, rd: br}
}

func dialRaw(t testing.TB, addr string) *rawPeer {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(waitFor))
	return newRawPeer(t, nc)
}

// acceptRaw accepts one connection on a new listener; addr is for the
// other side to dial.
func acceptRaw(t *testing.T) (addr string, accept func() *rawPeer) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), func() *rawPeer {
		t.Helper()
		type result struct {
			nc  net.Conn
			err error
		}
		ch := make(chan result, 1)
		go func() {
			nc, err := ln.Accept()
			ch <- result{nc, err}
		}()
		select {
		case r := <-ch:
			if r.err != nil {
				t.Fatal(r.err)
			}
			t.Cleanup(func() { r.nc.Close() })
			r.nc.SetDeadline(time.Now().Add(waitFor))
			return newRawPeer(t, r.nc)
		case <-time.After(waitFor):
			t.Fatal("no connection to accept")
			return nil
		}
	}
}

// handshake authenticates as r with the test device and secret.
func (p *rawPeer) handshake(r role, secret []byte) error {
	return p.handshakeWith(handshakeConfig{role: r, device: testDevice, secret: secret, timeout: waitFor})
}

// handshakeWith runs the handshake of hc and, when it succeeds, switches
// to records.
func (p *rawPeer) handshakeWith(hc handshakeConfig) error {
	s, err := handshake(p.nc, p.br, hc)
	p.nc.SetDeadline(time.Now().Add(waitFor))
	if err == nil {
		p.rd = newRecordReader(p.br, s.recv)
		p.rw = newRecordWriter(p.nc, s.send, 0)
	}
	return err
}

// write sends b: in records after the handshake, as is before.
func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	var err error
	if p.rw != nil {
		err = p.rw.write(b)
	} else {
		_, err = p.nc.Write(b)
	}
	if err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// sealed returns b sealed as the next record, without sending it; the
// record is kept as lastRecord, for replays.
func (p *rawPeer) sealed(b []byte) []byte {
	p.t.Helper()
	ct, err := p.rw.cs.Encrypt(nil, nil, b)
	if err != nil {
		p.t.Fatal(err)
	}
	p.lastRecord = append(binary.BigEndian.AppendUint16(nil, uint16(len(ct))), ct...)
	return p.lastRecord
}

// writeClear sends b as is, whatever the state: what an attacker on the
// path, or a version-1 peer, sends.
func (p *rawPeer) writeClear(b []byte) {
	p.t.Helper()
	if _, err := p.nc.Write(b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

// read returns the next message, failing the test on an error.
func (p *rawPeer) read() (msgType, []byte) {
	p.t.Helper()
	t, b, err := readMessage(p.rd, anyMessage)
	if err != nil {
		p.t.Fatalf("read: %v", err)
	}
	return t, b
}

// readUntil skips PINGs and PONGs and returns the first other message.
func (p *rawPeer) readUntil() (msgType, []byte) {
	p.t.Helper()
	for {
		t, b := p.read()
		if t != msgPing && t != msgPong {
			return t, b
		}
	}
}

// closed reads until the peer closes, returning the ERROR it sent on the
// way ("" when none).
func (p *rawPeer) closed() string {
	p.t.Helper()
	var got string
	for {
		t, b, err := readMessage(p.rd, anyMessage)
		if err != nil {
			if isTimeout(err) {
				p.t.Fatalf("the peer did not close the connection")
			}
			return got
		}
		if t == msgError {
			code, text := parseText(b)
			got = errCode(code).String() + ": " + text
		}
	}
}
