package commit

import (
	"slices"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// TestKeyboard judges touches on the on-screen keyboard: letters and the
// editing keys type; the action key, or a key the keyboard does not name,
// submits the focused field.
func TestKeyboard(t *testing.T) {
	const msgs = "com.google.android.apps.messaging"
	chat := view(msgs, chatField(true), screen.Node{Role: screen.RoleKeyboard})
	search := view("com.example", searchField("Search"), screen.Node{Role: screen.RoleKeyboard})
	noFocus := view(msgs, chatField(false), screen.Node{Role: screen.RoleKeyboard})
	tests := []struct {
		name string
		v    *screen.View
		key  string
		want Kind
	}{
		{"letter", chat, "q", ""},
		{"digit", chat, "7", ""},
		{"emoji", chat, "😀", ""},
		{"delete sign", chat, "⌫", ""},
		{"space", chat, "space", ""},
		{"shift", chat, "Shift", ""},
		{"symbols", chat, "?123", ""},
		{"space es", chat, "espacio", ""},
		{"delete ja", chat, "削除", ""},
		{"enter", chat, "enter", SendMessage},
		{"return", chat, "return", SendMessage},
		{"send", chat, "Send", SendMessage},
		{"send es", chat, "Enviar", SendMessage},
		{"send zh", chat, "发送", SendMessage},
		{"enter arrow", chat, "↵", SendMessage},
		{"unnamed key", chat, "", SendMessage},
		{"enter in a search field", search, "search", ""},
		{"enter with no focused field", noFocus, "enter", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, kind := range []string{"tap", "long_press", "double_tap"} {
				got := Detect(tt.v, Action{Kind: kind, OnKeyboard: true, KeyboardKey: tt.key})
				if got.Kind != tt.want {
					t.Errorf("%s on %q: got %q (%s); want %q", kind, tt.key, got.Kind, got.Evidence, tt.want)
				}
			}
		})
	}
	// A tap that lands on the keyboard node (no key known) is its action key.
	if got := Detect(chat, Action{Kind: "tap", Target: last(chat)}); got.Kind != SendMessage {
		t.Errorf("tap on the keyboard node: got %q; want %q", got.Kind, SendMessage)
	}
}

// TestEnterOnAFocusedControl: enter (or the d-pad centre) on a focused
// button clicks it.
func TestEnterOnAFocusedControl(t *testing.T) {
	pay := button("Pay")
	pay.Focused = true
	v := view("com.example", pay)
	for _, k := range []string{"enter", "dpad_center"} {
		if got := Detect(v, Action{Kind: "key", Key: k}); got.Kind != Payment {
			t.Errorf("key %s on a focused Pay: got %q; want %q", k, got.Kind, Payment)
		}
	}
	if got := Detect(view("com.example", button("Pay")), Action{Kind: "key", Key: "enter"}); got.Kind != "" {
		t.Errorf("enter with nothing focused: got %q; want none", got.Kind)
	}
}

// TestSwipeTakesTheStrongerEnd judges a swipe by both of its ends.
func TestSwipeTakesTheStrongerEnd(t *testing.T) {
	v := view("com.example", button("Send"), button("Delete"))
	got := Detect(v, Action{Kind: "swipe", Target: &v.Nodes[0], End: &v.Nodes[1]})
	if got.Kind != Delete || !strings.HasPrefix(got.Evidence, "swipe ending on") {
		t.Errorf("got %q (%s); want %q from the end", got.Kind, got.Evidence, Delete)
	}
	got = Detect(v, Action{Kind: "swipe", Target: &v.Nodes[0], EndOnKeyboard: true, EndKeyboardKey: "q"})
	if got.Kind != SendMessage {
		t.Errorf("start on Send, end on a letter: got %q; want %q", got.Kind, SendMessage)
	}
}

// thread is a conversation with a contact in its header and a reply typed.
func thread(contact, reply string) *screen.View {
	v := view("com.google.android.apps.messaging",
		screen.Node{Role: screen.RoleText, Label: "1 notification", StatusBar: true},
		button("Back"),
		text(contact),
		screen.Node{Role: screen.RoleList, Scrollable: true},
		in(4, text("Ben: Did you get the tickets?")),
		screen.Node{Role: screen.RoleField, Hint: "Text message", Editable: true, Label: reply, Bounds: sdk.Rect{Top: 2200, Right: 900, Bottom: 2300}},
		screen.Node{Role: screen.RoleButton, Label: "Send", Clickable: true, Bounds: sdk.Rect{Left: 900, Top: 2200, Right: 1080, Bottom: 2300}},
	)
	v.App.Label = "Messages"
	return v
}

