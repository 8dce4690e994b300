package cli_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/internal/e2e"
)

// scripts are real texts in the world's scripts, each with what makes it
// hard to type: combining marks, ligatures, right-to-left runs, characters
// beyond the Basic Multilingual Plane, and emoji made of several code
// points. Each must reach the phone's field byte for byte.
var scripts = []struct {
	name string
	text string
}{
	// Pointed Hebrew: dagesh, sheva, shin dot, qamats, holam (U+05B0–U+05C2).
	{"hebrew niqqud", "בְּרֵאשִׁית בָּרָא אֱלֹהִים"},
	// Arabic: lam-alef joins into one ligature (لا), Arabic-Indic digits.
	{"arabic lam-alef digits", "السلام عليكم، لا بأس. الساعة ٣:٤٥ يوم ١٢"},
	// A right-to-left sentence with Latin words and European digits.
	{"rtl mixed latin digits", "פגישה עם Dana ב-10:30 בחדר B12, ואז مكالمة مع Omar"},
	{"chinese", "你好，世界！今天天气很好，我们去公园散步吧。"},
	// Hiragana, katakana and kanji, with a prolonged sound mark.
	{"japanese kana kanji", "こんにちは、東京タワーへ行きます。ラーメンを食べたい。"},
	// Precomposed Hangul syllables, then 각 as three conjoining jamo that no
	// layer may compose (U+1100 U+1161 U+11A8).
	{"korean hangul jamo", "안녕하세요 한국어 \u1100\u1161\u11a8"},
	// Devanagari virama and vowel signs, Thai vowels and tone marks above
	// and below their consonants.
	{"devanagari thai", "नमस्ते दुनिया, क्षत्रिय स्वागत — สวัสดีครับ ผู้ใหญ่ น้ำ"},
	{"emoji single", "😀"},
	{"emoji skin tone", "👋🏽 👍🏿"},
	// man, ZWJ, woman, ZWJ, girl, ZWJ, boy: seven code points, one picture.
	{"emoji zwj family", "👨\u200d👩\u200d👧\u200d👦"},
	{"emoji flags", "🇯🇵🇮🇱🇧🇷"},
	// digit, VS16, combining enclosing keycap.
	{"emoji keycap", "1\ufe0f\u20e3 #\ufe0f\u20e3"},
	// Mathematical letters and an extension-B ideograph: two UTF-16 units
	// each, so the text's UTF-16 length is not its count of code points.
	{"beyond the bmp", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀋𠀎 𝟙𝟚𝟛"},
	// 585 families of seven code points: 4095, one short of phone_type's
	// limit of 4096 characters (code points), which no layer may cut
	// inside a family.
	{"long emoji text", strings.Repeat("👨\u200d👩\u200d👧\u200d👦", 585)},
}

// TestScriptsTable: the table's texts are what their names say, so that a
// typing test that passes is a test of the hard cases.
func TestScriptsTable(t *testing.T) {
	has := func(s string, lo, hi rune) bool {
		for _, r := range s {
			if r >= lo && r <= hi {
				return true
			}
		}
		return false
	}
	for _, s := range scripts {
		if !utf8.ValidString(s.text) || s.text == "" {
			t.Errorf("%s: %q is not valid UTF-8 text", s.name, s.text)
		}
	}
	text := func(name string) string {
		for _, s := range scripts {
			if s.name == name {
				return s.text
			}
		}
		t.Fatalf("no script %q", name)
		return ""
	}
	checks := []struct {
		name   string
		ok     bool
		reason string
	}{
		{"hebrew niqqud", has(text("hebrew niqqud"), 0x05b0, 0x05c7), "Hebrew points"},
		{"arabic lam-alef digits", strings.Contains(text("arabic lam-alef digits"), "لا") && has(text("arabic lam-alef digits"), 0x0660, 0x0669), "lam-alef and Arabic-Indic digits"},
		{"rtl mixed latin digits", has(text("rtl mixed latin digits"), 0x05d0, 0x05ea) && has(text("rtl mixed latin digits"), 'A', 'z') && has(text("rtl mixed latin digits"), '0', '9'), "Hebrew, Latin and digits"},
		{"japanese kana kanji", has(text("japanese kana kanji"), 0x3040, 0x309f) && has(text("japanese kana kanji"), 0x30a0, 0x30ff) && has(text("japanese kana kanji"), 0x4e00, 0x9fff), "hiragana, katakana and kanji"},
		{"korean hangul jamo", has(text("korean hangul jamo"), 0xac00, 0xd7a3) && has(text("korean hangul jamo"), 0x1100, 0x11ff), "syllables and conjoining jamo"},
		{"devanagari thai", has(text("devanagari thai"), 0x093e, 0x094d) && has(text("devanagari thai"), 0x0e31, 0x0e4e), "Devanagari signs and Thai marks"},
		{"emoji skin tone", has(text("emoji skin tone"), 0x1f3fb, 0x1f3ff), "a skin tone modifier"},
		{"emoji zwj family", strings.Count(text("emoji zwj family"), "\u200d") == 3, "three joiners"},
		{"emoji flags", has(text("emoji flags"), 0x1f1e6, 0x1f1ff), "regional indicators"},
		{"emoji keycap", strings.Contains(text("emoji keycap"), "\u20e3"), "the enclosing keycap"},
		{"long emoji text", utf8.RuneCountInString(text("long emoji text")) == 4095, "4095 code points"},
		{"beyond the bmp", len(utf16.Encode([]rune(text("beyond the bmp")))) != utf8.RuneCountInString(text("beyond the bmp")), "more UTF-16 units than code points"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: the text lacks %s", c.name, c.reason)
		}
	}
}

// fieldText is what the focused text field of device holds, read from its
// driver's own report of the screen (pinky driver screen --json), with the
// field found by its hint.
func fieldText(t *testing.T, e *env, device, hint string) (string, bool) {
	t.Helper()
	var s sdk.Screen
	e.JSON(&s, "driver", "screen", device)
	var found *sdk.Element
	for i, el := range s.Elements {
		if el.Editable && (el.Hint == hint || found == nil && el.Focused) {
			found = &s.Elements[i]
		}
	}
	if found != nil {
		if found.Text == found.Hint {
			return "", true // the field shows its hint: it is empty
		}
		return found.Text, true
	}
	return "", false
}

// typeScripts types each script into the Messages conversation's field of
// device through h, replacing what the last one typed, and checks the
// field holds exactly the text, and the history shows it as typed.
func typeScripts(t *testing.T, e *env, h *e2e.Host, device string) {
	t.Helper()
	dev := e2e.OnDevice(device)
	for _, s := range scripts {
		t.Run(s.name, func(t *testing.T) {
			h.OK("phone_type", dev("field", "Text message", "text", s.text, "replace", true), "")
			got, ok := fieldText(t, e, device, "Text message")
			if !ok {
				t.Fatalf("no text field with the hint %q on the screen", "Text message")
			}
			if got != s.text {
				t.Errorf("the field holds %+q; want %+q", got, s.text)
			}
		})
	}
	// The history keeps each text as the agent typed it.
	task := e.lastTask(t)
	var d api.TaskDetail
	e.JSON(&d, "history", "show", task.ID)
	typed := map[string]bool{}
	for _, st := range d.StepList {
		if st.Tool != "phone_type" {
			continue
		}
		var args struct{ Text string }
		if err := json.Unmarshal(st.Args, &args); err != nil {
			t.Fatalf("step %d args %s: %v", st.Seq, st.Args, err)
		}
		typed[args.Text] = true
	}
	for _, s := range scripts {
		if !typed[s.text] {
			t.Errorf("%s: the history has no phone_type step with %q; it has %v", s.name, s.text, typed)
		}
	}
}

// TestTypeScriptsOverStdio: text in every script, through a real `pinky
// mcp` and daemon, into both virtual phones' message field.
func TestTypeScriptsOverStdio(t *testing.T) {
	e := newEnv(t)
	h := e.StdioHost("PINKY_SIM=1")
	h.Initialize()
	for _, device := range []string{"sim-android-1", "sim-ios-1"} {
		t.Run(device, func(t *testing.T) {
			dev := e2e.OnDevice(device)
			h.OK("phone_connect", dev("task", "e2e: type in every script"), "LOCKED")
			e.Unlock(device)
			h.OK("phone_launch", dev("app", "Messages"), "Ben Okafor")
			h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
			typeScripts(t, e, h, device)
			h.OK("phone_release", dev(), "")
		})
	}
}

// TestTypeScriptsOnAndroid: text in every script through pinky mcp,
// pinky-driver-android, a real adb server and the virtual phone's scrcpy
// server (INJECT_TEXT for what its key map types, the clipboard for the
// rest).
func TestTypeScriptsOnAndroid(t *testing.T) {
	e, serial, h, dev := androidTask(t, "android: type in every script")
	h.OK("phone_launch", dev("app", "com.google.android.apps.messaging"), "Ben Okafor")
	h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
	typeScripts(t, e, h, serial)
	h.OK("phone_release", dev(), "")
}

// TestTypeScriptsOnIPhone: text in every script through pinky mcp,
// pinky-driver-ios and the virtual iPhone's WebDriverAgent (/wda/keys, the
// text split into characters).
func TestTypeScriptsOnIPhone(t *testing.T) {
	e, id, h, dev := iPhoneTask(t, "ios: type in every script")
	h.OK("phone_launch", dev("app", "Messages"), "Ben Okafor")
	h.OK("phone_tap", dev("text", "Ben Okafor"), "Did you get the tickets?")
	typeScripts(t, e, h, id)
	h.OK("phone_release", dev(), "")
}
