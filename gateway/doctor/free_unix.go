//go:build linux || darwin

package doctor

import "syscall"

// FreeBytes measures the bytes free to this user on path's file system.
func FreeBytes(path string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
