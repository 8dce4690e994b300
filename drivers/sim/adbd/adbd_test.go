package adbd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"

	"go.uber.org/goleak"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/drivers/sim/timing"
)

const phoneID = "sim-android-1"

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		stopADB()
		os.Exit(code)
	}))
}

// The tests share one adb server of their own, on a free port, never 5037.
var adbSrv struct {
	once sync.Once
	port string
	home string
	err  error
}

func stopADB() {
	if adbSrv.port != "" {
		cmd := exec.Command("adb", "-P", adbSrv.port, "kill-server")
		cmd.Env = adbEnv()
		cmd.Run()
	}
	if adbSrv.home != "" {
		os.RemoveAll(adbSrv.home)
	}
}

func adbEnv() []string {
	return append(os.Environ(), "HOME="+adbSrv.home, "ANDROID_ADB_SERVER_PORT="+adbSrv.port, "ADB_EMU=0")
}

// startADB starts the shared adb server, or skips the test without adb
// (fails it on CI, where scripts/test-deps.sh installs adb).
func startADB(t *testing.T) {
	t.Helper()
	testdep.Need(t, "adb")
	adbSrv.once.Do(func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			adbSrv.err = err
			return
		}
		adbSrv.port = strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		ln.Close()
		// A home of its own keeps the server's key out of the user's ~/.android.
		if adbSrv.home, err = os.MkdirTemp("", "pinky-adbd-test-"); err != nil {
			adbSrv.err = err
			return
		}
		cmd := exec.Command("adb", "-P", adbSrv.port, "start-server")
		cmd.Env = adbEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			adbSrv.err = errors.New("adb start-server: " + err.Error() + ": " + string(out))
		}
	})
	if adbSrv.err != nil {
		t.Fatal(adbSrv.err)
	}
}

