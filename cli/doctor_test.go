package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/internal/e2e"
)

// result is one line of `pinky doctor --json`.
type result struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix"`
}

// doctor runs `pinky doctor --json` and returns its results by check, the
// problems' checks and the exit code. An exit code that disagrees with
// the results fails the test.
func doctor(t *testing.T, e *env) (map[string]result, []string, int) {
	t.Helper()
	out, errs, code := e.Run("doctor", "--json")
	var rs []result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("pinky doctor --json: exit %d: %v\n%s%s", code, err, out, errs)
	}
	by := map[string]result{}
	var problems []string
	for _, r := range rs {
		by[r.Check] = r
		if !r.OK {
			problems = append(problems, r.Check)
			if r.Fix == "" {
				t.Errorf("problem %q says nothing to do: %+v", r.Check, r)
			}
		}
	}
	if (code == 0) != (len(problems) == 0) {
		t.Errorf("exit %d with problems %q; want 0 exactly when there are none", code, problems)
	}
	return by, problems, code
}

// TestDoctorHealthy: a data folder in use by a daemon with the virtual
// phones passes every check of its own; what a test machine may lack (a
// keychain) is the only problem allowed.
func TestDoctorHealthy(t *testing.T) {
	e := newEnv(t)
	e.Daemon("--sim")
	e.Run("token") // a token file, made as the person would
	by, problems, _ := doctor(t, e)
	for _, c := range []string{"daemon", "data folder", "free space", "token file", "policy", "drivers.yaml", "drivers found", "driver sim", "console", "MCP over HTTP", "history"} {
		if r, ok := by[c]; !ok || !r.OK {
			t.Errorf("check %q: got %+v; want ok", c, r)
		}
	}
	if r := by["drivers found"]; !strings.Contains(r.Detail, "sim") {
		t.Errorf("drivers found: got %+v; want the sim driver", r)
	}
	phones := 0
	for c, r := range by {
		if strings.HasPrefix(c, "phone ") {
			phones++
			if !r.OK {
				t.Errorf("virtual phone %s: %+v; want online", c, r)
			}
		}
	}
	if phones == 0 {
		t.Errorf("no phone checked in %+v", by)
	}
	for _, p := range problems {
		if p != "keychain" {
			t.Errorf("problem %q: %+v; want none but an unreachable keychain", p, by[p])
		}
	}
	out, _, _ := e.Run("doctor")
	if !strings.Contains(out, "ok       policy: ") || !strings.Contains(out, "found") {
		t.Errorf("pinky doctor: got\n%s\nwant one line per check and a summary", out)
	}
}

// TestDoctorTokenOpen: a token file others may read is a problem that
// says to chmod it.
func TestDoctorTokenOpen(t *testing.T) {
	e := newEnv(t)
	if _, errs, code := e.Run("token"); code != 0 {
		t.Fatalf("pinky token: exit %d: %s", code, errs)
	}
	path := filepath.Join(e.Home, "token")
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	by, _, code := doctor(t, e)
	r := by["token file"]
	if code != 1 || r.OK || !strings.Contains(r.Detail, "0644") || !strings.Contains(r.Fix, "chmod 600 "+path) {
		t.Errorf("exit %d, token file %+v; want exit 1 and a problem that says chmod 600 %s", code, r, path)
	}
}

// TestDoctorBrokenPolicy: a policy.yaml that does not parse is a problem
// that names the file.
func TestDoctorBrokenPolicy(t *testing.T) {
	e := newEnv(t)
	e.WriteFile("policy.yaml", "rules: [\n  - {when: {app: com.x}, do: alow\n")
	by, _, code := doctor(t, e)
	r := by["policy"]
	if code != 1 || r.OK || !strings.Contains(r.Detail, filepath.Join(e.Home, "policy.yaml")) {
		t.Errorf("exit %d, policy %+v; want exit 1 and a problem naming %s", code, r, filepath.Join(e.Home, "policy.yaml"))
	}
	if good := by["token file"]; !good.OK {
		t.Errorf("token file: %+v; want ok (none yet)", good)
	}
}

