//go:build windows

package api

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Microsoft/go-winio"
)

// TestPipeIsExclusive: a second daemon on the same data folder cannot open
// the pipe the first one holds.
func TestPipeIsExclusive(t *testing.T) {
	_, path := serve(t)
	if lis, err := ListenPrivate(path, nil); err == nil {
		lis.Close()
		t.Fatal("a second ListenPrivate on the same path succeeded")
	}
}

// TestPipeNamesDiffer: two data folders, two pipes; one folder's two
// sockets, two pipes.
func TestPipeNamesDiffer(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	names := map[string]bool{}
	for _, p := range []string{filepath.Join(a, "pinky.sock"), filepath.Join(a, "mcp.sock"), filepath.Join(b, "pinky.sock")} {
		n := PipeName(p)
		if !strings.HasPrefix(n, `\\.\pipe\pinky-`) || names[n] {
			t.Errorf("PipeName(%s) = %s: not a fresh pinky pipe", p, n)
		}
		names[n] = true
	}
}

// TestSquattedPipeRefused: a pipe of the daemon's name owned by someone
// else (here the Administrators group, which an elevated test process may
// name as owner) gets no connection from the client, so the token is never
// sent to it.
func TestSquattedPipeRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pinky.sock")
	lis, err := winio.ListenPipe(PipeName(path), &winio.PipeConfig{SecurityDescriptor: "O:BAD:(A;;GA;;;WD)"})
	if err != nil {
		t.Fatalf("making a pipe owned by Administrators (the test needs an elevated process, as CI's runner is): %v", err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, err := DialPrivate(context.Background(), path)
	if err == nil {
		c.Close()
		t.Fatal("the client connected to a pipe another owner made")
	}
	if !strings.Contains(err.Error(), "owner") {
		t.Errorf("got %v; want a refusal naming the owner", err)
	}
	if _, err := Dial(context.Background(), path); err == nil || !strings.Contains(err.Error(), "owner") {
		t.Errorf("Dial: got %v; want the same refusal", err)
	}
}
