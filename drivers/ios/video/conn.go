package video

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Timing and sizes of a connection.
const (
	// DefaultPing is how often each side sends a PING.
	DefaultPing = 2 * time.Second
	// DefaultDead is how long a side waits for any byte from its peer
	// before it closes the connection. It also bounds the handshake and
	// each write.
	DefaultDead = 6 * time.Second

	closeGrace = 500 * time.Millisecond // to write a last STOP or ERROR
	readBuffer = 64 << 10
	maxCtrl    = 64 // queued small messages; more means the peer is not reading
)

// idleReader sets the connection's read deadline before each read, so a
// peer that sends nothing for idle fails the read, however long a message
// takes to arrive. With idle 0 it leaves the deadline alone (the handshake
// sets one for itself).
type idleReader struct {
	nc   net.Conn
	idle time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	if r.idle > 0 {
		if err := r.nc.SetReadDeadline(time.Now().Add(r.idle)); err != nil {
			return 0, err
		}
	}
	return r.nc.Read(p)
}

// conn is an authenticated, encrypted connection. Its writer goroutine
// owns the socket's writes, sending queued small messages before video, each
// sealed into records; its reader runs in the goroutine that calls run and
// reads the messages out of the peer's records.
type conn struct {
	nc      net.Conn
	rd      io.Reader     // the peer's records, decrypted
	rw      *recordWriter // this side's records; only the writer uses it
	version uint16
	ping    time.Duration
	dead    time.Duration
	stats   *counters
	born    time.Time

	wake chan struct{} // cap 1: something was queued
	done chan struct{} // closed when the writer has stopped and the socket is closed

	mu        sync.Mutex
	ctrl      []outMsg     // in order, before any video
	media     *packetQueue // the source's video; nil on a sink
	sawConfig bool         // the source queued a config on this connection
	closing   bool
	final     *outMsg     // written after the current message, then the socket closes
	cutoff    *time.Timer // closes the socket closeGrace after closing began
	writeErr  error       // why the writer stopped early
}

// errConnClosed is what sending on a closed connection returns.
var errConnClosed = errors.New("video: connection closed")

// newConn starts serving a connection whose handshake gave s; r reads the
// bytes that follow the handshake (a buffer of the socket).
func newConn(nc net.Conn, r io.Reader, s secured, ping, dead time.Duration, media *packetQueue, stats *counters) *conn {
	c := &conn{
		nc: nc, rd: newRecordReader(r, s.recv), rw: newRecordWriter(nc, s.send, dead),
		version: s.version, ping: ping, dead: dead, stats: stats, born: time.Now(),
		wake: make(chan struct{}, 1), done: make(chan struct{}), media: media,
	}
	go c.writeLoop()
	return c
}

func (c *conn) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// send queues a small message.
func (c *conn) send(m outMsg) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return errConnClosed
	}
	if len(c.ctrl) >= maxCtrl {
		c.writeErr = fmt.Errorf("%w: %d messages wait for a peer that does not read", errConnClosed, len(c.ctrl))
		c.closeLocked(nil)
		return c.writeErr
	}
	c.ctrl = append(c.ctrl, m)
	c.signal()
	return nil
}

// offer queues a video packet on a source's connection, dropping frames
// when the socket cannot keep up (see packetQueue).
func (c *conn) offer(p sdk.VideoPacket) (dropped int, begun bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return 0, false, errConnClosed
	}
	if p.Config {
		c.sawConfig = true
	} else if !c.sawConfig {
		return 0, false, errors.New("video: a frame before the stream's first config")
	}
	dropped, begun = c.media.offer(p)
	c.signal()
	return dropped, begun, nil
}

// close makes the writer write final (when not nil) after the message it is
// writing, and close the socket. A writer stuck on a peer that does not read
// is cut off after closeGrace.
func (c *conn) close(final *outMsg) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeLocked(final)
}

func (c *conn) closeLocked(final *outMsg) {
	if c.closing {
		return
	}
	c.closing, c.final = true, final
	c.signal()
	c.cutoff = time.AfterFunc(closeGrace, func() { c.nc.Close() })
}

// next returns what to write: small messages first, then video; last
// means the connection is closing and m (if ok) is its final message.
func (c *conn) next() (m outMsg, ok, last bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		if c.final != nil {
			m, c.final = *c.final, nil
			return m, true, true
		}
		return outMsg{}, false, true
	case len(c.ctrl) > 0:
		m = c.ctrl[0]
		c.ctrl[0] = outMsg{}
		c.ctrl = c.ctrl[1:]
		return m, true, false
	case c.media != nil:
		if p, ok := c.media.pop(); ok {
			return packetMsg(p), true, false
		}
	}
	return outMsg{}, false, false
}

