//go:build windows

package home

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/winsid"
	"golang.org/x/sys/windows"
)

func TestResolveWindows(t *testing.T) {
	local := t.TempDir()
	t.Setenv("PINKY_HOME", "")
	t.Setenv("LOCALAPPDATA", local)
	d, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(local, "Pinky"); d.Home != want || d.Runtime != want {
		t.Errorf("got %+v; want home and runtime %s", d, want)
	}
}

// TestTokenFileWindows: the token file gets an access list of its own (this
// user and the system), is read back, and is refused once everyone may
// read it, with the icacls fix.
func TestTokenFileWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, err := EnsureToken(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadToken(path)
	if err != nil || got != tok {
		t.Fatalf("ReadToken = %q, %v; want the token made", got, err)
	}
	me, err := winsid.User()
	if err != nil {
		t.Fatal(err)
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;FA;;;" + me.String() + ")(A;;FR;;;WD)")
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadToken(path); err == nil || !strings.Contains(err.Error(), "icacls") {
		t.Errorf("ReadToken of a token everyone may read: %v; want a refusal naming icacls", err)
	}
}
