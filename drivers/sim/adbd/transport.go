package adbd

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
)

// The transport's commands (protocols.md 6.1), as little-endian words.
const (
	cmdCNXN = 0x4e584e43
	cmdAUTH = 0x48545541
	cmdOPEN = 0x4e45504f
	cmdOKAY = 0x59414b4f
	cmdWRTE = 0x45545257
	cmdCLSE = 0x45534c43
)

const (
	versionMin     = 0x01000000
	versionNoCheck = 0x01000001 // senders write data_check 0 from this version on
	maxPayload     = 1 << 20
	headerSize     = 24

	authToken        = 1
	authSignature    = 2
	authRSAPublicKey = 3
)

// features is what the face advertises: only names adb 29 knows, and only
// those whose services are implemented here (protocols.md 6.4).
const features = "shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir"

// message is one transport message.
type message struct {
	cmd, arg0, arg1 uint32
	data            []byte
}

func readMessage(r io.Reader) (message, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return message{}, err
	}
	m := message{
		cmd:  binary.LittleEndian.Uint32(h[0:]),
		arg0: binary.LittleEndian.Uint32(h[4:]),
		arg1: binary.LittleEndian.Uint32(h[8:]),
	}
	n := binary.LittleEndian.Uint32(h[12:])
	if magic := binary.LittleEndian.Uint32(h[20:]); magic != m.cmd^0xffffffff {
		return message{}, fmt.Errorf("message %08x: bad magic %08x", m.cmd, magic)
	}
	if n > maxPayload {
		return message{}, fmt.Errorf("message %08x: payload of %d bytes is over 1 MiB", m.cmd, n)
	}
	m.data = make([]byte, n)
	if _, err := io.ReadFull(r, m.data); err != nil {
		return message{}, err
	}
	return m, nil
}

// conn is one TCP connection from an adb server: one transport.
type conn struct {
	dev *Device
	nc  net.Conn
	ctx context.Context
	end context.CancelFunc

	// name is the transport's name in reverse listings: real adbd names
	// a TCP transport "host-" and its socket's file descriptor.
	name string

	wmu      sync.Mutex // serializes writes to nc; guards version
	version  uint32
	maxData  int
	mu       sync.Mutex // guards streams, nextID, online
	streams  map[uint32]*stream
	nextID   uint32
	online   bool
	services sync.WaitGroup
}

// send writes one message. data_check is the byte sum until the peer has
// agreed on a version that skips it; no receiver checks it anyway.
func (c *conn) send(cmd, arg0, arg1 uint32, data []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	buf := make([]byte, headerSize+len(data))
	binary.LittleEndian.PutUint32(buf[0:], cmd)
	binary.LittleEndian.PutUint32(buf[4:], arg0)
	binary.LittleEndian.PutUint32(buf[8:], arg1)
	binary.LittleEndian.PutUint32(buf[12:], uint32(len(data)))
	if c.version < versionNoCheck {
		var sum uint32
		for _, b := range data {
			sum += uint32(b)
		}
		binary.LittleEndian.PutUint32(buf[16:], sum)
	}
	binary.LittleEndian.PutUint32(buf[20:], cmd^0xffffffff)
	copy(buf[headerSize:], data)
	_, err := c.nc.Write(buf)
	return err
}

