//go:build !windows

package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// maxSocketPath is the longest Unix socket path the platform takes.
var maxSocketPath = map[string]int{"darwin": 103, "freebsd": 103}

func socketPathLimit() int {
	if n, ok := maxSocketPath[runtime.GOOS]; ok {
		return n
	}
	return 107 // Linux: sun_path is 108 bytes with the NUL
}

// CheckSocketPath fails when path is too long for a Unix socket, naming
// PINKY_HOME, the setting that moves it.
func CheckSocketPath(path string) error {
	if n := len(path); n > socketPathLimit() {
		return fmt.Errorf("socket path %s is %d bytes, longer than the %d this system allows: "+
			"set PINKY_HOME (or XDG_RUNTIME_DIR) to a shorter folder", path, n, socketPathLimit())
	}
	return nil
}

// ListenPrivate creates a Unix socket at path that only this user can
// reach: its folder must be 0700, the socket is made 0600, and every
// accepted connection from another uid is refused (and logged). A stale
// socket file left by a dead daemon is replaced; the caller holds the
// daemon lock, so no live daemon owns it.
func ListenPrivate(path string, log *slog.Logger) (net.Listener, error) {
	if err := CheckSocketPath(path); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, err
	} else if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("socket folder %s is reachable by other users (mode %o); want 0700", filepath.Dir(path), fi.Mode().Perm())
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, err
	}
	return &privateListener{Listener: lis, log: log}, nil
}

// DialPrivate connects to the private socket at path. When nothing
// listens there, the error wraps ErrNoDaemon.
func DialPrivate(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (socket %s)", ErrNoDaemon, path)
		}
		return nil, err
	}
	return conn, nil
}

// privateListener refuses connections from other users.
type privateListener struct {
	net.Listener
	log *slog.Logger
}

func (l *privateListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if err := checkPeer(c); err != nil {
			l.log.Warn("refused a local connection", "socket", l.Addr().String(), "err", err)
			c.Close()
			continue
		}
		return c, nil
	}
}

// checkPeer refuses a connection from another user (root included: the
// daemon acts for one person).
func checkPeer(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a Unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var uid int
	var uerr error
	if err := raw.Control(func(fd uintptr) { uid, uerr = peerUID(fd) }); err != nil {
		return err
	}
	if uerr != nil {
		return uerr
	}
	if uid != os.Getuid() {
		return fmt.Errorf("peer uid %d is not the daemon's user %d", uid, os.Getuid())
	}
	return nil
}
