package adbd_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"image/png"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// The shell commands and properties peers' tools read on every phone
// answer as a real phone's do, through Debian's adb.
func TestPeersCommands(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	p.run(t, "shell", "am start -n com.google.android.apps.messaging/.MainActivity")
	tests := []struct {
		name string
		cmd  string
		want []string // in stdout, in order
		not  string   // not in stdout
		code int
	}{
		{name: "a Pixel 8's code name", cmd: "getprop ro.product.device", want: []string{"shiba\n"}},
		{name: "its product name and brand", cmd: "getprop ro.product.name; getprop ro.product.brand; getprop ro.board.platform", want: []string{"shiba\ngoogle\nzuma\n"}},
		{name: "its release", cmd: "getprop ro.build.version.codename", want: []string{"REL\n"}},
		{name: "pm list features", cmd: "pm list features", want: []string{"feature:reqGlEsVersion=0x30002\n", "feature:android.hardware.touchscreen\n"}},
		{name: "cmd package has-feature of one it has", cmd: "cmd package has-feature android.hardware.telephony", want: []string{"true\n"}},
		{name: "cmd package has-feature of one it lacks", cmd: "cmd package has-feature android.hardware.type.watch", want: []string{"false\n"}, code: 1},
		{name: "dumpsys package of an app", cmd: "dumpsys package com.google.android.apps.messaging",
			want: []string{"Package [com.google.android.apps.messaging]", "codePath=/data/app/", "versionCode=", "versionName="}},
		{name: "dumpsys package of a system part", cmd: "dumpsys package com.android.systemui", want: []string{"flags=[ SYSTEM"}},
		{name: "dumpsys package of none", cmd: "dumpsys package com.example.none", want: []string{"Unable to find package: com.example.none"}, not: "Package ["},
		{name: "dumpsys SurfaceFlinger --display-id", cmd: "dumpsys SurfaceFlinger --display-id", want: []string{"Display 4619827259835644672 (HWC display 0): port=0"}},
		{name: "dumpsys input_method", cmd: "dumpsys input_method", want: []string{"mCurMethodId=com.google.android.inputmethod.latin/", "mInputShown=false"}},
		{name: "am broadcast to no receiver", cmd: "am broadcast -a devicekit.clipboard.clear -n com.mobilenext.devicekit/.ClipboardBroadcastReceiver",
			want: []string{"Broadcasting: Intent { act=devicekit.clipboard.clear cmp=com.mobilenext.devicekit/.ClipboardBroadcastReceiver flg=0x400000 }\n", "Broadcast completed: result=0\n"}},
		{name: "settings get global device_name", cmd: "settings get global device_name", want: []string{"Pixel 8\n"}},
		{name: "am start -p of an app's launcher", cmd: "am start -a android.intent.action.MAIN -c android.intent.category.LAUNCHER -p com.android.settings",
			want: []string{"Starting: Intent { act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] pkg=com.android.settings }"}},
		{name: "run-as an app of a user build", cmd: "run-as com.android.settings ls 2>&1", want: []string{"run-as: package not debuggable: com.android.settings\n"}, code: 1},
		{name: "run-as a package it lacks", cmd: "run-as com.example.none ls 2>&1", want: []string{"run-as: unknown package: com.example.none\n"}, code: 1},
		{name: "am start -p with no action", cmd: "am start -W -p com.google.android.gm",
			want: []string{"Error: Activity not started, unable to resolve Intent { flg=0x10000000 pkg=com.google.android.gm }"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := adb(t, nil, "-s", p.serial, "shell", tt.cmd)
			if code != tt.code {
				t.Errorf("adb shell %s: exit %d (stderr %q); want %d", tt.cmd, code, errs, tt.code)
			}
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("adb shell %s: got %q; want %q in it (in order)", tt.cmd, out, w)
				}
				rest = rest[i+len(w):]
			}
			if tt.not != "" && strings.Contains(out, tt.not) {
				t.Errorf("adb shell %s: got %q; want no %q", tt.cmd, out, tt.not)
			}
		})
	}
	if s := p.screen(t); s.App.ID != "com.android.settings" {
		t.Errorf("after am start -p of Settings' launcher: %q in front; want com.android.settings", s.App.ID)
	}
	// The device name is a setting like any other.
	p.run(t, "shell", "settings put global device_name Kitchen")
	if out := p.run(t, "shell", "settings get global device_name"); out != "Kitchen\n" {
		t.Errorf("settings get global device_name after a put: got %q; want Kitchen", out)
	}
}

// The adb banner and devices -l carry the code name, as a real Pixel 8's
// do.
func TestBannerCodeName(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	if out := p.run(t, "devices", "-l"); !strings.Contains(out, "product:shiba model:Pixel_8 device:shiba") {
		t.Errorf("adb devices -l: got %q; want product:shiba model:Pixel_8 device:shiba", out)
	}
}

