package remote

import (
	"context"
	"errors"
	"net"
	"sync"
)

// oneConn is a net.Listener that yields one connection, then blocks until
// that connection or the listener closes: it lets a grpc.Server serve a
// connection that was dialled rather than accepted.
type oneConn struct {
	conn   chan net.Conn
	addr   net.Addr
	closed chan struct{}
	once   sync.Once
}

// listenOn returns a listener that yields c once. The listener closes when
// c does, so that the server's Serve returns when the link drops.
func listenOn(c net.Conn) *oneConn {
	l := &oneConn{conn: make(chan net.Conn, 1), addr: c.LocalAddr(), closed: make(chan struct{})}
	l.conn <- &watchedConn{Conn: c, onClose: l.close}
	return l
}

func (l *oneConn) Accept() (net.Conn, error) {
	select {
	case c := <-l.conn:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *oneConn) close() { l.once.Do(func() { close(l.closed) }) }

func (l *oneConn) Close() error {
	l.close()
	return nil
}

func (l *oneConn) Addr() net.Addr { return l.addr }

// watchedConn calls onClose once when the connection is closed, by either
// side of the code that holds it.
type watchedConn struct {
	net.Conn
	once    sync.Once
	onClose func()
}

func (c *watchedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.onClose)
	return err
}

// dialOnce returns a gRPC context dialer that hands out c the first time
// and refuses every later dial: it lets a grpc.ClientConn run on a
// connection that is already open (accepted, or dialled and checked by
// hand), and refuses the reconnections gRPC would try once it is gone.
func dialOnce(c net.Conn) func(context.Context, string) (net.Conn, error) {
	var once sync.Once
	return func(context.Context, string) (net.Conn, error) {
		var conn net.Conn
		once.Do(func() { conn = c })
		if conn == nil {
			return nil, errors.New("the connection is gone")
		}
		return conn, nil
	}
}
