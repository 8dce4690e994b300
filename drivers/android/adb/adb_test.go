package adb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestNewAddr(t *testing.T) {
	for _, tt := range []struct {
		name             string
		env              map[string]string
		addr             string
		network, address string
		port             string
		wantErr          bool
	}{
		{name: "default", network: "tcp", address: "127.0.0.1:5037", port: "5037"},
		{name: "port env", env: map[string]string{"ANDROID_ADB_SERVER_PORT": "6000"}, network: "tcp", address: "127.0.0.1:6000", port: "6000"},
		{name: "socket env wins", env: map[string]string{"ADB_SERVER_SOCKET": "tcp:10.0.0.2:7000", "ANDROID_ADB_SERVER_PORT": "6000"}, network: "tcp", address: "10.0.0.2:7000"},
		{name: "socket env port only", env: map[string]string{"ADB_SERVER_SOCKET": "tcp:7001"}, network: "tcp", address: "127.0.0.1:7001", port: "7001"},
		{name: "address env", env: map[string]string{"ANDROID_ADB_SERVER_ADDRESS": "192.168.1.5"}, network: "tcp", address: "192.168.1.5:5037"},
		{name: "option wins over env", env: map[string]string{"ANDROID_ADB_SERVER_PORT": "6000"}, addr: "localhost:6001", network: "tcp", address: "127.0.0.1:6001", port: "6001"},
		{name: "localabstract", addr: "localabstract:adb", network: "unix", address: "@adb"},
		{name: "localfilesystem", addr: "localfilesystem:/tmp/adb.sock", network: "unix", address: "/tmp/adb.sock"},
		{name: "ipv6 loopback", addr: "[::1]:5037", network: "tcp", address: "[::1]:5037", port: "5037"},
		{name: "bad port", addr: "127.0.0.1:x", wantErr: true},
		{name: "port out of range", env: map[string]string{"ANDROID_ADB_SERVER_PORT": "70000"}, wantErr: true},
		{name: "no port", addr: "127.0.0.1", wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{"ADB_SERVER_SOCKET", "ANDROID_ADB_SERVER_PORT", "ANDROID_ADB_SERVER_ADDRESS"} {
				t.Setenv(k, tt.env[k])
			}
			c, err := New(Options{Addr: tt.addr})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("New: got %s; want an error", c.spec)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.network != tt.network || c.address != tt.address || c.port != tt.port {
				t.Errorf("got %s %s port %q; want %s %s port %q", c.network, c.address, c.port, tt.network, tt.address, tt.port)
			}
		})
	}
}

func TestVersionAndKill(t *testing.T) {
	f := newFake(t)
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)
	v, err := c.Version(ctx)
	if err != nil || v != 41 {
		t.Fatalf("Version: got %d, %v; want 41", v, err)
	}
	// The fake closes host:kill without a reply, like a server that exits at once.
	if err := c.Kill(ctx); err != nil {
		t.Errorf("Kill: %v", err)
	}
	if got, want := f.requests(), []string{"host:version", "host:kill"}; !cmp.Equal(got, want) {
		t.Errorf("requests: got %q; want %q", got, want)
	}
}

