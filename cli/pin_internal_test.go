package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"github.com/pinky-gateway/pinky/gateway/pin"
)

func runPin(t *testing.T, stdin string, args ...string) (string, error) {
	t.Helper()
	root := NewRoot()
	var out bytes.Buffer
	root.SetArgs(args)
	root.SetIn(strings.NewReader(stdin))
	root.SetOut(&out)
	root.SetErr(&out)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// pinky pin set and forget work on the keychain directly, without a daemon.
func TestPinSetForget(t *testing.T) {
	keyring.MockInit()
	t.Setenv("PINKY_HOME", t.TempDir()) // no daemon there
	out, err := runPin(t, "4821\n", "pin", "set", "sim-android-1")
	if err != nil {
		t.Fatalf("pin set: %v (%s)", err, out)
	}
	if strings.Contains(out, "4821") {
		t.Errorf("pin set printed the PIN: %q", out)
	}
	if got, err := pin.OS().Get("sim-android-1"); got != "4821" || err != nil {
		t.Fatalf("saved PIN: got %q, %v; want 4821", got, err)
	}
	if out, err := runPin(t, "", "pin", "forget", "sim-android-1"); err != nil || !strings.Contains(out, "forgot") {
		t.Fatalf("pin forget: got %q, %v", out, err)
	}
	if _, err := pin.OS().Get("sim-android-1"); !errors.Is(err, pin.ErrNoPIN) {
		t.Fatalf("after forget: got %v; want ErrNoPIN", err)
	}
	if _, err := runPin(t, "", "pin", "forget", "sim-android-1"); err == nil || !strings.Contains(err.Error(), "no PIN is saved") {
		t.Errorf("forget twice: got %v; want no PIN is saved", err)
	}
	if _, err := runPin(t, "\n", "pin", "set", "sim-android-1"); err == nil {
		t.Error("pin set with an empty PIN: got no error")
	}
}

func TestPinSetWithoutKeychain(t *testing.T) {
	keyring.MockInitWithError(errors.New("dbus: couldn't determine address of session bus"))
	t.Cleanup(keyring.MockInit)
	_, err := runPin(t, "4821\n", "pin", "set", "sim-android-1")
	if err == nil || !strings.Contains(err.Error(), "no keychain reachable: Pinky never stores a PIN in a plain file") {
		t.Fatalf("pin set without a keychain: got %v; want the no-keychain error", err)
	}
	if strings.Contains(err.Error(), "4821") {
		t.Errorf("the error holds the PIN: %v", err)
	}
}
