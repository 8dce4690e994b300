package screen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestDiff(t *testing.T) {
	p := simtest.NewPhone(t, android)
	p.Unlock()
	p.Launch("messages")
	m := NewModel()
	list := m.Read(p.Screen())
	p.Tap("Ana Silva")
	thread := m.Read(p.Screen())
	p.Tap("compose_message_text")
	focused := m.Read(p.Screen())
	p.Type("Hello")
	typed := m.Read(p.Screen())
	p.Tap("send_message_button")
	sent := m.Read(p.Screen())
	p.Key(sdk.KeyBack) // the keyboard
	p.Key(sdk.KeyBack) // the thread
	back := m.Read(p.Screen())
	p.Launch("mail")
	mail := m.Read(p.Screen())

	ref := func(v *View, text string) int { return node(t, v, text).Ref }
	field := ref(typed, "Text message")
	tests := []struct {
		name       string
		prev, next *View
		want       []string
		appChanged bool
	}{
		{"same screen", list, list, nil, false},
		{"open a conversation", list, thread, []string{
			fmt.Sprintf(`- [%d] text "Messages"`, ref(list, "Messages")),
			fmt.Sprintf(`- [%d] list (scrollable)`, node(t, list, "Ana Silva").Parent),
			fmt.Sprintf(`- [%d] item "Ana Silva · Yes, 12:30 at Rosa's"`, ref(list, "Ana Silva")),
			fmt.Sprintf(`- [%d] item "Ben Okafor · Did you get the tickets?"`, ref(list, "Ben Okafor")),
			fmt.Sprintf(`- [%d] item "Mum · Will do!"`, ref(list, "Mum")),
			fmt.Sprintf(`+ [%d] button "Back"`, ref(thread, "Back")),
			fmt.Sprintf(`+ [%d] text "Ana Silva"`, ref(thread, "Ana Silva")),
			fmt.Sprintf(`+ [%d] list (scrollable)`, node(t, thread, "Ana: Are we still on for lunch?").Parent),
			fmt.Sprintf(`+ [%d] text "Ana: Are we still on for lunch?"`, ref(thread, "Ana: Are we still on for lunch?")),
			fmt.Sprintf(`+ [%d] text "Me: Yes, 12:30 at Rosa's"`, ref(thread, "Me: Yes, 12:30 at Rosa's")),
			fmt.Sprintf(`+ [%d] field hint="Text message"`, ref(thread, "Text message")),
			fmt.Sprintf(`+ [%d] button "Send"`, ref(thread, "Send")),
		}, false},
		{"focus the field", thread, focused, []string{
			fmt.Sprintf(`~ [%d] field hint="Text message" (none) → (focused)`, field),
			fmt.Sprintf(`+ [%d] keyboard`, keyboardRef(t, focused)),
		}, false},
		{"type", focused, typed, []string{
			fmt.Sprintf(`~ [%d] field "" → "Hello"`, field),
		}, false},
		{"send", typed, sent, []string{
			fmt.Sprintf(`+ [%d] text "Me: Hello"`, ref(sent, "Me: Hello")),
			fmt.Sprintf(`~ [%d] field "Hello" → ""`, field),
		}, false},
		{"back to the list keeps the old refs", sent, back, nil, false},
		{"another app", back, mail, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := Diff(tt.prev, tt.next)
			if got := d.AppChanged(); got != tt.appChanged {
				t.Errorf("AppChanged: got %v; want %v", got, tt.appChanged)
			}
			if tt.want == nil && tt.name != "same screen" {
				return
			}
			if diff := cmp.Diff(tt.want, d.Lines); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
			if got, want := d.Empty(), len(tt.want) == 0 && len(d.Header) == 0; got != want {
				t.Errorf("Empty: got %v; want %v", got, want)
			}
		})
	}

	// Back on the list, the conversations have the refs they had before.
	for _, who := range []string{"Ana Silva", "Ben Okafor", "Mum"} {
		if got, want := ref(back, who), ref(list, who); got != want {
			t.Errorf("%s after going back: got ref %d; want %d", who, got, want)
		}
	}
	if got, want := Diff(focused, typed).Text(), fmt.Sprintf("~ [%d] field \"\" → \"Hello\"\n", field); got != want {
		t.Errorf("Text: got %q; want %q", got, want)
	}
	if got, want := Diff(thread, focused).Header, []string{"keyboard shown"}; !cmp.Equal(got, want) {
		t.Errorf("Header: got %q; want %q", got, want)
	}
	if got, want := Diff(list, list).Text(), "(no change on screen)\n"; got != want {
		t.Errorf("empty Text: got %q; want %q", got, want)
	}
}

func TestRender(t *testing.T) {
	p := simtest.NewPhone(t, android)
	m := NewModel()
	locked := m.Read(p.Screen())
	p.Unlock()
	home := m.Read(p.Screen())
	p.Launch("messages")
	p.Tap("Ben Okafor")
	p.Tap("compose_message_text")
	before := m.Read(p.Screen())
	p.Type("Yes!")
	after := m.Read(p.Screen())
	p.Launch("notes")
	notes := m.Read(p.Screen())

	tests := []struct {
		name       string
		prev, next *View
		wantFull   bool
		wantPrefix string
	}{
		{"first read", nil, locked, true, "LOCKED"},
		{"unlocked", locked, home, true, "app Pixel Launcher (com.google.android.apps.nexuslauncher) · unlocked"},
		{"typing", before, after, false, "~ ["},
		{"another app", after, notes, true, "app Notes (com.google.android.keep)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, full := Render(tt.prev, tt.next)
			if full != tt.wantFull || !strings.HasPrefix(text, tt.wantPrefix) {
				t.Errorf("got (%q, %v); want a text starting %q, full %v", text, full, tt.wantPrefix, tt.wantFull)
			}
			if full && text != tt.next.Text() {
				t.Errorf("full: got %q; want the whole screen %q", text, tt.next.Text())
			}
		})
	}
	if d := Diff(after, notes); !strings.HasPrefix(d.Text(), "app Messages (com.google.android.apps.messaging) → Notes (com.google.android.keep)") {
		t.Errorf("app change header: got %q", d.Text())
	}
}

func keyboardRef(t *testing.T, v *View) int {
	t.Helper()
	for _, n := range v.Nodes {
		if n.Role == RoleKeyboard {
			return n.Ref
		}
	}
	t.Fatalf("no keyboard in\n%s", v.Text())
	return 0
}
