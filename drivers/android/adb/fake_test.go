package adb

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer is an adb server in the test: the smart-socket framing, host
// services, and scripted devices that answer shell v2, shell:, exec:, sync:
// and reverse requests.
type fakeServer struct {
	t  *testing.T
	ln net.Listener

	mu       sync.Mutex
	devices  map[string]*fakeDevice
	reqs     []string                          // every request, in order
	forwards map[string]int                    // forward specs → port handed out
	hook     func(req string, c net.Conn) bool // answers a request itself when it returns true
	track    chan string                       // track-devices snapshots after the first
	sends    []int                             // DATA chunk sizes received by SEND
}

type fakeDevice struct {
	serial, state string
	features      string
	shell         map[string]ShellResult // shell v2 (and v1) answers by command
	exec          map[string][]byte
	files         map[string]*fakeFile
}

type fakeFile struct {
	mode  uint32
	data  []byte
	mtime uint32
}

func newFake(t *testing.T) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{t: t, ln: ln, devices: map[string]*fakeDevice{}, forwards: map[string]int{}, track: make(chan string, 8)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				// The test's end closes connections a handler still holds.
				stop := context.AfterFunc(t.Context(), func() { c.Close() })
				defer stop()
				f.serve(c)
			}()
		}
	}()
	return f
}

// client returns a client of the fake that never starts a server.
func (f *fakeServer) client(t *testing.T) *Client {
	t.Helper()
	c, err := New(Options{Addr: f.ln.Addr().String(), NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *fakeServer) addDevice(d *fakeDevice) *fakeDevice {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d.state == "" {
		d.state = "device"
	}
	if d.files == nil {
		d.files = map[string]*fakeFile{}
	}
	f.devices[d.serial] = d
	return d
}

func (f *fakeServer) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.reqs...)
}

func readReq(c net.Conn) (string, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return "", err
	}
	n, err := strconv.ParseUint(string(h[:]), 16, 16)
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	_, err = io.ReadFull(c, b)
	return string(b), err
}

func okay(c net.Conn)              { io.WriteString(c, "OKAY") }
func fail(c net.Conn, msg string)  { fmt.Fprintf(c, "FAIL%04x%s", len(msg), msg) }
func str(c net.Conn, s string)     { fmt.Fprintf(c, "%04x%s", len(s), s) }
func okayStr(c net.Conn, s string) { okay(c); str(c, s) }
func shellPacket(id byte, b []byte) []byte {
	p := []byte{id, 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(p[1:], uint32(len(b)))
	return append(p, b...)
}

func (f *fakeServer) devicesText() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var serials []string
	for s := range f.devices {
		serials = append(serials, s)
	}
	sort.Strings(serials)
	var b strings.Builder
	for i, s := range serials {
		fmt.Fprintf(&b, "%-22s %s product:p model:m device:d transport_id:%d\n", s, f.devices[s].state, i+1)
	}
	return b.String()
}

// lookup answers a device selection like acquire_one_transport does.
func (f *fakeServer) lookup(serial string) (*fakeDevice, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.devices[serial]
	switch {
	case !ok:
		return nil, fmt.Sprintf("device '%s' not found", serial)
	case d.state == "unauthorized":
		return nil, "device unauthorized.\nThis adb server's $ADB_VENDOR_KEYS is not set\n" +
			"Try 'adb kill-server' if that seems wrong.\nOtherwise check for a confirmation dialog on your device."
	case d.state == "offline":
		return nil, "device offline"
	}
	return d, ""
}

func (f *fakeServer) serve(c net.Conn) {
	for {
		req, err := readReq(c)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, req)
		hook := f.hook
		f.mu.Unlock()
		if hook != nil && hook(req, c) {
			return
		}
		switch {
		case req == "host:version":
			okayStr(c, "0029")
			return
		case req == "host:devices-l":
			okayStr(c, f.devicesText())
			return
		case req == "host:track-devices-l":
			okayStr(c, f.devicesText())
			for {
				select {
				case s := <-f.track:
					str(c, s)
				case <-f.t.Context().Done():
					return
				}
			}
		case req == "host:kill":
			return // closes without OKAY, as a server that exits fast does
		case req == "host:list-forward":
			okayStr(c, "emu1 tcp:1234 localabstract:a\nemu1 tcp:1235 tcp:80\n")
			return
		case strings.HasPrefix(req, "host:connect:"):
			addr := strings.TrimPrefix(req, "host:connect:")
			if addr == "127.0.0.1:5555" {
				okayStr(c, "connected to "+addr)
			} else {
				okayStr(c, fmt.Sprintf("failed to connect to '%s': Connection refused", addr))
			}
			return
		case strings.HasPrefix(req, "host:disconnect:"):
			fail(c, fmt.Sprintf("no such device '%s'", strings.TrimPrefix(req, "host:disconnect:")))
			return
		case strings.HasPrefix(req, "host:transport:"):
			d, msg := f.lookup(strings.TrimPrefix(req, "host:transport:"))
			if d == nil {
				fail(c, msg)
				return
			}
			okay(c)
			f.serveDevice(c, d)
			return
		case strings.HasPrefix(req, "host-serial:"):
			rest := strings.TrimPrefix(req, "host-serial:")
			serial, svc, _ := strings.Cut(rest, ":")
			d, msg := f.lookup(serial)
			if d == nil {
				fail(c, msg)
				return
			}
			f.serveHostSerial(c, d, svc)
			return
		default:
			fail(c, "unknown host service")
			return
		}
	}
}

