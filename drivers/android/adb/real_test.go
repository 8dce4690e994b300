package adb

import (
	"context"
	"errors"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// realADB returns the adb binary, or skips the test when there is none
// (fails in CI, where scripts/test-deps installs it).
func realADB(t *testing.T) string {
	t.Helper()
	path := testdep.Need(t, "adb")
	return path
}

// TestRealServer runs against Debian's adb server, started by the client on
// a free port of its own (never 5037) and killed at the end.
func TestRealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real adb server")
	}
	adbPath := realADB(t)
	addr := closedAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	ctx := ctxTimeout(t, 60*time.Second)

	noStart, err := New(Options{Addr: addr, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := noStart.Version(ctx); !errors.Is(err, ErrServerNotRunning) {
		t.Fatalf("before Dial: got %v; want ErrServerNotRunning", err)
	}
	// Dial finds no server and starts one with adb -P PORT start-server.
	start := time.Now()
	c, err := Dial(ctx, Options{Addr: addr, ADBPath: adbPath})
	if err != nil {
		t.Fatalf("Dial with start-server: %v", err)
	}
	t.Logf("started an adb server at %s in %v", c.Addr(), time.Since(start))
	if _, err := noStart.Version(ctx); err != nil {
		t.Fatalf("after Dial: %v", err)
	}
	// Kill it at the end, without starting it again.
	t.Cleanup(func() {
		kctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := noStart.Kill(kctx); err != nil && !errors.Is(err, ErrServerNotRunning) {
			t.Errorf("Kill: %v", err)
		}
	})

	t.Run("version", func(t *testing.T) {
		v, err := c.Version(ctx)
		if err != nil || v < 39 {
			t.Errorf("Version: got %d, %v; want 39 or more (adb 29 is 41)", v, err)
		}
	})

	t.Run("environment", func(t *testing.T) {
		for _, env := range []struct{ key, value string }{
			{"ANDROID_ADB_SERVER_PORT", port},
			{"ADB_SERVER_SOCKET", "tcp:" + addr},
		} {
			t.Setenv("ANDROID_ADB_SERVER_PORT", "")
			t.Setenv("ADB_SERVER_SOCKET", "")
			t.Setenv(env.key, env.value)
			ec, err := New(Options{NoStart: true})
			if err != nil {
				t.Fatal(err)
			}
			if v, err := ec.Version(ctx); err != nil || v != 41 && v < 39 {
				t.Errorf("%s=%s: Version got %d, %v", env.key, env.value, v, err)
			}
		}
	})

	t.Run("devices and track", func(t *testing.T) {
		// The server may see a phone or an emulator port; what matters
		// is that both services agree.
		list, err := c.Devices(ctx)
		if err != nil {
			t.Fatalf("Devices: %v", err)
		}
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		var first []DeviceInfo
		for snap, err := range c.TrackDevices(tctx) {
			if err != nil {
				t.Fatalf("TrackDevices: %v", err)
			}
			first = snap
			break
		}
		serials := func(l []DeviceInfo) []string {
			var s []string
			for _, d := range l {
				if d.State == "" {
					t.Errorf("device %q has no state", d.Serial)
				}
				s = append(s, d.Serial)
			}
			slices.Sort(s)
			return s
		}
		if a, b := serials(list), serials(first); !slices.Equal(a, b) {
			t.Errorf("devices-l %q and the first track snapshot %q differ", a, b)
		}
		t.Logf("devices: %+v", list)
	})

	t.Run("connect to a closed port", func(t *testing.T) {
		closed := closedAddr(t)
		_, err := c.Connect(ctx, closed)
		var se *ServerError
		if !errors.As(err, &se) || !strings.Contains(se.Message, "failed to connect") || !strings.Contains(se.Message, closed) {
			t.Errorf("Connect(%s): got %v; want the server's failed-to-connect message", closed, err)
		}
		if err := c.Disconnect(ctx, closed); !errors.Is(err, ErrDeviceNotFound) {
			t.Errorf("Disconnect(%s): got %v; want ErrDeviceNotFound", closed, err)
		}
	})

	t.Run("unknown device", func(t *testing.T) {
		d := c.Device("pinky-no-such-device")
		_, err := d.Shell(ctx, "true")
		if !errors.Is(err, ErrDeviceNotFound) || !errors.Is(err, sdk.ErrDeviceNotFound) {
			t.Errorf("Shell: got %v; want ErrDeviceNotFound", err)
		}
		if _, err := c.OpenStream(ctx, d.Serial(), "localabstract:x"); !errors.Is(err, ErrDeviceNotFound) {
			t.Errorf("OpenStream: got %v; want ErrDeviceNotFound", err)
		}
		// adb 29 answers this one with an empty FAIL.
		var se *ServerError
		if _, err := d.Forward(ctx, "tcp:0", "tcp:1"); !errors.As(err, &se) {
			t.Errorf("Forward: got %v; want a *ServerError", err)
		}
	})

	t.Run("list forward", func(t *testing.T) {
		if _, err := c.ListForward(ctx); err != nil {
			t.Errorf("ListForward: %v", err)
		}
	})

	// Last: the server's exit ends a track stream, and nothing listens after.
	t.Run("kill", func(t *testing.T) {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		n := 0
		for _, err := range c.TrackDevices(tctx) {
			if err != nil {
				if !errors.Is(err, ErrServerNotRunning) {
					t.Errorf("TrackDevices after Kill: got %v; want ErrServerNotRunning", err)
				}
				break
			}
			if n++; n == 1 {
				if err := c.Kill(ctx); err != nil {
					t.Fatalf("Kill: %v", err)
				}
			}
		}
		if _, err := noStart.Version(ctx); !errors.Is(err, ErrServerNotRunning) {
			t.Errorf("Version after Kill: got %v; want ErrServerNotRunning", err)
		}
	})

	t.Run("adb missing", func(t *testing.T) {
		_, err := Dial(ctx, Options{Addr: closedAddr(t), ADBPath: "/nonexistent/adb"})
		if !errors.Is(err, ErrADBNotInstalled) || !strings.Contains(err.Error(), "apt install adb") {
			t.Errorf("got %v; want ErrADBNotInstalled with install help", err)
		}
	})
}

// TestRealServerUnixSocket starts adb servers on unix sockets of their own.
func TestRealServerUnixSocket(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real adb server")
	}
	adbPath := realADB(t)
	// t.TempDir can exceed the 108-byte limit of a socket path.
	dir, err := os.MkdirTemp("", "adb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, addr := range []string{
		"localfilesystem:" + dir + "/adb.sock",
		"localabstract:pinky-adb-test-" + strconv.Itoa(os.Getpid()),
	} {
		t.Run(addr, func(t *testing.T) {
			ctx := ctxTimeout(t, 30*time.Second)
			c, err := Dial(ctx, Options{Addr: addr, ADBPath: adbPath})
			if err != nil {
				t.Fatalf("Dial with start-server: %v", err)
			}
			if _, err := c.Devices(ctx); err != nil {
				t.Errorf("Devices: %v", err)
			}
			if err := c.Kill(ctx); err != nil {
				t.Errorf("Kill: %v", err)
			}
		})
	}
}
