package wda

import "unicode"

// splitGraphemes splits s into user-perceived characters, a close
// approximation of Unicode's extended grapheme clusters (UAX #29): a
// character keeps its combining marks, variation selectors and skin-tone
// modifiers; emoji joined by ZWJ, flag pairs, keycaps, Hangul syllables
// spelled in jamo and CR LF stay whole. It leaves out the rare prepended
// marks and Indic conjuncts; they split between code points, never inside
// one, and WDA joins the pieces again before typing.
func splitGraphemes(s string) []string {
	var out []string
	start := 0
	var prev rune
	ri := 0 // regional indicators in a row, ending at prev
	for i, r := range s {
		if i > 0 && breaks(prev, r, ri) {
			out = append(out, s[start:i])
			start = i
		}
		if isRegional(r) {
			ri++
		} else {
			ri = 0
		}
		prev = r
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// breaks reports whether a character boundary lies between prev and r; ri
// counts the regional indicators in a row that end at prev.
func breaks(prev, r rune, ri int) bool {
	switch {
	case prev == '\r' && r == '\n': // GB3
		return false
	case isControl(prev) || isControl(r): // GB4, GB5
		return true
	case !hangulBreak(prev, r): // GB6–GB8
		return false
	case isExtend(r) || r == zwj || unicode.Is(unicode.Mc, r): // GB9, GB9a
		return false
	case prev == zwj && isPictographic(r): // GB11
		return false
	case isRegional(prev) && isRegional(r): // GB12, GB13: flags are pairs
		return ri%2 == 0
	}
	return true
}

const zwj = '\u200d'

func isControl(r rune) bool {
	switch {
	case r == zwj || r == '\u200c':
		return false
	case r >= 0xe0020 && r <= 0xe007f: // tags, which extend
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Zl, unicode.Zp, unicode.Cf)
}

func isExtend(r rune) bool {
	return unicode.In(r, unicode.Mn, unicode.Me) ||
		r == '\u200c' ||
		(r >= 0x1f3fb && r <= 0x1f3ff) || // skin tones
		(r >= 0xe0020 && r <= 0xe007f) // tags of subdivision flags
}

func isRegional(r rune) bool { return r >= 0x1f1e6 && r <= 0x1f1ff }

// isPictographic approximates Extended_Pictographic: the emoji blocks and
// the older symbols that have emoji forms.
func isPictographic(r rune) bool {
	switch {
	case r >= 0x1f000 && r <= 0x1faff, r >= 0x2600 && r <= 0x27bf,
		r >= 0x2300 && r <= 0x23ff, r >= 0x2b00 && r <= 0x2bff,
		r >= 0x2190 && r <= 0x21ff:
		return true
	}
	switch r {
	case 0xa9, 0xae, 0x203c, 0x2049, 0x2122, 0x2139, 0x3030, 0x303d, 0x3297, 0x3299:
		return true
	}
	return false
}

// Hangul syllable types (Hangul_Syllable_Type).
const (
	hangulNone = iota
	hangulL
	hangulV
	hangulT
	hangulLV
	hangulLVT
)

func hangulType(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115f, r >= 0xa960 && r <= 0xa97c:
		return hangulL
	case r >= 0x1160 && r <= 0x11a7, r >= 0xd7b0 && r <= 0xd7c6:
		return hangulV
	case r >= 0x11a8 && r <= 0x11ff, r >= 0xd7cb && r <= 0xd7fb:
		return hangulT
	case r >= 0xac00 && r <= 0xd7a3:
		if (r-0xac00)%28 == 0 {
			return hangulLV
		}
		return hangulLVT
	}
	return hangulNone
}

// hangulBreak applies GB6–GB8; it reports true when they do not join prev
// and r.
func hangulBreak(prev, r rune) bool {
	p, n := hangulType(prev), hangulType(r)
	switch p {
	case hangulL:
		return n != hangulL && n != hangulV && n != hangulLV && n != hangulLVT
	case hangulLV, hangulV:
		return n != hangulV && n != hangulT
	case hangulLVT, hangulT:
		return n != hangulT
	}
	return true
}
