package adbd_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/scrcpyd"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// hostListener is a TCP listener on the host, the LOCAL end of an adb
// reverse, whose connections a test takes in order.
type hostListener struct {
	net.Listener
	port  string
	conns chan net.Conn
}

func listenHost(t *testing.T) *hostListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostListener{Listener: ln, port: strconv.Itoa(ln.Addr().(*net.TCPAddr).Port), conns: make(chan net.Conn, 8)}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns <- c
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		close(h.conns)
		for c := range h.conns {
			c.Close()
		}
	})
	return h
}

// next is the next connection the listener accepted.
func (h *hostListener) next(t *testing.T) net.Conn {
	t.Helper()
	select {
	case c := <-h.conns:
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(testkit.Limit))
		return c
	case <-time.After(testkit.Limit):
		t.Fatal("no connection reached the host's end of the reverse")
		return nil
	}
}

// listLine is one line of adb reverse --list: the face names its TCP
// transports as adbd does, "host-" and a number.
func listLine(remote, local string) *regexp.Regexp {
	return regexp.MustCompile(`(?m)^host-\d+ ` + regexp.QuoteMeta(remote) + " " + regexp.QuoteMeta(local) + "$")
}

func TestReverseCommands(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	busy, err := p.srv.Device().ListenAbstract("busy")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()

	// adb prints the device's listing and a newline of its own.
	reverseList := func() string { return strings.TrimSuffix(p.run(t, "reverse", "--list"), "\n") }
	p.run(t, "reverse", "localabstract:x", "tcp:1001")
	if out := p.run(t, "reverse", "tcp:0", "tcp:1002"); out != "32768\n" {
		t.Errorf("adb reverse tcp:0: got %q; want the port picked, 32768", out)
	}
	p.run(t, "reverse", "tcp:8080", "tcp:1003")
	list := reverseList()
	for _, want := range []*regexp.Regexp{listLine("localabstract:x", "tcp:1001"), listLine("tcp:32768", "tcp:1002"), listLine("tcp:8080", "tcp:1003")} {
		if !want.MatchString(list) {
			t.Errorf("adb reverse --list: got %q; want a line matching %s", list, want)
		}
	}
	if n := strings.Count(list, "\n"); n != 3 {
		t.Errorf("adb reverse --list: got %d lines in %q; want 3", n, list)
	}

	fails := []struct {
		name string
		args []string
		want string
	}{
		{"no rebind", []string{"reverse", "--no-rebind", "localabstract:x", "tcp:1"}, "cannot rebind existing socket"},
		{"an app's name", []string{"reverse", "localabstract:busy", "tcp:1"}, "cannot bind listener: Address already in use"},
		{"a port in use", []string{"reverse", "tcp:08080", "tcp:1"}, "cannot bind listener: Address already in use"},
		{"a bad port", []string{"reverse", "tcp:70000", "tcp:1"}, "cannot bind listener: bad port number '70000'"},
		{"an unknown spec", []string{"reverse", "nowhere:1", "tcp:1"}, "cannot bind listener: unknown socket specification:nowhere:1"},
		{"remove a missing one", []string{"reverse", "--remove", "tcp:9"}, "listener 'tcp:9' not found"},
	}
	for _, tt := range fails {
		t.Run(tt.name, func(t *testing.T) {
			_, errs, code := adb(t, nil, append([]string{"-s", p.serial}, tt.args...)...)
			if code == 0 || !strings.Contains(errs, tt.want) {
				t.Errorf("adb %v: exit %d, stderr %q; want a failure with %q", tt.args, code, errs, tt.want)
			}
		})
	}

	// A rebind points the listener elsewhere, in its place in the list.
	p.run(t, "reverse", "localabstract:x", "tcp:2001")
	if list := reverseList(); !listLine("localabstract:x", "tcp:2001").MatchString(list) || strings.Contains(list, "tcp:1001") {
		t.Errorf("adb reverse --list after a rebind: got %q; want localabstract:x to tcp:2001 only", list)
	}
	p.run(t, "reverse", "--remove", "localabstract:x")
	if list := reverseList(); strings.Contains(list, "localabstract:x") || !strings.Contains(list, "tcp:8080") {
		t.Errorf("adb reverse --list after --remove: got %q; want tcp:8080 and not localabstract:x", list)
	}
	p.run(t, "reverse", "--remove-all")
	if list := reverseList(); list != "" {
		t.Errorf("adb reverse --list after --remove-all: got %q; want nothing", list)
	}
}

