package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testkit"
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
	if d := time.Since(start); d > testkit.Scaled(3*time.Second) {
		t.Errorf("20 slow calls took %v: they ran one after another", d)
	}
}

func TestGarbageLines(t *testing.T) {
	_, path := serve(t)
	conn, err := DialPrivate(context.Background(), path)
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