// adb runs an adb command against the test server and returns its stdout,
// stderr and exit status.
func adb(t *testing.T, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "adb", append([]string{"-P", adbSrv.port}, args...)...)
	cmd.Env = adbEnv()
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("adb %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// phone is a sim driver with its adb face, attached to the test adb server.
type phone struct {
	drv    *sim.Driver
	srv    *adbd.Server
	serial string
}

func newPhone(t *testing.T, cfg adbd.Config) *phone {
	t.Helper()
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	return newPhoneIn(t, w, cfg)
}

func newPhoneIn(t *testing.T, w *sim.World, cfg adbd.Config) *phone {
	t.Helper()
	startADB(t)
	drv := sim.New(w)
	t.Cleanup(func() { drv.Close() })
	cfg.Driver = drv
	if cfg.DeviceID == "" {
		cfg.DeviceID = phoneID
	}
	srv, err := adbd.Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := &phone{drv: drv, srv: srv, serial: srv.Addr().String()}
	t.Cleanup(func() {
		adb(t, nil, "disconnect", p.serial)
		srv.Close()
	})
	out, _, _ := adb(t, nil, "connect", p.serial)
	if !cfg.Unauthorized && !strings.Contains(out, "connected to "+p.serial) {
		t.Fatalf("adb connect: got %q; want connected to %s", out, p.serial)
	}
	return p
}

// shell runs adb -s SERIAL ARGS… and fails the test on a non-zero exit.
func (p *phone) run(t *testing.T, args ...string) string {
	t.Helper()
	out, errs, code := adb(t, nil, append([]string{"-s", p.serial}, args...)...)
	if code != 0 {
		t.Fatalf("adb %v: exit %d; stderr %q", args, code, errs)
	}
	return out
}

func (p *phone) unlock(t *testing.T) {
	t.Helper()
	if err := p.drv.Unlock(context.Background(), phoneID, "1234"); err != nil {
		t.Fatal(err)
	}
}

func (p *phone) screen(t *testing.T) *sdk.Screen {
	t.Helper()
	s, err := p.drv.Screen(context.Background(), phoneID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// state is the device's state in adb devices, or "" when it is not listed.
func state(t *testing.T, serial string) string {
	out, _, _ := adb(t, nil, "devices")
	for _, line := range strings.Split(out, "\n") {
		if s, st, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && s == serial {
			return st
		}
	}
	return ""
}

func TestConnectListsDevice(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	if got := state(t, p.serial); got != "device" {
		t.Fatalf("adb devices: state %q; want device", got)
	}
	out := p.run(t, "devices", "-l")
	if !strings.Contains(out, "model:Pixel_8") {
		t.Errorf("adb devices -l: got %q; want model:Pixel_8", out)
	}
	feats := p.run(t, "features")
	for _, f := range []string{"shell_v2", "stat_v2", "ls_v2"} {
		if !strings.Contains(feats, f) {
			t.Errorf("adb features: got %q; want %s", feats, f)
		}
	}
}

func TestShellEcho(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	if got := p.run(t, "shell", "echo", "hi"); got != "hi\n" {
		t.Errorf("adb shell echo hi: got %q; want %q", got, "hi\n")
	}
	if got := p.run(t, "shell", "getprop", "ro.build.version.sdk"); got != "35\n" {
		t.Errorf("getprop ro.build.version.sdk: got %q; want %q", got, "35\n")
	}
	if got := p.run(t, "shell", "getprop", "ro.serialno"); got != "pinky-sim-"+phoneID+"\n" {
		t.Errorf("getprop ro.serialno: got %q", got)
	}
}

func TestShellExitCodesAndStderr(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	tests := []struct {
		name     string
		args     []string
		out, err string
		code     int
	}{
		{"false", []string{"false"}, "", "", 1},
		{"exit 3", []string{"exit 3"}, "", "", 3},
		{"stderr apart", []string{"echo out; echo err >&2; exit 5"}, "out\n", "err\n", 5},
		{"unknown command", []string{"frobnicate"}, "", "/system/bin/sh: frobnicate: inaccessible or not found\n", 127},
		{"and-or", []string{"false && echo no || echo yes"}, "yes\n", "", 0},
		{"pipe to grep", []string{"dumpsys power | grep mWakefulness="}, "  mWakefulness=Awake\n", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := adb(t, nil, append([]string{"-s", p.serial, "shell"}, tt.args...)...)
			if out != tt.out || errs != tt.err || code != tt.code {
				t.Errorf("adb shell %q: got (%q, %q, %d); want (%q, %q, %d)", tt.args, out, errs, code, tt.out, tt.err, tt.code)
			}
		})
	}
}

func TestShellStdin(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	out, _, code := adb(t, strings.NewReader("from stdin\n"), "-s", p.serial, "shell", "cat")
	if out != "from stdin\n" || code != 0 {
		t.Errorf("adb shell cat <stdin: got (%q, %d); want (%q, 0)", out, code, "from stdin\n")
	}
}

// visibleTexts lists the non-empty texts of elements shown on screen.
func visibleTexts(s *sdk.Screen) []string {
	shown := map[int]bool{0: true}
	var out []string
	for _, e := range s.Elements {
		if !e.Visible || !shown[e.ParentID] {
			continue
		}
		shown[e.ID] = true
		if e.Text != "" {
			out = append(out, e.Text)
		}
	}
	return out
}

func TestUIAutomatorDump(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	out := p.run(t, "exec-out", "uiautomator", "dump", "/dev/tty")
	xml, ok := strings.CutSuffix(out, "UI hierchary dumped to: /dev/tty\n")
	if !ok {
		t.Fatalf("uiautomator dump /dev/tty: got %q; want XML then the dumped-to line", out)
	}
	if !strings.HasPrefix(xml, "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\"") {
		t.Errorf("uiautomator dump: got %.120q…; want the UI Automator header", xml)
	}
	got, err := dump.ParseUIAutomator(strings.NewReader(xml))
	if err != nil {
		t.Fatal(err)
	}
	want := p.screen(t)
	// The dump is the active window's: the status bar (its clock, which
	// may tick between the two reads, its battery and notification count)
	// is a window of its own, left out as a real dump leaves it out.
	bar := map[int]bool{}
	for _, e := range want.Elements {
		if e.ParentID == 0 && e.Bounds.Top == 0 && e.Bounds.Bottom < want.Height/10 || bar[e.ParentID] {
			bar[e.ID] = true
		}
	}
	want.Elements = slices.DeleteFunc(want.Elements, func(e sdk.Element) bool { return bar[e.ID] })
	if g, w := strings.Join(visibleTexts(got), "|"), strings.Join(visibleTexts(want), "|"); g != w {
		t.Errorf("dumped texts: got %s; want %s", g, w)
	}
	if got.App.ID != want.App.ID || got.Width != want.Width || got.Height != want.Height {
		t.Errorf("dumped screen: got app %q %dx%d; want %q %dx%d", got.App.ID, got.Width, got.Height, want.App.ID, want.Width, want.Height)
	}
	// To a file, then read back.
	if out := p.run(t, "shell", "uiautomator", "dump"); out != "UI hierchary dumped to: /sdcard/window_dump.xml\n" {
		t.Errorf("uiautomator dump: got %q", out)
	}
	if out := p.run(t, "shell", "cat", "/sdcard/window_dump.xml"); !strings.HasSuffix(out, "</hierarchy>") {
		t.Errorf("cat /sdcard/window_dump.xml: got %.80q…", out)
	}
}

// Android 13's `uiautomator dump --windows FILE` writes every display's
// windows: display 0 and the background displays made through the face.
func TestUIAutomatorDumpWindows(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	ctx := context.Background()
	if _, err := p.drv.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"}); err != nil {
		t.Fatal(err)
	}
	dev := p.srv.Device()
	id, err := dev.CreateDisplay(ctx, phoneID, 720, 1280, 320)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.drv.Act(ctx, phoneID, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep", DisplayID: id}); err != nil {
		t.Fatal(err)
	}
	windows := func() string {
		t.Helper()
		if out := p.run(t, "shell", "uiautomator", "dump", "--windows", "/data/local/tmp/w.xml"); out != "UI hierchary dumped to: /data/local/tmp/w.xml\n" {
			t.Errorf("uiautomator dump --windows: got %q", out)
		}
		return p.run(t, "shell", "cat", "/data/local/tmp/w.xml")
	}
	doc := windows()
	if !strings.HasPrefix(doc, "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><displays><display id=\"0\"><window index=\"0\" title=") {
		t.Errorf("uiautomator dump --windows: got %.160q…; want the <displays> document", doc)
	}
	for _, tt := range []struct {
		display int
		app     string
	}{{0, "com.android.settings"}, {id, "com.google.android.keep"}} {
		got, err := dump.ParseUIAutomatorWindows(strings.NewReader(doc), tt.display)
		if err != nil {
			t.Fatalf("display %d: %v", tt.display, err)
		}
		want, err := p.drv.Screen(ctx, phoneID, tt.display)
		if err != nil {
			t.Fatal(err)
		}
		if got.App.ID != tt.app || got.Width != want.Width || got.Height != want.Height {
			t.Errorf("display %d: got app %q %dx%d; want %q %dx%d", tt.display, got.App.ID, got.Width, got.Height, tt.app, want.Width, want.Height)
		}
		// The clock in the status bar may tick between the two reads.
		g, w := visibleTexts(got), visibleTexts(want)
		if tt.display == 0 {
			g, w = g[1:], w[1:]
		}
		if strings.Join(g, "|") != strings.Join(w, "|") {
			t.Errorf("display %d: dumped texts %q; want %q", tt.display, g, w)
		}
	}
	// Nothing goes to the terminal.
	if out := p.run(t, "exec-out", "uiautomator", "dump", "--windows", "/dev/tty"); out != "UI hierchary dumped to: /dev/tty\n" {
		t.Errorf("uiautomator dump --windows /dev/tty: got %q; want the dumped-to line only", out)
	}
	if err := dev.RemoveDisplay(ctx, phoneID, id); err != nil {
		t.Fatal(err)
	}
	if got := dev.Displays(); len(got) != 0 {
		t.Errorf("Displays after RemoveDisplay: got %v; want none", got)
	}
	if _, err := dump.ParseUIAutomatorWindows(strings.NewReader(windows()), id); !errors.Is(err, dump.ErrNoDisplay) {
		t.Errorf("display %d after RemoveDisplay: got %v; want ErrNoDisplay", id, err)
	}
	if _, err := dev.CreateDisplay(ctx, "another-phone", 720, 1280, 0); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("CreateDisplay on another device: got %v; want ErrDeviceNotFound", err)
	}
}