func TestReverseConnects(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	dev := p.srv.Device()
	ctx := context.Background()
	host := listenHost(t)
	p.run(t, "reverse", "localabstract:echo", "tcp:"+host.port)
	p.run(t, "reverse", "tcp:9000", "tcp:"+host.port)

	// echo checks that bytes go both ways between a connection made on the
	// phone and the one the host accepts, over several WRTEs each way.
	echo := func(t *testing.T, phone net.Conn) {
		t.Helper()
		defer phone.Close()
		phone.SetDeadline(time.Now().Add(testkit.Limit))
		hc := host.next(t)
		msg := bytes.Repeat([]byte("pinky "), 50000)
		go func() { io.Copy(hc, hc) }()
		go phone.Write(msg)
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(phone, got); err != nil {
			t.Fatalf("echo through the reverse: %v", err)
		}
		if !bytes.Equal(got, msg) {
			t.Error("echo through the reverse: bytes differ")
		}
	}
	t.Run("an abstract socket", func(t *testing.T) {
		c, err := dev.DialAbstract(ctx, "echo")
		if err != nil {
			t.Fatal(err)
		}
		echo(t, c)
	})
	t.Run("a TCP port", func(t *testing.T) {
		c, err := dev.DialTCP(ctx, 9000)
		if err != nil {
			t.Fatal(err)
		}
		echo(t, c)
	})
	t.Run("a forward to the phone's reverse", func(t *testing.T) {
		port := strings.TrimSpace(p.run(t, "forward", "tcp:0", "localabstract:echo"))
		defer adb(t, nil, "-s", p.serial, "forward", "--remove", "tcp:"+port)
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, testkit.Limit)
		if err != nil {
			t.Fatal(err)
		}
		echo(t, c)
	})
	t.Run("nothing listens on the phone", func(t *testing.T) {
		if _, err := dev.DialAbstract(ctx, "none"); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("DialAbstract of a free name: got %v; want ECONNREFUSED", err)
		}
		if _, err := dev.DialTCP(ctx, 9001); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("DialTCP of a free port: got %v; want ECONNREFUSED", err)
		}
	})
	t.Run("nothing listens on the host", func(t *testing.T) {
		free := listenHost(t)
		free.Close()
		p.run(t, "reverse", "localabstract:gone", "tcp:"+free.port)
		c, err := dev.DialAbstract(ctx, "gone")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(testkit.Limit))
		if n, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("read from a reverse the host refused: got %d, %v; want EOF", n, err)
		}
	})
	t.Run("the reverse holds the name", func(t *testing.T) {
		if _, err := dev.ListenAbstract("echo"); err == nil {
			t.Error("ListenAbstract of a reverse's name: got nil error")
		}
	})
	t.Run("the transport ends", func(t *testing.T) {
		adb(t, nil, "disconnect", p.serial)
		testkit.WaitUntil(t, "the reverse gone with its transport", func() bool {
			_, err := dev.DialAbstract(ctx, "echo")
			return errors.Is(err, syscall.ECONNREFUSED)
		})
		if out, _, _ := adb(t, nil, "connect", p.serial); !strings.Contains(out, "connected to") {
			t.Fatalf("adb connect: got %q", out)
		}
		testkit.WaitUntil(t, "the device back", func() bool { return state(t, p.serial) == "device" })
		if list := p.run(t, "reverse", "--list"); list != "\n" {
			t.Errorf("adb reverse --list on a new transport: got %q; want nothing", list)
		}
	})
}

