//go:build unix

package driverhost

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// socketDirSupported: drivers listen on Unix sockets here.
const socketDirSupported = true

// processAlive reports whether a process with that pid exists (signal 0
// checks without sending anything; EPERM means it exists as another user's).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func ownedByMe(fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if int(st.Uid) != os.Getuid() {
		return fmt.Errorf("owned by uid %d, not by this user (%d)", st.Uid, os.Getuid())
	}
	return nil
}
