package screen

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// simScreens are the virtual phone's screens kept as golden files.
var simScreens = []struct {
	name  string
	id    string
	setup func(p *simtest.Phone)
}{
	{"lock", android, func(p *simtest.Phone) {}},
	{"launcher", android, func(p *simtest.Phone) { p.Unlock() }},
	{"messages-thread-keyboard", android, func(p *simtest.Phone) {
		p.Unlock()
		p.Launch("messages")
		p.Tap("Ana Silva")
		p.Tap("compose_message_text")
		p.Type("On my way")
	}},
	{"bank-login-password", android, func(p *simtest.Phone) {
		p.Unlock()
		p.Launch("bank")
		p.Tap("username")
		p.Type("ana")
		p.Tap("password")
		p.Type("s3cret-PIN")
	}},
	{"settings", android, func(p *simtest.Phone) { p.Unlock(); p.Launch("settings") }},
	{"shop-confirm-dialog", android, func(p *simtest.Phone) {
		p.Unlock()
		p.Launch("shop")
		p.Tap("add_to_cart")
		p.Tap("place_order")
	}},
	{"ios-lock", ios, func(p *simtest.Phone) {}},
	{"ios-messages", ios, func(p *simtest.Phone) { p.Unlock(); p.Launch("messages") }},
	{"ios-bank-login-password", ios, func(p *simtest.Phone) {
		p.Unlock()
		p.Launch("bank")
		p.Tap("password")
		p.Type("s3cret-PIN")
	}},
}

func TestGoldenSim(t *testing.T) {
	for _, tt := range simScreens {
		t.Run(tt.name, func(t *testing.T) {
			p := simtest.NewPhone(t, tt.id)
			tt.setup(p)
			golden(t, "sim-"+tt.name, NewModel().Read(p.Screen()).Text())
		})
	}
}

func TestGoldenFixtures(t *testing.T) {
	for _, name := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			s, _ := loadFixture(t, name)
			golden(t, "fixture-"+strings.TrimSuffix(strings.TrimSuffix(name, ".xml"), ".json"), NewModel().Read(s).Text())
		})
	}
}

func TestLockScreen(t *testing.T) {
	p := simtest.NewPhone(t, android)
	v := NewModel().Read(p.Screen())
	text := v.Text()
	for _, want := range []string{"LOCKED", "Enter PIN", `button "5"`, `button "OK"`, "password (focused)"} {
		if !strings.Contains(text, want) {
			t.Errorf("lock screen: got %q; want it to contain %q", text, want)
		}
	}
	p.Key(sdk.KeyPower)
	if got, want := NewModel().Read(p.Screen()).Text(), "screen off · locked\n"; got != want {
		t.Errorf("screen off: got %q; want %q", got, want)
	}
}

