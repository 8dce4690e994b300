package peers

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/internal/testdep"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// rig is a private Debian adb server with one virtual phone attached
// through its adb face, unlocked as its owner would (the PIN typed on the
// lock screen).
type rig struct {
	port   int      // the adb server's
	serial string   // the phone's, as adb lists it
	env    []string // the environment of adb and of every client
	tools  string   // a folder with adb on PATH and in platform-tools (ANDROID_HOME)
}

// newRig starts an adb server and the pinky-driver-sim binary as the
// world's first Android phone's adb face, connects them and unlocks the
// phone.
func newRig(t *testing.T) *rig {
	t.Helper()
	r := startServer(t)
	addr := "127.0.0.1:" + strconv.Itoa(testkit.FreePort(t))
	var logs testkit.Buffer
	face := exec.Command(simBin, "--adb-listen", addr)
	face.Stderr = &logs
	if err := face.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		face.Process.Signal(os.Interrupt) //nolint:errcheck // it may have exited
		done := make(chan struct{})
		go func() { face.Wait(); close(done) }() //nolint:errcheck // its exit status is the test's no longer
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			face.Process.Kill() //nolint:errcheck // stuck: end it
			<-done
		}
		if t.Failed() {
			t.Logf("pinky-driver-sim's log:\n%s", logs.String())
		}
	})
	testkit.WaitUntil(t, "the adb face listens on "+addr, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	r.attach(t, addr)
	return r
}

// newRigFace is newRig with a face served in this process, for what the
// binary cannot be asked for (a scrcpy server of another version).
func newRigFace(t *testing.T, cfg adbd.Config) *rig {
	t.Helper()
	r := startServer(t)
	srv, err := adbd.Listen("127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	r.attach(t, srv.Addr().String())
	return r
}

// startServer starts a private adb server (its key in a temporary $HOME),
// killed when the test ends.
func startServer(t *testing.T) *rig {
	t.Helper()
	adbPath := testdep.Need(t, "adb")
	r := &rig{port: testkit.FreePort(t), tools: t.TempDir()}
	// mobile-mcp finds adb as $ANDROID_HOME/platform-tools/adb, mobilecli
	// on PATH: both reach Debian's.
	if err := os.Mkdir(filepath.Join(r.tools, "platform-tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(r.tools, "adb"), filepath.Join(r.tools, "platform-tools", "adb")} {
		if err := os.Symlink(adbPath, link); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANDROID_") && !strings.HasPrefix(kv, "PATH=") {
			r.env = append(r.env, kv)
		}
	}
	r.env = append(r.env, "HOME="+t.TempDir(), "ANDROID_ADB_SERVER_PORT="+strconv.Itoa(r.port),
		"ANDROID_HOME="+r.tools, "PATH="+r.tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	r.adb(t, "start-server")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, adbPath, "kill-server")
		c.Env = r.env
		c.Run() //nolint:errcheck // the server may be gone already
	})
	return r
}

// attach connects the server to the face at addr and unlocks the phone.
func (r *rig) attach(t *testing.T, addr string) {
	t.Helper()
	r.serial = addr
	if out := r.adb(t, "connect", addr); !strings.Contains(out, "connected to "+addr) {
		t.Fatalf("adb connect: got %q; want connected to %s", out, addr)
	}
	testkit.WaitUntil(t, "adb lists the phone as a device", func() bool {
		return strings.Contains(r.adb(t, "devices"), addr+"\tdevice")
	})
	r.shell(t, "input text 1234")
	r.shell(t, "input keyevent KEYCODE_ENTER")
	if s := r.screen(t); s.LockState == sdk.LockLocked {
		t.Fatal("the phone is still locked after its PIN was typed")
	}
}