// Before Android 13, uiautomator ignores --windows and writes the
// single-display document.
func TestUIAutomatorDumpWindowsOldAndroid(t *testing.T) {
	p := newPhone(t, adbd.Config{SDKLevel: 30})
	p.unlock(t)
	if got := p.run(t, "shell", "getprop", "ro.build.version.sdk"); got != "30\n" {
		t.Errorf("getprop ro.build.version.sdk: got %q; want 30", got)
	}
	if got := p.run(t, "shell", "getprop", "ro.build.version.release"); got != "11\n" {
		t.Errorf("getprop ro.build.version.release: got %q; want 11", got)
	}
	p.run(t, "shell", "uiautomator", "dump", "--windows", "/data/local/tmp/w.xml")
	doc := p.run(t, "shell", "cat", "/data/local/tmp/w.xml")
	if _, err := dump.ParseUIAutomatorWindows(strings.NewReader(doc), 0); !errors.Is(err, dump.ErrSingleDisplay) {
		t.Errorf("uiautomator dump --windows on Android 11: got %v (%.80q…); want the single-display document", err, doc)
	}
	if _, err := dump.ParseUIAutomator(strings.NewReader(doc)); err != nil {
		t.Errorf("the single-display document: %v", err)
	}
}

// A phone showing a captured dump serves the fixture's bytes as they are.
func TestUIAutomatorDumpFixture(t *testing.T) {
	w, err := sim.Load("../testdata/dumps.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../testdata/login-phone-password-ar.xml")
	if err != nil {
		t.Fatal(err)
	}
	p := newPhoneIn(t, w, adbd.Config{DeviceID: "dump-android"})
	out := p.run(t, "exec-out", "uiautomator", "dump", "/dev/tty")
	if got := strings.TrimSuffix(out, "UI hierchary dumped to: /dev/tty\n"); got != string(want) {
		t.Errorf("uiautomator dump of a fixture: got %d bytes %.80q…; want the fixture's %d bytes", len(got), got, len(want))
	}
}

