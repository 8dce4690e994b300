package cli_test

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/internal/e2e"
	"github.com/pinky-gateway/pinky/internal/testdep"

	"github.com/pinky-gateway/pinky/gateway/api"
)

// freeTCPPort returns a port nothing listens on now.
func freeTCPPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// startFace runs pinky-driver-sim as a phone's face (adb, WDA) with args
// and the extra environment env, until the test ends or stop is called;
// its log is shown when the test fails.
func startFace(t *testing.T, env []string, args ...string) (stop func()) {
	t.Helper()
	face := exec.Command(e2e.Bin.Sim, args...)
	face.Env = append(os.Environ(), env...)
	var faceLog bytes.Buffer
	face.Stderr = &faceLog
	if err := face.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			face.Process.Kill()
			face.Wait()
			if t.Failed() {
				t.Logf("pinky-driver-sim %v log:\n%s", args, faceLog.String())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// androidPhone gives e a virtual phone reached the real way: its adb face
// (pinky-driver-sim --adb-listen, a process of its own) attached to a
// private Debian adb server, and pinky-driver-android in e's data folder
// with the environment that points it there. It returns the phone's serial.
func (e *env) androidPhone(t *testing.T) string {
	t.Helper()
	return e.androidPhoneWith(t, true)
}

// androidPhoneWith is androidPhone, with a scrcpy server for the driver or
// without one (SCRCPY_SERVER_PATH names a file that does not exist, so
// that a scrcpy package installed on this computer is not found either).
func (e *env) androidPhoneWith(t *testing.T, scrcpy bool) string {
	t.Helper()
	adbPath := testdep.Need(t, "adb")
	adbPort, facePort := freeTCPPort(t), freeTCPPort(t)
	jar := filepath.Join(t.TempDir(), "scrcpy-server")
	if scrcpy {
		os.WriteFile(jar, []byte("the virtual phone runs its own scrcpy server"), 0o644)
	}
	e.Extra = append(e.Extra, "HOME="+t.TempDir(), "ANDROID_ADB_SERVER_PORT="+adbPort,
		"SCRCPY_SERVER_PATH="+jar, "SCRCPY_SERVER_VERSION=4.1") // the virtual phone's server is 4.1 (scrcpyd.ServerVersion)
	drivers := filepath.Join(e.Home, "drivers")
	os.MkdirAll(drivers, 0o700)
	b, err := os.ReadFile(e2e.Bin.Android)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drivers, "pinky-driver-android"), b, 0o755); err != nil {
		t.Fatal(err)
	}

	startFace(t, nil, "--adb-listen", "127.0.0.1:"+facePort)
	adb := func(args ...string) (string, error) {
		c := exec.Command(adbPath, append([]string{"-P", adbPort}, args...)...)
		c.Env = append(os.Environ(), e.Extra...)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := adb("start-server"); err != nil {
		t.Fatalf("adb start-server: %v\n%s", err, out)
	}
	t.Cleanup(func() { adb("kill-server") })
	serial := "127.0.0.1:" + facePort
	e.Eventually("adb attaches the virtual phone", func() bool {
		adb("connect", serial)
		out, _ := adb("devices")
		return strings.Contains(out, serial+"\tdevice")
	})
	return serial
}

// androidTask starts a daemon in a new env with an Android phone reached
// the real way (androidPhone), waits until the daemon lists it as online on
// pinky-driver-android, opens pinky mcp, connects a task on it (the phone
// is locked) and lets the person unlock it through the driver.
func androidTask(t *testing.T, task string) (e *env, serial string, h *e2e.Host, dev func(kv ...any) map[string]any) {
	t.Helper()
	e = newEnv(t)
	serial = e.androidPhone(t)
	e.Daemon("--console", "off")
	e.waitOnlyPhone("the daemon lists the Android phone", serial, func(d api.Device) bool { return d.Driver == "android" })
	h = e.StdioHost()
	h.Initialize()
	dev = e2e.OnDevice(serial)
	h.OK("phone_connect", dev("task", task), "LOCKED")
	e.Unlock(serial) // the person's unlock goes through the driver: wake, swipe, PIN, enter
	return e, serial, h, dev
}

// TestAndroidAgentTask: an agent's task through pinky mcp on a phone driven
// by pinky-driver-android through a real adb server: connect, the person's
// unlock, observe, launch, tap, typing non-ASCII text, swipe, files, and
// the gateway waking the phone after its screen went off.
func TestAndroidAgentTask(t *testing.T) {
	e, serial, h, dev := androidTask(t, "android: write to Ben")
	h.OK("phone_observe", dev("full", true), "Messages")
	h.OK("phone_launch", dev("app", "com.google.android.apps.messaging"), "Ben Okafor")
	h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
	const typed = "Grüße aus Köln 🙂"
	h.OK("phone_type", dev("field", "Text message", "text", typed), typed)
	h.OK("phone_key", dev("key", "back"), "")
	h.OK("phone_swipe", dev("from", map[string]any{"x": 540, "y": 1500}, "to", map[string]any{"x": 540, "y": 900}), "")
	e.approveNext(t) // a push to the phone asks the person
	h.OK("phone_upload", dev("path", "notes/hello.txt", "content_base64", "aGVsbG8="), "")
	h.OK("phone_files", dev("path", "notes"), "hello.txt")

	// The screen goes off; the gateway wakes it before the agent's next read.
	c := exec.Command("adb", "-P", strings.TrimPrefix(envValue(e.Extra, "ANDROID_ADB_SERVER_PORT"), ""), "-s", serial, "shell", "input", "keyevent", "26")
	c.Env = append(os.Environ(), e.Extra...)
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("adb shell input keyevent 26: %v\n%s", err, out)
	}
	time.Sleep(200 * time.Millisecond)
	text := h.OK("phone_observe", dev(), "")
	if strings.Contains(text, "screen off") {
		t.Errorf("the agent's read after the screen went off: %q; want the phone woken", text)
	}
	h.OK("phone_release", dev(), "")
}