func TestParseDevices(t *testing.T) {
	const in = "emulator-5554          device product:sdk_gphone64_x86_64 model:sdk_gphone64_x86_64 device:emu64xa transport_id:1\n" +
		"R58M123ABC             unauthorized usb:1-1 transport_id:2\n" +
		"0123456789ABCDEF       no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html] usb:3-2 transport_id:3\n" +
		"192.168.1.9:5555       offline transport_id:4\n" +
		"plain\tdevice\n"
	got := parseDevices(in)
	want := []DeviceInfo{
		{Serial: "emulator-5554", State: StateDevice, Product: "sdk_gphone64_x86_64", Model: "sdk_gphone64_x86_64", Device: "emu64xa", TransportID: 1,
			Attrs: map[string]string{"product": "sdk_gphone64_x86_64", "model": "sdk_gphone64_x86_64", "device": "emu64xa", "transport_id": "1"}},
		{Serial: "R58M123ABC", State: StateUnauthorized, USB: "1-1", TransportID: 2, Attrs: map[string]string{"usb": "1-1", "transport_id": "2"}},
		{Serial: "0123456789ABCDEF", State: StateNoPermissions,
			StateText: "no permissions (missing udev rules? user is in the plugdev group); see [http://developer.android.com/tools/device.html]",
			USB:       "3-2", TransportID: 3, Attrs: map[string]string{"usb": "3-2", "transport_id": "3"}},
		{Serial: "192.168.1.9:5555", State: StateOffline, TransportID: 4, Attrs: map[string]string{"transport_id": "4"}},
		{Serial: "plain", State: StateDevice, Attrs: map[string]string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseDevices (-want +got):\n%s", diff)
	}
	if got := parseDevices(""); len(got) != 0 {
		t.Errorf("parseDevices(\"\"): got %v; want none", got)
	}
}

func TestDeviceInfoErr(t *testing.T) {
	for _, tt := range []struct {
		state    State
		adbErr   error
		sdkErr   error
		contains string
	}{
		{state: StateDevice},
		{StateUnauthorized, ErrUnauthorized, sdk.ErrDeviceUnauthorized, "accept the \"Allow USB debugging?\" prompt"},
		{StateOffline, ErrOffline, sdk.ErrDeviceOffline, "is offline"},
		{StateAuthorizing, ErrOffline, sdk.ErrDeviceOffline, "authorizing"},
		{StateNoPermissions, ErrNoPermission, sdk.ErrDeviceOffline, "udev"},
		{StateRecovery, ErrOffline, sdk.ErrDeviceOffline, "recovery mode"},
	} {
		t.Run(string(tt.state), func(t *testing.T) {
			err := DeviceInfo{Serial: "S1", State: tt.state}.Err()
			if tt.adbErr == nil {
				if err != nil {
					t.Fatalf("got %v; want nil", err)
				}
				return
			}
			if !errors.Is(err, tt.adbErr) || !errors.Is(err, tt.sdkErr) {
				t.Errorf("got %v; want it to wrap %v and %v", err, tt.adbErr, tt.sdkErr)
			}
			if err == nil || !strings.Contains(err.Error(), tt.contains) || !strings.Contains(err.Error(), "S1") {
				t.Errorf("got %v; want the serial and %q", err, tt.contains)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := DeviceInfo{Serial: "a", State: StateDevice}
	b := DeviceInfo{Serial: "b", State: StateUnauthorized}
	bOK := DeviceInfo{Serial: "b", State: StateDevice}
	bModel := DeviceInfo{Serial: "b", State: StateUnauthorized, Attrs: map[string]string{"model": "X"}}
	for _, tt := range []struct {
		name       string
		prev, next []DeviceInfo
		want       []DeviceEvent
	}{
		{"empty", nil, nil, nil},
		{"first snapshot", nil, []DeviceInfo{a, b}, []DeviceEvent{{Kind: DeviceAdded, Device: a}, {Kind: DeviceAdded, Device: b}}},
		{"same", []DeviceInfo{a, b}, []DeviceInfo{b, a}, nil},
		{"removed", []DeviceInfo{a, b}, []DeviceInfo{b}, []DeviceEvent{{Kind: DeviceRemoved, Device: a}}},
		{"authorized", []DeviceInfo{b}, []DeviceInfo{bOK}, []DeviceEvent{{Kind: DeviceChanged, Device: bOK, OldState: StateUnauthorized}}},
		{"details", []DeviceInfo{b}, []DeviceInfo{bModel}, []DeviceEvent{{Kind: DeviceChanged, Device: bModel, OldState: StateUnauthorized}}},
		{"swap", []DeviceInfo{a}, []DeviceInfo{b}, []DeviceEvent{{Kind: DeviceRemoved, Device: a}, {Kind: DeviceAdded, Device: b}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Diff(tt.prev, tt.next), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Diff (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDevicesAndWatch(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "emu1"})
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)

	list, err := c.Devices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Serial != "emu1" || list[0].State != StateDevice || list[0].Model != "m" || list[0].TransportID != 1 {
		t.Fatalf("Devices: got %+v; want emu1 device model m transport 1", list)
	}

	f.track <- "emu1 device product:p model:m device:d transport_id:1\nR58\tunauthorized\n"
	f.track <- "R58\tdevice\n"
	f.track <- ""
	var got []string
	for ev, err := range c.WatchDevices(ctx) {
		if err != nil {
			t.Fatalf("WatchDevices: %v after %q", err, got)
		}
		got = append(got, fmt.Sprintf("%s %s %s<-%s", ev.Kind, ev.Device.Serial, ev.Device.State, ev.OldState))
		if len(got) == 5 {
			break
		}
	}
	want := []string{"added emu1 device<-", "added R58 unauthorized<-", "removed emu1 device<-", "changed R58 device<-unauthorized", "removed R58 device<-"}
	if !cmp.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
}

func TestTrackDevicesCancel(t *testing.T) {
	f := newFake(t)
	c := f.client(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var snapshots int
	start := time.Now()
	last := within(t, 3*time.Second, func() error {
		for list, err := range c.TrackDevices(ctx) {
			if err != nil {
				return err
			}
			if len(list) != 0 {
				t.Errorf("snapshot: got %v; want empty", list)
			}
			snapshots++
			time.AfterFunc(50*time.Millisecond, cancel)
		}
		return nil
	})
	if snapshots != 1 || !errors.Is(last, context.Canceled) {
		t.Errorf("got %d snapshots and %v; want 1 and context.Canceled", snapshots, last)
	}
	if d := time.Since(start); d > testkit.Scaled(3*time.Second) {
		t.Errorf("cancel took %v", d)
	}
}

func TestTransportErrors(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "unauth", state: "unauthorized"})
	f.addDevice(&fakeDevice{serial: "off", state: "offline"})
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)
	for _, tt := range []struct {
		serial   string
		adbErr   error
		sdkErr   error
		contains string
	}{
		{"nope", ErrDeviceNotFound, sdk.ErrDeviceNotFound, "device 'nope' not found"},
		{"unauth", ErrUnauthorized, sdk.ErrDeviceUnauthorized, "confirmation dialog"},
		{"off", ErrOffline, sdk.ErrDeviceOffline, "device offline"},
	} {
		t.Run(tt.serial, func(t *testing.T) {
			_, err := c.Device(tt.serial).ExecOutput(ctx, "true")
			var se *ServerError
			if !errors.As(err, &se) || se.Request != "host:transport:"+tt.serial {
				t.Fatalf("got %v; want a *ServerError for host:transport:%s", err, tt.serial)
			}
			if !errors.Is(err, tt.adbErr) || !errors.Is(err, tt.sdkErr) || !strings.Contains(err.Error(), tt.contains) {
				t.Errorf("got %v; want %v, %v and %q", err, tt.adbErr, tt.sdkErr, tt.contains)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		msg  string
		want error
	}{
		{"device 'x' not found", ErrDeviceNotFound},
		{"no devices/emulators found", ErrDeviceNotFound},
		{"no such device '1.2.3.4:5555'", ErrDeviceNotFound},
		{"device offline", ErrOffline},
		{"device still authorizing", ErrOffline},
		{"device unauthorized.\nplease check", ErrUnauthorized},
		{"insufficient permissions for device: user in plugdev group", ErrNoPermission},
		{"open failed: No such file or directory", ErrFileNotFound},
		{"more than one device/emulator", nil},
		{"", nil},
	} {
		if got := classify(tt.msg); got != tt.want {
			t.Errorf("classify(%q): got %v; want %v", tt.msg, got, tt.want)
		}
	}
	if got := failError("r", "").Error(); got != "adb r: failed without a message" {
		t.Errorf("empty FAIL: got %q", got)
	}
}

func TestShellV2(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "s", features: "cmd,shell_v2,stat_v2", shell: map[string]ShellResult{
		"getprop ro.build.version.sdk": {Stdout: []byte("34\n"), Exit: 0},
		"ls /nope":                     {Stderr: []byte("ls: /nope: No such file or directory\n"), Exit: 1},
	}})
	d := f.client(t).Device("s")
	ctx := ctxTimeout(t, 5*time.Second)
	for _, tt := range []struct {
		cmd  string
		want ShellResult
	}{
		{"getprop ro.build.version.sdk", ShellResult{Stdout: []byte("34\n")}},
		{"ls /nope", ShellResult{Stderr: []byte("ls: /nope: No such file or directory\n"), Exit: 1}},
		{"missing", ShellResult{Stderr: []byte("sh: not found\n"), Exit: 127}},
	} {
		got, err := d.Shell(ctx, tt.cmd)
		if err != nil {
			t.Fatalf("Shell(%q): %v", tt.cmd, err)
		}
		if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Shell(%q) (-want +got):\n%s", tt.cmd, diff)
		}
	}
	if st, err := d.State(ctx); err != nil || st != StateDevice {
		t.Errorf("State: got %q, %v; want device", st, err)
	}
	// Features are read once, then every shell is v2.
	var features, v2 int
	for _, r := range f.requests() {
		features += strings.Count(r, ":features")
		if strings.HasPrefix(r, "shell,v2,raw:") {
			v2++
		}
	}
	if features != 1 || v2 != 3 {
		t.Errorf("got %d features requests and %d v2 shells; want 1 and 3: %q", features, v2, f.requests())
	}
}

// ShellTo hands the output to the writers, stdout and stderr apart, with
// the exit code; without shell_v2 everything is stdout.
func TestShellTo(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "s", features: "shell_v2", shell: map[string]ShellResult{
		"server": {Stdout: []byte("[server] INFO: New display: 640x480/160 (id=7)\n"), Stderr: []byte("[server] WARN: x\n"), Exit: 2},
	}})
	f.addDevice(&fakeDevice{serial: "old", features: "cmd", shell: map[string]ShellResult{
		"server": {Stdout: []byte("out\n"), Stderr: []byte("err\n")},
	}})
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)
	var stdout, stderr bytes.Buffer
	exit, err := c.Device("s").ShellTo(ctx, "server", &stdout, &stderr)
	if err != nil || exit != 2 || stdout.String() != "[server] INFO: New display: 640x480/160 (id=7)\n" || stderr.String() != "[server] WARN: x\n" {
		t.Errorf("ShellTo: got exit %d, %v, stdout %q, stderr %q; want exit 2 and the two streams apart", exit, err, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	exit, err = c.Device("old").ShellTo(ctx, "server", &stdout, &stderr)
	if err != nil || exit != ExitUnknown || stdout.String() != "out\r\nerr\r\n" || stderr.Len() != 0 {
		t.Errorf("ShellTo without shell_v2: got exit %d, %v, stdout %q, stderr %q; want everything on stdout, exit unknown", exit, err, stdout.String(), stderr.String())
	}
	// A writer that fails ends the command with its error.
	boom := errors.New("boom")
	_, err = c.Device("s").ShellTo(ctx, "server", failWriter{boom}, io.Discard)
	if !errors.Is(err, boom) {
		t.Errorf("ShellTo with a failing writer: got %v; want its error", err)
	}
}

type failWriter struct{ err error }

func (w failWriter) Write([]byte) (int, error) { return 0, w.err }

func TestShellV1Fallback(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "old", features: "cmd", shell: map[string]ShellResult{
		"echo hi; exit 3": {Stdout: []byte("hi\n"), Stderr: []byte("warn\n"), Exit: 3},
	}})
	got, err := f.client(t).Device("old").Shell(ctxTimeout(t, 5*time.Second), "echo hi; exit 3")
	if err != nil {
		t.Fatal(err)
	}
	want := ShellResult{Stdout: []byte("hi\r\nwarn\r\n"), Exit: 3}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("Shell (-want +got):\n%s", diff)
	}
}

func TestParseShellV1(t *testing.T) {
	for _, tt := range []struct {
		out  string
		want ShellResult
	}{
		{"a\n" + exitMarker + "0\n", ShellResult{Stdout: []byte("a\n"), Exit: 0}},
		{"no newline" + exitMarker + "255\r\n", ShellResult{Stdout: []byte("no newline"), Exit: 255}},
		{"killed before the marker", ShellResult{Stdout: []byte("killed before the marker"), Exit: ExitUnknown}},
		{"x" + exitMarker + "junk", ShellResult{Stdout: []byte("x" + exitMarker + "junk"), Exit: ExitUnknown}},
	} {
		if diff := cmp.Diff(tt.want, parseShellV1([]byte(tt.out))); diff != "" {
			t.Errorf("parseShellV1(%q) (-want +got):\n%s", tt.out, diff)
		}
	}
}

func TestReadShellV2Errors(t *testing.T) {
	exit0 := shellPacket(shellExit, []byte{0})
	for _, tt := range []struct {
		name string
		in   []byte
	}{
		{"no exit packet", shellPacket(shellStdout, []byte("x"))},
		{"truncated header", append(shellPacket(shellStdout, []byte("x")), 1, 2)},
		{"truncated data", shellPacket(shellStdout, []byte("hello"))[:7]},
		{"empty exit", shellPacket(shellExit, nil)},
		{"garbage length", []byte{1, 0xff, 0xff, 0xff, 0x7f, 'x'}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := readShellV2(bytes.NewReader(tt.in))
			if !errors.Is(err, ErrProtocol) {
				t.Errorf("got %v; want ErrProtocol", err)
			}
		})
	}
	// After the exit packet, output still counts until EOF, as in adb.
	in := append(append([]byte{}, exit0...), shellPacket(shellStdout, []byte("late"))...)
	res, err := readShellV2(bytes.NewReader(in))
	if err != nil || string(res.Stdout) != "late" || res.Exit != 0 {
		t.Errorf("got %+v, %v; want stdout late, exit 0", res, err)
	}
}