func TestPasswordNeverShown(t *testing.T) {
	const secret = "hunter2"
	handmade := &sdk.Screen{
		App: sdk.App{ID: "com.example.bank"}, ScreenOn: true, Width: 1000, Height: 2000, LockState: sdk.LockUnlocked,
		Elements: []sdk.Element{
			{ID: 1, Class: "android.widget.FrameLayout", Bounds: sdk.Rect{Right: 1000, Bottom: 2000}, Visible: true, Enabled: true},
			{ID: 2, ParentID: 1, Class: "android.widget.EditText", Text: secret, Value: secret, Hint: "Password", Password: true,
				Editable: true, Focused: true, Bounds: sdk.Rect{Top: 100, Right: 1000, Bottom: 200}, Visible: true, Enabled: true},
			// A clickable row that would merge a leaked password into its label.
			{ID: 3, ParentID: 1, Class: "android.widget.LinearLayout", Clickable: true, Bounds: sdk.Rect{Top: 300, Right: 1000, Bottom: 400}, Visible: true, Enabled: true},
			{ID: 4, ParentID: 3, Class: "android.widget.EditText", Text: secret, Password: true, Bounds: sdk.Rect{Top: 300, Right: 1000, Bottom: 400}, Visible: true, Enabled: true},
		},
	}
	p := simtest.NewPhone(t, android)
	p.Unlock()
	p.Launch("bank")
	p.Tap("password")
	p.Type(secret)
	tests := []struct {
		name string
		s    *sdk.Screen
	}{
		{"handmade", handmade},
		{"sim bank login", p.Screen()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewModel()
			empty := m.Read(&sdk.Screen{ScreenOn: true, App: tt.s.App, Width: tt.s.Width, Height: tt.s.Height})
			v := m.Read(tt.s)
			texts := []string{v.Text(), Diff(empty, v).Text()}
			for _, n := range v.Nodes {
				texts = append(texts, n.Label, n.Value, n.Hint, n.Element.Text, n.Element.Value, strings.Join(n.searchable(), " "))
			}
			_, err := v.ByText(secret, 0)
			if !errors.Is(err, ErrNotFound) {
				t.Errorf("ByText(secret): got %v; want not found", err)
			}
			// The error repeats the query; nothing else in it may show the secret.
			texts = append(texts, strings.ReplaceAll(err.Error(), quote(secret), `"…"`))
			for _, s := range texts {
				if strings.Contains(s, secret) {
					t.Errorf("got %q; want no %q in it", s, secret)
				}
			}
			pw, err := v.ByText("Password", 0)
			if err != nil {
				t.Fatal(err)
			}
			if !pw.Password || !pw.Filled || !strings.Contains(pw.line(), "(filled, hidden") {
				t.Errorf("password node: got %s; want a filled, hidden password", pw.line())
			}
		})
	}
}

// el is a visible, enabled element for hand-made screens.
func el(id, parent int, class string, r sdk.Rect, f func(e *sdk.Element)) sdk.Element {
	e := sdk.Element{ID: id, ParentID: parent, Class: class, Bounds: r, Visible: true, Enabled: true}
	if f != nil {
		f(&e)
	}
	return e
}

