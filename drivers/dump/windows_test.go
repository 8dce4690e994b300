package dump

import (
	"errors"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The multi-display document is hand-written after the format of AOSP's
// AccessibilityNodeInfoDumper.dumpWindowsToFile (testdata/SOURCES.md): it
// was not captured from a phone.
const windowsFixture = "windows/synthetic-two-displays.xml"

func TestParseUIAutomatorWindows(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", windowsFixture))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		display       int
		app           string
		width, height int
		keyboard      bool
		elements      int
		skipped       []string // texts of overlays, which are left out
		order         []string // texts in the order their windows are drawn
	}{
		{0, "com.android.settings", 1080, 2400, false, 7, []string{"Overlay hint"}, []string{"Settings", "Réseau & internet", "09:41"}},
		// The focused window's app, not the picture-in-picture window above it.
		{7, "com.google.android.gm", 720, 1280, true, 12, nil, []string{"Messages", "Compose", "ana@example.com", "Now playing"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("display %d", tt.display), func(t *testing.T) {
			s, err := ParseUIAutomatorWindows(strings.NewReader(string(raw)), tt.display)
			if err != nil {
				t.Fatalf("got error %v; want none", err)
			}
			if s.App.ID != tt.app {
				t.Errorf("app: got %q; want %q", s.App.ID, tt.app)
			}
			if s.Width != tt.width || s.Height != tt.height {
				t.Errorf("size: got %dx%d; want %dx%d", s.Width, s.Height, tt.width, tt.height)
			}
			if s.KeyboardShown != tt.keyboard {
				t.Errorf("keyboard: got %v; want %v", s.KeyboardShown, tt.keyboard)
			}
			if len(s.Elements) != tt.elements {
				t.Errorf("elements: got %d; want %d", len(s.Elements), tt.elements)
			}
			checkWellFormed(t, s) // ids, parents, and bounds inside the display
			// Every text of the display's windows is kept, byte for byte,
			// except the overlays'.
			for _, text := range displayTexts(t, string(raw), tt.display) {
				switch {
				case slices.Contains(tt.skipped, text):
					if hasText(s, text) {
						t.Errorf("text %q of an overlay: kept; want it left out", text)
					}
				case !hasText(s, text):
					t.Errorf("text %q: not found; want every text of the display's windows", text)
				}
			}
			var at []int
			for _, text := range tt.order {
				at = append(at, slices.IndexFunc(s.Elements, func(e sdk.Element) bool { return e.Text == text }))
			}
			if !slices.IsSorted(at) || slices.Contains(at, -1) {
				t.Errorf("texts %q at elements %v; want them in that order (windows bottom first)", tt.order, at)
			}
		})
	}
}

// displayTexts is every non-empty text attribute inside <display id="N">.
func displayTexts(t *testing.T, raw string, display int) []string {
	t.Helper()
	start := strings.Index(raw, fmt.Sprintf(`<display id="%d">`, display))
	if start < 0 {
		t.Fatalf("no display %d in the fixture", display)
	}
	end := start + strings.Index(raw[start:], "</display>")
	var texts []string
	for _, m := range regexp.MustCompile(` text="([^"]+)"`).FindAllStringSubmatch(raw[start:end], -1) {
		texts = append(texts, html.UnescapeString(m[1]))
	}
	if len(texts) < 3 {
		t.Fatalf("display %d of the fixture has %d texts; the test wants several", display, len(texts))
	}
	return texts
}

func TestParseUIAutomatorWindowsApp(t *testing.T) {
	win := func(typ, pkg, layer, active, focused string) string {
		return `<window index="0" title="" bounds="[0,0][100,100]" active="` + active + `" focused="` + focused + `" accessibility-focused="false" id="1" layer="` + layer + `" type="` + typ + `"><hierarchy rotation="1"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="` + pkg + `" bounds="[0,0][100,100]" /></hierarchy></window>`
	}
	doc := func(ws ...string) string {
		return `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><displays><display id="2">` + strings.Join(ws, "") + `</display></displays>`
	}
	tests := []struct {
		name, doc, want string
	}{
		{"focused", doc(win("TYPE_APPLICATION", "top", "3", "false", "false"), win("TYPE_APPLICATION", "focused", "2", "false", "true"), win("TYPE_APPLICATION", "active", "1", "true", "false")), "focused"},
		{"active", doc(win("TYPE_APPLICATION", "top", "3", "false", "false"), win("TYPE_APPLICATION", "active", "1", "true", "false")), "active"},
		{"topmost", doc(win("TYPE_APPLICATION", "low", "1", "false", "false"), win("TYPE_APPLICATION", "top", "3", "false", "false")), "top"},
		{"not the keyboard or the system", doc(win("TYPE_INPUT_METHOD", "kb", "5", "true", "true"), win("TYPE_SYSTEM", "sys", "4", "true", "true"), win("TYPE_APPLICATION", "app", "1", "false", "false")), "app"},
		{"no application window", doc(win("TYPE_SYSTEM", "sys", "4", "false", "false")), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseUIAutomatorWindows(strings.NewReader(tt.doc), 2)
			if err != nil {
				t.Fatal(err)
			}
			if s.App.ID != tt.want {
				t.Errorf("app: got %q; want %q", s.App.ID, tt.want)
			}
			if s.Orientation != sdk.OrientationLandscape {
				t.Errorf("orientation: got %q; want landscape (rotation 1)", s.Orientation)
			}
		})
	}
}

func TestParseUIAutomatorWindowsErrors(t *testing.T) {
	single, err := os.ReadFile(filepath.Join("testdata", "synthetic-multiwindow-landscape.xml"))
	if err != nil {
		t.Fatal(err)
	}
	fixture, err := os.ReadFile(filepath.Join("testdata", windowsFixture))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		doc     string
		display int
		is      error
		want    string
	}{
		{"the old single-display document", string(single), 0, ErrSingleDisplay, "Android 13"},
		{"a display without windows", string(fixture), 3, ErrNoDisplay, "display 3"},
		{"no displays", `<displays />`, 0, ErrNoDisplay, "display 0"},
		{"not xml", "UI hierchary dumped to: /dev/tty", 0, nil, "uiautomator window dump"},
		{"another root", `<html></html>`, 0, nil, "<html>"},
		{"bad window bounds", `<displays><display id="0"><window bounds="[0,0]" type="TYPE_APPLICATION" /></display></displays>`, 0, nil, "bounds"},
		{"windows without area", `<displays><display id="0"><window bounds="[0,0][0,0]" type="TYPE_APPLICATION" /></display></displays>`, 0, nil, "no area"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseUIAutomatorWindows(strings.NewReader(tt.doc), tt.display)
			if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q (is %v)", err, tt.want, tt.is)
			}
		})
	}
	// A display with only overlays is empty, not an error: the caller knows its size.
	s, err := ParseUIAutomatorWindows(strings.NewReader(`<displays><display id="4"><window bounds="[0,0][10,10]" layer="1" type="TYPE_ACCESSIBILITY_OVERLAY" /></display></displays>`), 4)
	if err != nil || len(s.Elements) != 0 || s.Width != 0 {
		t.Errorf("a display with an overlay only: got %+v, %v; want an empty screen", s, err)
	}
}