func TestExec(t *testing.T) {
	bin := []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0}
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "s", exec: map[string][]byte{"screencap -p": bin, "forever": nil}})
	d := f.client(t).Device("s")
	ctx := ctxTimeout(t, 5*time.Second)

	got, err := d.ExecOutput(ctx, "screencap -p")
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("ExecOutput: got %q, %v; want %q", got, err, bin)
	}
	if _, err := d.ExecOutput(ctx, "unknown"); err == nil || !strings.Contains(err.Error(), "exec failed") {
		t.Errorf("ExecOutput(unknown): got %v; want the FAIL message", err)
	}

	// Cancelling the context ends a stream that never ends.
	sctx, cancel := context.WithCancel(ctx)
	rc, err := d.Exec(sctx, "forever")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := within(t, 3*time.Second, func() error { _, err := io.ReadAll(rc); return err }); err == nil {
		t.Errorf("reading a cancelled stream: got nil error; want one")
	}
}

func TestOpenStream(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "s"})
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)
	conn, err := c.OpenStream(ctx, "s", "localabstract:echo")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(conn, buf); err != nil || string(buf) != "ping" {
		t.Errorf("echo: got %q, %v; want ping", buf, err)
	}
	if _, err := c.OpenStream(ctx, "s", "localabstract:nothing"); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("OpenStream to a closed socket: got %v; want the FAIL message", err)
	}
}