func (f *fakeServer) serveHostSerial(c net.Conn, d *fakeDevice, svc string) {
	switch {
	case svc == "features":
		okayStr(c, d.features)
	case svc == "get-state":
		okayStr(c, d.state)
	case strings.HasPrefix(svc, "forward:"):
		local, remote, _ := strings.Cut(strings.TrimPrefix(svc, "forward:"), ";")
		if remote == "localabstract:missing" {
			okay(c)
			fail(c, "cannot bind listener: Address already in use")
			return
		}
		okay(c)
		okay(c)
		if local == "tcp:0" {
			str(c, "41234")
		}
	case strings.HasPrefix(svc, "killforward:"):
		okay(c)
		if svc == "killforward:tcp:9" {
			fail(c, "listener 'tcp:9' not found")
			return
		}
		okay(c)
	default:
		fail(c, "unknown host-serial service")
	}
}

func (f *fakeServer) serveDevice(c net.Conn, d *fakeDevice) {
	svc, err := readReq(c)
	if err != nil {
		return
	}
	f.mu.Lock()
	f.reqs = append(f.reqs, svc)
	f.mu.Unlock()
	switch {
	case strings.HasPrefix(svc, "shell,v2,raw:"):
		res, ok := d.shell[strings.TrimPrefix(svc, "shell,v2,raw:")]
		if !ok {
			res = ShellResult{Stderr: []byte("sh: not found\n"), Exit: 127}
		}
		okay(c)
		// The client must close stdin first.
		var h [5]byte
		if _, err := io.ReadFull(c, h[:]); err != nil || h[0] != shellCloseStdin {
			c.Write(shellPacket(shellStderr, []byte("no close-stdin")))
			c.Write(shellPacket(shellExit, []byte{99}))
			return
		}
		var b []byte
		b = append(b, shellPacket(shellStdout, res.Stdout)...)
		b = append(b, shellPacket(9, []byte("unknown id, skipped"))...)
		b = append(b, shellPacket(shellStderr, res.Stderr)...)
		b = append(b, shellPacket(shellExit, []byte{byte(res.Exit)})...)
		// Byte by byte, so packets arrive split across reads.
		for i := range b {
			if _, err := c.Write(b[i : i+1]); err != nil {
				return
			}
		}
	case strings.HasPrefix(svc, "shell:"):
		line := strings.TrimPrefix(svc, "shell:")
		inner, _, marked := strings.Cut(strings.TrimPrefix(line, "("), "\n); echo \""+exitMarker+"$?\"")
		if !marked {
			inner = line // ShellTo's plain command
		}
		res, ok := d.shell[inner]
		if !ok && !marked {
			fail(c, "unexpected legacy shell line")
			return
		}
		okay(c)
		// A PTY merges the streams and ends lines with \r\n.
		out := bytes.ReplaceAll(append(res.Stdout, res.Stderr...), []byte("\n"), []byte("\r\n"))
		c.Write(out)
		if marked {
			fmt.Fprintf(c, "%s%d\r\n", exitMarker, res.Exit)
		}
	case strings.HasPrefix(svc, "exec:"):
		out, ok := d.exec[strings.TrimPrefix(svc, "exec:")]
		if !ok {
			fail(c, "exec failed")
			return
		}
		okay(c)
		if out == nil { // a stream that never ends
			io.Copy(io.Discard, c)
			return
		}
		c.Write(out)
	case svc == "localabstract:echo":
		okay(c)
		io.Copy(c, c)
	case svc == "sync:":
		okay(c)
		f.serveSync(c, d)
	case strings.HasPrefix(svc, "reverse:forward:"):
		remote, _, _ := strings.Cut(strings.TrimPrefix(svc, "reverse:forward:"), ";")
		okay(c)
		okay(c)
		if remote == "tcp:0" {
			str(c, "38000")
		}
	case strings.HasPrefix(svc, "reverse:killforward:"):
		okay(c)
		fail(c, "listener '"+strings.TrimPrefix(svc, "reverse:killforward:")+"' not found")
	case svc == "reverse:list-forward":
		okayStr(c, "host tcp:38000 tcp:8080\n")
	default:
		fail(c, "closed")
	}
}