// serve runs the transport until the connection fails or the server closes.
func (c *conn) serve() error {
	defer func() {
		c.end()
		c.nc.Close()
		c.mu.Lock()
		all := c.streams
		c.streams = map[uint32]*stream{}
		c.mu.Unlock()
		for _, s := range all {
			s.peerClosed()
		}
		// Reverse forwards end with their transport, as adbd's listeners
		// do when the transport disconnects.
		c.dev.dropReverse(c)
		// Services end once their streams are gone: wait, so that Close
		// returns with nothing left running.
		c.services.Wait()
	}()
	r := bufio.NewReaderSize(c.nc, 64<<10)
	for {
		m, err := readMessage(r)
		if err != nil {
			if errors.Is(err, io.EOF) || c.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := c.handle(m); err != nil {
			return err
		}
	}
}

func (c *conn) handle(m message) error {
	c.mu.Lock()
	online := c.online
	c.mu.Unlock()
	switch m.cmd {
	case cmdCNXN:
		c.wmu.Lock()
		c.version = min(m.arg0, versionNoCheck)
		c.maxData = int(min(m.arg1, maxPayload))
		if c.maxData < 4096 {
			c.maxData = 4096 // MAX_PAYLOAD_V1: every adb takes that much
		}
		c.wmu.Unlock()
		if c.dev.cfg.Unauthorized {
			return c.sendToken()
		}
		c.mu.Lock()
		c.online = true
		c.mu.Unlock()
		return c.send(cmdCNXN, versionNoCheck, uint32(c.maxData), []byte(c.dev.banner()))
	case cmdAUTH:
		// Only the unauthorized knob sends tokens. Each signature gets a new
		// token, so the server runs out of keys, offers its public key, and
		// shows the device as unauthorized; the public key is never accepted.
		if m.arg0 == authSignature {
			return c.sendToken()
		}
		return nil
	}
	if !online {
		return nil // like adbd before the handshake: ignore
	}
	switch m.cmd {
	case cmdOPEN:
		c.open(m.arg0, strings.TrimRight(string(m.data), "\x00"))
	case cmdOKAY:
		s := c.stream(m.arg1)
		switch {
		case s == nil || m.arg0 == 0:
		case s.remote == m.arg0:
			s.ready()
		case s.remote == 0:
			// The server took a stream this side opened: its OKAY names
			// the server's end and lets the first WRTE go.
			s.remote = m.arg0
			s.ready()
			close(s.opened)
		}
	case cmdWRTE:
		if s := c.stream(m.arg1); s != nil && s.remote == m.arg0 {
			s.deliver(m.data)
		}
	case cmdCLSE:
		// The server's echo of our own CLSE finds no stream: ignore it.
		if s := c.stream(m.arg1); s != nil {
			c.drop(s)
			s.peerClosed()
		}
	default:
		c.dev.log.Debug("adbd: unknown message", "cmd", fmt.Sprintf("%08x", m.cmd))
	}
	return nil
}

// sendToken sends a fresh AUTH TOKEN; adb 29 needs exactly 20 bytes.
func (c *conn) sendToken() error {
	token := make([]byte, 20)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	return c.send(cmdAUTH, authToken, 0, token)
}

func (c *conn) stream(local uint32) *stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.streams[local]
}

func (c *conn) drop(s *stream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.streams[s.local] == s {
		delete(c.streams, s.local)
	}
}

// open starts the service a server's OPEN names, or refuses it with CLSE.
func (c *conn) open(remote uint32, service string) {
	if remote == 0 {
		return
	}
	run, ok := c.dev.service(service)
	if !ok {
		c.dev.log.Debug("adbd: refused service", "service", service)
		c.send(cmdCLSE, 0, remote, nil)
		return
	}
	c.mu.Lock()
	s := c.newStreamLocked(remote)
	s.canWrite <- struct{}{} // the OKAY to the OPEN counts as the first ready
	c.services.Add(1)
	c.mu.Unlock()
	if err := c.send(cmdOKAY, s.local, remote, nil); err != nil {
		c.drop(s)
		s.cancel()
		c.services.Done()
		return
	}
	go func() {
		defer c.services.Done()
		defer s.Close()
		if err := run(s.ctx, s); err != nil && s.ctx.Err() == nil {
			c.dev.log.Debug("adbd: service ended", "service", service, "err", err)
		}
	}()
}

// newStreamLocked registers a stream with a new local id; c.mu is held.
// remote is 0 for a stream this side opens, until the server's OKAY.
func (c *conn) newStreamLocked(remote uint32) *stream {
	c.nextID++
	if c.nextID == 0 {
		c.nextID++
	}
	ctx, cancel := context.WithCancel(c.ctx)
	s := &stream{c: c, local: c.nextID, remote: remote, ctx: ctx, cancel: cancel, canWrite: make(chan struct{}, 1), opened: make(chan struct{})}
	s.cond = sync.NewCond(&s.mu)
	c.streams[s.local] = s
	return s
}