func TestCondense(t *testing.T) {
	full := sdk.Rect{Right: 1000, Bottom: 2000}
	row := func(top int) sdk.Rect { return sdk.Rect{Top: top, Right: 1000, Bottom: top + 100} }
	tests := []struct {
		name  string
		elems []sdk.Element
		want  []string
	}{
		{
			name: "empty containers are dropped",
			elems: []sdk.Element{
				el(1, 0, "android.widget.FrameLayout", full, nil),
				el(2, 1, "android.widget.LinearLayout", full, func(e *sdk.Element) { e.ResourceID = "a:id/content" }),
				el(3, 2, "android.widget.TextView", row(0), func(e *sdk.Element) { e.Text = "Hello" }),
				el(4, 2, "android.widget.ImageView", row(100), nil),
			},
			want: []string{`[1] text "Hello"`},
		},
		{
			name: "label merges into its clickable parent",
			elems: []sdk.Element{
				el(1, 0, "android.widget.LinearLayout", row(0), func(e *sdk.Element) { e.Clickable = true }),
				el(2, 1, "android.widget.TextView", row(0), func(e *sdk.Element) { e.Text = "Wi-Fi" }),
				el(3, 1, "android.widget.TextView", row(0), func(e *sdk.Element) { e.Text = "Connected" }),
				el(4, 1, "android.widget.Switch", row(0), func(e *sdk.Element) { e.Checkable, e.Checked = true, true }),
			},
			want: []string{`[1] switch "Wi-Fi · Connected" (checked)`},
		},
		{
			name: "a parent with a control keeps its children",
			elems: []sdk.Element{
				el(1, 0, "android.widget.LinearLayout", row(0), func(e *sdk.Element) { e.Clickable = true }),
				el(2, 1, "android.widget.TextView", row(0), func(e *sdk.Element) { e.Text = "Title" }),
				el(3, 1, "android.widget.Button", row(0), func(e *sdk.Element) { e.Text = "Go"; e.Clickable = true }),
			},
			want: []string{`[1] button id=`[:len(`[1] button`)], `  [2] text "Title"`, `  [3] button "Go"`},
		},
		{
			name: "a wrapper around one control is that control",
			elems: []sdk.Element{
				el(1, 0, "XCUIElementTypeCell", row(0), func(e *sdk.Element) { e.Text, e.Clickable = "Auto-Correction", true }),
				el(2, 1, "XCUIElementTypeStaticText", row(0), func(e *sdk.Element) { e.Text = "Auto-Correction" }),
				el(3, 1, "XCUIElementTypeSwitch", row(0), func(e *sdk.Element) {
					e.ContentDescription, e.Checkable, e.Clickable, e.Value = "Auto-Correction", true, true, "0"
				}),
			},
			want: []string{`[1] switch "Auto-Correction" (unchecked)`},
		},
		{
			name: "marks",
			elems: []sdk.Element{
				el(1, 0, "android.widget.ScrollView", full, func(e *sdk.Element) { e.Scrollable = true }),
				el(2, 1, "android.widget.EditText", row(0), func(e *sdk.Element) { e.Editable, e.Focused, e.Text, e.Hint = true, true, "Hi", "Message" }),
				el(3, 1, "android.widget.EditText", row(100), func(e *sdk.Element) { e.Editable, e.Text, e.Hint = true, "Subject", "Subject" }),
				el(4, 1, "android.widget.Button", row(200), func(e *sdk.Element) { e.Text, e.Clickable, e.Enabled = "Send", true, false }),
				el(5, 1, "android.widget.Button", row(300), func(e *sdk.Element) { e.Text, e.ContentDescription, e.Clickable = "←", "Back", true }),
				el(6, 1, "android.widget.TextView", row(400), func(e *sdk.Element) { e.Text, e.Selected = "Tab  one\nline", true }),
				el(7, 1, "android.widget.SeekBar", row(500), func(e *sdk.Element) { e.ContentDescription, e.Value = "Volume", "40%" }),
				el(8, 1, "android.widget.TextView", row(600), func(e *sdk.Element) { e.Text, e.Visible = "hidden", false }),
				el(9, 1, "android.widget.ImageButton", row(700), func(e *sdk.Element) { e.Clickable, e.ResourceID = true, "app:id/overflow_menu" }),
			},
			want: []string{
				`[1] list (scrollable)`,
				`  [2] field "Hi" hint="Message" (focused)`,
				`  [3] field hint="Subject"`,
				`  [4] button "Send" (disabled)`,
				`  [5] button "Back"`,
				`  [6] text "Tab one line" (selected)`,
				`  [7] slider "Volume" value="40%"`,
				`  [8] button id=overflow_menu`,
			},
		},
		{
			name: "keyboard is one node and the status bar shows only notifications",
			elems: []sdk.Element{
				el(1, 0, "android.widget.FrameLayout", sdk.Rect{Right: 1000, Bottom: 60}, nil),
				el(2, 1, "android.widget.TextView", sdk.Rect{Right: 100, Bottom: 60}, func(e *sdk.Element) { e.Text, e.ResourceID = "12:41", "com.android.systemui:id/clock" }),
				el(3, 1, "android.widget.TextView", sdk.Rect{Left: 100, Right: 500, Bottom: 60}, func(e *sdk.Element) {
					e.Text, e.ResourceID = "2 notifications", "com.android.systemui:id/notification_icon_area"
				}),
				el(4, 0, "android.widget.FrameLayout", sdk.Rect{Top: 1400, Right: 1000, Bottom: 2000}, func(e *sdk.Element) {
					e.ResourceID = "com.google.android.inputmethod.latin:id/keyboard_holder"
				}),
				el(5, 4, "android.widget.FrameLayout", sdk.Rect{Top: 1400, Right: 100, Bottom: 1500}, func(e *sdk.Element) { e.Text, e.Clickable = "q", true }),
			},
			want: []string{`[1] text "2 notifications"`, `[2] keyboard`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := NewModel().Read(&sdk.Screen{ScreenOn: true, Width: 1000, Height: 2000, Elements: tt.elems})
			got := strings.Split(strings.TrimSuffix(v.Text(), "\n"), "\n")[1:]
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}
