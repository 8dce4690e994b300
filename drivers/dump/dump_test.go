package dump

import (
	"bytes"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestParseFixtures(t *testing.T) {
	tests := []struct {
		file          string
		nodes         int
		width, height int
		orientation   sdk.Orientation
		keyboard      bool
		passwords     int
		text          string // some element's text, kept intact
	}{
		{"login-phone-password-ar.xml", 18, 1080, 2400, sdk.OrientationPortrait, false, 1, ""},
		{"car-marketplace-home-ar.xml", 37, 1080, 2400, sdk.OrientationPortrait, false, 0, ""},
		{"phone-preferred-network-dialog-pt.xml", 30, 1080, 2167, sdk.OrientationPortrait, false, 0, ""},
		{"systemui-quick-settings-en.xml", 109, 1080, 2400, sdk.OrientationPortrait, false, 0, ""},
		{"pixel-launcher-home-widgets-en.xml", 101, 1344, 2992, sdk.OrientationPortrait, false, 0, ""},
		{"synthetic-multiwindow-landscape.xml", 6, 2400, 1080, sdk.OrientationLandscape, true, 0, "12:30"},
		{"synthetic-dialog-offset.xml", 3, 1017, 1500, sdk.OrientationPortrait, false, 0, "OK"},
		{"springboard-home-wda-legacy.json", 45, 375, 667, sdk.OrientationPortrait, false, 0, ""},
		{"theapp-login-securefield-appium.xml", 30, 414, 896, sdk.OrientationPortrait, false, 1, ""},
		{"settings-top-en.shirates-extract.xml", 93, 390, 844, sdk.OrientationPortrait, false, 0, "Settings"},
		{"settings-general-keyboards-en.shirates-extract.xml", 93, 390, 844, sdk.OrientationPortrait, false, 0, ""},
		{"settings-accessibility-en.shirates-extract.xml", 60, 375, 667, sdk.OrientationPortrait, false, 0, ""},
		{"calendar-day-view-ja.shirates-extract.xml", 95, 390, 844, sdk.OrientationPortrait, false, 0, ""},
		{"signup-form-securefields-en.shirates-extract.xml", 70, 375, 667, sdk.OrientationPortrait, false, 2, ""},
		{"synthetic-wda-current.json", 4, 393, 852, sdk.OrientationPortrait, false, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			s := parseFile(t, tt.file)
			if got := len(s.Elements); got != tt.nodes {
				t.Errorf("nodes: got %d; want %d", got, tt.nodes)
			}
			if s.Width != tt.width || s.Height != tt.height {
				t.Errorf("size: got %dx%d; want %dx%d", s.Width, s.Height, tt.width, tt.height)
			}
			if s.Orientation != tt.orientation {
				t.Errorf("orientation: got %v; want %v", s.Orientation, tt.orientation)
			}
			if s.KeyboardShown != tt.keyboard {
				t.Errorf("keyboard: got %v; want %v", s.KeyboardShown, tt.keyboard)
			}
			checkWellFormed(t, s)
			var pw int
			for _, e := range s.Elements {
				if e.Password {
					pw++
					if strings.Trim(e.Text, "•") != "" {
						t.Errorf("password element %d text: got %q; want dots only", e.ID, e.Text)
					}
				}
			}
			if pw != tt.passwords {
				t.Errorf("password fields: got %d; want %d", pw, tt.passwords)
			}
			if tt.text != "" && !hasText(s, tt.text) {
				t.Errorf("text %q: not found", tt.text)
			}
		})
	}
}

// TestRightToLeftText checks that Arabic text survives byte for byte.
func TestRightToLeftText(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "car-marketplace-home-ar.xml"))
	if err != nil {
		t.Fatal(err)
	}
	arabic := regexp.MustCompile(`content-desc="([^"]*[\x{0600}-\x{06FF}][^"]*)"`).FindSubmatch(raw)
	if arabic == nil {
		t.Fatal("fixture has no Arabic text")
	}
	want := html.UnescapeString(string(arabic[1]))
	s := parseFile(t, "car-marketplace-home-ar.xml")
	for _, e := range s.Elements {
		if e.ContentDescription == want {
			return
		}
	}
	t.Errorf("got no element with content description %q; want one", want)
}

