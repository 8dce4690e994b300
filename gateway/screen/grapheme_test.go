package screen

import (
	"strings"
	"testing"
)

func TestPrefix(t *testing.T) {
	family := "👨\u200d👩\u200d👧\u200d👦" // 7 code points
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"latin", "abcdef", 3, "abc"},
		{"zwj family whole", "ab" + family, 9, "ab" + family},
		{"zwj family not cut", "ab" + family, 8, "ab"},
		{"after a joiner", "ab" + family, 4, "ab"},
		{"skin tone", "x👋🏽", 2, "x"},
		{"keycap", "a1\ufe0f\u20e3", 3, "a"},
		{"flags pair", "🇯🇵🇮🇱", 3, "🇯🇵"},
		{"hebrew points", "שָׁלוֹם", 5, "שָׁל"},
		{"devanagari sign", "नमस्ते", 4, "नम"},
		{"jamo syllable", "가\u1100\u1161\u11a8", 3, "가"},
		{"beyond the bmp", "𝔘𝔫𝔦", 2, "𝔘𝔫"},
		{"one long character", "e" + strings.Repeat("\u0301", 5), 3, "e\u0301\u0301"},
	}
	for _, tt := range tests {
		if got := prefix(tt.in, tt.n); got != tt.want {
			t.Errorf("%s: prefix(%+q, %d) = %+q; want %+q", tt.name, tt.in, tt.n, got, tt.want)
		}
	}
}

// TestQuoteKeepsCharacters: a label shortened for an agent ends on a whole
// emoji, never on half of one.
func TestQuoteKeepsCharacters(t *testing.T) {
	family := "👨\u200d👩\u200d👧\u200d👦"
	long := strings.Repeat(family, maxLabel/7+2)
	got := quote(long)
	want := `"` + strings.Repeat(`👨\u200d👩\u200d👧\u200d👦`, (maxLabel-1)/7) + `…"`
	if got != want {
		t.Errorf("quote of %d families = %s; want %s", maxLabel/7+2, got, want)
	}
}