func TestSummary(t *testing.T) {
	tap := func(v *screen.View, label string) Action {
		for i := range v.Nodes {
			if v.Nodes[i].Label == label {
				return Action{Kind: "tap", Target: &v.Nodes[i]}
			}
		}
		t.Fatalf("no %q", label)
		return Action{}
	}
	confirm := view("com.pinky.sim.shop", text("Confirm payment"), dialog(),
		in(2, text("Pay $59.99 with Visa •••• 4242?")), in(2, button("Cancel")), in(2, button("Pay")))
	confirm.Nodes[1].Ref = 2
	transfer := view("com.pinky.sim.bank", text("New transfer"),
		screen.Node{Role: screen.RoleField, Hint: "Recipient IBAN", Editable: true, Label: "DE89 3704 0044"},
		screen.Node{Role: screen.RoleField, Hint: "Amount", Editable: true, Label: "€50"},
		button("Review"))
	wifi := view("com.android.settings", screen.Node{Role: screen.RoleSwitch, Label: "Wi-Fi", Checkable: true, Checked: true, Clickable: true})
	tests := []struct {
		name, want, counterpart string
		v                       *screen.View
		a                       Action
	}{
		{"message and recipient", `Send "harmless hello" to Ben Okafor (in Messages)`, "Ben Okafor", thread("Ben Okafor", "harmless hello"), tap(thread("Ben Okafor", "harmless hello"), "Send")},
		{"amount and payee", `Pay: "Pay $59.99 with Visa •••• 4242?"`, "Pay $59.99 with Visa •••• 4242?", confirm, tap(confirm, "Pay")},
		{"transfer to an IBAN", `Move money: "€50" — "DE89 3704 0044"`, "DE89 3704 0044", transfer, tap(transfer, "Review")},
		{"setting to what", `Turn "Wi-Fi" off`, "Wi-Fi", wifi, tap(wifi, "Wi-Fi")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Detect(tt.v, tt.a)
			if tt.name == "transfer to an IBAN" {
				r = Result{Kind: Transfer} // the Review button asks as a transfer on its review dialog
			}
			s := Summarize(tt.v, tt.a, r)
			if !strings.HasPrefix(s.Sentence, tt.want) || s.Counterpart != tt.counterpart {
				t.Errorf("got %q to %q; want %q to %q", s.Sentence, s.Counterpart, tt.want, tt.counterpart)
			}
		})
	}
}

// TestContentBindsWhatThePersonSaw: a retyped message or another
// conversation is other content; a new message in the thread's list and
// the status bar are not.
func TestContentBindsWhatThePersonSaw(t *testing.T) {
	base := Content(thread("Ben Okafor", "harmless hello"))
	for _, tt := range []struct {
		name string
		v    *screen.View
		same bool
	}{
		{"same screen", thread("Ben Okafor", "harmless hello"), true},
		{"retyped", thread("Ben Okafor", "EVIL-swapped-text"), false},
		{"another conversation", thread("Ana Silva", "harmless hello"), false},
		{"a new message in the list", func() *screen.View {
			v := thread("Ben Okafor", "harmless hello")
			v.Nodes[4].Label = "Ben: are you there?"
			return v
		}(), true},
		{"the status bar", func() *screen.View {
			v := thread("Ben Okafor", "harmless hello")
			v.Nodes[0].Label = "2 notifications"
			return v
		}(), true},
	} {
		if got := slices.Equal(Content(tt.v), base); got != tt.same {
			t.Errorf("%s: same content = %v; want %v (%q vs %q)", tt.name, got, tt.same, Content(tt.v), base)
		}
	}
}

// TestPinchIsATouchOnItsCentre: a pinch commits nothing of itself, but is
// judged as a touch on the element under its centre.
func TestPinchIsATouchOnItsCentre(t *testing.T) {
	v := view("com.example", button("Send"), text("Photo"))
	tests := []struct {
		name     string
		a        Action
		want     Kind
		evidence string
	}{
		{"on a send button", Action{Kind: "pinch", Target: &v.Nodes[0]}, SendMessage, "pinch on"},
		{"on a text", Action{Kind: "pinch", Target: &v.Nodes[1]}, "", ""},
		{"on nothing", Action{Kind: "pinch"}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(v, tt.a)
			if got.Kind != tt.want || !strings.HasPrefix(got.Evidence, tt.evidence) {
				t.Errorf("got %q (%s); want %q with evidence starting %q", got.Kind, got.Evidence, tt.want, tt.evidence)
			}
		})
	}
}
