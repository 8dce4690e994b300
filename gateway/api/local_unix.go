package api

import (
	"fmt"
	"net"
	"os"
)

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
