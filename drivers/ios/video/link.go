package video

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"time"
)

// Reconnection (VIDEO.md §6.4).
const (
	backoffMin   = 100 * time.Millisecond
	backoffMax   = 5 * time.Second
	backoffReset = 10 * time.Second // a connection this long resets the backoff
	// maxHandshakes bounds the connections a listener authenticates at once;
	// more are closed unread.
	maxHandshakes = 4
)

// link makes authenticated connections for one side, by dialing with
// backoff or by accepting, and serves them one at a time. On a listener a
// newly authenticated connection replaces the one being served: the old one
// may be a half-open leftover of a network change.
type link struct {
	role   role
	device string
	secret []byte
	dial   string       // or
	ln     net.Listener // nil when dialing
	ping   time.Duration
	dead   time.Duration
	log    *slog.Logger
	stats  *counters
	// media makes a connection's video queue (nil for none).
	media func() *packetQueue
	// serve runs one connection until it ends and returns why.
	serve func(ctx context.Context, c *conn) error
	// fatal reports whether the end of a connection ends run, with the
	// error run returns (nil for a clean end).
	fatal func(err error) (bool, error)
	// giveUp reports whether a failed handshake on a dialed connection ends
	// run: the source gives up on a driver that rejects it.
	giveUp func(err error) bool
}

// run serves connections until ctx ends (it returns nil then) or fatal
// says so.
func (l *link) run(ctx context.Context) error {
	if l.ln != nil {
		return l.runListen(ctx)
	}
	return l.runDial(ctx)
}

func (l *link) runDial(ctx context.Context) error {
	var delay time.Duration
	d := net.Dialer{Timeout: l.dead, KeepAlive: -1} // the protocol has its own keepalive
	for first := true; ; first = false {
		if !first {
			delay = min(max(2*delay, backoffMin), backoffMax)
			if !sleep(ctx, delay) {
				return nil
			}
		}
		nc, err := d.DialContext(ctx, "tcp", l.dial)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			l.log.Debug("video: dial failed", "addr", l.dial, "err", err, "retry_in", delay)
			continue
		}
		l.stats.connections.Add(1)
		c, err := l.handshake(ctx, nc)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if l.giveUp != nil && l.giveUp(err) {
				return err
			}
			if errors.Is(err, ErrAuth) || errors.Is(err, ErrVersion) {
				delay = backoffMax // retrying soon cannot help
			}
			continue
		}
		start := time.Now()
		err = l.serve(ctx, c)
		l.ended(err)
		if ctx.Err() != nil {
			return nil
		}
		if stop, err := l.fatal(err); stop {
			return err
		}
		if time.Since(start) >= backoffReset {
			delay = 0
		}
	}
}

// session is a connection being served.
type session struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
	err    error // why it ended, once done is closed
}

func (l *link) runListen(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	conns := make(chan *conn)
	var wg sync.WaitGroup
	wg.Go(func() { l.accept(ctx, conns, &wg) })
	var cur *session
	// Cancelling first ends the accept loop, the handshakes and the
	// session; then nothing of this run is left when it returns.
	defer func() {
		cancel()
		if cur != nil {
			<-cur.done
		}
		wg.Wait()
	}()
	for {
		var curDone <-chan struct{}
		if cur != nil {
			curDone = cur.done
		}
		select {
		case <-ctx.Done():
			return nil
		case c := <-conns:
			if cur != nil {
				cur.cancel(errReplaced)
				<-cur.done
			}
			cur = l.start(ctx, c)
		case <-curDone:
			err := cur.err
			cur = nil
			if ctx.Err() != nil {
				return nil
			}
			if stop, err := l.fatal(err); stop {
				return err
			}
		}
	}
}

// start serves c in a goroutine.
func (l *link) start(ctx context.Context, c *conn) *session {
	ctx, cancel := context.WithCancelCause(ctx)
	s := &session{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer cancel(nil)
		s.err = l.serve(ctx, c)
		l.ended(s.err)
	}()
	return s
}