func TestSync(t *testing.T) {
	f := newFake(t)
	dev := f.addDevice(&fakeDevice{serial: "s"})
	d := f.client(t).Device("s")
	ctx := ctxTimeout(t, 10*time.Second)

	data := bytes.Repeat([]byte("0123456789abcdef"), 10000) // 160000 bytes: 3 chunks
	mtime := time.Unix(1700000000, 0)
	if err := d.Push(ctx, bytes.NewReader(data), "/sdcard/Pinky/a.bin", 0o640, mtime); err != nil {
		t.Fatalf("Push: %v", err)
	}
	f.mu.Lock()
	sends, ff := f.sends, dev.files["/sdcard/Pinky/a.bin"]
	f.mu.Unlock()
	if want := []int{65536, 65536, 28928}; !cmp.Equal(sends, want) {
		t.Errorf("DATA chunks: got %v; want %v", sends, want)
	}
	if ff == nil || ff.mode != 0o100640 || ff.mtime != 1700000000 {
		t.Errorf("pushed file: got %+v; want mode 0100640 mtime 1700000000", ff)
	}
	if err := d.Push(ctx, strings.NewReader(""), "/sdcard/Pinky/empty", 0, time.Time{}); err != nil {
		t.Fatalf("Push(empty): %v", err)
	}
	f.mu.Lock()
	ff = dev.files["/sdcard/Pinky/empty"]
	f.mu.Unlock()
	if ff == nil || ff.mode != 0o100644 || len(ff.data) != 0 {
		t.Errorf("empty file: got %+v; want mode 0100644, no data", ff)
	}

	fi, err := d.Stat(ctx, "/sdcard/Pinky/a.bin")
	if err != nil {
		t.Fatal(err)
	}
	if want := (FileInfo{Name: "a.bin", Mode: 0o640, Size: int64(len(data)), ModTime: mtime}); fi != want {
		t.Errorf("Stat: got %+v; want %+v", fi, want)
	}
	if _, err := d.Stat(ctx, "/sdcard/none"); !errors.Is(err, ErrFileNotFound) || !errors.Is(err, sdk.ErrFileNotFound) {
		t.Errorf("Stat(missing): got %v; want ErrFileNotFound", err)
	}

	list, err := d.List(ctx, "/sdcard/Pinky")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range list {
		names = append(names, e.Name)
	}
	if want := []string{"a.bin", "empty"}; !cmp.Equal(names, want) {
		t.Errorf("List: got %q; want %q", names, want)
	}

	var out bytes.Buffer
	n, err := d.Pull(ctx, "/sdcard/Pinky/a.bin", &out)
	if err != nil || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
		t.Errorf("Pull: got %d bytes, %v; want %d equal bytes", n, err, len(data))
	}

	// A FAIL carries the device's message and ends the session.
	s, err := d.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Recv("/sdcard/none", io.Discard)
	var se *ServerError
	if !errors.As(err, &se) || se.Message != "open failed: No such file or directory" || !errors.Is(err, ErrFileNotFound) {
		t.Errorf("Recv(missing): got %v; want the FAIL message, wrapping ErrFileNotFound", err)
	}
	if _, err := s.Stat("/sdcard/Pinky/a.bin"); err == nil || !strings.Contains(err.Error(), "session ended") {
		t.Errorf("Stat after FAIL: got %v; want a closed-session error", err)
	}

	err = d.Push(ctx, strings.NewReader("x"), "/readonly/x", 0o644, mtime)
	if !errors.As(err, &se) || !strings.Contains(se.Message, "Read-only") {
		t.Errorf("Push(read-only): got %v; want the FAIL message", err)
	}
	if _, err := d.Stat(ctx, strings.Repeat("a", 1025)); err == nil {
		t.Errorf("Stat(long path): got nil error")
	}
}