func TestInputTapLaunchesApp(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	var icon *sdk.Element
	for _, e := range p.screen(t).Elements {
		if e.Text == "Settings" && e.Clickable {
			icon = &e
			break
		}
	}
	if icon == nil {
		t.Fatal("no Settings icon on the launcher")
	}
	c := icon.Bounds.Center()
	p.run(t, "shell", "input", "tap", strconv.Itoa(c.X), strconv.Itoa(c.Y))
	if got := p.screen(t).App.ID; got != "com.android.settings" {
		t.Fatalf("after input tap: app %q; want com.android.settings", got)
	}
	if out := p.run(t, "shell", "dumpsys window | grep mCurrentFocus"); !strings.Contains(out, "u0 com.android.settings/.MainActivity}") {
		t.Errorf("dumpsys window: got %q", out)
	}
	p.run(t, "shell", "input", "keyevent", "KEYCODE_HOME")
	if got := p.screen(t).App.ID; got != "com.google.android.apps.nexuslauncher" {
		t.Errorf("after HOME: app %q; want the launcher", got)
	}
	p.run(t, "shell", "am", "start", "-n", "com.android.settings/.MainActivity")
	if got := p.screen(t).App.ID; got != "com.android.settings" {
		t.Errorf("after am start: app %q; want com.android.settings", got)
	}
	p.run(t, "shell", "input", "keyevent", "26")
	if out := p.run(t, "shell", "dumpsys", "power"); !strings.Contains(out, "mWakefulness=Asleep") || !strings.Contains(out, "Display Power: state=OFF") {
		t.Errorf("dumpsys power after POWER: got %q", out)
	}
}

