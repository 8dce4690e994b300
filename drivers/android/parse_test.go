package android

import (
	"errors"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/dump"
)

// captured is the folder of the real captured UI dumps, which the dump
// parsers' tests and these share (its SOURCES.md says where each comes
// from). testdata holds only this package's dumpsys outputs.
const captured = "../dump/testdata"

func testdata(t *testing.T, name string) []byte {
	t.Helper()
	return readFile(t, filepath.Join("testdata", name))
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// capturedDumps lists the paths of the captured uiautomator dumps: the
// XML files of captured with a <hierarchy>, less those written by hand
// (synthetic-*).
func capturedDumps(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(captured, "*.xml"))
	if err != nil {
		tb.Fatal(err)
	}
	var dumps []string
	for _, f := range files {
		if !strings.HasPrefix(filepath.Base(f), "synthetic-") && strings.Contains(string(readFile(tb, f)), "<hierarchy") {
			dumps = append(dumps, f)
		}
	}
	if len(dumps) == 0 {
		tb.Fatalf("no captured uiautomator dumps in %s", captured)
	}
	return dumps
}

func TestParseFocus(t *testing.T) {
	for _, tc := range []struct {
		file, pkg, activity string
	}{
		{"dumpsys-window-settings-14.txt", "com.android.settings", "com.android.settings.Settings"},
		{"dumpsys-window-locked-10.txt", "com.android.systemui", ""},
		{"dumpsys-window-old-keyguard.txt", "com.android.systemui", ""},
		{"dumpsys-activity-13.txt", "com.google.android.keep", "com.google.android.keep.activities.BrowseActivity"},
	} {
		f, err := ParseFocus(testdata(t, tc.file))
		if err != nil || f.Package != tc.pkg || f.Activity != tc.activity {
			t.Errorf("%s: %+v, %v; want %s %s", tc.file, f, err, tc.pkg, tc.activity)
		}
	}
	// Only the focused app, written as an older Android wrote it.
	f, err := ParseFocus([]byte("  mFocusedApp=AppWindowToken{42a8e5c8 token=Token{41f3c0d0 ActivityRecord{41f2d9e0 u0 com.android.launcher/com.android.launcher2.Launcher t1}}}\n"))
	if err != nil || f.Package != "com.android.launcher" || f.Activity != "com.android.launcher2.Launcher" {
		t.Errorf("focused app only: %+v, %v", f, err)
	}
	if _, err := ParseFocus([]byte("mFocusedApp=null\n")); !errors.Is(err, ErrNoFocus) {
		t.Errorf("no focus: %v, want ErrNoFocus", err)
	}
}

func TestParseLock(t *testing.T) {
	for _, tc := range []struct {
		window, power    string
		locked, screenOn bool
	}{
		{"dumpsys-window-settings-14.txt", "dumpsys-power-awake.txt", false, true},
		{"dumpsys-window-locked-10.txt", "dumpsys-power-awake.txt", true, true},
		{"dumpsys-window-old-keyguard.txt", "dumpsys-power-awake.txt", true, true},
		{"dumpsys-window-locked-10.txt", "dumpsys-power-asleep.txt", true, false},
	} {
		l := ParseLock(testdata(t, tc.window), testdata(t, tc.power))
		if !l.Known || l.Locked != tc.locked || l.ScreenOn != tc.screenOn {
			t.Errorf("%s + %s: %+v; want locked %v, screen on %v", tc.window, tc.power, l, tc.locked, tc.screenOn)
		}
	}
	if l := ParseLock(nil, nil); l.Known {
		t.Errorf("empty outputs: %+v, want unknown", l)
	}
	// The keyguard monitor showing without restricted input (a swipe lock
	// that is being dismissed) is not locked.
	if l := ParseLock([]byte("KeyguardStateMonitor\n mIsShowing=true\n mInputRestricted=false\n"), nil); l.Locked || !l.Known {
		t.Errorf("keyguard showing, input free: %+v", l)
	}
}

func TestDumpXML(t *testing.T) {
	fixture := readFile(t, filepath.Join(captured, "pixel-launcher-home-widgets-en.xml"))
	out := append(append([]byte{}, fixture...), []byte("UI hierchary dumped to: /dev/tty\n")...)
	x, err := DumpXML(out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(x), "dumped to") || !strings.HasSuffix(string(x), "</hierarchy>") {
		t.Errorf("the XML kept uiautomator's last line or lost its end")
	}
	if _, err := dump.ParseUIAutomator(strings.NewReader(string(x))); err != nil {
		t.Errorf("the XML does not parse: %v", err)
	}
	for _, tc := range []struct {
		out  string
		want string
	}{
		{"ERROR: could not get idle state.\n", "idle"},
		{"ERROR: null root node returned by UiTestAutomationBridge.\n", "null root node"},
		{"<?xml version='1.0'?><hierarchy rotation=\"0\"><node", "cut short"},
	} {
		if _, err := DumpXML([]byte(tc.out)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.out, err, tc.want)
		}
	}
	if _, err := DumpXML([]byte("ERROR: could not get idle state.")); !errors.Is(err, ErrNotIdle) {
		t.Errorf("not idle: %v, want ErrNotIdle", err)
	}
}