// packetMsg is the CONFIG or FRAME of a packet a source's stream sent.
func packetMsg(p sdk.VideoPacket) outMsg {
	if p.Config {
		return config{codec: codecH264, width: p.Width, height: p.Height, params: p.Data}.msg()
	}
	return frame{pts: p.PTS.Microseconds(), key: p.KeyFrame, data: p.Data}.msg()
}

func (c *conn) writeLoop() {
	defer close(c.done)
	defer func() {
		c.nc.Close()
		c.mu.Lock()
		defer c.mu.Unlock()
		c.closing = true
		if c.cutoff != nil {
			c.cutoff.Stop()
		}
	}()
	tick := time.NewTicker(c.ping)
	defer tick.Stop()
	for {
		m, ok, last := c.next()
		if ok {
			if err := c.write(m); err != nil {
				c.mu.Lock()
				c.writeErr = fmt.Errorf("write %s: %w", m.t, err)
				c.mu.Unlock()
				return
			}
		}
		if last {
			return
		}
		if ok {
			continue
		}
		select {
		case <-c.wake:
		case <-tick.C:
			var stamp [pingSize]byte
			binary.BigEndian.PutUint64(stamp[:], uint64(time.Since(c.born)))
			c.send(pingMsg(msgPing, stamp))
		}
	}
}

// write sends one message, sealed into records; each record's write has
// its own deadline, so the deadline measures a peer that stops reading, not
// a slow link.
func (c *conn) write(m outMsg) error {
	if err := c.rw.write(m.head, m.body); err != nil {
		return err
	}
	if m.t == msgFrame {
		c.stats.framesOut.Add(1)
	}
	return nil
}

// run reads messages until the connection ends, answering PINGs itself and
// giving the rest to handle, and returns why it ended: ctx's cause when ctx
// ended it, else the first error of reading, writing or handle. It closes
// the connection, telling the peer why when that is this side's decision,
// and returns once the writer has stopped.
func (c *conn) run(ctx context.Context, accept func() msgSet, handle func(msgType, []byte) error) error {
	stop := context.AfterFunc(ctx, func() { c.close(finalMsg(context.Cause(ctx))) })
	defer stop()
	var reason error
	for reason == nil {
		t, p, err := readMessage(c.rd, accept())
		switch {
		case err != nil:
			reason = err
		case t == msgPing:
			if err := c.send(pingMsg(msgPong, [pingSize]byte(p))); err != nil {
				reason = err
			}
		case t == msgPong:
			if sent := time.Duration(binary.BigEndian.Uint64(p)); sent > 0 && sent <= time.Since(c.born) {
				c.stats.rtt.Store(int64(time.Since(c.born) - sent))
			}
		case t == msgError:
			code, text := parseText(p)
			reason = &peerError{errCode(code), text}
		default:
			reason = handle(t, p)
		}
	}
	if ctx.Err() != nil {
		reason = context.Cause(ctx) // our reading failed because we closed
	} else {
		c.mu.Lock()
		if c.writeErr != nil {
			reason = c.writeErr // the reader saw only the closed socket
		}
		c.mu.Unlock()
		c.close(finalMsg(reason))
	}
	<-c.done
	return reason
}

// peerStop is a STOP received: the broadcast is over.
type peerStop struct {
	reason stopReason
	text   string
}

func (e *peerStop) Error() string { return fmt.Sprintf("source stopped (%s): %s", e.reason, e.text) }

func (e *peerStop) Unwrap() error { return errStopped }

// stopCause ends a source's connection with a STOP to the sink.
type stopCause struct {
	reason stopReason
	text   string
	err    error // the stream's failure, for stopError
}

func (e *stopCause) Error() string { return fmt.Sprintf("stopped (%s): %s", e.reason, e.text) }

func (e *stopCause) Unwrap() error { return errStopped }

// finalMsg is what this side tells the peer when it closes for reason: a
// STOP when the source ends the broadcast, an ERROR when this side decided
// to close, nothing when the peer did (it closed, fell silent or sent
// ERROR or STOP).
func finalMsg(reason error) *outMsg {
	var stop *stopCause
	var pe *peerError
	var ps *peerStop
	switch {
	case errors.As(reason, &stop):
		m := textMsg(msgStop, uint8(stop.reason), stop.text)
		return &m
	case errors.As(reason, &pe), errors.As(reason, &ps), isNetErr(reason):
		return nil
	case errors.Is(reason, context.Canceled), errors.Is(reason, context.DeadlineExceeded):
		reason = errShutdown
	}
	m := textMsg(msgError, uint8(codeOf(reason)), reason.Error())
	return &m
}

// isNetErr reports whether err is the connection failing rather than a
// decision of either side.
func isNetErr(err error) bool {
	var ne net.Error
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.As(err, &ne) ||
		errors.Is(err, errConnClosed) || errors.Is(err, os.ErrDeadlineExceeded)
}

func isTimeout(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
