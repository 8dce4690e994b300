package sim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

const minimal = `
phones:
  - {id: p1, platform: android, width: 1080, height: 2400, density: 420}
apps:
  - key: a
    id: com.example.a
    label: A
    start: main
    screens:
      main:
        elements:
          - {role: button, text: Go, on_tap: [{go: second}]}
      second:
        elements:
          - {role: text, text: Second}
`

func TestParseGood(t *testing.T) {
	w, err := Parse([]byte(minimal), "")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(w.Phones); got != 1 {
		t.Errorf("phones: got %d; want 1", got)
	}
	d := New(w)
	defer d.Close()
	act(t, d, "p1", sdk.Action{Kind: sdk.ActLaunch, AppID: "a"})
	tapOn(t, d, "p1", "Go")
	if _, ok := find(screen(t, d, "p1"), "Second"); !ok {
		t.Error("go: second screen not shown")
	}
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"unknown field", "label: A", "label: A\n    colour: red", "line 8: field colour not found"},
		{"bad platform", "platform: android", "platform: symbian", `platform "symbian"`},
		{"bad id", "id: p1", "id: 'p 1'", "id: want 1 to 128"},
		{"no size", "width: 1080, ", "", "size 0x2400"},
		{"unknown screen", "go: second", "go: third", `elements[0]: on_tap: [0]: go: unknown screen "third"`},
		{"two things in a step", "{go: second}", "{go: second, back: true}", "exactly one of"},
		{"bad role", "role: button", "role: knob", `role "knob"`},
		{"bad start", "start: main", "start: nope", `start: unknown screen "nope"`},
		{"bad colour", "label: A", "label: A\n    icon: red", `icon: "red": want #rrggbb`},
		{"bad flag", "text: Second}", "text: Second, flags: [shiny]}", `flag "shiny" unknown`},
		{"locked without pin", "density: 420}", "density: 420, locked: true}", "needs a pin"},
		{"bad yaml", "phones:", "phones: [", "world: yaml"},
		{"bad fault", "phones:", "faults: {crash_after: x}\nphones:", `fault crash_after="x"`},
		{"lacks frame capture", "density: 420}", "density: 420, lacks: [{capability: frame_capture, reason: none}]}", `phones[0] ("p1"): lacks[0]: capability "frame_capture": want one the sim serves`},
		{"lacks twice", "density: 420}", "density: 420, lacks: [{capability: video, reason: a}, {capability: video, reason: b}]}", `lacks[1]: capability "video" is listed twice`},
		{"lacks without reason", "density: 420}", "density: 420, lacks: [{capability: video, fix: install it}]}", "lacks[0] (video): reason is required"},
		{"missing dump", "elements:\n          - {role: text, text: Second}", "dump: nope.xml", "dump: open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(minimal, tt.from, tt.to, 1)
			if src == minimal {
				t.Fatalf("replacement %q not found", tt.from)
			}
			_, err := Parse([]byte(src), t.TempDir())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v; want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestDumpScreens(t *testing.T) {
	w, err := Load(filepath.Join("testdata", "dumps.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d := New(w)
	defer d.Close()
	s := screen(t, d, "dump-android")
	if s.Width != 1080 || s.Height != 2400 || len(s.Elements) != 18 {
		t.Errorf("android dump: got %dx%d with %d elements; want 1080x2400 with 18", s.Width, s.Height, len(s.Elements))
	}
	act(t, d, "dump-android", sdk.Action{Kind: sdk.ActTap, Point: sdk.Point{X: 540, Y: 1200}})

	act(t, d, "dump-ios", sdk.Action{Kind: sdk.ActLaunch, AppID: "theapp"})
	s = screen(t, d, "dump-ios")
	if len(s.Elements) != 30 || s.App.ID != "io.cloudgrey.the-app" {
		t.Errorf("ios dump: got %d elements in %q; want 30 in io.cloudgrey.the-app", len(s.Elements), s.App.ID)
	}
	var pw sdk.Element
	for _, e := range s.Elements {
		if e.Password {
			pw = e
		}
	}
	if e := pw; e.Text != "•••••••••" || e.Bounds.Right > 1242 || e.Bounds.Left < 100 {
		t.Errorf("ios password field: got %+v; want a password scaled to the phone", e)
	}
	if _, err := d.Screenshot(context.Background(), sdk.ScreenshotRequest{DeviceID: "dump-ios"}); err != nil {
		t.Error(err)
	}
}
