package commit

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"ascii case", "Place Order", "place order"},
		{"ascii clean", "send", "send"},
		{"punctuation and arrows", "→ Send ✉️!", "send"},
		{"ellipsis", "Delete…", "delete"},
		{"full-width latin", "ＳＥＮＤ", "send"},
		{"full-width ok", "ＯＫ", "ok"},
		{"half-width katakana", "ｲﾝｽﾄｰﾙ", "インストール"},
		{"spanish accent", "Envíar", "enviar"},
		{"spanish upper", "ENVIAR", "enviar"},
		{"french", "Désinstaller", "desinstaller"},
		{"german umlaut upper", "LÖSCHEN", "loschen"},
		{"german sharp s", "Schließen", "schliessen"},
		{"decomposed accent", "Cre\u0300me bru\u0302le\u0301e", "creme brulee"},
		{"portuguese", "Não permitir", "nao permitir"},
		{"cyrillic yo and short i", "Тёмная тема, Войти", "темная тема воити"},
		{"arabic tatweel", "حـذف", "حذف"},
		{"arabic tashkeel", "اشترِ", "اشتر"},
		{"arabic alef forms", "أرسل آخر", "ارسل اخر"},
		{"arabic article on a word starting with alef lam", "إلغاء", "غاء"}, // tables fold the same way
		{"arabic teh marbuta and alef maqsura", "رسالة على", "رساله علي"},
		{"arabic article", "التحويل", "تحويل"},
		{"chinese kept", "立即购买", "立即购买"},
		{"korean kept", "결제하기", "결제하기"},
		{"digits kept", "Pay $59.99", "pay 59 99"},
		{"empty", "", ""},
		{"only symbols", "•••", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalize(tt.in); got != tt.want {
				t.Errorf("normalize(%q): got %q; want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIDWords(t *testing.T) {
	tests := []struct{ in, want string }{
		{"com.google.android.apps.messaging:id/send_message_button", "send message button"},
		{"com.shop:id/btnPlaceOrder_2", "btn place order 2"},
		{"btn_pay", "btn pay"},
		{"android:id/button1", "button 1"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := idWords(tt.in); got != tt.want {
			t.Errorf("idWords(%q): got %q; want %q", tt.in, got, tt.want)
		}
	}
}

func TestTablesConsistent(t *testing.T) {
	for name, tb := range map[string]*table{"controls": controls, "fields": fields} {
		if len(tb.conflicts) > 0 {
			t.Errorf("%s: phrases with two kinds:\n%s", name, strings.Join(tb.conflicts, "\n"))
		}
	}
	langs := map[string]bool{}
	for _, l := range controlWords {
		langs[l.lang] = true
	}
	for _, l := range []string{"en", "zh-Hans", "zh-Hant", "ja", "ko", "es", "fr", "de", "pt", "ru", "ar"} {
		if !langs[l] {
			t.Errorf("control words: no %s table", l)
		}
	}
}

// view builds a screen: the nodes in order, with refs from 1.
func view(app string, nodes ...screen.Node) *screen.View {
	v := &screen.View{App: sdk.App{ID: app}, ScreenOn: true}
	for i := range nodes {
		if nodes[i].Ref == 0 {
			nodes[i].Ref = i + 1
		}
		nodes[i].Enabled = true
	}
	v.Nodes = nodes
	return v
}

func button(label string) screen.Node {
	return screen.Node{Role: screen.RoleButton, Label: label, Clickable: true, Element: sdk.Element{Text: label}}
}

func in(parent int, n screen.Node) screen.Node {
	n.Parent, n.Depth = parent, 1
	return n
}

func text(label string) screen.Node { return screen.Node{Role: screen.RoleText, Label: label} }

func dialog() screen.Node { return screen.Node{Role: screen.RoleDialog} }

func chatField(focused bool) screen.Node {
	return screen.Node{Role: screen.RoleField, Hint: "Text message", Editable: true, Focused: focused,
		Element: sdk.Element{ResourceID: "com.google.android.apps.messaging:id/compose_message_text", Editable: true}}
}

func searchField(hint string) screen.Node {
	return screen.Node{Role: screen.RoleField, Hint: hint, Editable: true, Focused: true,
		Element: sdk.Element{ResourceID: "com.app:id/search_src_text", Editable: true}}
}

// last is the action's target: the last node of v.
func last(v *screen.View) *screen.Node { return &v.Nodes[len(v.Nodes)-1] }

func TestDetect(t *testing.T) {
	const msgs = "com.google.android.apps.messaging"
	tests := []struct {
		name string
		v    *screen.View
		a    func(v *screen.View) Action
		want Kind
	}{
		// Typing and keys.
		{"type with submit into a chat field", view(msgs, chatField(true)),
			func(v *screen.View) Action {
				return Action{Kind: "type", Target: last(v), Text: "See you", Submit: true}
			}, SendMessage},
		{"type a new line into a chat field", view(msgs, chatField(true)),
			func(v *screen.View) Action { return Action{Kind: "type", Target: last(v), Text: "See you\n"} }, SendMessage},
		{"type without submit", view(msgs, chatField(true)),
			func(v *screen.View) Action { return Action{Kind: "type", Target: last(v), Text: "See you"} }, ""},
		{"type with submit into the focused field", view(msgs, chatField(true)),
			func(v *screen.View) Action { return Action{Kind: "type", Text: "See you", Submit: true} }, SendMessage},
		{"key enter on the focused chat field", view(msgs, button("Back"), chatField(true)),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "enter"} }, SendMessage},
		{"key enter with nothing focused", view(msgs, button("Back"), chatField(false)),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "enter"} }, ""},
		{"key back", view(msgs, chatField(true)),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "back"} }, ""},
		{"key enter in a search box", view(msgs, searchField("Search conversations")),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "enter"} }, ""},
		{"submit a search whose hint says delete", view("com.google.android.gm", searchField("Search mail to delete")),
			func(v *screen.View) Action { return Action{Kind: "type", Target: last(v), Text: "old", Submit: true} }, ""},
		{"submit a comment", view("com.instagram.android", screen.Node{Role: screen.RoleField, Hint: "Add a comment…", Editable: true}),
			func(v *screen.View) Action { return Action{Kind: "type", Target: last(v), Text: "Nice", Submit: true} }, Post},
		{"submit in a messenger's field without a hint", view("com.whatsapp", screen.Node{Role: screen.RoleField, Editable: true, Focused: true, Element: sdk.Element{ResourceID: "com.whatsapp:id/entry"}}),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "enter"} }, SendMessage},
		{"submit a password", view("com.example", screen.Node{Role: screen.RolePassword, Password: true, Editable: true, Focused: true}),
			func(v *screen.View) Action { return Action{Kind: "key", Key: "enter"} }, SignIn},
		{"submit an unknown form field", view("com.example", screen.Node{Role: screen.RoleField, Hint: "City", Editable: true}),
			func(v *screen.View) Action {
				return Action{Kind: "type", Target: last(v), Text: "Lisbon", Submit: true}
			}, ""},

		// Dialog and screen context.
		{"OK in a send money dialog", view("com.example", dialog(), in(1, text("Send $50 to Ana?")), in(1, button("Cancel")), in(1, button("OK"))),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Transfer},
		{"Send in a send money dialog", view("com.example", dialog(), in(1, text("Send $50 to Ana?")), in(1, button("Send"))),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Transfer},
		{"Confirm in a delete dialog", view("com.example", dialog(), in(1, text("Delete 3 photos?")), in(1, button("Confirm"))),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Delete},
		{"positive button by resource id", view("com.example", dialog(), in(1, text("Uninstall this app?")),
			in(1, screen.Node{Role: screen.RoleButton, Clickable: true, Element: sdk.Element{ResourceID: "android:id/button1"}})),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, UninstallApp},
		{"OK in an information dialog", view("com.example", dialog(), in(1, text("No internet connection")), in(1, button("OK"))),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"Cancel in a delete dialog", view("com.example", dialog(), in(1, text("Delete 3 photos?")), in(1, button("Cancel"))),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"OK outside any dialog", view("com.example", text("Delete photos"), button("OK")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"Confirm on a transfer review screen", view("com.bank", text("Review transfer"), text("$250.00 to Ana"), button("Confirm")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Transfer},
		{"Send in a payments app", view("com.venmo", button("Send")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Transfer},
		{"Install in a store", view("com.android.vending", button("Install")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, InstallApp},
		{"Get in a store", view("com.apple.AppStore", button("Get")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, InstallApp},
		{"Get elsewhere", view("com.example", button("Get")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"a price in a store", view("com.apple.AppStore", button("$4.99")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Purchase},

		// Controls.
		{"unlabelled send button by resource id", view(msgs, screen.Node{Role: screen.RoleButton, Clickable: true, ShortID: "send_message_button",
			Element: sdk.Element{ResourceID: msgs + ":id/send_message_button"}}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, SendMessage},
		{"btn_pay", view("com.shop", screen.Node{Role: screen.RoleButton, Clickable: true, Element: sdk.Element{ResourceID: "com.shop:id/btn_pay"}}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Payment},
		{"description when the text is an icon", view("com.example", screen.Node{Role: screen.RoleButton, Clickable: true, Label: "🗑", Element: sdk.Element{Text: "🗑", ContentDescription: "Delete"}}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Delete},
		{"double tap counts as tap", view("com.example", button("Delete")),
			func(v *screen.View) Action { return Action{Kind: "double_tap", Target: last(v)} }, Delete},
		// A button with no long-press action clicks on release.
		{"long press works a control as a tap", view("com.example", button("Send")),
			func(v *screen.View) Action { return Action{Kind: "long_press", Target: last(v)} }, SendMessage},
		{"swipe starting on a control", view("com.example", button("Send")),
			func(v *screen.View) Action { return Action{Kind: "swipe", Target: last(v)} }, SendMessage},
		{"swipe ending on a control", view("com.example", button("Place order")),
			func(v *screen.View) Action { return Action{Kind: "swipe", End: last(v)} }, Purchase},
		{"scroll starting on a control", view("com.example", button("Pay")),
			func(v *screen.View) Action { return Action{Kind: "scroll", Target: last(v)} }, Payment},
		{"swipe over text", view("com.example", screen.Node{Role: screen.RoleText, Label: "Send"}),
			func(v *screen.View) Action { return Action{Kind: "swipe", Target: last(v), End: last(v)} }, ""},
		{"launch", nil, func(*screen.View) Action { return Action{Kind: "launch", App: "com.android.vending"} }, ""},
		{"no screen", nil, func(*screen.View) Action { n := button("Place order"); return Action{Kind: "tap", Target: &n} }, Purchase},
		{"no target", view("com.example", button("Send")), func(*screen.View) Action { return Action{Kind: "tap"} }, ""},
		{"phone number link", view("com.example", screen.Node{Role: screen.RoleLink, Clickable: true, Label: "+1 (650) 555-0123"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Call},
		{"long content starting with a verb", view("com.example", button("Delete all photos and videos from this device and iCloud")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Delete},
		{"long content with a verb inside", view("com.example", button("Tomorrow you can send the documents we talked about")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"Cancel payment", view("com.example", button("Cancel payment")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"Delete call history", view("com.example", button("Delete call history")),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, Delete},

		// Toggles.
		{"switch anywhere", view("com.whatsapp", screen.Node{Role: screen.RoleSwitch, Checkable: true, Clickable: true, Label: "Read receipts"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ChangeSetting},
		{"permission switch", view("com.android.settings", screen.Node{Role: screen.RoleSwitch, Checkable: true, Label: "Allow access to manage all files"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, GrantPermission},
		{"checkbox in a form", view("com.example", screen.Node{Role: screen.RoleCheckbox, Checkable: true, Label: "Remember me"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"remember me switch in a login form", view("com.example", screen.Node{Role: screen.RoleSwitch, Checkable: true, Label: "Remember me"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ""},
		{"checkbox in settings", view("com.android.settings", screen.Node{Role: screen.RoleCheckbox, Checkable: true, Label: "Show passwords"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ChangeSetting},
		{"clickable row holding a switch", view("com.android.settings", screen.Node{Role: screen.RoleItem, Clickable: true, Checkable: true, Label: "Wi-Fi"}),
			func(v *screen.View) Action { return Action{Kind: "tap", Target: last(v)} }, ChangeSetting},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.v, tt.a(tt.v))
			if got.Kind != tt.want {
				t.Errorf("got %q (%s); want %q", got.Kind, got.Evidence, tt.want)
			}
			if got.Kind != "" && got.Evidence == "" {
				t.Error("got no evidence for a commit")
			}
		})
	}
}

// TestNearMisses checks the controls that look like commits and are not, in
// several languages.
func TestNearMisses(t *testing.T) {
	item := func(app, label string) *screen.View {
		return view(app, screen.Node{Role: screen.RoleItem, Clickable: true, Label: label})
	}
	tab := func(app, label string) *screen.View {
		return view(app, screen.Node{Role: screen.RoleTab, Clickable: true, Label: label})
	}
	tests := []struct {
		name string
		v    *screen.View
	}{
		{"Send feedback", item("com.android.settings", "Send feedback")},
		{"Send feedback (button)", view("com.google.android.gm", button("Send feedback"))},
		{"Feedback senden", item("com.android.settings", "Feedback senden")},
		{"Enviar comentarios", item("com.android.settings", "Enviar comentarios")},
		{"フィードバックを送信", item("com.android.settings", "フィードバックを送信")},
		{"发送反馈", item("com.android.settings", "发送反馈")},
		{"Payment methods", item("com.android.vending", "Payment methods")},
		{"Payment methods ›", view("com.example", button("Payment methods ›"))},
		{"Métodos de pago", item("com.android.vending", "Métodos de pago")},
		{"Способы оплаты", item("com.android.vending", "Способы оплаты")},
		{"お支払い方法", item("com.android.vending", "お支払い方法")},
		{"طرق الدفع", item("com.android.vending", "طرق الدفع")},
		{"Post as a title", view("com.reddit.frontpage", text("Post"))},
		{"게시물 as a title", view("com.instagram.android", text("게시물"))},
		{"Post as a noun button label", view("com.reddit.frontpage", button("Posts"))},
		{"Call history tab", tab("com.google.android.dialer", "Call history")},
		{"Call history item", item("com.example", "Call history")},
		{"通話履歴", item("com.example", "通話履歴")},
		{"Historial de llamadas", item("com.example", "Historial de llamadas")},
		{"Delete as text", view("com.example", text("Delete"))},
		{"Delete as a search hint", view("com.example", searchField("Delete"))},
		{"Settings list entry", item("com.android.settings", "Wi-Fi calling")},
		{"Install unknown apps", item("com.android.settings", "Install unknown apps")},
		{"Add to cart", view("com.amazon.mShop.android.shopping", button("Add to cart"))},
		{"conversation row", view("com.google.android.apps.messaging", screen.Node{Role: screen.RoleItem, Clickable: true, Label: "Ana Silva · Please send the payment today"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect(tt.v, Action{Kind: "tap", Target: last(tt.v)}); got.Kind != "" {
				t.Errorf("got %q (%s); want none", got.Kind, got.Evidence)
			}
		})
	}
}

func TestOpenURL(t *testing.T) {
	tests := []struct {
		url  string
		want Kind
	}{
		{"tel:+16505550123", Call},
		{"TEL:+16505550123", Call},
		{"telprompt:5550123", Call},
		{"sms:+16505550123?body=hi", SendMessage},
		{"smsto:5550123", SendMessage},
		{"mailto:ana@example.com", SendMessage},
		{"https://example.com/pay", OpenURL},
		{"market://details?id=com.whatsapp", OpenURL},
		{"example.com", OpenURL},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Detect(nil, Action{Kind: "open_url", URL: tt.url}); got.Kind != tt.want {
			t.Errorf("open_url %q: got %q; want %q", tt.url, got.Kind, tt.want)
		}
	}
}

func TestEvidence(t *testing.T) {
	v := view("com.example", dialog(), in(1, text("Confirm payment")), in(1, text("Pay $59.99 with Visa •••• 4242?")), in(1, button("OK")))
	got := Detect(v, Action{Kind: "tap", Target: last(v)})
	want := Result{Kind: Payment, Lang: "en", Evidence: `button "OK" in dialog "Confirm payment" matched "confirm payment" (en)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Detect (-want +got):\n%s", diff)
	}
	got = Detect(nil, Action{Kind: "tap", Target: &screen.Node{Role: screen.RoleButton, Clickable: true, Label: "Place order"}})
	want = Result{Kind: Purchase, Lang: "en", Evidence: `button "Place order" matched "place order" (en)`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Detect (-want +got):\n%s", diff)
	}
}

// TestRealScreens runs Detect on screens read through the screen package:
// the virtual phone's Messages and Shop, and captured dumps.
func TestRealScreens(t *testing.T) {
	t.Run("messages thread", func(t *testing.T) {
		v := threadView(t)
		send, ok := find(v, "Send")
		if !ok {
			t.Fatalf("no Send button in\n%s", v.Text())
		}
		field, _ := find(v, "compose_message_text")
		for _, c := range []struct {
			name string
			a    Action
			want Kind
		}{
			{"tap Send", Action{Kind: "tap", Target: send}, SendMessage},
			{"type with submit", Action{Kind: "type", Target: field, Text: "On my way", Submit: true}, SendMessage},
			{"key enter", Action{Kind: "key", Key: "enter"}, SendMessage},
			{"type only", Action{Kind: "type", Target: field, Text: "On my way"}, ""},
		} {
			if got := Detect(v, c.a); got.Kind != c.want {
				t.Errorf("%s: got %q (%s); want %q", c.name, got.Kind, got.Evidence, c.want)
			}
		}
		for i := range v.Nodes {
			n := &v.Nodes[i]
			if n == send || n.Role == screen.RoleKeyboard {
				continue // the keyboard's unnamed keys are taken for its action key (TestKeyboard)
			}
			if got := Detect(v, Action{Kind: "tap", Target: n}); got.Kind != "" {
				t.Errorf("tap [%d] %s %q: got %q (%s); want none", n.Ref, n.Role, n.Label, got.Kind, got.Evidence)
			}
		}
	})
	t.Run("shop", func(t *testing.T) {
		p := newPhone(t)
		p.act(sdk.Action{Kind: sdk.ActLaunch, AppID: "com.pinky.sim.shop"})
		p.tap("Add to cart")
		cart := screen.NewModel().Read(p.screen())
		if n, ok := find(cart, "Place order"); !ok {
			t.Fatalf("no Place order in\n%s", cart.Text())
		} else if got := Detect(cart, Action{Kind: "tap", Target: n}); got.Kind != Purchase {
			t.Errorf("Place order: got %q (%s); want purchase", got.Kind, got.Evidence)
		}
		p.tap("Place order")
		v := screen.NewModel().Read(p.screen())
		for what, want := range map[string]Kind{"Pay": Payment, "Cancel": "", "Back": ""} {
			n, ok := find(v, what)
			if !ok {
				t.Fatalf("no %s in\n%s", what, v.Text())
			}
			if got := Detect(v, Action{Kind: "tap", Target: n}); got.Kind != want {
				t.Errorf("%s: got %q (%s); want %q", what, got.Kind, got.Evidence, want)
			}
		}
	})
	t.Run("quick settings", func(t *testing.T) {
		v := fixture(t, "systemui-quick-settings-en.xml")
		for what, want := range map[string]Kind{"Bluetooth, On": ChangeSetting, "Airplane mode, Off": ChangeSetting,
			"Power menu": "", "Signed in as Owner": "", "Edit order of settings.": "", "Page 1 of 3": ""} {
			n, ok := find(v, what)
			if !ok {
				t.Fatalf("no %q in\n%s", what, v.Text())
			}
			if got := Detect(v, Action{Kind: "tap", Target: n}); got.Kind != want {
				t.Errorf("%s: got %q (%s); want %q", what, got.Kind, got.Evidence, want)
			}
		}
	})
	t.Run("preferred network dialog", func(t *testing.T) {
		v := fixture(t, "phone-preferred-network-dialog-pt.xml")
		n, ok := find(v, "LTE preferencial")
		if !ok {
			t.Fatalf("no LTE option in\n%s", v.Text())
		}
		if got := Detect(v, Action{Kind: "tap", Target: n}); got.Kind != ChangeSetting {
			t.Errorf("radio in com.android.phone: got %q (%s); want change_setting", got.Kind, got.Evidence)
		}
	})
	t.Run("launcher", func(t *testing.T) {
		v := fixture(t, "pixel-launcher-home-widgets-en.xml")
		for i := range v.Nodes {
			n := &v.Nodes[i]
			if got := Detect(v, Action{Kind: "tap", Target: n}); got.Kind != "" {
				t.Errorf("tap [%d] %s %q: got %q (%s); want none", n.Ref, n.Role, n.Label, got.Kind, got.Evidence)
			}
		}
	})
}