// screencap prints raw pixels without -p (a header of width, height,
// format and, from Android 9, colour space, then RGBA), a PNG with -p or
// into a FILE named .png, and the pixels agree with the PNG's.
func TestScreencapRaw(t *testing.T) {
	for _, tt := range []struct {
		name   string
		sdk    int
		header int
	}{
		{"Android 15", 0, 16},
		{"Android 8.1", 27, 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPhone(t, adbd.Config{SDKLevel: tt.sdk})
			raw := []byte(p.run(t, "exec-out", "screencap"))
			pngData := []byte(p.run(t, "exec-out", "screencap -p"))
			img, err := png.Decode(bytes.NewReader(pngData))
			if err != nil {
				t.Fatalf("screencap -p: %v", err)
			}
			w, h := img.Bounds().Dx(), img.Bounds().Dy()
			if len(raw) != tt.header+w*h*4 {
				t.Fatalf("screencap: %d bytes; want a %d-byte header and %dx%d RGBA pixels", len(raw), tt.header, w, h)
			}
			hdr := make([]uint32, tt.header/4)
			binary.Read(bytes.NewReader(raw), binary.LittleEndian, hdr)
			if hdr[0] != uint32(w) || hdr[1] != uint32(h) || hdr[2] != 1 || (tt.header == 16 && hdr[3] != 1) {
				t.Errorf("screencap header: got %v; want %d, %d, format 1 (RGBA_8888) and colour space 1 (sRGB) from Android 9", hdr, w, h)
			}
			// A pixel in the middle matches the PNG's.
			x, y := w/2, h/2
			r, g, b, _ := img.At(x, y).RGBA()
			px := raw[tt.header+(y*w+x)*4:]
			if px[0] != byte(r>>8) || px[1] != byte(g>>8) || px[2] != byte(b>>8) || px[3] != 0xff {
				t.Errorf("pixel (%d, %d): raw %v; want the PNG's %d %d %d 255", x, y, px[:4], r>>8, g>>8, b>>8)
			}
			p.run(t, "shell", "screencap /sdcard/shot.png; screencap /sdcard/shot.raw")
			if out := p.run(t, "exec-out", "cat /sdcard/shot.png"); !strings.HasPrefix(out, "\x89PNG") {
				t.Errorf("screencap FILE.png: got %q…; want a PNG", out[:min(8, len(out))])
			}
			if out := p.run(t, "exec-out", "cat /sdcard/shot.raw"); len(out) != len(raw) {
				t.Errorf("screencap FILE.raw: %d bytes; want the raw %d", len(out), len(raw))
			}
		})
	}
}

// The framebuffer: service sends adbd's header (version 2 with a colour
// space from Android 9, 1 before), then the pixels.
func TestFramebuffer(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sdk     int
		version uint32
	}{
		{"Android 15", 0, 2},
		{"Android 8.1", 27, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := newPhone(t, adbd.Config{SDKLevel: tt.sdk})
			data := hostService(t, p.serial, "framebuffer:")
			var hdr []uint32
			n := 13
			if tt.version == 2 {
				n = 14
			}
			hdr = make([]uint32, n)
			if err := binary.Read(bytes.NewReader(data), binary.LittleEndian, hdr); err != nil {
				t.Fatalf("framebuffer: %d bytes: %v", len(data), err)
			}
			f := hdr[2:] // size, width, height, then the channels
			if tt.version == 2 {
				f = hdr[3:]
			}
			if hdr[0] != tt.version || hdr[1] != 32 || f[1] != 1080 || f[2] != 2400 || f[0] != 1080*2400*4 {
				t.Fatalf("framebuffer header: got %v; want version %d, 32 bits, 1080x2400, %d bytes", hdr, tt.version, 1080*2400*4)
			}
			// RGBA: red at 0, blue at 16, green at 8, alpha at 24, 8 bits each.
			if got := f[3:]; !equal(got, []uint32{0, 8, 16, 8, 8, 8, 24, 8}) {
				t.Errorf("framebuffer channels: got %v; want RGBA_8888's", got)
			}
			if len(data) != 4*n+int(f[0]) {
				t.Errorf("framebuffer: %d bytes; want the header and %d bytes of pixels", len(data), f[0])
			}
		})
	}
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// hostService opens a device service through the adb server's smart
// socket protocol (host:transport:SERIAL, then the service) and reads it to
// its end.
func hostService(t *testing.T, serial, service string) []byte {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+adbSrv.port)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	request := func(s string) {
		t.Helper()
		if _, err := c.Write([]byte(strconv.FormatInt(int64(len(s))|0x10000, 16)[1:] + s)); err != nil {
			t.Fatal(err)
		}
		status := make([]byte, 4)
		if _, err := io.ReadFull(c, status); err != nil || string(status) != "OKAY" {
			t.Fatalf("adb server, %s: got %q (%v); want OKAY", s, status, err)
		}
	}
	request("host:transport:" + serial)
	request(service)
	data, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// cmd clipboard get text prints what the phone's clipboard holds.
func TestClipboardGet(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	if err := p.drv.SetClipboard(context.Background(), phoneID, "the copied text"); err != nil {
		t.Fatal(err)
	}
	if out := p.run(t, "shell", "cmd clipboard get text"); out != "the copied text\n" {
		t.Errorf("cmd clipboard get text: got %q; want the clipboard's text", out)
	}
}

// adb ls lists "." and ".." first, as a real adbd does, and adb pull of a
// folder skips them.
func TestSyncListsDots(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.run(t, "shell", "echo hi > /sdcard/Download/a.txt")
	out := p.run(t, "ls", "/sdcard/Download")
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line)
		names = append(names, f[len(f)-1])
	}
	if strings.Join(names, " ") != ". .. a.txt" {
		t.Errorf("adb ls /sdcard/Download: got %q; want ., .. and a.txt", out)
	}
	dir := t.TempDir()
	p.run(t, "pull", "/sdcard/Download", dir)
	got, err := os.ReadDir(filepath.Join(dir, "Download"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Name() != "a.txt" {
		t.Errorf("adb pull of the folder: got %v; want a.txt alone", got)
	}
}
