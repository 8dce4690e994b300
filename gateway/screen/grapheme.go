package screen

import "unicode"

// prefix returns the longest start of s that holds at most n code points
// and does not end inside a user-perceived character: a letter keeps its
// combining marks, an emoji its skin tone, variation selector, keycap and
// the pictographs a zero width joiner ties to it, a flag both its regional
// indicators, a Hangul syllable its conjoining jamo. A label cut for an
// agent must not show half a family emoji or a letter without its points.
func prefix(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := n
	for cut > 0 && !boundary(r, cut) {
		cut--
	}
	if cut == 0 {
		// One character longer than n (a long run of marks): cut by code
		// points rather than show nothing.
		cut = n
	}
	return string(r[:cut])
}

// boundary reports whether a character boundary lies before r[i], for
// 0 < i < len(r).
func boundary(r []rune, i int) bool {
	prev, next := r[i-1], r[i]
	switch {
	case unicode.In(next, unicode.Mn, unicode.Me, unicode.Mc),
		next == '\u200d',                   // zero width joiner
		next >= 0xfe00 && next <= 0xfe0f,   // variation selectors
		next >= 0x1f3fb && next <= 0x1f3ff, // skin tone modifiers
		next >= 0xe0020 && next <= 0xe007f: // tags (subdivision flags)
		return false
	case prev == '\u200d':
		return false
	case isLinker(prev) && unicode.IsLetter(next):
		// A virama joins the consonants of an Indic conjunct (क्ष).
		return false
	case isRegional(prev) && isRegional(next):
		// Flags pair the indicators from the start of their run.
		run := 0
		for j := i - 1; j >= 0 && isRegional(r[j]); j-- {
			run++
		}
		return run%2 == 0
	case isJamoL(prev) && (isJamoL(next) || isJamoV(next) || isSyllable(next)),
		(isJamoV(prev) || isSyllable(prev)) && (isJamoV(next) || isJamoT(next)),
		isJamoT(prev) && isJamoT(next):
		return false
	}
	return true
}

func isRegional(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }
func isJamoL(r rune) bool    { return r >= 0x1100 && r <= 0x115f || r >= 0xa960 && r <= 0xa97c }
func isJamoV(r rune) bool    { return r >= 0x1160 && r <= 0x11a7 || r >= 0xd7b0 && r <= 0xd7c6 }
func isJamoT(r rune) bool    { return r >= 0x11a8 && r <= 0x11ff || r >= 0xd7cb && r <= 0xd7fb }
func isSyllable(r rune) bool { return r >= 0xac00 && r <= 0xd7a3 }

// isLinker reports the viramas that join conjuncts (Indic_Conjunct_Break
// Linker): Devanagari, Bengali, Gujarati, Oriya, Telugu and Malayalam.
func isLinker(r rune) bool {
	switch r {
	case 0x094d, 0x09cd, 0x0acd, 0x0b4d, 0x0c4d, 0x0d4d:
		return true
	}
	return false
}
