package doctor

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// fakeInfo is an fs.FileInfo of a given mode.
type fakeInfo struct{ mode fs.FileMode }

func (f fakeInfo) Name() string       { return "x" }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

// want is what a test expects of a result: its verdict and words that the
// detail and the fix contain.
type want struct {
	ok     bool
	detail string
	fix    string
}

func check(t *testing.T, got Result, w want) {
	t.Helper()
	if got.OK != w.ok || !strings.Contains(got.Detail, w.detail) || !strings.Contains(got.Fix, w.fix) {
		t.Errorf("got %+v; want ok=%v, detail with %q, fix with %q", got, w.ok, w.detail, w.fix)
	}
	if !got.OK && got.Fix == "" {
		t.Errorf("%s: a problem without a fix: %+v", got.Check, got)
	}
}

func TestDataFolder(t *testing.T) {
	tests := []struct {
		name      string
		fi        fs.FileInfo
		err       error
		checkMode bool
		want      want
	}{
		{"private", fakeInfo{fs.ModeDir | 0o700}, nil, true, want{true, "private", ""}},
		{"open", fakeInfo{fs.ModeDir | 0o755}, nil, true, want{false, "mode 0755", "chmod 700 /h"}},
		{"open where modes mean nothing", fakeInfo{fs.ModeDir | 0o777}, nil, false, want{true, "private", ""}},
		{"not made yet", nil, fs.ErrNotExist, true, want{true, "not made yet", ""}},
		{"a file", fakeInfo{0o600}, nil, true, want{false, "not a folder", "PINKY_HOME"}},
		{"unreadable", nil, fs.ErrPermission, true, want{false, "cannot be read", "PINKY_HOME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, DataFolder("/h", tt.fi, tt.err, tt.checkMode), tt.want) })
	}
}

func TestFreeSpace(t *testing.T) {
	tests := []struct {
		name string
		free uint64
		err  error
		want want
	}{
		{"plenty", 20 << 30, nil, want{true, "20.0 GiB free", ""}},
		{"little", 300 << 20, nil, want{false, "only 300 MiB free", "free some space"}},
		{"not measured", 0, errors.New("unsupported"), want{true, "not measured", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, FreeSpace("/h", tt.free, tt.err), tt.want) })
	}
}

func TestToken(t *testing.T) {
	tests := []struct {
		name             string
		fi               fs.FileInfo
		statErr, readErr error
		want             want
	}{
		{"private", fakeInfo{0o600}, nil, nil, want{true, "private", ""}},
		{"windows: no mode, the access list is what counts", fakeInfo{0o666}, nil, nil, want{true, "private", ""}},
		{"windows: read by others", fakeInfo{0o666}, nil, errors.New("token /h/token may be read by S-1-1-0"), want{false, "may be read by", "pinky token --rotate"}},
		{"none yet", nil, fs.ErrNotExist, nil, want{true, "none yet", ""}},
		{"readable by others", fakeInfo{0o644}, nil, errors.New("permissions 0644 are too open"), want{false, "mode 0644", "chmod 600 /h/token"}},
		{"empty", fakeInfo{0o600}, nil, errors.New("holds no usable token"), want{false, "no usable token", "pinky token --rotate"}},
		{"unreadable", nil, fs.ErrPermission, nil, want{false, "cannot be read", "pinky token --rotate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			check(t, Token("/h/token", tt.fi, tt.statErr, tt.readErr, !strings.HasPrefix(tt.name, "windows")), tt.want)
		})
	}
}

func TestFiles(t *testing.T) {
	broken := errors.New("/h/policy.yaml: line 3: unknown field \"alow\"")
	tests := []struct {
		name string
		got  Result
		want want
	}{
		{"policy valid", Policy("/h/policy.yaml", nil), want{true, "/h/policy.yaml is valid", ""}},
		{"policy none yet", Policy("/h/policy.yaml", fmt.Errorf("read the policy: %w", fs.ErrNotExist)), want{true, "default policy", ""}},
		{"policy broken", Policy("/h/policy.yaml", broken), want{false, "/h/policy.yaml: line 3", "pinky policy check"}},
		{"drivers.yaml valid", DriverSettings("/h/drivers.yaml", nil), want{true, "valid", ""}},
		{"drivers.yaml broken", DriverSettings("/h/drivers.yaml", errors.New("/h/drivers.yaml: field nope not found")), want{false, "nope", "correct /h/drivers.yaml"}},
		{"keychain reachable", Keychain("linux", nil), want{true, "reachable", ""}},
		{"keychain not on linux", Keychain("linux", errors.New("no session bus")), want{false, "no session bus", "Secret Service"}},
		{"keychain not on macOS", Keychain("darwin", errors.New("locked")), want{false, "locked", "login keychain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, tt.got, tt.want) })
	}
}

func TestDaemon(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want want
	}{
		{"running", nil, want{true, "running, pid 42, version 1.2.0", ""}},
		{"none", fmt.Errorf("%w: start it", api.ErrNoDaemon), want{true, "not running", ""}},
		{"stuck", errors.New("read: connection reset"), want{false, "connection reset", "pinky stop-daemon"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { check(t, Daemon(api.Status{Pid: 42, Version: "1.2.0"}, tt.err), tt.want) })
	}
}

func TestListeners(t *testing.T) {
	dial := func(addr string) error {
		if addr == "127.0.0.1:9" {
			return errors.New("connection refused")
		}
		return nil
	}
	tests := []struct {
		name string
		st   api.Status
		want []want // console, MCP over HTTP, history
	}{
		{"both off", api.Status{History: api.History{Path: "/h/history.db", Writable: true}},
			[]want{{true, "off", ""}, {true, "off", ""}, {true, "is written", ""}}},
		{"both serve", api.Status{Console: "127.0.0.1:7777", HTTP: "0.0.0.0:8080", History: api.History{Writable: true}},
			[]want{{true, "serves http://127.0.0.1:7777", ""}, {true, "reachable from other computers", ""}, {true, "", ""}}},
		{"console silent, history failing", api.Status{Console: "127.0.0.1:9", History: api.History{Path: "/h/history.db", Cause: "disk full", Fix: "free some space"}},
			[]want{{false, "127.0.0.1:9 does not answer", "restart the daemon"}, {true, "off", ""}, {false, "disk full", "free some space"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Listeners(tt.st, dial)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d results %+v; want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				check(t, got[i], tt.want[i])
			}
		})
	}
}

func TestFound(t *testing.T) {
	android := driverhost.Candidate{Name: "android", Path: "/opt/pinky/pinky-driver-android", Source: driverhost.SourceExeDir}
	tests := []struct {
		name  string
		found []driverhost.Candidate
		err   error
		want  []want
	}{
		{"found", []driverhost.Candidate{android}, nil, []want{{true, "android (/opt/pinky/pinky-driver-android)", ""}}},
		{"attached", []driverhost.Candidate{{Name: "acme", Source: "attach"}}, nil, []want{{true, "acme (attached)", ""}}},
		{"none", nil, nil, []want{{false, "no pinky-driver-* in /opt/pinky, /h/drivers", "next to pinky"}}},
		{"all off", nil, nil, []want{{false, "every driver found is turned off: android, sim", "--enable-driver"}}},
		{"a bad pin", []driverhost.Candidate{android}, errors.New(`pinned driver "x": not executable`),
			[]want{{true, "android", ""}, {false, "not executable", "pin"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var off []string
			if tt.name == "all off" {
				off = []string{"android", "sim"}
			}
			got := Found(tt.found, off, tt.err, []string{"/opt/pinky", "/h/drivers"})
			if len(got) != len(tt.want) {
				t.Fatalf("got %d results %+v; want %d", len(got), got, len(tt.want))
			}
			for i := range got {
				check(t, got[i], tt.want[i])
			}
		})
	}
}

func TestDriverChecks(t *testing.T) {
	lines := []string{
		`{"time":"t","level":"WARN","msg":"no scrcpy server","check":"scrcpy","fix":"install scrcpy"}`,
		`not json: a panic, say`,
		`{"level":"INFO","msg":"a line of no check"}`,
		`{"level":"WARN","msg":"adb is not installed","check":"adb","fix":"apt install adb"}`,
		`{"@level":"error","@message":"WebDriverAgent does not answer","check":"wda"}`,
		`{"level":"INFO","msg":"the adb server answers","check":"adb"}`,
	}
	got := DriverChecks(lines)
	want := []DriverCheck{
		{Name: "scrcpy", Msg: "no scrcpy server", Fix: "install scrcpy"},
		{Name: "adb", OK: true, Msg: "the adb server answers"},
		{Name: "wda", Msg: "WebDriverAgent does not answer"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %+v; want %+v", got, want)
	}
	p := Problems(api.Driver{Stderr: lines})
	if len(p) != 2 || p[0] != "no scrcpy server → install scrcpy" || p[1] != "WebDriverAgent does not answer" {
		t.Errorf("Problems: got %q; want the scrcpy one with its fix, then the wda one", p)
	}
}

func TestDrivers(t *testing.T) {
	noADB := `{"level":"WARN","msg":"adb is not installed","check":"adb","fix":"apt install adb"}`
	android := api.Driver{Name: "android", Version: "1.0", State: "running", Capabilities: []string{"displays"}, Stderr: []string{noADB}}
	tests := []struct {
		name string
		ds   []api.Driver
		devs []api.Device
		want map[string]want // by check
	}{
		{"adb missing, no phones", []api.Driver{android}, nil, map[string]want{
			"driver android":      {true, "running, version 1.0, 0 phones", ""},
			"driver android: adb": {false, "adb is not installed", "apt install adb"},
			"phones":              {false, "no phone", "pinky ios add"},
		}},
		{"a failed driver", []api.Driver{{Name: "acme", State: "failed", LastError: "exit status 2", Stderr: []string{"panic: boom"}}}, nil, map[string]want{
			"driver acme": {false, "failed: exit status 2; it last wrote: panic: boom", "pinky driver restart acme"},
		}},
		{"phones", []api.Driver{{Name: "android", State: "running", Capabilities: []string{"displays"}}, {Name: "ios", State: "running"}}, []api.Device{
			{ID: "R5", Driver: "android", Online: true, State: "online", Platform: "android", Model: "Pixel 8", OSVersion: "15"},
			{ID: "old", Driver: "android", Online: true, State: "online", Platform: "android", OSVersion: "11"},
			{ID: "new", Driver: "android", Online: true, State: "unauthorized", Platform: "android", Detail: "accept the \"Allow USB debugging?\" prompt on it"},
			{ID: "ana-iphone", Driver: "ios", Online: true, State: "offline", Platform: "ios", Detail: "WebDriverAgent is not answering at http://10.0.0.5:8100"},
			{ID: "gone", Driver: "android", Online: false, State: "online", Platform: "android"},
			{ID: "noscr", Driver: "android", Online: true, State: "online", Platform: "android", OSVersion: "12", Missing: []api.MissingCap{
				{Capability: "video", Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"},
				{Capability: "displays", Reason: "Android 12 has no background displays"},
			}},
			{ID: "wda", Driver: "ios", Online: true, State: "online", Platform: "ios", Missing: []api.MissingCap{
				{Capability: "frame_capture", Fix: "add a broadcast with pinky ios add wda --video-listen :9100"},
			}, NotOffered: []string{"notifications", "pinch"}},
		}, map[string]want{
			"phone R5":         {true, "R5 (Pixel 8, android 15) is online", ""},
			"phone old":        {true, "background displays need Android 13", ""},
			"phone new":        {false, "is unauthorized", "Allow USB debugging?"},
			"phone ana-iphone": {false, "is offline", "WebDriverAgent is not answering"},
			"phone gone":       {false, "is offline", "pinky drivers"},
			"phone noscr":      {true, "noscr (android, android 12) is online", ""},
			"phone noscr: capabilities": {true, "no video (no scrcpy server found): to enable it, install scrcpy 3.x; " +
				"no displays (Android 12 has no background displays)", ""},
			"phone wda: capabilities": {true, "no frame_capture: to enable it, add a broadcast with pinky ios add wda --video-listen :9100", ""},
			"phone wda: not offered":  {true, "its driver (ios) does not offer notifications, pinch; agents work without them", ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Drivers(tt.ds, tt.devs)
			seen := map[string]bool{}
			for _, r := range got {
				w, ok := tt.want[r.Check]
				if !ok {
					continue
				}
				seen[r.Check] = true
				check(t, r, w)
			}
			for c := range tt.want {
				if !seen[c] {
					t.Errorf("no result %q in %+v", c, got)
				}
			}
			if tt.devs != nil {
				for _, r := range got {
					if r.Check == "phones" {
						t.Errorf("phones are connected, yet: %+v", r)
					}
				}
			}
		})
	}
}

func TestReport(t *testing.T) {
	r := Report{ok("a", "fine"), problem("b", "broken\x1b[2J", "mend it")}
	if r.OK() || r.Problems() != 1 {
		t.Errorf("OK %v, Problems %d; want false, 1", r.OK(), r.Problems())
	}
	var b bytes.Buffer
	r.Write(&b, func(s string) string { return strings.ReplaceAll(s, "\x1b", "?") })
	want := "ok       a: fine\nproblem  b: broken?[2J → mend it\n1 problem found\n"
	if b.String() != want {
		t.Errorf("got %q; want %q", b.String(), want)
	}
	if !(Report{ok("a", "fine")}).OK() {
		t.Error("a report of one ok check is not OK")
	}
}

// TestDriversMissing: a phone that lacks nothing has no capabilities
// result; one that says it lacks displays is not also told its Android
// version is too old for them.
func TestDriversMissing(t *testing.T) {
	ds := []api.Driver{{Name: "android", State: "running", Capabilities: []string{"displays", "video"}}}
	devs := []api.Device{
		{ID: "full", Driver: "android", Online: true, State: "online", Platform: "android", OSVersion: "15"},
		{ID: "old", Driver: "android", Online: true, State: "online", Platform: "android", OSVersion: "12",
			Missing: []api.MissingCap{{Capability: "displays", Reason: "Android 12 has none", Fix: "update the phone to Android 13"}}},
	}
	byCheck := map[string]Result{}
	for _, r := range Drivers(ds, devs) {
		byCheck[r.Check] = r
	}
	for _, c := range []string{"phone full: capabilities", "phone full: not offered", "phone old: not offered"} {
		if r, ok := byCheck[c]; ok {
			t.Errorf("a phone that lacks nothing of it: got %+v; want no %q result", r, c)
		}
	}
	if r := byCheck["phone old"]; strings.Contains(r.Detail, "need Android 13") {
		t.Errorf("phone old: got %q; want the Android note left to its capabilities result", r.Detail)
	}
	if r := byCheck["phone old: capabilities"]; !r.OK || !strings.Contains(r.Detail, "to enable it, update the phone to Android 13") {
		t.Errorf("phone old: capabilities: got %+v; want ok with the fix", r)
	}
}