func TestFileMode(t *testing.T) {
	for _, tt := range []struct {
		in   uint32
		want fs.FileMode
	}{
		{0o100644, 0o644},
		{0o040755, fs.ModeDir | 0o755},
		{0o120777, fs.ModeSymlink | 0o777},
		{0o020660, fs.ModeDevice | fs.ModeCharDevice | 0o660},
		{0o104755, fs.ModeSetuid | 0o755},
	} {
		if got := fileMode(tt.in); got != tt.want {
			t.Errorf("fileMode(%o): got %v; want %v", tt.in, got, tt.want)
		}
	}
	if got := unixMode(fs.ModeDir | 0o700); got != 0o100700 {
		t.Errorf("unixMode: got %o; want 100700", got)
	}
}

func TestForward(t *testing.T) {
	f := newFake(t)
	f.addDevice(&fakeDevice{serial: "s"})
	c := f.client(t)
	d := c.Device("s")
	ctx := ctxTimeout(t, 5*time.Second)
	for _, tt := range []struct {
		local, remote string
		want          int
		wantErr       string
	}{
		{"tcp:0", "localabstract:scrcpy_01", 41234, ""},
		{"tcp:27183", "localabstract:scrcpy_01", 27183, ""},
		{"localabstract:x", "tcp:80", 0, ""},
		{"tcp:0", "localabstract:missing", 0, "Address already in use"},
	} {
		port, err := d.Forward(ctx, tt.local, tt.remote)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Forward(%s, %s): got %v; want %q", tt.local, tt.remote, err, tt.wantErr)
			}
			continue
		}
		if err != nil || port != tt.want {
			t.Errorf("Forward(%s, %s): got %d, %v; want %d", tt.local, tt.remote, port, err, tt.want)
		}
	}
	if err := d.KillForward(ctx, "tcp:41234"); err != nil {
		t.Errorf("KillForward: %v", err)
	}
	if err := d.KillForward(ctx, "tcp:9"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("KillForward(unknown): got %v; want the FAIL message", err)
	}
	if _, err := c.Device("nope").Forward(ctx, "tcp:0", "tcp:1"); !errors.Is(err, ErrDeviceNotFound) {
		t.Errorf("Forward(unknown device): got %v; want ErrDeviceNotFound", err)
	}
	list, err := c.ListForward(ctx)
	want := []Forward{{"emu1", "tcp:1234", "localabstract:a"}, {"emu1", "tcp:1235", "tcp:80"}}
	if err != nil || !cmp.Equal(list, want) {
		t.Errorf("ListForward: got %v, %v; want %v", list, err, want)
	}

	port, err := d.Reverse(ctx, "tcp:0", "tcp:8080")
	if err != nil || port != 38000 {
		t.Errorf("Reverse: got %d, %v; want 38000", port, err)
	}
	if err := d.KillReverse(ctx, "tcp:1"); err == nil || !strings.Contains(err.Error(), "listener 'tcp:1' not found") {
		t.Errorf("KillReverse: got %v; want the FAIL message", err)
	}
	rl, err := d.ListReverse(ctx)
	if want := []Forward{{"host", "tcp:38000", "tcp:8080"}}; err != nil || !cmp.Equal(rl, want) {
		t.Errorf("ListReverse: got %v, %v; want %v", rl, err, want)
	}
	reqs := strings.Join(f.requests(), "\n")
	for _, want := range []string{"host-serial:s:forward:tcp:0;localabstract:scrcpy_01", "reverse:forward:tcp:0;tcp:8080", "host-serial:s:killforward:tcp:41234"} {
		if !strings.Contains(reqs, want) {
			t.Errorf("requests: no %q in\n%s", want, reqs)
		}
	}
}