func TestWDAWrapperOptional(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "theapp-login-securefield-appium.xml"))
	if err != nil {
		t.Fatal(err)
	}
	bare := bytes.Replace(bytes.Replace(raw, []byte("<AppiumAUT>"), nil, 1), []byte("</AppiumAUT>"), nil, 1)
	wrapped, err := ParseWDA(raw)
	if err != nil {
		t.Fatal(err)
	}
	unwrapped, err := ParseWDA(bare)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wrapped, unwrapped); diff != "" {
		t.Errorf("with and without <AppiumAUT> differ (-wrapped +bare):\n%s", diff)
	}
}

func TestWDACurrentJSON(t *testing.T) {
	s := parseFile(t, "synthetic-wda-current.json")
	want := []sdk.Element{
		{ID: 1, Class: "XCUIElementTypeApplication", ContentDescription: "Mail", ResourceID: "Mail",
			Bounds: sdk.Rect{Right: 393, Bottom: 852}, Enabled: true, Visible: true},
		{ID: 2, ParentID: 1, Class: "XCUIElementTypeTextField", Text: "ana@example.com", ContentDescription: "To",
			ResourceID: "toField", Bounds: sdk.Rect{Left: 16, Top: 120, Right: 377, Bottom: 164},
			Clickable: true, Focusable: true, Editable: true, Enabled: true, Visible: true},
		{ID: 3, ParentID: 1, Class: "XCUIElementTypeSecureTextField", Text: "•••••••", ContentDescription: "Password",
			ResourceID: "pw", Bounds: sdk.Rect{Left: 16, Top: 180, Right: 377, Bottom: 224},
			Clickable: true, Focusable: true, Editable: true, Password: true, Enabled: true, Visible: true},
		{ID: 4, ParentID: 1, Class: "XCUIElementTypeSwitch", ContentDescription: "Remember me", ResourceID: "remember",
			Value: "1", Bounds: sdk.Rect{Left: 300, Top: 240, Right: 393, Bottom: 271},
			Clickable: true, Checkable: true, Checked: true, Enabled: true, Visible: true},
	}
	if diff := cmp.Diff(want, s.Elements); diff != "" {
		t.Errorf("elements (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		parse func() error
		want  string
	}{
		{"uiautomator not xml", func() error { _, err := ParseUIAutomator(strings.NewReader("{}")); return err }, "uiautomator dump"},
		{"uiautomator empty", func() error {
			_, err := ParseUIAutomator(strings.NewReader(`<hierarchy rotation="0"></hierarchy>`))
			return err
		}, "no <node>"},
		{"uiautomator bad bounds", func() error {
			_, err := ParseUIAutomator(strings.NewReader(`<hierarchy><node bounds="[0,0]"/></hierarchy>`))
			return err
		}, "bounds"},
		{"wda neither", func() error { _, err := ParseWDA([]byte("hello")); return err }, "neither XML nor JSON"},
		{"wda bad number", func() error { _, err := ParseWDA([]byte(`<XCUIElementTypeApplication x="a"/>`)); return err }, "not a number"},
		{"wda json without tree", func() error { _, err := ParseWDA([]byte(`{"value": {}}`)); return err }, "no element tree"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.parse()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func parseFile(t *testing.T, name string) *sdk.Screen {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var s *sdk.Screen
	if strings.HasSuffix(name, ".json") || strings.Contains(string(raw[:min(len(raw), 300)]), "XCUIElementType") {
		s, err = ParseWDA(raw)
	} else {
		s, err = ParseUIAutomator(bytes.NewReader(raw))
	}
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

func hasText(s *sdk.Screen, text string) bool {
	for _, e := range s.Elements {
		if e.Text == text {
			return true
		}
	}
	return false
}

func checkWellFormed(t *testing.T, s *sdk.Screen) {
	t.Helper()
	screen := sdk.Rect{Right: s.Width, Bottom: s.Height}
	seen := map[int]bool{}
	for i, e := range s.Elements {
		if e.ID != i+1 {
			t.Errorf("element %d: got id %d; want %d", i, e.ID, i+1)
		}
		if e.ParentID != 0 && !seen[e.ParentID] {
			t.Errorf("element %d: parent %d does not come earlier", e.ID, e.ParentID)
		}
		seen[e.ID] = true
		b := e.Bounds
		if b.Left < 0 || b.Top < 0 || b.Right > screen.Right || b.Bottom > screen.Bottom || b.Right < b.Left || b.Bottom < b.Top {
			t.Errorf("element %d: bounds %v outside screen %v", e.ID, b, screen)
		}
		if !utf8.ValidString(e.Text) {
			t.Errorf("element %d: text is not UTF-8", e.ID)
		}
	}
}
