//go:build windows

package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/Microsoft/go-winio"
	"github.com/pinky-gateway/pinky/internal/winsid"
	"golang.org/x/sys/windows"
)

// PipeName is the named pipe that stands for the socket path on Windows:
// one per data folder (the path's hash) and per socket (its base name),
// so two installations with different PINKY_HOMEs never meet.
func PipeName(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	sum := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(abs))))
	return `\\.\pipe\pinky-` + hex.EncodeToString(sum[:8]) + "-" + strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
}

// CheckSocketPath accepts every path on Windows: the pipe's name is the
// path's hash, whatever the path's length.
func CheckSocketPath(string) error { return nil }

// ListenPrivate creates the named pipe for path, open only to this user:
// its security descriptor makes the user its owner, denies every network
// logon and grants access to the user alone. The first instance is created
// exclusively, so a pipe of that name that another process made first
// (a squatter waiting for the token) makes this fail instead of sharing it.
func ListenPrivate(path string, log *slog.Logger) (net.Listener, error) {
	sid, err := winsid.User()
	if err != nil {
		return nil, err
	}
	sddl := fmt.Sprintf("O:%sD:P(D;;GA;;;NU)(A;;GA;;;%s)", sid, sid)
	lis, err := winio.ListenPipe(PipeName(path), &winio.PipeConfig{SecurityDescriptor: sddl})
	if err != nil {
		if errors.Is(err, os.ErrExist) || errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY) {
			return nil, fmt.Errorf("the pipe %s for %s is already open (another pinky daemon, or another program holding its name): %w", PipeName(path), path, err)
		}
		return nil, err
	}
	return lis, nil
}

// DialPrivate connects to the pipe for path and checks, before anything is
// sent on it, that the pipe belongs to this user: a pipe another user made
// under the same name is refused. When no pipe of that name exists, the
// error wraps ErrNoDaemon.
func DialPrivate(ctx context.Context, path string) (net.Conn, error) {
	name := PipeName(path)
	conn, err := winio.DialPipeContext(ctx, name)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w (pipe %s for %s)", ErrNoDaemon, name, path)
		}
		return nil, err
	}
	if err := checkOwner(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("refused the pipe %s: %w", name, err)
	}
	return conn, nil
}

// checkOwner fails unless the pipe's owner is this process's user.
func checkOwner(conn net.Conn) error {
	f, ok := conn.(interface{ Fd() uintptr })
	if !ok {
		return errors.New("the pipe's handle cannot be read")
	}
	sd, err := windows.GetSecurityInfo(windows.Handle(f.Fd()), windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("reading its owner: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("reading its owner: %w", err)
	}
	me, err := winsid.User()
	if err != nil {
		return err
	}
	if owner == nil || !owner.Equals(me) {
		return fmt.Errorf("its owner %v is not this user %v", owner, me)
	}
	return nil
}
