package testdep

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// immutableFlag is FS_IMMUTABLE_FL of linux/fs.h: chattr's "i".
const immutableFlag = 0x10

// Immutable sets a file's immutable flag, as chattr +i does: nobody, root
// included, can then write it, even through a file already open. It
// returns the function that clears the flag, which also runs when the test
// ends so that the file can be deleted. Setting it needs CAP_LINUX_IMMUTABLE
// (root) and a file system with the flag (ext4, xfs, btrfs, tmpfs): without
// them the test skips, and fails in CI (CI=true), which runs as root.
func Immutable(t testing.TB, path string) (clear func()) {
	t.Helper()
	if err := SetImmutable(path, true); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chattr +i %s: %v (CI runs the tests as root on ext4)", path, err)
		}
		t.Skipf("cannot make a file immutable here (chattr +i needs root and a file system with the flag): %v", err)
	}
	done := false
	clear = func() {
		if done {
			return
		}
		done = true
		if err := SetImmutable(path, false); err != nil && !os.IsNotExist(err) {
			t.Errorf("chattr -i %s: %v", path, err)
		}
	}
	t.Cleanup(clear)
	return clear
}

// SetImmutable sets or clears a file's immutable flag (chattr +i, -i).
func SetImmutable(path string, on bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= immutableFlag
	} else {
		flags &^= immutableFlag
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags))
}
