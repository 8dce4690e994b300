package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func serve(t *testing.T) (*Server, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "pk") // short: socket paths are limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o700)
	s := NewServer(slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.Handle("echo", func(_ context.Context, p json.RawMessage) (any, error) {
		var v struct{ Text string }
		if err := Params(p, &v); err != nil {
			return nil, err
		}
		return map[string]string{"text": v.Text}, nil
	})
	s.Handle("fail", func(context.Context, json.RawMessage) (any, error) { return nil, errors.New("it broke") })
	s.Handle("panic", func(context.Context, json.RawMessage) (any, error) { panic("boom") })
	s.Handle("slow", func(ctx context.Context, _ json.RawMessage) (any, error) {
		time.Sleep(200 * time.Millisecond)
		return nil, nil
	})
	path := filepath.Join(dir, "s.sock")
	if err := s.Listen(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func TestCalls(t *testing.T) {
	_, path := serve(t)
	ctx := context.Background()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got map[string]string
	if err := c.Call(ctx, "echo", map[string]string{"text": "héllo"}, &got); err != nil || got["text"] != "héllo" {
		t.Errorf("echo: got %v, %v", got, err)
	}
	for _, tt := range []struct {
		method string
		params any
		code   int
		text   string
	}{
		{"nope", nil, CodeNoMethod, `no method "nope"`},
		{"echo", map[string]int{"bogus": 1}, CodeInvalidParams, "bogus"},
		{"fail", nil, CodeFailed, "it broke"},
		{"panic", nil, CodeInternal, "see its log"},
	} {
		err := c.Call(ctx, tt.method, tt.params, nil)
		var e *Error
		if !errors.As(err, &e) || e.Code != tt.code || !strings.Contains(e.Message, tt.text) {
			t.Errorf("%s: got %v; want code %d containing %q", tt.method, err, tt.code, tt.text)
		}
	}
	// The connection still works after a panic.
	if err := c.Call(ctx, "echo", map[string]string{"text": "x"}, nil); err != nil {
		t.Errorf("after panic: %v", err)
	}
}

func TestConcurrentCalls(t *testing.T) {
	_, path := serve(t)
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got map[string]string
			want := fmt.Sprint(i)
			if err := c.Call(context.Background(), "echo", map[string]string{"text": want}, &got); err != nil || got["text"] != want {
				t.Errorf("call %d: got %v, %v", i, got, err)
			}
			c.Call(context.Background(), "slow", nil, nil)
		}()
	}
	wg.Wait()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("20 slow calls took %v: they ran one after another", d)
	}
}

func TestGarbageLines(t *testing.T) {
	_, path := serve(t)
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	for _, tt := range []struct {
		line string
		code int
	}{
		{"not json", CodeParse},
		{`{"id":1,"method":"echo"}`, CodeInvalidRequest},
		{"\xff\xfe", CodeParse},
	} {
		fmt.Fprintln(conn, tt.line)
		b, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var resp struct{ Error *Error }
		if err := json.Unmarshal(b, &resp); err != nil || resp.Error == nil || resp.Error.Code != tt.code {
			t.Errorf("%q: got %s; want code %d", tt.line, b, tt.code)
		}
	}
}

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

func TestNoDaemon(t *testing.T) {
	_, err := Dial(context.Background(), filepath.Join(t.TempDir(), "none.sock"))
	if !errors.Is(err, ErrNoDaemon) {
		t.Errorf("got %v; want ErrNoDaemon", err)
	}
}

func TestDaemonGoesAway(t *testing.T) {
	s, path := serve(t)
	c, err := Dial(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "slow", nil, nil) }()
	time.Sleep(50 * time.Millisecond)
	go s.Close()
	select {
	case <-errc: // either the answer or "closed the connection"; never a hang
	case <-time.After(5 * time.Second):
		t.Fatal("a call hung after the daemon closed")
	}
	if err := c.Call(context.Background(), "echo", nil, nil); err == nil {
		t.Error("a call after the daemon closed succeeded")
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