// TestAndroidWithoutScrcpy: on a computer without a scrcpy server, the
// Android driver passes pinky driver check for what its phone declares,
// which names what it lacks (video, pinch, displays), why and how to
// install scrcpy; and an agent's phone_observe with a screenshot gets the
// picture from screencap.
func TestAndroidWithoutScrcpy(t *testing.T) {
	e := newEnv(t)
	serial := e.androidPhoneWith(t, false)
	out, errs, code := e.Run("driver", "check", filepath.Join(e.Home, "drivers", "pinky-driver-android"), "--device", serial, "--pin", "1234")
	if code != 0 {
		t.Errorf("pinky driver check of an Android phone without scrcpy: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"no scrcpy server was found", "SCRCPY_SERVER_PATH", "apt install scrcpy"} {
		if !strings.Contains(out, want) {
			t.Errorf("pinky driver check printed:\n%s\nwant it to say %q", out, want)
		}
	}

	e.Daemon("--console", "off")
	e.waitOnlyPhone("the daemon lists the Android phone", serial, nil)
	h := e.StdioHost()
	h.Initialize()
	dev := e2e.OnDevice(serial)
	// The check left the phone unlocked: the agent goes home through adb
	// shell input, then looks.
	h.OK("phone_connect", dev("task", "android: look without scrcpy"), "")
	h.OK("phone_key", dev("key", "home"), "")
	r := h.Call("phone_observe", dev("full", true, "screenshot", true))
	if r.IsError || r.Images != 1 || !strings.Contains(r.Text, "Messages") {
		t.Errorf("phone_observe with a screenshot, without scrcpy: error=%v, %d images, %q; want the home screen and its picture", r.IsError, r.Images, r.Text)
	}
	h.OK("phone_release", dev(), "")
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
