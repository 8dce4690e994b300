//go:build windows

package home

import (
	"fmt"
	"os"

	"unsafe"

	"github.com/pinky-gateway/pinky/internal/winsid"
	"golang.org/x/sys/windows"
)

// lockFile takes an exclusive lock without waiting (LockFileEx) on one
// byte at 4 GiB, past the pid the file holds: a lock on the pid's bytes
// would keep the second daemon from reading whose lock it met. The system
// drops the lock when the process ends.
func lockFile(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: 1}
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
}

// makePrivate gives the file an access list of its own, not inherited:
// full control for this user and the system, nobody else.
func makePrivate(path string) error {
	me, err := winsid.User()
	if err != nil {
		return err
	}
	sd, err := windows.SecurityDescriptorFromString(fmt.Sprintf("D:P(A;;FA;;;%s)(A;;FA;;;SY)", me))
	if err != nil {
		return err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return err
	}
	return windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
}

// trusted are the accounts besides the user that may hold access to the
// token file: the system and the machine's administrators, who can read
// any file anyway.
var trusted = []windows.WELL_KNOWN_SID_TYPE{windows.WinLocalSystemSid, windows.WinBuiltinAdministratorsSid}

// checkPrivate refuses a token file owned by someone else, or whose access
// list lets anyone but this user, the system and the administrators read it.
func checkPrivate(path string, _ os.FileInfo) error {
	me, err := winsid.User()
	if err != nil {
		return err
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("token %s: reading its access list: %w", path, err)
	}
	fix := fmt.Sprintf("Run `icacls \"%s\" /inheritance:r /grant:r \"%%USERNAME%%:F\"`, or `pinky token --rotate` for a new token if it may have leaked", path)
	owner, _, err := sd.Owner()
	if err != nil {
		return fmt.Errorf("token %s: reading its owner: %w", path, err)
	}
	if owner == nil || !(owner.Equals(me) || isTrusted(owner)) {
		return fmt.Errorf("token %s is owned by %v, not by you (%v), who may read or replace it: refused. %s", path, owner, me, fix)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("token %s: reading its access list: %w", path, err)
	}
	if dacl == nil {
		return fmt.Errorf("token %s has no access list, so everyone may read it: refused. %s", path, fix)
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("token %s: reading its access list: %w", path, err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		if sid.Equals(me) || isTrusted(sid) {
			continue
		}
		if ace.Mask&(windows.FILE_READ_DATA|windows.GENERIC_READ|windows.GENERIC_ALL) != 0 {
			return fmt.Errorf("token %s may be read by %v: other users may read the token, so it is refused. %s", path, sid, fix)
		}
	}
	return nil
}

func isTrusted(sid *windows.SID) bool {
	for _, t := range trusted {
		if sid.IsWellKnown(t) {
			return true
		}
	}
	return false
}

// sameOwner: a file's access list is not in its FileInfo on Windows, so
// the token file is always read (and checked) again.
func sameOwner(a, b os.FileInfo) bool { return false }