// errRefused is a stream this side opened that the server refused (its
// CLSE), or that the transport ended before the server answered.
var errRefused = errors.New("adb stream refused")

// openStream opens a stream from the device's side to the server's
// destination (a reverse forward's host spec), as adbd does for each
// connection to a reverse listener: it sends OPEN(local, 0, "DEST\0") at
// once, so that OPENs go out in the order of the connections, and wait
// then gives the server's answer: its OKAY(remote, local), or its CLSE when
// nothing listens there (errRefused). The stream counts among the
// transport's services until done is called, after wait whatever it says.
func (c *conn) openStream(dest string) (s *stream, wait func() error, done func(), err error) {
	c.mu.Lock()
	if !c.online || c.ctx.Err() != nil {
		c.mu.Unlock()
		return nil, nil, nil, errRefused
	}
	s = c.newStreamLocked(0)
	c.services.Add(1)
	c.mu.Unlock()
	fail := func() {
		// No CLSE: the server has no end of this stream to close.
		c.drop(s)
		s.peerClosed()
	}
	// The NUL matters: Debian's server reads the address as a C string.
	if err := c.send(cmdOPEN, s.local, 0, append([]byte(dest), 0)); err != nil {
		fail()
		c.services.Done()
		return nil, nil, nil, err
	}
	wait = func() error {
		select {
		case <-s.opened:
			return nil
		case <-s.ctx.Done():
			fail()
			return errRefused
		}
	}
	return s, wait, c.services.Done, nil
}

// stream is one adb stream as an io.ReadWriteCloser. Flow control: the
// server sends one WRTE and waits for our OKAY, which Read sends once the
// data is consumed; Write waits for the server's OKAY before each WRTE.
type stream struct {
	c             *conn
	local, remote uint32
	ctx           context.Context
	cancel        context.CancelFunc
	canWrite      chan struct{}
	opened        chan struct{} // closed by the server's OKAY to this side's OPEN

	mu      sync.Mutex // guards the fields below
	cond    *sync.Cond
	in      []byte
	needAck bool
	eof     bool // the peer closed, or we did
	closed  bool // our CLSE is sent or not needed
}

var errStreamClosed = errors.New("adb stream closed")

func (s *stream) deliver(data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.eof {
		return
	}
	s.in = append(s.in, data...)
	s.needAck = true
	s.cond.Broadcast()
}

func (s *stream) ready() {
	select {
	case s.canWrite <- struct{}{}:
	default:
	}
}

// peerClosed ends the stream from the server's side: no CLSE goes back.
func (s *stream) peerClosed() {
	s.mu.Lock()
	s.eof, s.closed = true, true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.cancel()
}

func (s *stream) Read(p []byte) (int, error) {
	s.mu.Lock()
	for len(s.in) == 0 && !s.eof {
		s.cond.Wait()
	}
	if len(s.in) == 0 {
		s.mu.Unlock()
		return 0, io.EOF
	}
	n := copy(p, s.in)
	s.in = s.in[n:]
	ack := len(s.in) == 0 && s.needAck && !s.closed
	if ack {
		s.needAck = false
		s.in = nil
	}
	s.mu.Unlock()
	if ack {
		if err := s.c.send(cmdOKAY, s.local, s.remote, nil); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (s *stream) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), s.c.maxData)]
		select {
		case <-s.canWrite:
		case <-s.ctx.Done():
			return n, errStreamClosed
		}
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return n, errStreamClosed
		}
		if err := s.c.send(cmdWRTE, s.local, s.remote, chunk); err != nil {
			return n, err
		}
		n += len(chunk)
		p = p[len(chunk):]
	}
	return n, nil
}

// Close sends CLSE unless the server closed first. Real adbd does not wait
// for the last OKAY, and neither does this.
func (s *stream) Close() error {
	s.mu.Lock()
	send := !s.closed
	s.eof, s.closed = true, true
	s.cond.Broadcast()
	s.mu.Unlock()
	s.c.drop(s)
	s.cancel()
	if send {
		return s.c.send(cmdCLSE, s.local, s.remote, nil)
	}
	return nil
}
