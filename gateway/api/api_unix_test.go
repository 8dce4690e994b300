//go:build !windows

package api

import (
	"bufio"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSocketIsPrivate(t *testing.T) {
	_, path := serve(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("socket mode %o; want 600", got)
	}
	open := t.TempDir()
	os.Chmod(open, 0o755)
	s := NewServer(slog.Default())
	if err := s.Listen(filepath.Join(open, "s.sock")); err == nil || !strings.Contains(err.Error(), "other users") {
		t.Errorf("listen in a 0755 folder: got %v; want a refusal", err)
	}
}

func TestLongSocketPathNamesPinkyHome(t *testing.T) {
	long := "/tmp/" + strings.Repeat("x", 120) + "/pinky.sock"
	err := CheckSocketPath(long)
	if err == nil || !strings.Contains(err.Error(), "PINKY_HOME") {
		t.Errorf("got %v; want an error naming PINKY_HOME", err)
	}
}

// TestOtherUserRefused connects as another user. The socket's mode already
// keeps other users out, so the test opens it up to reach the uid check.
func TestOtherUserRefused(t *testing.T) {
	if os.Getenv("PINKY_API_TEST_DIAL") != "" {
		c, err := net.Dial("unix", os.Getenv("PINKY_API_TEST_DIAL"))
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(3)
		}
		fmt.Fprintln(c, `{"jsonrpc":"2.0","id":1,"method":"echo"}`)
		b, _ := bufio.NewReader(c).ReadBytes('\n')
		fmt.Printf("answer:%s", b)
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user; CI runs as root")
	}
	s, path := serve(t)
	os.Chmod(filepath.Dir(path), 0o777)
	os.Chmod(path, 0o777)
	_ = s
	bindir, err := os.MkdirTemp("", "pkbin")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(bindir)
	os.Chmod(bindir, 0o755)
	bin := filepath.Join(bindir, "client")
	self, _ := os.Executable()
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^TestOtherUserRefused$")
	cmd.Env = append(os.Environ(), "PINKY_API_TEST_DIAL="+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	t.Logf("client as uid 65534: %v: %s", err, out)
	if strings.Contains(string(out), `"result"`) || !strings.Contains(string(out), "answer:") {
		t.Errorf("another user's call: got %q; want the connection closed without an answer", out)
	}
}
