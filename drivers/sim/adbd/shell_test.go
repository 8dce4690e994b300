package adbd

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		line string
		want string // tokens joined by |, operators in <>
	}{
		{`echo hi`, `echo|hi`},
		{`echo 'a b' "c \"d\"" e\ f`, `echo|a b|c "d"|e f`},
		{`false && echo no || echo yes; true`, `false|<&&>|echo|no|<||>|echo|yes|<;>|true`},
		{`echo err >&2`, `echo|err|<>&>|2`},
		{`cmd 2>&1 >/dev/null`, `cmd|<2>&>|1|<>>|/dev/null`},
		{`dumpsys window | grep -E 'a|b'`, `dumpsys|window|<|>|grep|-E|a|b`},
		{`echo 2>x`, `echo|<2>>|x`},
		{`echo '2'>x`, `echo|2|<>>|x`},
		{`a >> f # comment`, `a|<>>>|f`},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			toks, err := tokenize(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			var parts []string
			for _, tk := range toks {
				if tk.op {
					parts = append(parts, "<"+tk.text+">")
				} else {
					parts = append(parts, tk.text)
				}
			}
			if diff := cmp.Diff(tt.want, strings.Join(parts, "|")); diff != "" {
				t.Errorf("tokenize(%q) (-want +got):\n%s", tt.line, diff)
			}
		})
	}
	if _, err := tokenize(`echo 'open`); err == nil {
		t.Error("tokenize of an unterminated quote: got nil error")
	}
}

func TestKeyAction(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"3", "key:home"}, {"KEYCODE_HOME", "key:home"}, {"4", "key:back"}, {"66", "key:enter"},
		{"KEYCODE_DEL", "key:delete"}, {"26", "key:power"}, {"224", "key:wake"}, {"82", "key:menu"},
		{"187", "key:recents"}, {"KEYCODE_A", "type:a"}, {"7", "type:0"}, {"62", "type: "},
	}
	for _, tt := range tests {
		a, ok := keyAction(tt.in)
		got := string(a.Kind) + ":" + string(a.Key) + a.Text
		if !ok || got != tt.want {
			t.Errorf("keyAction(%q): got %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	if _, ok := keyAction("KEYCODE_NOPE"); ok {
		t.Error("keyAction(KEYCODE_NOPE): got ok")
	}
}