func TestPushPull(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	dir := t.TempDir()
	data := make([]byte, 1<<20)
	rand.Read(data)
	src := filepath.Join(dir, "random.bin")
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{"/data/local/tmp/random.bin", "/sdcard/Pinky/sub/random.bin"} {
		t.Run(remote, func(t *testing.T) {
			p.run(t, "push", src, remote)
			dst := filepath.Join(dir, "back.bin")
			os.Remove(dst)
			p.run(t, "pull", remote, dst)
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, data) {
				t.Errorf("pulled %d bytes that differ from the %d pushed", len(got), len(data))
			}
			if out := p.run(t, "shell", "ls", "-l", remote); !strings.Contains(out, " 1048576 ") {
				t.Errorf("ls -l %s: got %q", remote, out)
			}
		})
	}
	// The Pinky folder is the driver's.
	var buf bytes.Buffer
	if err := p.drv.PullFile(context.Background(), phoneID, "sub/random.bin", &buf); err != nil || !bytes.Equal(buf.Bytes(), data) {
		t.Errorf("driver PullFile: err %v, %d bytes; want the pushed file", err, buf.Len())
	}
	if out := p.run(t, "shell", "cat", "/sdcard/Pinky/welcome.txt"); !strings.Contains(out, "Pinky folder") {
		t.Errorf("cat welcome.txt: got %q", out)
	}
	out, errs, code := adb(t, nil, "-s", p.serial, "pull", "/data/local/tmp/missing", filepath.Join(dir, "x"))
	if code == 0 || !strings.Contains(out+errs, "No such file or directory") {
		t.Errorf("pull of a missing file: got exit %d, %q; want a failure", code, out+errs)
	}
}

func TestForwardLocalAbstract(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	ln, err := p.srv.Device().ListenAbstract("test")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer ln.Close()
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
				io.Copy(c, c)
			}()
		}
	}()
	port := strings.TrimSpace(p.run(t, "forward", "tcp:0", "localabstract:test"))
	defer adb(t, nil, "-s", p.serial, "forward", "--remove", "tcp:"+port)
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	msg := bytes.Repeat([]byte("pinky "), 50000) // several WRTEs each way
	go c.Write(msg)
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("echo through the forward: %v", err)
	}
	if !bytes.Equal(got, msg) {
		t.Error("echo through the forward: bytes differ")
	}
	if _, err := p.srv.Device().ListenAbstract("test"); err == nil {
		t.Error("ListenAbstract of a name in use: got nil error")
	}
}

func TestUnauthorized(t *testing.T) {
	p := newPhone(t, adbd.Config{Unauthorized: true})
	var got string
	// Each check runs adb devices: a steady pace, not Poll's quick one.
	if !testkit.PollEvery(testkit.Limit, 100*time.Millisecond, func() bool { got = state(t, p.serial); return got == "unauthorized" }) {
		t.Fatalf("adb devices: state %q; want unauthorized", got)
	}
	if _, errs, code := adb(t, nil, "-s", p.serial, "shell", "echo", "hi"); code == 0 || !strings.Contains(errs, "unauthorized") {
		t.Errorf("adb shell on an unauthorized device: got exit %d, %q", code, errs)
	}
}

func TestCloseTakesDeviceOffline(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	if got := state(t, p.serial); got != "device" {
		t.Fatalf("state %q; want device", got)
	}
	p.srv.Close()
	if !testkit.PollEvery(testkit.Limit, 100*time.Millisecond, func() bool { return state(t, p.serial) != "device" }) {
		t.Fatal("the device is still listed as device after Close")
	}
}

func TestAppProcess(t *testing.T) {
	started := make(chan []string, 1)
	p := newPhone(t, adbd.Config{AppProcess: func(ctx context.Context, args []string, stdout, stderr io.Writer, d *adbd.Device) error {
		started <- args
		io.WriteString(stdout, "[server] INFO: Device: Pinky\n")
		return nil
	}})
	// Before the jar is pushed, and with another class, app_process aborts
	// as on a phone.
	tests := []struct{ name, classPath, class string }{
		{"no jar", "CLASSPATH=/data/local/tmp/scrcpy-server.jar", "com.genymobile.scrcpy.Server"},
		{"no CLASSPATH", "A=b", "com.genymobile.scrcpy.Server"},
		{"a folder", "CLASSPATH=/data/local/tmp", "com.genymobile.scrcpy.Server"},
	}
	check := func(t *testing.T, classPath, class string) {
		t.Helper()
		out, errs, code := adb(t, nil, "-s", p.serial, "shell", classPath, "app_process", "/", class, "3.3.4")
		if out != "" || errs != "Aborted\n" || code != 134 {
			t.Errorf("app_process: got (%q, %q, %d); want (\"\", \"Aborted\\n\", 134)", out, errs, code)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, tt.classPath, tt.class) })
	}
	jar := filepath.Join(t.TempDir(), "scrcpy-server")
	if err := os.WriteFile(jar, []byte("stands for the server"), 0o644); err != nil {
		t.Fatal(err)
	}
	p.run(t, "push", jar, "/data/local/tmp/scrcpy-server.jar")
	t.Run("another class", func(t *testing.T) {
		check(t, "CLASSPATH=/data/local/tmp/scrcpy-server.jar", "com.genymobile.scrcpy.CleanUp")
	})
	out := p.run(t, "shell", "CLASSPATH=/data/local/tmp/scrcpy-server.jar", "app_process", "/", "com.genymobile.scrcpy.Server", "3.3.4", "tunnel_forward=true", "audio=false")
	if out != "[server] INFO: Device: Pinky\n" {
		t.Errorf("app_process output: got %q", out)
	}
	if got := strings.Join(<-started, " "); got != "3.3.4 tunnel_forward=true audio=false" {
		t.Errorf("AppProcess args: got %q; want the arguments after the class", got)
	}
	select {
	case args := <-started:
		t.Errorf("AppProcess ran for an aborted app_process, with %q", args)
	default:
	}
}

