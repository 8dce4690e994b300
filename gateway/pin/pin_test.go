package pin

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"
)

// The tests run the OS keychain code path over go-keyring's in-memory mock.
func TestSetGetForget(t *testing.T) {
	keyring.MockInit()
	s := OS()
	if _, err := s.Get("sim-android-1"); !errors.Is(err, ErrNoPIN) {
		t.Fatalf("get before set: got %v; want ErrNoPIN", err)
	}
	if _, ok, err := s.PIN("sim-android-1"); ok || err != nil {
		t.Fatalf("PIN before set: got ok=%v err=%v; want none, nil", ok, err)
	}
	if err := s.Set("sim-android-1", "1234"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("sim-ios-1", "0000"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get("sim-android-1"); got != "1234" || err != nil {
		t.Fatalf("get: got %q, %v; want 1234", got, err)
	}
	// The keychain entry is service "pinky", account the device id.
	if got, err := keyring.Get("pinky", "sim-ios-1"); got != "0000" || err != nil {
		t.Fatalf("keychain entry: got %q, %v; want 0000 under pinky/sim-ios-1", got, err)
	}
	if err := s.Set("sim-android-1", "5678"); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.PIN("sim-android-1"); got != "5678" || !ok || err != nil {
		t.Fatalf("PIN after replace: got %q, %v, %v; want 5678", got, ok, err)
	}
	if err := s.Forget("sim-android-1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget("sim-android-1"); !errors.Is(err, ErrNoPIN) {
		t.Fatalf("forget twice: got %v; want ErrNoPIN", err)
	}
	if got, err := s.Get("sim-ios-1"); got != "0000" || err != nil {
		t.Fatalf("the other device's PIN: got %q, %v", got, err)
	}
}

func TestRefusesBadInput(t *testing.T) {
	keyring.MockInit()
	s := OS()
	for _, c := range []struct{ device, pin string }{
		{"", "1234"}, {"  ", "1234"}, {"a\nb", "1234"},
		{"sim-android-1", ""}, {"sim-android-1", "12\n34"}, {"sim-android-1", strings.Repeat("1", 65)},
	} {
		if err := s.Set(c.device, c.pin); err == nil {
			t.Errorf("set %q %q: got no error", c.device, c.pin)
		} else if c.pin != "" && strings.Contains(err.Error(), c.pin) {
			t.Errorf("set %q: the error %q holds the PIN", c.device, err)
		}
	}
}

// Without a Secret Service (Linux with no D-Bus session), go-keyring fails;
// the store says so and writes nothing anywhere else.
func TestNoKeychain(t *testing.T) {
	dbusDown := errors.New("dbus: couldn't determine address of session bus")
	keyring.MockInitWithError(dbusDown)
	t.Cleanup(keyring.MockInit)
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("XDG_DATA_HOME", dir)
	t.Setenv("XDG_CONFIG_HOME", dir)
	s := OS()
	for what, err := range map[string]error{
		"set":    s.Set("sim-android-1", "1234"),
		"get":    func() error { _, err := s.Get("sim-android-1"); return err }(),
		"forget": s.Forget("sim-android-1"),
		"pin":    func() error { _, _, err := s.PIN("sim-android-1"); return err }(),
	} {
		if !errors.Is(err, ErrNoKeychain) {
			t.Errorf("%s: got %v; want ErrNoKeychain", what, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "no keychain reachable: Pinky never stores a PIN in a plain file") || !strings.Contains(msg, "dbus") {
			t.Errorf("%s: got %q; want the no-keychain message with the cause", what, msg)
		}
	}
	if _, ok, _ := s.PIN("sim-android-1"); ok {
		t.Error("PIN without a keychain: got ok")
	}
	if entries, _ := filepathGlob(dir); len(entries) != 0 {
		t.Errorf("files written without a keychain: %v", entries)
	}
}

// filepathGlob lists every file under dir.
func filepathGlob(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return err
	})
	return out, err
}