// adb runs the adb command against the rig's server and returns its
// output; a failure fails the test.
func (r *rig) adb(t *testing.T, args ...string) string {
	t.Helper()
	c := exec.CommandContext(testkit.Context(t), "adb", args...)
	c.WaitDelay = 5 * time.Second
	c.Env = r.env
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("adb %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// shell runs a shell command on the phone through Debian's adb.
func (r *rig) shell(t *testing.T, cmd string) string {
	t.Helper()
	return r.adb(t, "-s", r.serial, "shell", cmd)
}

// screen is what the phone shows, read from its UI dump and dumpsys
// window: the app in front (the package of the focused window) and the
// elements.
func (r *rig) screen(t *testing.T) *sdk.Screen {
	t.Helper()
	// exec-out: under `adb shell` (shell,v2,raw: pipes) a real phone has
	// no /dev/tty and prints only the dump's trailer.
	s, err := dump.ParseUIAutomator(strings.NewReader(r.adb(t, "-s", r.serial, "exec-out", "uiautomator dump /dev/tty")))
	if err != nil {
		t.Fatalf("the phone's UI dump: %v", err)
	}
	win := r.shell(t, "dumpsys window")
	if strings.Contains(win, "mShowingLockscreen=true") {
		s.LockState = sdk.LockLocked
	} else {
		s.LockState = sdk.LockUnlocked
	}
	s.App.ID = ""
	if _, rest, ok := strings.Cut(win, "mCurrentFocus=Window{"); ok {
		// Window{7b3c1e4 u0 PKG/.Activity}
		f := strings.Fields(strings.TrimSuffix(strings.SplitN(rest, "\n", 2)[0], "}"))
		if len(f) == 3 {
			s.App.ID, _, _ = strings.Cut(f[2], "/")
		}
	}
	return s
}

// element is the first element of s with the resource id (its part after
// ":id/"), or nil.
func element(s *sdk.Screen, id string) *sdk.Element {
	for i, e := range s.Elements {
		if e.ResourceID == id || strings.HasSuffix(e.ResourceID, ":id/"+id) {
			return &s.Elements[i]
		}
	}
	return nil
}

// npmPackages are what the tests load from testdata/node/node_modules.
var npmPackages = []string{"@devicefarmer/adbkit", "@yume-chan/adb", "@yume-chan/adb-server-node-tcp",
	"@yume-chan/adb-scrcpy", "@yume-chan/scrcpy", "@mobilenext/mobile-mcp"}

// needNode returns the path of a node of version 20 or later (mobile-mcp's
// least) once it and the pinned npm packages are installed: the one
// scripts/test-deps.sh put in testdata/node/.node when the system's is
// older, else the system's. Without them it skips the test, or fails it in
// CI.
func needNode(t *testing.T) string {
	t.Helper()
	node := filepath.Join(nodeDir, ".node", "node_modules", ".bin", "node")
	if _, err := os.Stat(node); err != nil {
		node = testdep.Need(t, "node")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf(format+": scripts/test-deps.sh installs it", args...)
		}
		t.Skipf(format+" (make test installs it)", args...)
	}
	out, err := exec.Command(node, "-p", "process.versions.node.split('.')[0]").Output()
	if major, _ := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || major < 20 {
		missing("%s is not node 20 or later (%s, %v)", node, strings.TrimSpace(string(out)), err)
	}
	for _, p := range npmPackages {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			missing("npm package %s is not installed in %s", p, nodeDir)
		}
	}
	return node
}

// node runs a script of testdata/node with args and returns its stdout;
// a non-zero exit fails the test with the script's stderr.
func (r *rig) node(t *testing.T, env []string, script string, args ...string) []byte {
	t.Helper()
	node := needNode(t)
	ctx, cancel := context.WithTimeout(testkit.Context(t), testkit.Scaled(90*time.Second))
	defer cancel()
	c := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	c.Dir = nodeDir
	c.Env = append(append([]string(nil), r.env...), env...)
	c.WaitDelay = 5 * time.Second
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, errb.String())
	}
	return out.Bytes()
}

// center is the middle of an element's bounds.
func center(e *sdk.Element) (x, y int) {
	return (e.Bounds.Left + e.Bounds.Right) / 2, (e.Bounds.Top + e.Bounds.Bottom) / 2
}

// described is the first element of s with the content description, or nil.
func described(s *sdk.Screen, desc string) *sdk.Element {
	for i, e := range s.Elements {
		if e.ContentDescription == desc {
			return &s.Elements[i]
		}
	}
	return nil
}
