package adbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// ListenAbstract listens on the phone's local abstract socket name. Each
// `localabstract:NAME` stream the adb server opens (one per client of an
// `adb forward tcp:N localabstract:NAME`) becomes a connection accepted
// here. Closing the listener frees the name; while no listener has it,
// streams to it are refused, as on a phone. A name an adb reverse forward
// holds is in use.
func (d *Device) ListenAbstract(name string) (net.Listener, error) {
	if name == "" {
		return nil, errors.New("adbd: abstract socket name is empty")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return nil, fmt.Errorf("adbd: listen @%s: server closed", name)
	}
	if d.abstract[name] != nil || d.reverseAtLocked("localabstract:"+name) != nil {
		return nil, fmt.Errorf("adbd: listen @%s: address already in use", name)
	}
	l := &abstractListener{d: d, name: name, conns: make(chan net.Conn), done: make(chan struct{})}
	d.abstract[name] = l
	return l, nil
}

func (d *Device) listener(name string) *abstractListener {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.abstract[name]
}

// abstractListener is a net.Listener fed by adb streams.
type abstractListener struct {
	d     *Device
	name  string
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *abstractListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *abstractListener) Close() error {
	l.d.mu.Lock()
	defer l.d.mu.Unlock()
	l.closeLocked()
	return nil
}

// closeLocked frees the name; d.mu is held.
func (l *abstractListener) closeLocked() {
	l.once.Do(func() {
		close(l.done)
		if l.d.abstract[l.name] == l {
			delete(l.d.abstract, l.name)
		}
	})
}

func (l *abstractListener) Addr() net.Addr { return abstractAddr(l.name) }

type abstractAddr string

func (a abstractAddr) Network() string { return "unix" }
func (a abstractAddr) String() string  { return "@" + string(a) }

// serve hands the stream to Accept as one end of a pipe and relays bytes
// until either side closes.
func (l *abstractListener) serve(ctx context.Context, s *stream) error {
	mine, theirs := net.Pipe()
	select {
	case l.conns <- theirs:
	case <-l.done:
		mine.Close()
		theirs.Close()
		return nil
	case <-ctx.Done():
		mine.Close()
		theirs.Close()
		return nil
	}
	return relay(s, mine)
}

// relay copies bytes both ways between an adb stream and one end of a pipe
// until either side closes, then closes both.
func relay(s *stream, mine net.Conn) error {
	errc := make(chan error, 1)
	go func() {
		_, err := io.Copy(mine, s)
		mine.Close()
		errc <- err
	}()
	_, err := io.Copy(s, mine)
	mine.Close()
	s.Close() // ends the copy above: Read sees EOF
	<-errc
	return err
}
