package safetext

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// A case is one row of testdata/cases.json, the table that the console's
// JavaScript twin (show in gateway/console/web/app.js) is tested against
// too.
type testCase struct {
	Name string `json:"name"`
	In   string `json:"in"`
	Line string `json:"line"`
	Text string `json:"text"`
}

func loadCases(t *testing.T) []testCase {
	t.Helper()
	b, err := os.ReadFile("testdata/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cs []testCase
	if err := json.Unmarshal(b, &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) < 10 {
		t.Fatalf("testdata/cases.json has %d cases; want the whole table", len(cs))
	}
	return cs
}

func TestLineAndText(t *testing.T) {
	cases := append(loadCases(t),
		// Bytes that are not UTF-8 cannot stand in JSON.
		testCase{Name: "invalid utf-8", In: "a\xffb\xc3", Line: `a\xffb\xc3`, Text: `a\xffb\xc3`},
		testCase{Name: "8-bit csi byte", In: "\x9b2J", Line: `\x9b2J`, Text: `\x9b2J`},
	)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			if got := Line(tt.In); got != tt.Line {
				t.Errorf("Line(%q) = %q; want %q", tt.In, got, tt.Line)
			}
			if got := Text(tt.In); got != tt.Text {
				t.Errorf("Text(%q) = %q; want %q", tt.In, got, tt.Text)
			}
			if got, want := Safe(tt.In), tt.Line == tt.In; got != want {
				t.Errorf("Safe(%q) = %v; want %v", tt.In, got, want)
			}
		})
	}
}

// TestNothingRawLeft checks every rune up to U+FFFF: what Line returns has
// no control character and no bidirectional control left.
func TestNothingRawLeft(t *testing.T) {
	for r := rune(0); r <= 0xffff; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue // surrogates are not runes of a UTF-8 string
		}
		s := "a" + string(r) + "b"
		for _, out := range []string{Line(s), Text(s)} {
			for _, o := range out {
				if o == '\n' || o == '\t' {
					if out == Line(s) {
						t.Fatalf("Line(%q) = %q keeps a raw %q", s, out, o)
					}
					continue
				}
				if o < 0x20 || (o >= 0x7f && o < 0xa0) || Bidi(o) || o == 0x2028 || o == 0x2029 {
					t.Fatalf("escape of %U = %q keeps it raw", r, out)
				}
			}
		}
	}
}

func TestBidi(t *testing.T) {
	for _, tt := range []struct {
		r    rune
		want bool
	}{
		{0x202a, true}, {0x202e, true}, {0x2066, true}, {0x2069, true}, {0x200e, true}, {0x200f, true}, {0x061c, true},
		{0x2029, false}, {0x202f, false}, {0x2065, false}, {0x206a, false}, {0x200d, false}, {'a', false},
	} {
		if got := Bidi(tt.r); got != tt.want {
			t.Errorf("Bidi(%U) = %v; want %v", tt.r, got, tt.want)
		}
	}
}

func TestUnchangedIsSameString(t *testing.T) {
	s := "nothing to escape here, ünïcödé too"
	if got := Line(s); got != s {
		t.Errorf("Line(%q) = %q; want it unchanged", s, got)
	}
	if n := testing.AllocsPerRun(100, func() { Line(s) }); n != 0 {
		t.Errorf("Line of clean text allocates %v times; want 0", n)
	}
}

func TestJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		v    any
		want string
	}{
		{"plain", map[string]string{"a": "b"}, `{"a":"b"}`},
		{"c0 by encoding/json", "a\x1b[2J\n", `"a\u001b[2J\n"`},
		{"del and c1", "a\x7fb\u009bc", `"a\u007fb\u009bc"`},
		{"bidi", "pay \u202e001$ \u2066x\u2069", `"pay \u202e001$ \u2066x\u2069"`},
		{"separators", "a\u2028b", `"a\u2028b"`},
		{"letters stay", "Café 日本", `"Café 日本"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			got := JSON(b)
			if string(got) != tt.want {
				t.Errorf("JSON(%s) = %s; want %s", b, got, tt.want)
			}
			// The data is the same.
			var back, orig any
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatalf("JSON's output is not JSON: %v", err)
			}
			json.Unmarshal(b, &orig)
			if a, b := fmt.Sprint(back), fmt.Sprint(orig); a != b {
				t.Errorf("decoded %q; want %q", a, b)
			}
		})
	}
}