func TestCommands(t *testing.T) {
	p := newPhone(t, adbd.Config{Commands: map[string]func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int{
		"dumpsys": func(_ context.Context, args []string, _ io.Reader, stdout, _ io.Writer) int {
			io.WriteString(stdout, "garbage "+strings.Join(args, " ")+"\n")
			return 3
		},
		"cut": func(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) int {
			io.WriteString(stdout, "partial")
			return adbd.CutStream
		},
	}})
	if out, _, code := adb(t, nil, "-s", p.serial, "shell", "dumpsys window"); out != "garbage window\n" || code != 3 {
		t.Errorf("a replaced dumpsys: got %q, exit %d; want %q, exit 3", out, code, "garbage window\n")
	}
	// adb 29 exits 0 on a v2 stream with no exit packet; what follows the
	// cut must not run.
	if out, _, _ := adb(t, nil, "-s", p.serial, "shell", "cut; echo after"); out != "partial" {
		t.Errorf("a cut stream: got %q; want %q", out, "partial")
	}
}

// A real phone's am prints why it started nothing and exits 0, and its
// input exits 0 when nothing takes the events; the face does the same.
func TestExitZeroLikeAPhone(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	tests := []struct {
		name          string
		cmd           string
		inOut, inErr  string // wanted in stdout, stderr ("" for nothing wanted)
		notOut, noErr bool   // stdout, stderr must be empty
	}{
		{name: "am start of an unknown scheme", cmd: "am start -a android.intent.action.VIEW -d nothing-opens:this",
			inOut: "Starting: Intent", inErr: "Error: Activity not started, unable to resolve Intent"},
		{name: "am start -W of an unknown scheme", cmd: "am start -W -a android.intent.action.VIEW -d nothing-opens:this",
			inOut: "Error: Activity not started, unable to resolve Intent", noErr: true},
		{name: "am start of a missing activity", cmd: "am start -n com.example.none/.Main",
			inErr: "Error type 3\nError: Activity class {com.example.none/.Main} does not exist."},
		{name: "input tap off the screen", cmd: "input tap 99999 99999", notOut: true, noErr: true},
		{name: "input swipe off the screen", cmd: "input swipe 1 1 99999 99999 100", notOut: true, noErr: true},
		{name: "input text with no focused field", cmd: "input text hello", notOut: true, noErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := adb(t, nil, "-s", p.serial, "shell", tt.cmd)
			if code != 0 {
				t.Errorf("adb shell %s: exit %d; want 0", tt.cmd, code)
			}
			if !strings.Contains(out, tt.inOut) || (tt.notOut && out != "") {
				t.Errorf("adb shell %s: stdout %q; want %q in it", tt.cmd, out, tt.inOut)
			}
			if !strings.Contains(errs, tt.inErr) || (tt.noErr && errs != "") {
				t.Errorf("adb shell %s: stderr %q; want %q in it", tt.cmd, errs, tt.inErr)
			}
		})
	}
	// A usage error still fails, as it does on a phone.
	if _, _, code := adb(t, nil, "-s", p.serial, "shell", "input tap 1"); code == 0 {
		t.Errorf("input tap with one number: exit 0; want a failure")
	}
}