func (f *fakeServer) serveSync(c net.Conn, d *fakeDevice) {
	syncMsg := func(id string, n uint32) []byte {
		b := make([]byte, 8)
		copy(b, id)
		binary.LittleEndian.PutUint32(b[4:], n)
		return b
	}
	syncFail := func(msg string) {
		c.Write(append(syncMsg("FAIL", uint32(len(msg))), msg...))
	}
	for {
		var h [8]byte
		if _, err := io.ReadFull(c, h[:]); err != nil {
			return
		}
		id, n := string(h[:4]), binary.LittleEndian.Uint32(h[4:])
		if id == "QUIT" {
			return
		}
		arg := make([]byte, n)
		if _, err := io.ReadFull(c, arg); err != nil {
			return
		}
		path := string(arg)
		f.mu.Lock()
		file := d.files[path]
		f.mu.Unlock()
		switch id {
		case "STAT":
			b := make([]byte, 16)
			copy(b, "STAT")
			if file != nil {
				binary.LittleEndian.PutUint32(b[4:], file.mode)
				binary.LittleEndian.PutUint32(b[8:], uint32(len(file.data)))
				binary.LittleEndian.PutUint32(b[12:], file.mtime)
			}
			c.Write(b)
		case "LIST":
			dent := func(name string, mode, size, mtime uint32) {
				b := make([]byte, 20)
				copy(b, "DENT")
				binary.LittleEndian.PutUint32(b[4:], mode)
				binary.LittleEndian.PutUint32(b[8:], size)
				binary.LittleEndian.PutUint32(b[12:], mtime)
				binary.LittleEndian.PutUint32(b[16:], uint32(len(name)))
				c.Write(append(b, name...))
			}
			dent(".", sIFDIR|0o755, 0, 0)
			dent("..", sIFDIR|0o755, 0, 0)
			f.mu.Lock()
			var names []string
			for p := range d.files {
				if dir, _ := splitDir(p); dir == path {
					names = append(names, p)
				}
			}
			sort.Strings(names)
			for _, p := range names {
				_, name := splitDir(p)
				ff := d.files[p]
				dent(name, ff.mode, uint32(len(ff.data)), ff.mtime)
			}
			f.mu.Unlock()
			c.Write(append([]byte("DONE"), make([]byte, 16)...))
		case "RECV":
			if file == nil {
				syncFail("open failed: No such file or directory")
				return
			}
			for b := file.data; ; {
				k := min(len(b), 1000)
				c.Write(append(syncMsg("DATA", uint32(k)), b[:k]...))
				if b = b[k:]; len(b) == 0 {
					break
				}
			}
			c.Write(syncMsg("DONE", 0))
		case "SEND":
			p, modeText, _ := strings.Cut(path, ",")
			mode, err := strconv.ParseUint(modeText, 0, 32)
			if err != nil {
				syncFail("bad mode")
				return
			}
			var data []byte
			for {
				var dh [8]byte
				if _, err := io.ReadFull(c, dh[:]); err != nil {
					return
				}
				k := binary.LittleEndian.Uint32(dh[4:])
				if string(dh[:4]) == "DONE" {
					if strings.HasPrefix(p, "/readonly/") {
						syncFail("couldn't create file: Read-only file system")
						break
					}
					f.mu.Lock()
					d.files[p] = &fakeFile{mode: uint32(mode), data: data, mtime: k}
					f.mu.Unlock()
					c.Write(syncMsg("OKAY", 0))
					break
				}
				if string(dh[:4]) != "DATA" || k > maxSyncData {
					syncFail("bad DATA")
					return
				}
				f.mu.Lock()
				f.sends = append(f.sends, int(k))
				f.mu.Unlock()
				chunk := make([]byte, k)
				if _, err := io.ReadFull(c, chunk); err != nil {
					return
				}
				data = append(data, chunk...)
			}
		default:
			syncFail(fmt.Sprintf("unknown command %08x", binary.LittleEndian.Uint32(h[:4])))
			return
		}
	}
}

func splitDir(p string) (dir, name string) {
	i := strings.LastIndex(p, "/")
	if i <= 0 {
		return "/", p[i+1:]
	}
	return p[:i], p[i+1:]
}

// ctxTimeout returns a context that ends after d, so that a hang fails the test.
func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}
