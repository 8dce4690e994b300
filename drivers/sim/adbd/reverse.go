package adbd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// reverseListener is one `adb reverse`: connections made on the phone to
// remote (localabstract:NAME or tcp:PORT) become streams that transport c
// opens to local, the host's spec, as adbd's listeners do.
type reverseListener struct {
	remote, local string
	port          int // the phone's TCP port of a tcp: remote, else 0
	c             *conn
}

// firstEphemeralPort is where tcp:0 starts looking for a free port, the
// start of Linux's ephemeral range.
const firstEphemeralPort = 32768

// reverseCommand answers a reverse: service (cmd is what follows
// "reverse:") with the bytes adbd's handle_forward_request writes: OKAY (and
// for tcp:0 the port picked, hex4 and decimal), FAIL with hex4 and a
// message, or for list-forward the listing as hex4 and text. The stream's
// own OKAY, to its OPEN, was sent already.
func (d *Device) reverseCommand(c *conn, cmd string) string {
	fail := func(msg string) string { return "FAIL" + hex4(msg) }
	switch {
	case cmd == "list-forward":
		return hex4(d.formatReverse())
	case cmd == "killforward-all":
		d.mu.Lock()
		d.reverse = nil
		d.mu.Unlock()
		return "OKAY"
	case strings.HasPrefix(cmd, "killforward:"):
		spec := strings.TrimPrefix(cmd, "killforward:")
		if spec == "" || strings.Contains(spec, ";") {
			return fail("bad killforward: " + spec)
		}
		if !d.removeReverse(spec) {
			return fail("listener '" + spec + "' not found")
		}
		return "OKAY"
	case strings.HasPrefix(cmd, "forward:"):
		spec, norebind := strings.CutPrefix(strings.TrimPrefix(cmd, "forward:"), "norebind:")
		remote, local, ok := strings.Cut(spec, ";")
		if !ok || remote == "" || local == "" || strings.Contains(local, ";") || local[0] == '*' {
			return fail("bad forward: " + spec)
		}
		port, err := d.installReverse(c, remote, local, norebind)
		if err != nil {
			return fail(err.Error())
		}
		if port != 0 {
			return "OKAY" + hex4(strconv.Itoa(port))
		}
		return "OKAY"
	}
	return fail("not a reverse forwarding command")
}

// installReverse makes or rebinds the listener at remote, as adbd's
// install_listener does: an existing one (of any transport) is pointed at
// local and c unless norebind; a new one binds the phone's socket. It
// returns the port picked for tcp:0, else 0.
func (d *Device) installReverse(c *conn, remote, local string, norebind bool) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, l := range d.reverse {
		if l.remote == remote {
			if norebind {
				return 0, errors.New("cannot rebind existing socket")
			}
			l.local, l.c = local, c
			return 0, nil
		}
	}
	bindErr := func(msg string) error { return errors.New("cannot bind listener: " + msg) }
	resolved, tcpPort := 0, 0
	switch {
	case strings.HasPrefix(remote, "tcp:"):
		port, err := strconv.Atoi(strings.TrimPrefix(remote, "tcp:"))
		switch {
		case err != nil:
			// adbd takes tcp:HOST:PORT and listens only on its own
			// addresses; the phone here has none but the loopback.
			return 0, bindErr("listening on specified hostname currently unsupported")
		case port < 0 || port > 65535:
			return 0, bindErr(fmt.Sprintf("bad port number '%d'", port))
		case port == 0:
			// adbd renames the listener after the port it got.
			for port = firstEphemeralPort; port <= 65535 && d.tcpAtLocked(port) != nil; port++ {
			}
			if port > 65535 {
				return 0, bindErr("Address already in use")
			}
			resolved, remote = port, "tcp:"+strconv.Itoa(port)
		case d.tcpAtLocked(port) != nil:
			// tcp:08 and tcp:8 name one port.
			return 0, bindErr("Address already in use")
		}
		tcpPort = port
	case strings.HasPrefix(remote, "localabstract:"):
		name := strings.TrimPrefix(remote, "localabstract:")
		if name == "" {
			return 0, bindErr("Invalid argument")
		}
		if d.abstract[name] != nil {
			return 0, bindErr("Address already in use")
		}
	case strings.HasPrefix(remote, "local:"), strings.HasPrefix(remote, "localreserved:"), strings.HasPrefix(remote, "localfilesystem:"):
		return 0, bindErr("Operation not supported on the virtual phone")
	default:
		return 0, bindErr("unknown socket specification:" + remote)
	}
	d.reverse = append(d.reverse, &reverseListener{remote: remote, local: local, port: tcpPort, c: c})
	return resolved, nil
}

// reverseAtLocked is the listener at remote, or nil; d.mu is held.
func (d *Device) reverseAtLocked(remote string) *reverseListener {
	for _, l := range d.reverse {
		if l.remote == remote {
			return l
		}
	}
	return nil
}

