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

// fold prepares text for matching. An invisible character (a zero-width
// space, a word joiner, a byte-order mark, a soft hyphen, a direction mark)
// shows nothing, so it is dropped between two digits or two letters
// ("482\u200b913" reads 482913) and read as a space elsewhere.
func fold(text string) folded {
	f := folded{r: make([]rune, 0, len(text)), off: make([]int, 0, len(text)+1)}
	hidden := false
	for i, c := range text {
		if c >= 0x300 && unicode.Is(unicode.Mn, c) {
			// A combining mark (decomposed "é") belongs to the previous rune.
			continue
		}
		if invisible(c) {
			hidden = true
			c = zeroWidth
		} else {
			c = foldRune(c)
		}
		f.r = append(f.r, c)
		f.off = append(f.off, i)
	}
	f.off = append(f.off, len(text))
	if hidden {
		f = f.joinInvisible()
	}
	return f
}

// zeroWidth stands for an invisible character while fold works.
const zeroWidth = '\uFFFF'

// invisible reports whether c is a format character that shows nothing.
func invisible(c rune) bool {
	return c == 0xAD || c >= 0x600 && unicode.Is(unicode.Cf, c)
}

// joinInvisible drops each run of invisible characters between two digits
// or two letters, and makes the others spaces.
func (f folded) joinInvisible() folded {
	out := folded{r: make([]rune, 0, len(f.r)), off: make([]int, 0, len(f.off))}
	n := len(f.r)
	for i := 0; i < n; i++ {
		if f.r[i] != zeroWidth {
			out.r = append(out.r, f.r[i])
			out.off = append(out.off, f.off[i])
			continue
		}
		j := i
		for j < n && f.r[j] == zeroWidth {
			j++
		}
		if i == 0 || j == n || !sameKind(f.r[i-1], f.r[j]) {
			out.r = append(out.r, ' ')
			out.off = append(out.off, f.off[i])
		}
		i = j - 1
	}
	out.off = append(out.off, f.off[n])
	return out
}

// sameKind reports whether a and b are both digits or both letters.
func sameKind(a, b rune) bool {
	if isDigit(a) || isDigit(b) {
		return isDigit(a) && isDigit(b)
	}
	return isWordRune(a) && isWordRune(b)
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
	case 0x00A0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200A,
		0x202F, 0x205F, 0x3000:
		return ' '
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2212, 0xFE58, 0xFE63:
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