func TestParsePackagesAndActivity(t *testing.T) {
	got := ParsePackages([]byte("package:com.android.settings\npackage:com.google.android.keep\r\n\nnoise\n"))
	if strings.Join(got, ",") != "com.android.settings,com.google.android.keep" {
		t.Errorf("packages: %q", got)
	}
	if c, ok := ParseResolvedActivity([]byte("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\ncom.google.android.keep/.activities.BrowseActivity\n")); !ok || c != "com.google.android.keep/.activities.BrowseActivity" {
		t.Errorf("resolve-activity: %q %v", c, ok)
	}
	if _, ok := ParseResolvedActivity([]byte("No activity found\n")); ok {
		t.Error("No activity found resolved to something")
	}
}

func TestInputText(t *testing.T) {
	for _, tc := range []struct {
		in, out string
		ok      bool
	}{
		{"hello world", "hello%sworld", true},
		{"a&b;c", `a\&b\;c`, true},
		{`it's "ok"`, `it\'s%s\"ok\"`, true},
		{"50% off", "50%%soff", true},
		{"", "", false},
		{"héllo", "", false},
		{"tab\there", "", false},
		{"literal %s", "", false},
		{"🙂", "", false},
	} {
		out, ok := InputText(tc.in)
		if ok != tc.ok || out != tc.out {
			t.Errorf("InputText(%q) = %q, %v; want %q, %v", tc.in, out, ok, tc.out, tc.ok)
		}
	}
}

// TestReadEveryFixture runs the driver's read of `uiautomator dump
// /dev/tty` output on every captured Android screen: no error, the right
// app, every text of the dump kept (passwords as dots), and every element
// inside the screen.
func TestReadEveryFixture(t *testing.T) {
	apps := map[string]string{
		"car-marketplace-home-ar.xml":           "com.example.mobile",
		"login-phone-password-ar.xml":           "com.example.mobile",
		"phone-preferred-network-dialog-pt.xml": "com.android.phone",
		"pixel-launcher-home-widgets-en.xml":    "com.google.android.apps.nexuslauncher",
		"systemui-quick-settings-en.xml":        "", // System UI alone: the app comes from dumpsys
	}
	files := capturedDumps(t)
	if len(files) != len(apps) {
		t.Fatalf("%d fixtures, %d expected apps", len(files), len(apps))
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			raw := readFile(t, path)
			sc, err := readDump(append(append([]byte{}, raw...), "UI hierchary dumped to: /dev/tty\n"...))
			if err != nil {
				t.Fatal(err)
			}
			want, ok := apps[name]
			if !ok {
				t.Fatalf("no expected app for %s: add it to the table", name)
			}
			if sc.App.ID != want {
				t.Errorf("app %q, want %q", sc.App.ID, want)
			}
			texts := map[string]bool{}
			for _, e := range sc.Elements {
				texts[e.Text] = true
				b := e.Bounds
				if b.Left < 0 || b.Top < 0 || b.Right > sc.Width || b.Bottom > sc.Height || b.Left > b.Right || b.Top > b.Bottom {
					t.Errorf("element %d %q: bounds %+v outside the %dx%d screen", e.ID, e.Text, b, sc.Width, sc.Height)
				}
			}
			for _, m := range nodeAttrs.FindAllStringSubmatch(string(raw), -1) {
				attrs := m[1]
				tm := textAttr.FindStringSubmatch(attrs)
				if tm == nil {
					continue
				}
				text := html.UnescapeString(tm[1])
				if text == "" || texts[text] {
					continue
				}
				if strings.Contains(attrs, `password="true"`) && texts[strings.Repeat("•", utf8.RuneCountInString(text))] {
					continue // a password, shown as dots
				}
				t.Errorf("text %q of the dump is not in the screen", text)
			}
		})
	}
}

// nodeAttrs finds each node's attributes, textAttr the text among them.
var (
	nodeAttrs = regexp.MustCompile(`<node\s([^>]*)>`)
	textAttr  = regexp.MustCompile(`(?:^|\s)text="([^"]*)"`)
)