// tcpAtLocked is the listener at the phone's TCP port, or nil; d.mu is held.
func (d *Device) tcpAtLocked(port int) *reverseListener {
	for _, l := range d.reverse {
		if l.port == port && port != 0 {
			return l
		}
	}
	return nil
}

// removeReverse removes the listener at remote, whichever transport made it.
func (d *Device) removeReverse(remote string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, l := range d.reverse {
		if l.remote == remote {
			d.reverse = append(d.reverse[:i], d.reverse[i+1:]...)
			return true
		}
	}
	return false
}

// dropReverse removes the listeners of a transport that ended.
func (d *Device) dropReverse(c *conn) {
	d.mu.Lock()
	defer d.mu.Unlock()
	kept := d.reverse[:0]
	for _, l := range d.reverse {
		if l.c != c {
			kept = append(kept, l)
		}
	}
	clear(d.reverse[len(kept):])
	d.reverse = kept
}

// formatReverse lists the listeners as adbd's format_listeners does: the
// transport's name, the phone's spec and the host's, one line each.
func (d *Device) formatReverse() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	for _, l := range d.reverse {
		name := l.c.name
		if name == "" {
			name = "(reverse)"
		}
		fmt.Fprintf(&b, "%s %s %s\n", name, l.remote, l.local)
	}
	return b.String()
}

// DialAbstract connects to the phone's local abstract socket name, as an
// app on the phone does: to a Device.ListenAbstract listener, or to an adb
// reverse forward's listener, which opens a stream to the host's end (the
// connection then ends at once if the host refuses it, as a real one does).
// With neither it fails with syscall.ECONNREFUSED, as connect does.
func (d *Device) DialAbstract(ctx context.Context, name string) (net.Conn, error) {
	if l := d.listener(name); l != nil {
		mine, theirs := net.Pipe()
		select {
		case l.conns <- mine:
			return theirs, nil
		case <-l.done:
		case <-ctx.Done():
			mine.Close()
			theirs.Close()
			return nil, ctx.Err()
		}
		mine.Close()
		theirs.Close()
	}
	return d.dialReverse(abstractAddr(name), func() *reverseListener { return d.reverseAtLocked("localabstract:" + name) })
}

// DialTCP connects to port on the phone's loopback, where only adb reverse
// forwards listen; with none at port it fails with syscall.ECONNREFUSED.
func (d *Device) DialTCP(ctx context.Context, port int) (net.Conn, error) {
	return d.dialReverse(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, func() *reverseListener { return d.tcpAtLocked(port) })
}

// dialReverse connects to the reverse listener find gives (called with
// d.mu held), at addr. The stream to the host opens behind the returned
// connection: writes wait for it.
func (d *Device) dialReverse(addr net.Addr, find func() *reverseListener) (net.Conn, error) {
	d.mu.Lock()
	l := find()
	var c *conn
	var remote, local string
	if l != nil {
		c, remote, local = l.c, l.remote, l.local
	}
	d.mu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: addr.Network(), Addr: addr, Err: syscall.ECONNREFUSED}
	}
	mine, theirs := net.Pipe()
	s, wait, done, err := c.openStream(local)
	if err != nil {
		// The transport is ending: adbd took the connection, and drops it.
		d.log.Debug("adbd: reverse connection dropped", "remote", remote, "local", local, "err", err)
		mine.Close()
		return theirs, nil
	}
	go func() {
		defer done()
		if err := wait(); err != nil {
			d.log.Debug("adbd: reverse connection refused", "remote", remote, "local", local, "err", err)
			mine.Close()
			return
		}
		relay(s, mine)
	}()
	return theirs, nil
}

// reverseService serves a stream the server opens to a phone socket that a
// reverse forward holds (a forward to the phone's own reverse listener):
// the connection goes on to the host's end, as adbd's does.
func (d *Device) reverseService(service string) (func(context.Context, *stream) error, bool) {
	var addr net.Addr
	var find func() *reverseListener
	if name, ok := strings.CutPrefix(service, "localabstract:"); ok {
		addr, find = abstractAddr(name), func() *reverseListener { return d.reverseAtLocked(service) }
	} else {
		port, err := strconv.Atoi(strings.TrimPrefix(service, "tcp:"))
		if err != nil {
			return nil, false
		}
		addr, find = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: port}, func() *reverseListener { return d.tcpAtLocked(port) }
	}
	d.mu.Lock()
	l := find()
	d.mu.Unlock()
	if l == nil {
		return nil, false
	}
	return func(ctx context.Context, s *stream) error {
		nc, err := d.dialReverse(addr, find)
		if err != nil {
			return err
		}
		return relay(s, nc)
	}, true
}