// scrcpyPhone is a phone whose app_process runs the face's scrcpy server of
// version, with its jar pushed.
func scrcpyPhone(t *testing.T, version string) *phone {
	t.Helper()
	var p *phone
	p = newPhone(t, adbd.Config{AppProcess: func(ctx context.Context, args []string, stdout, stderr io.Writer, d *adbd.Device) error {
		return scrcpyd.AppProcessVersion(p.drv, version)(ctx, args, stdout, stderr, d)
	}})
	jar := filepath.Join(t.TempDir(), "scrcpy-server")
	if err := os.WriteFile(jar, []byte("stands for the server"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.run(t, "push", jar, "/data/local/tmp/scrcpy-server.jar")
	return p
}

// startServer starts the scrcpy server through adb shell and returns the
// command, whose stderr it collects.
func startServer(t *testing.T, p *phone, args ...string) (*exec.Cmd, *testkit.Buffer) {
	t.Helper()
	cmd := exec.Command("adb", append([]string{"-P", adbSrv.port, "-s", p.serial, "shell", "CLASSPATH=/data/local/tmp/scrcpy-server.jar", "app_process", "/", adbd.ScrcpyServerClass}, args...)...)
	cmd.Env = adbEnv()
	var stderr testkit.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// waitExit waits for the server's adb shell and returns its exit status.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(testkit.Limit):
		cmd.Process.Kill()
		<-done
		t.Fatal("the scrcpy server did not exit")
		return -1
	}
}

// TestReverseScrcpy runs the face's scrcpy server with tunnel_forward=false
// through Debian's adb, as scrcpy's own client does by default: the client
// listens, adb reverse maps the server's socket to it, and the server
// connects once per socket, video first, with no dummy byte.
func TestReverseScrcpy(t *testing.T) {
	for _, version := range []string{"3.3.4", "4.1"} {
		t.Run(version, func(t *testing.T) {
			p := scrcpyPhone(t, version)
			p.unlock(t)
			host := listenHost(t)
			p.run(t, "reverse", "localabstract:scrcpy_0000002a", "tcp:"+host.port)
			cmd, stderr := startServer(t, p, version, "scid=2a", "tunnel_forward=false", "audio=false", "log_level=info")
			video, control := host.next(t), host.next(t)

			// The device meta: the model, NUL-padded to 64 bytes, then the
			// codec id, then 3.x the size or 4.x a session packet.
			dev, err := sdk.ListDevices(context.Background(), p.drv)
			if err != nil {
				t.Fatal(err)
			}
			var model string
			for _, d := range dev {
				if d.ID == phoneID {
					model = d.Model
				}
			}
			head := make([]byte, 64+4+12)
			if version == "3.3.4" {
				head = head[:64+4+8]
			}
			if _, err := io.ReadFull(video, head); err != nil {
				t.Fatalf("reading the first bytes of the video socket: %v (server: %q)", err, stderr.String())
			}
			if name := string(bytes.TrimRight(head[:64], "\x00")); name != model || head[63] != 0 {
				t.Errorf("device meta: got %q; want %q, NUL-padded", head[:64], model)
			}
			if codec := string(head[64:68]); codec != "h264" {
				t.Errorf("codec id: got %q; want h264", codec)
			}
			size := head[68:]
			if version == "4.1" {
				if size[0]&0x80 == 0 {
					t.Errorf("4.1 video: first packet header %x; want a session packet (bit 63 set)", size[:4])
				}
				size = size[4:]
			}
			scr := p.screen(t)
			if w, h := binary.BigEndian.Uint32(size), binary.BigEndian.Uint32(size[4:]); int(w) != scr.Width || int(h) != scr.Height {
				t.Errorf("video size: got %dx%d; want the screen's %dx%d", w, h, scr.Width, scr.Height)
			}

			// The control socket drives the phone: EXPAND_NOTIFICATION_PANEL.
			go io.Copy(io.Discard, video)
			if _, err := control.Write([]byte{5}); err != nil {
				t.Fatal(err)
			}
			testkit.WaitUntil(t, "the notification shade", func() bool {
				_, ok := simtest.Find(p.screen(t), "notification_panel")
				return ok
			})

			// The client closing its sockets ends the server.
			video.Close()
			control.Close()
			waitExit(t, cmd)
		})
	}
}

// TestReverseScrcpyRefused: with the reverse removed before the server
// starts, nothing listens on the phone's socket and the server fails as the
// real one does.
func TestReverseScrcpyRefused(t *testing.T) {
	p := scrcpyPhone(t, "3.3.4")
	host := listenHost(t)
	p.run(t, "reverse", "localabstract:scrcpy", "tcp:"+host.port)
	p.run(t, "reverse", "--remove", "localabstract:scrcpy")
	cmd, stderr := startServer(t, p, "3.3.4", "tunnel_forward=false", "audio=false")
	if code := waitExit(t, cmd); code != 1 {
		t.Errorf("server exit status: got %d; want 1", code)
	}
	const want = "[server] ERROR: Connection refused\njava.io.IOException: Connection refused\n\tat android.net.LocalSocketImpl.connectLocal(Native Method)\n"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("server stderr: got %q; want %q in it", stderr.String(), want)
	}
	select {
	case c := <-host.conns:
		c.Close()
		t.Error("the host's listener got a connection with no reverse")
	default:
	}
}
