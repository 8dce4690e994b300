//go:build !windows

package home

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f without waiting; the system drops
// it when the process ends.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// makePrivate: os.CreateTemp already made the file 0600.
func makePrivate(string) error { return nil }

// checkPrivate refuses a file another user owns or that others may read.
func checkPrivate(path string, fi os.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("token %s is owned by another user (uid %d), who may read or replace it: refused. "+
			"Run `pinky token --rotate` as yourself (uid %d) for a new one", path, st.Uid, os.Getuid())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("permissions %04o for %s are too open: other users may read the token, so it is refused. "+
			"Run `chmod 600 %s`, or `pinky token --rotate` for a new token if it may have leaked", perm, path, path)
	}
	return nil
}

// sameOwner compares the files' owners (their modes are compared already).
func sameOwner(a, b os.FileInfo) bool {
	sa, okA := a.Sys().(*syscall.Stat_t)
	sb, okB := b.Sys().(*syscall.Stat_t)
	return okA == okB && (!okA || sa.Uid == sb.Uid)
}