// accept hands each authenticated connection to conns until ctx ends.
func (l *link) accept(ctx context.Context, conns chan<- *conn, wg *sync.WaitGroup) {
	stop := context.AfterFunc(ctx, func() { l.ln.Close() })
	defer stop()
	sem := make(chan struct{}, maxHandshakes)
	for {
		nc, err := l.ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			l.log.Warn("video: accept failed", "err", err)
			if !sleep(ctx, backoffMin) {
				return
			}
			continue
		}
		l.stats.connections.Add(1)
		select {
		case sem <- struct{}{}:
		default:
			l.log.Warn("video: too many connections authenticating; closing one", "peer", nc.RemoteAddr(), "device", l.device)
			nc.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := l.handshake(ctx, nc)
			if err != nil {
				return
			}
			select {
			case conns <- c:
			case <-ctx.Done():
				c.close(finalMsg(errShutdown))
				<-c.done
			}
		})
	}
}

// handshake authenticates nc, closing it on failure after logging why.
func (l *link) handshake(ctx context.Context, nc net.Conn) (*conn, error) {
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	ir := &idleReader{nc: nc}
	br := bufio.NewReaderSize(ir, readBuffer)
	s, err := handshake(nc, br, handshakeConfig{role: l.role, device: l.device, secret: l.secret, timeout: l.dead})
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		nc.Close()
		if ctx.Err() == nil {
			l.handshakeFailed(err, s.peerDevice, nc.RemoteAddr())
		}
		return nil, err
	}
	l.stats.sessions.Add(1)
	l.log.Info("video: connected", "device", l.device, "peer", nc.RemoteAddr(), "role", l.role, "version", s.version, "encryption", noiseName)
	ir.idle = l.dead
	var media *packetQueue
	if l.media != nil {
		media = l.media()
	}
	return newConn(nc, br, s, l.ping, l.dead, media, l.stats), nil
}

// handshakeFailed logs and counts a failed handshake (in that order, so
// that whoever sees the count finds the log line).
func (l *link) handshakeFailed(err error, peerDevice string, peer net.Addr) {
	args := []any{"device", l.device, "peer", peer, "err", err}
	if peerDevice != "" && peerDevice != l.device {
		args = append(args, "peer_device", peerDevice)
	}
	switch {
	case errors.Is(err, ErrAuth):
		l.log.Warn("video: authentication failed: the pairing secrets or device ids differ", args...)
		l.stats.authFailures.Add(1)
	case errors.Is(err, ErrVersion):
		l.log.Error("video: no common protocol version: update the broadcast app or the driver", args...)
		l.stats.protocolErrors.Add(1)
	case errors.Is(err, ErrProtocol):
		l.log.Warn("video: handshake failed: protocol error", args...)
		l.stats.protocolErrors.Add(1)
	case isTimeout(err):
		l.log.Warn("video: handshake timed out", args...)
		l.stats.timeouts.Add(1)
	default:
		l.log.Info("video: handshake failed", args...)
	}
}

// ended logs and counts the end of a served connection.
func (l *link) ended(err error) {
	args := []any{"device", l.device, "reason", err}
	var ps *peerStop
	switch {
	case errors.As(err, &ps):
		l.log.Info("video: the broadcast stopped", append(args, "stop_reason", ps.reason, "text", ps.text)...)
	case errors.Is(err, errStopped):
		l.log.Info("video: broadcast stopped", args...)
	case errors.Is(err, ErrProtocol):
		l.log.Warn("video: connection closed: protocol error", args...)
		l.stats.protocolErrors.Add(1)
	case isTimeout(err):
		l.log.Warn("video: connection closed: the peer fell silent", args...)
		l.stats.timeouts.Add(1)
	case errors.Is(err, errReplaced), errors.Is(err, context.Canceled), errors.Is(err, errShutdown):
		l.log.Info("video: connection closed", args...)
	default:
		l.log.Info("video: connection lost", args...)
	}
}

// sleep waits d or until ctx ends, and reports whether d passed. It jitters
// d by up to a fifth, so that phones do not reconnect in step.
func sleep(ctx context.Context, d time.Duration) bool {
	d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
