package scrcpyd

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestTunnelForward(t *testing.T) {
	tests := []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"4.1", "audio=false"}, false},
		{[]string{"4.1", "tunnel_forward=true"}, true},
		{[]string{"4.1", "tunnel_forward=TRUE"}, true},
		{[]string{"4.1", "tunnel_forward=yes"}, false},
		{[]string{"4.1", "tunnel_forward=true", "tunnel_forward=false"}, false},
	}
	for _, tt := range tests {
		if got := tunnelForward(tt.args); got != tt.want {
			t.Errorf("tunnelForward(%q) = %v; want %v", tt.args, got, tt.want)
		}
	}
}

// TestServeReverse: with tunnel_forward=false the server connects through
// Dial, video then control, with no dummy byte, and the client that
// accepts them reads the device meta and the video header at once.
func TestServeReverse(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			o := scrcpy.DefaultOptions()
			o.TunnelForward = false
			args, err := scrcpy.ServerArgs(version, o)
			if err != nil {
				t.Fatal(err)
			}
			// Each dial is one end of a pipe; the test holds the other,
			// tagged with the dial's number.
			type dialed struct {
				n    int
				conn net.Conn
			}
			conns := make(chan dialed, 3)
			n := 0
			dial := func(ctx context.Context) (net.Conn, error) {
				n++
				server, client := net.Pipe()
				conns <- dialed{n, client}
				return server, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr testkit.Buffer
			done := make(chan error, 1)
			go func() {
				done <- Server{Version: version, Driver: d, Device: android, Dial: dial}.Serve(ctx, args[4:], nil, &stdout, &stderr)
			}()
			video, control := <-conns, <-conns
			if video.n != 1 || control.n != 2 {
				t.Fatalf("dials: got %d, %d; want 1, 2", video.n, control.n)
			}
			c, err := scrcpy.ConnectWith(version, o, video.conn, control.conn)
			if err != nil {
				t.Fatalf("ConnectWith: %v (server stderr %q)", err, stderr.String())
			}
			if got := c.DeviceName(); got != "Pixel 8" {
				t.Errorf("device name: got %q; want Pixel 8", got)
			}
			if w, h := c.VideoSize(); w <= 0 || h <= 0 {
				t.Errorf("video size: got %dx%d", w, h)
			}
			c.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(testkit.Limit):
				t.Fatal("Serve did not return after the client closed")
			}
		})
	}
}

// TestServeReverseRefused: a refused connect fails the server with the real
// server's error and trace, and closes the sockets made so far.
func TestServeReverseRefused(t *testing.T) {
	d := simtest.New(t, simtest.Unlocked(android))
	tests := []struct {
		name      string
		args      []string
		refuseAt  int
		wantFrame string
	}{
		{"the video socket", []string{"3.3.4", "tunnel_forward=false", "audio=false"}, 1, "DesktopConnection.open(DesktopConnection.java:93)"},
		{"the control socket", []string{"3.3.4", "tunnel_forward=false", "audio=false"}, 2, "DesktopConnection.open(DesktopConnection.java:99)"},
		{"control only", []string{"3.3.4", "tunnel_forward=false", "audio=false", "video=false"}, 1, "DesktopConnection.open(DesktopConnection.java:99)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var made []net.Conn
			dial := func(ctx context.Context) (net.Conn, error) {
				if len(made)+1 == tt.refuseAt {
					return nil, &net.OpError{Op: "dial", Net: "unix", Err: syscall.ECONNREFUSED}
				}
				server, client := net.Pipe()
				made = append(made, client)
				return server, nil
			}
			var stdout, stderr testkit.Buffer
			err := Server{Version: "3.3.4", Driver: d, Device: android, Dial: dial}.Serve(context.Background(), tt.args, nil, &stdout, &stderr)
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("Serve error = %v; want ECONNREFUSED", err)
			}
			want := "[server] ERROR: Connection refused\njava.io.IOException: Connection refused\n\tat android.net.LocalSocketImpl.connectLocal(Native Method)\n"
			if !strings.HasPrefix(stderr.String(), want) || !strings.Contains(stderr.String(), tt.wantFrame) {
				t.Errorf("stderr = %q; want it to start with %q and name %s", stderr.String(), want, tt.wantFrame)
			}
			for i, c := range made {
				if _, err := c.Read(make([]byte, 1)); err == nil {
					t.Errorf("socket %d: still open after the refusal", i+1)
				}
			}
			if !strings.Contains(stdout.String(), "[server] INFO: Device:") {
				t.Errorf("stdout = %q; want the Device line first, as the real server prints it", stdout.String())
			}
		})
	}
}