// TestDoctorWithoutADB: the Android driver of a computer without adb runs,
// finds no phones and says why: adb is missing, and how to install it; in
// `pinky drivers`, `pinky status` and `pinky doctor`.
func TestDoctorWithoutADB(t *testing.T) {
	e := newEnv(t)
	drivers := filepath.Join(e.Home, "drivers")
	os.MkdirAll(drivers, 0o700)
	b, err := os.ReadFile(e2e.Bin.Android)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(drivers, "pinky-driver-android"), b, 0o755); err != nil {
		t.Fatal(err)
	}
	// No adb on PATH, and no server at the port: nothing can start one.
	e.Extra = append(e.Extra, "PATH="+t.TempDir(), "HOME="+t.TempDir(), "ANDROID_ADB_SERVER_PORT="+freeTCPPort(t))
	e.Daemon()
	var drv string
	e.EventuallyOr("pinky drivers says adb is missing", func() bool {
		drv, _, _ = e.Run("drivers")
		return strings.Contains(drv, "android: adb is not installed")
	}, func() string { return drv })
	if !strings.Contains(drv, "apt install adb") {
		t.Errorf("pinky drivers:\n%s\nwant how to install adb", drv)
	}
	if st, _, _ := e.Run("status"); !strings.Contains(st, "adb is not installed") {
		t.Errorf("pinky status:\n%s\nwant it to say that adb is missing", st)
	}
	by, _, code := doctor(t, e)
	r := by["driver android: adb"]
	if code != 1 || r.OK || !strings.Contains(r.Detail, "adb is not installed") || !strings.Contains(r.Fix, "platform tools") {
		t.Errorf("exit %d, adb check %+v; want exit 1 and a problem that says how to install adb", code, r)
	}
	if d := by["driver android"]; !d.OK {
		t.Errorf("driver android: %+v; want it running", d)
	}
}

// TestDevicesNoPhones: a fresh install with no phones says how to connect
// one, the virtual phones only as a demo.
func TestDevicesNoPhones(t *testing.T) {
	e := newEnv(t)
	e.Daemon()
	out, _, code := e.Run("devices")
	for _, want := range []string{"USB debugging", "pinky ios add", "pinky doctor", "--sim"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("pinky devices: exit %d %q; want it to say %q", code, out, want)
		}
	}
	by, _, code := doctor(t, e)
	if r := by["phones"]; code != 1 || r.OK || !strings.Contains(r.Fix, "pinky ios add") {
		t.Errorf("exit %d, phones %+v; want a problem that says how to connect a phone", code, r)
	}
}

// TestDoctorAndroidPhone: with adb and a phone it attached, the Android
// driver's adb check passes and the phone is checked online, with its
// Android version.
func TestDoctorAndroidPhone(t *testing.T) {
	e := newEnv(t)
	serial := e.androidPhone(t)
	e.Daemon()
	var by map[string]result
	e.EventuallyOr("pinky doctor sees the phone online", func() bool {
		by, _, _ = doctor(t, e)
		return by["phone "+serial].OK
	}, func() string { return fmt.Sprint(by) })
	if r := by["driver android: adb"]; !r.OK || r.Detail != "the adb server answers" {
		t.Errorf("adb check: %+v; want ok", r)
	}
	if r := by["driver android: scrcpy"]; !r.OK {
		t.Errorf("scrcpy check: %+v; want ok (the test points the driver at a server)", r)
	}
	if r := by["phone "+serial]; !strings.Contains(r.Detail, "android ") {
		t.Errorf("phone: %+v; want its Android version", r)
	}
	if _, ok := by["phones"]; ok {
		t.Errorf("a phone is connected, yet: %+v", by["phones"])
	}
}
