package secrets

import (
	"unicode"
	"unicode/utf8"
)

// folded is a text prepared for matching: one rune per visible character,
// lowercased, without Latin diacritics, with full-width forms made narrow
// and every kind of space and dash made plain. off maps each rune back to
// its byte offset in the original text; off[len(r)] is the text's length.
type folded struct {
	r   []rune
	off []int
}

// fold prepares text for matching.
func fold(text string) folded {
	f := folded{r: make([]rune, 0, len(text)), off: make([]int, 0, len(text)+1)}
	for i, c := range text {
		if c >= 0x300 && unicode.Is(unicode.Mn, c) {
			// A combining mark (decomposed "é") belongs to the previous rune.
			continue
		}
		f.r = append(f.r, foldRune(c))
		f.off = append(f.off, i)
	}
	f.off = append(f.off, len(text))
	return f
}

// foldString is fold for tables: the folded runes as a string.
func foldString(s string) string {
	return string(fold(s).r)
}

// foldRune lowercases c, strips its diacritic and narrows its width.
func foldRune(c rune) rune {
	switch {
	case c < utf8.RuneSelf:
		if 'A' <= c && c <= 'Z' {
			return c + 'a' - 'A'
		}
		if c == '\t' {
			return ' '
		}
		return c
	case c >= 0xFF01 && c <= 0xFF5E && c != 0xFF0C && c != 0xFF0E:
		// Full-width ASCII. The full-width comma and full stop stay: they
		// end clauses and never sit inside a number.
		return foldRune(c - 0xFEE0)
	}
	switch c {
	case 0x00A0, 0x2007, 0x2009, 0x200A, 0x202F, 0x205F, 0x3000:
		return ' '
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2212, 0xFE63:
		return '-'
	case 0x2028, 0x2029:
		return '\n'
	}
	c = unicode.ToLower(c)
	if d, ok := diacritics[c]; ok {
		return d
	}
	return c
}

// diacritics maps the accented lowercase letters of the languages we read
// (Spanish, French, German, Portuguese, Italian, Polish, Turkish, Vietnamese
// vowels in part) to their base letter.
var diacritics = func() map[rune]rune {
	m := map[rune]rune{}
	for base, accented := range map[rune]string{
		'a': "àáâãäåāăąạảấầẩẫậắằẳẵặ",
		'c': "çćčĉċ",
		'd': "ďđ",
		'e': "èéêëēĕėęěẹẻẽếềểễệ",
		'g': "ğĝġģ",
		'i': "ìíîïĩīĭįıỉị",
		'l': "łľĺļ",
		'n': "ñńňņ",
		'o': "òóôõöøōŏőơọỏốồổỗộớờởỡợ",
		'r': "řŕ",
		's': "śšşŝș",
		't': "ťţț",
		'u': "ùúûüũūŭůűųưụủứừửữự",
		'y': "ýÿŷỳỵỷỹ",
		'z': "źżž",
	} {
		for _, c := range accented {
			m[c] = base
		}
	}
	return m
}()

// isDigit reports whether c is a decimal digit in any script (ASCII,
// Arabic-Indic, full-width, …).
func isDigit(c rune) bool {
	if c < utf8.RuneSelf {
		return '0' <= c && c <= '9'
	}
	return unicode.IsDigit(c)
}

// isWordRune reports whether c is part of a word.
func isWordRune(c rune) bool {
	if c < utf8.RuneSelf {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
	}
	return unicode.IsLetter(c) || unicode.IsDigit(c)
}

// unspaced reports whether c belongs to a script written without spaces
// between words (Han, kana, Hangul is spaced but glues particles), where a
// code may touch letters: "验证码482913", "인증번호482913".
func unspaced(c rune) bool {
	return unicode.In(c, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai) ||
		c == 'ー'
}
