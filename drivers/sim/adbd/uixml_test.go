package adbd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// An empty field's hint goes into text="…" as in real dumps, and hint="…"
// with it; a parser of real dumps still reads the field as empty.
func TestDumpEmptyFieldHint(t *testing.T) {
	s := &sdk.Screen{ScreenOn: true, App: sdk.App{ID: "com.example.chat"}, Width: 100, Height: 200, Elements: []sdk.Element{
		{ID: 1, Class: "android.widget.FrameLayout", Bounds: sdk.Rect{Right: 100, Bottom: 200}, Visible: true},
		{ID: 2, ParentID: 1, Class: "android.widget.EditText", Hint: "Message", Editable: true, Bounds: sdk.Rect{Right: 100, Bottom: 50}, Visible: true},
		{ID: 3, ParentID: 1, Class: "android.widget.EditText", Hint: "Name", Text: "Ann", Editable: true, Bounds: sdk.Rect{Top: 50, Right: 100, Bottom: 100}, Visible: true},
	}}
	b, err := uiAutomatorXML(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`text="Message" resource-id=""`, `hint="Message"`, `text="Ann"`, `hint="Name"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("dump %s; want %s in it", b, want)
		}
	}
	got, err := dump.ParseUIAutomator(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range got.Elements {
		if e.Editable {
			texts = append(texts, e.Text+"|"+e.Hint)
		}
	}
	if strings.Join(texts, " ") != "|Message Ann|Name" {
		t.Errorf("parsed fields (text|hint): %q; want [|Message Ann|Name]", texts)
	}
}

// A dump has one root, as real `uiautomator dump` output has (the active
// window's): a FrameLayout decor view without a resource id, of the
// window's package, over the whole screen. The status bar, a heads-up
// notification and the keyboard are not in it; an open shade is alone.
func TestDumpOneRoot(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(p *simtest.Phone)
		pkg      string
		has, not []string // resource ids in the dump, and not in it
		keyboard bool     // the sim shows its keyboard
	}{
		{"home", func(*simtest.Phone) {}, "com.google.android.apps.nexuslauncher",
			[]string{"com.google.android.apps.nexuslauncher:id/workspace"}, []string{"com.android.systemui:id/clock", "com.android.systemui:id/battery"}, false},
		{"app", func(p *simtest.Phone) { p.Launch("com.android.settings") }, "com.android.settings",
			[]string{"android:id/content"}, []string{"com.android.systemui:id/clock"}, false},
		{"keyboard", func(p *simtest.Phone) {
			p.Launch("com.google.android.keep")
			p.Tap("new_note")
			p.Tap("edit_note_text")
		}, "com.google.android.keep", []string{"android:id/content"}, []string{"keyboard_holder", "com.android.systemui:id/clock"}, true},
		{"shade", func(p *simtest.Phone) {
			p.Launch("com.android.settings")
			p.Act(sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 1}, To: sdk.Point{X: 540, Y: 1200}})
		}, "com.android.systemui", []string{"com.android.systemui:id/notification_panel"}, []string{"android:id/content", "com.android.systemui:id/clock"}, false},
		{"lock screen", func(p *simtest.Phone) { p.Key(sdk.KeySleep); p.Key(sdk.KeyWake) }, "com.android.systemui",
			[]string{"com.android.systemui:id/keyguard_host_view"}, []string{"com.android.systemui:id/clock"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := simtest.NewPhone(t, simtest.Android, simtest.Unlocked(simtest.Android))
			tt.setup(p)
			s := p.Screen()
			if s.KeyboardShown != tt.keyboard {
				t.Fatalf("the sim's keyboard shown = %v; want %v", s.KeyboardShown, tt.keyboard)
			}
			b, err := uiAutomatorXML(s)
			if err != nil {
				t.Fatal(err)
			}
			dumped := string(b)
			root := fmt.Sprintf(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="%s" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" bounds="[0,0][%d,%d]">`, tt.pkg, s.Width, s.Height)
			if !strings.HasPrefix(dumped, root) || !strings.HasSuffix(dumped, "</node></hierarchy>") {
				t.Errorf("dump %.400s…; want it to start with %s", dumped, root)
			}
			for _, rid := range tt.has {
				if !strings.Contains(dumped, `resource-id="`+rid+`"`) {
					t.Errorf("dump has no %s", rid)
				}
			}
			for _, rid := range tt.not {
				if strings.Contains(dumped, rid) {
					t.Errorf("dump has %s; want it left out", rid)
				}
			}
			got, err := dump.ParseUIAutomator(strings.NewReader(dumped))
			if err != nil {
				t.Fatal(err)
			}
			if n := countRoots(got); n != 1 {
				t.Errorf("parsed %d roots; want 1", n)
			}
			if got.Width != s.Width || got.Height != s.Height {
				t.Errorf("parsed size %dx%d; want %dx%d", got.Width, got.Height, s.Width, s.Height)
			}
			wantApp := tt.pkg
			if wantApp == "com.android.systemui" {
				wantApp = "" // the parser leaves System UI's app to dumpsys
			}
			if got.App.ID != wantApp {
				t.Errorf("parsed app %q; want %q", got.App.ID, wantApp)
			}
		})
	}
}

func countRoots(s *sdk.Screen) int {
	n := 0
	for _, e := range s.Elements {
		if e.ParentID == 0 {
			n++
		}
	}
	return n
}