// TestTimingProfile: under a profile, uiautomator, input and screencap take
// their time through Debian's adb and the rest answer at once. The profile
// here is exact and short, so the test reads a lower bound only.
func TestTimingProfile(t *testing.T) {
	const d = 400 * time.Millisecond
	r := timing.Range{Min: d, Max: d}
	p := newPhone(t, adbd.Config{Timing: timing.Profile{Dump: r, Input: r, Screencap: r}})
	for _, tt := range []struct {
		args []string
		slow bool
	}{
		{[]string{"shell", "uiautomator", "dump", "/sdcard/x.xml"}, true},
		{[]string{"shell", "input", "keyevent", "3"}, true},
		{[]string{"exec-out", "screencap", "-p"}, true},
		{[]string{"shell", "echo", "hi"}, false},
	} {
		start := time.Now()
		p.run(t, tt.args...)
		took := time.Since(start)
		if tt.slow && took < d {
			t.Errorf("adb %v took %v; want at least the profile's %v", tt.args, took, d)
		}
		if !tt.slow {
			// No upper bound (the machine may be busy): the same command
			// must not take the profile's time in every one of three runs.
			fast := took < d
			for i := 0; i < 2 && !fast; i++ {
				start = time.Now()
				p.run(t, tt.args...)
				fast = time.Since(start) < d
			}
			if !fast {
				t.Errorf("adb %v took the profile's time three times; want it at once", tt.args)
			}
		}
	}
}

// TestShellTerminals: each of adbd's three terminals as the real daemon
// gives it (daemon/shell_service.cpp), through Debian's adb client: exec:
// a raw pty (one stream, /dev/tty works), `shell -T` (v2 raw) pipes with no
// terminal, `shell -tt` (v2 pty) a cooked pty where stderr joins stdout and
// lines end in "\r\n".
func TestShellTerminals(t *testing.T) {
	p := newPhone(t, adbd.Config{})
	p.unlock(t)
	const trailer = "UI hierchary dumped to: /dev/tty\n"
	tests := []struct {
		name     string
		args     []string
		out, err string
		code     int
	}{
		{"exec tty", []string{"exec-out", "tty"}, "/dev/pts/0\n", "", 0},
		{"v2 raw tty", []string{"shell", "-T", "tty"}, "not a tty\n", "", 1},
		{"v2 pty tty", []string{"shell", "-tt", "tty"}, "/dev/pts/0\r\n", "", 0},
		{"v2 pty merges stderr", []string{"shell", "-tt", "echo out; echo err >&2; exit 5"}, "out\r\nerr\r\n", "", 5},
		{"v2 raw keeps stderr apart", []string{"shell", "-T", "echo out; echo err >&2; exit 5"}, "out\n", "err\n", 5},
		{"v2 raw /dev/tty", []string{"shell", "-T", "echo hi > /dev/tty"}, "", "/system/bin/sh: can't create /dev/tty: No such device or address\n", 1},
		{"exec /dev/tty", []string{"exec-out", "echo hi > /dev/tty"}, "hi\n", "", 0},
		{"v2 raw dump to /dev/tty", []string{"shell", "-T", "uiautomator", "dump", "/dev/tty"}, trailer, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := adb(t, nil, append([]string{"-s", p.serial}, tt.args...)...)
			if out != tt.out || errs != tt.err || code != tt.code {
				t.Errorf("adb %q: got (%q, %q, %d); want (%q, %q, %d)", tt.args, out, errs, code, tt.out, tt.err, tt.code)
			}
		})
	}
	// The dump reaches the terminal even with stdout sent elsewhere.
	out, _, _ := adb(t, nil, "-s", p.serial, "exec-out", "uiautomator dump /dev/tty > /dev/null")
	if !strings.HasPrefix(out, "<?xml") || strings.Contains(out, trailer) {
		t.Errorf("exec-out uiautomator dump /dev/tty >/dev/null: got %.80q; want the XML (on the tty) without the trailer (on stdout)", out)
	}
	out, _, _ = adb(t, nil, "-s", p.serial, "shell", "-tt", "uiautomator", "dump", "/dev/tty")
	if !strings.HasPrefix(out, "<?xml") || !strings.HasSuffix(out, "UI hierchary dumped to: /dev/tty\r\n") {
		t.Errorf("shell -tt uiautomator dump /dev/tty: got %.80q…; want the XML then the trailer ending in \\r\\n", out)
	}
}