func TestConnect(t *testing.T) {
	f := newFake(t)
	c := f.client(t)
	ctx := ctxTimeout(t, 5*time.Second)
	if msg, err := c.Connect(ctx, "127.0.0.1:5555"); err != nil || msg != "connected to 127.0.0.1:5555" {
		t.Errorf("Connect: got %q, %v", msg, err)
	}
	_, err := c.Connect(ctx, "127.0.0.1:1")
	var se *ServerError
	if !errors.As(err, &se) || !strings.HasPrefix(se.Message, "failed to connect") {
		t.Errorf("Connect(closed): got %v; want a *ServerError with the server's message", err)
	}
	if err := c.Disconnect(ctx, "1.2.3.4:5555"); !errors.Is(err, ErrDeviceNotFound) {
		t.Errorf("Disconnect(unknown): got %v; want ErrDeviceNotFound", err)
	}
}

// TestGarbage checks that a peer that is not an adb server gives clear
// errors rather than hangs.
func TestGarbage(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply string
		call  func(ctx context.Context, c *Client) error
		want  string
	}{
		{"http reply", "HTTP/1.1 400 Bad Request\r\n\r\n", version, `unexpected reply "HTTP"`},
		{"bad length", "OKAYzz29", version, `bad length "zz29"`},
		{"short string", "OKAY00100029", version, "shorter than its length"},
		{"bad version", "OKAY0004xyzw", version, `bad version "xyzw"`},
		{"closed", "", version, "without a reply"},
		{"bad FAIL length", "FAIL!!!!", version, "bad length"},
		{"bad devices reply", "OKAY", devices, "closed the connection"},
		{"cut length", "OKAY00", devices, "inside the reply's length"},
		{"bad forward port", "OKAYOKAY0003abc", forward, `bad port "abc"`},
		{"shell stream cut", "OKAYOKAY\x01\x05\x00\x00\x00hi", shell, "inside a packet"},
		{"sync garbage", "OKAYOKAYWHAT\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", stat, `unexpected reply "WHAT"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.hook = func(req string, c net.Conn) bool {
				if strings.HasSuffix(req, ":features") {
					okayStr(c, "shell_v2")
					return true
				}
				io.WriteString(c, tt.reply)
				// Read what the client sends after the reply, so that closing
				// sends FIN, not RST, then close: no reply is coming.
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				io.Copy(io.Discard, c)
				return true
			}
			ctx := ctxTimeout(t, 5*time.Second)
			err := within(t, 3*time.Second, func() error { return tt.call(ctx, f.client(t)) })
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want ErrProtocol with %q", err, tt.want)
			}
			if ctx.Err() != nil {
				t.Errorf("the call waited for the deadline")
			}
		})
	}
}

func version(ctx context.Context, c *Client) error { _, err := c.Version(ctx); return err }
func devices(ctx context.Context, c *Client) error { _, err := c.Devices(ctx); return err }
func forward(ctx context.Context, c *Client) error {
	_, err := c.Device("s").Forward(ctx, "tcp:0", "tcp:1")
	return err
}
func shell(ctx context.Context, c *Client) error {
	_, err := c.Device("s").Shell(ctx, "true")
	return err
}
func stat(ctx context.Context, c *Client) error { _, err := c.Device("s").Stat(ctx, "/x"); return err }

// TestContextCancel checks that a server that never answers is left when
// the context ends.
func TestContextCancel(t *testing.T) {
	for _, tt := range []struct {
		name string
		call func(ctx context.Context, c *Client) error
	}{
		{"version", version},
		{"shell", shell},
		{"stat", stat},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t)
			f.hook = func(req string, c net.Conn) bool {
				switch {
				case strings.HasSuffix(req, ":features"):
					okayStr(c, "shell_v2")
					return true
				case strings.HasPrefix(req, "host:transport:"):
					// Accept the device service, then never answer it.
					okay(c)
					readReq(c)
					okay(c)
				}
				<-t.Context().Done()
				return true
			}
			ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := within(t, 3*time.Second, func() error { return tt.call(ctx, f.client(t)) })
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("got %v; want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > testkit.Scaled(2*time.Second) {
				t.Errorf("took %v after a 100ms deadline", d)
			}
		})
	}
}

func TestServerNotRunning(t *testing.T) {
	addr := closedAddr(t)
	ctx := ctxTimeout(t, 10*time.Second)

	c, err := New(Options{Addr: addr, NoStart: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(ctx); !errors.Is(err, ErrServerNotRunning) {
		t.Errorf("NoStart: got %v; want ErrServerNotRunning", err)
	}

	_, err = Dial(ctx, Options{Addr: addr, ADBPath: filepath.Join(t.TempDir(), "no-adb")})
	if !errors.Is(err, ErrADBNotInstalled) || !strings.HasPrefix(err.Error(), "adb is not installed: install Android platform-tools") ||
		!strings.Contains(err.Error(), "apt install adb") {
		t.Errorf("no adb: got %v; want ErrADBNotInstalled with install help", err)
	}

	// A remote server is never started from here.
	c, err = New(Options{Addr: "localhost:1", ADBPath: "/bin/true"})
	c.port = "" // as for a remote host; dialing one would take a network timeout
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Version(ctx); !errors.Is(err, ErrServerNotRunning) || !strings.Contains(err.Error(), "remote") {
		t.Errorf("remote start: got %v; want ErrServerNotRunning", err)
	}
}

// TestStartServerArgs runs a stand-in adb that records its arguments.
func TestStartServerArgs(t *testing.T) {
	dir := t.TempDir()
	argsFile := filepath.Join(dir, "args")
	for _, tt := range []struct {
		name    string
		script  string
		addr    string
		args    string
		wantErr string
	}{
		{"tcp port", "exit 0", "", "-P PORT start-server", string("")},
		{"unix socket", "exit 0", "localfilesystem:" + filepath.Join(dir, "sock"), "-L localfilesystem:" + filepath.Join(dir, "sock") + " start-server", ""},
		{"failure output", "echo 'error: could not install *smartsocket* listener' >&2; exit 1", "", "-P PORT start-server", "could not install *smartsocket* listener"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			adbPath := filepath.Join(dir, "adb")
			script := "#!/bin/sh\necho \"$@\" > " + argsFile + "\n" + tt.script + "\n"
			if err := os.WriteFile(adbPath, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			addr := tt.addr
			port := ""
			if addr == "" {
				addr = closedAddr(t)
				_, port, _ = net.SplitHostPort(addr)
			}
			// The variables must not reach the child and contradict -P.
			t.Setenv("ADB_SERVER_SOCKET", "tcp:1")
			c, err := New(Options{Addr: addr, ADBPath: adbPath})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Version(ctxTimeout(t, 10*time.Second))
			// The stand-in starts nothing, so the retry finds no server.
			if !errors.Is(err, ErrServerNotRunning) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %v; want ErrServerNotRunning with %q", err, tt.wantErr)
			}
			got, _ := os.ReadFile(argsFile)
			if want := strings.ReplaceAll(tt.args, "PORT", port) + "\n"; string(got) != want {
				t.Errorf("adb args: got %q; want %q", got, want)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"input", "tap", "10", "20"}, "input tap 10 20"},
		{[]string{"am", "start", "-n", "com.x/.Main"}, "am start -n com.x/.Main"},
		{[]string{"echo", "it's $HOME; rm -rf /"}, `echo 'it'\''s $HOME; rm -rf /'`},
		{[]string{"printf", ""}, "printf ''"},
	} {
		if got := Quote(tt.args...); got != tt.want {
			t.Errorf("Quote(%q): got %s; want %s", tt.args, got, tt.want)
		}
	}
}

// within runs f and fails the test if it has not returned after d: a hang is
// a failure, not a test timeout.
func within(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still waiting after %v", d)
		return nil
	}
}

// closedAddr returns a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
