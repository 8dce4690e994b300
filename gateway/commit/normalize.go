package commit

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// foldTable maps a precomposed Latin, Greek or Cyrillic letter to its base
// letter without diacritics ("é" → "e", "Ü" → "U", "й" → "и"). It is built
// once from the Unicode decompositions.
var foldTable = buildFoldTable()

func buildFoldTable() map[rune]rune {
	m := make(map[rune]rune, 1024)
	ranges := [][2]rune{
		{0x00C0, 0x024F}, // Latin-1 Supplement, Latin Extended-A and -B
		{0x0370, 0x03FF}, // Greek
		{0x0400, 0x04FF}, // Cyrillic
		{0x1E00, 0x1EFF}, // Latin Extended Additional (Vietnamese)
	}
	for _, rg := range ranges {
		for r := rg[0]; r <= rg[1]; r++ {
			d := norm.NFD.String(string(r))
			base, size := utf8.DecodeRuneInString(d)
			if size == len(d) || base == r {
				continue // no decomposition
			}
			rest := d[size:]
			if strings.IndexFunc(rest, func(c rune) bool { return !unicode.Is(unicode.Mn, c) }) >= 0 {
				continue
			}
			m[r] = base
		}
	}
	return m
}

// normalize folds s for matching. It applies NFKC (full-width and
// half-width forms, ligatures and other compatibility characters), lower
// case, "ß" → "ss", removes diacritics from Latin, Greek and Cyrillic
// letters, removes Arabic tashkeel and tatweel and unifies alef, yeh and teh
// marbuta forms, and turns every run of characters that are neither letters,
// marks nor digits (punctuation, symbols, emoji, arrows, spaces) into one
// space. The result has no leading or trailing space.
func normalize(s string) string {
	if s == "" {
		return ""
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return normalizeASCII(s)
	}
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	sep := false // a separator is pending
	for _, r := range s {
		r = unicode.ToLower(r)
		if f, ok := foldTable[r]; ok {
			r = unicode.ToLower(f)
		}
		switch {
		case r == 'ß' || r == 'ẞ':
			writeRune(&b, &sep, 's')
			b.WriteByte('s')
			continue
		case r >= 0x0300 && r <= 0x036F: // combining diacritical marks left over
			continue
		case r == 0x0640 || (r >= 0x064B && r <= 0x065F) || r == 0x0670 || (r >= 0x06D6 && r <= 0x06ED):
			continue // Arabic tatweel, tashkeel and Quranic marks
		case r == 'أ' || r == 'إ' || r == 'آ' || r == 'ٱ':
			r = 'ا'
		case r == 'ى' || r == 'ی':
			r = 'ي'
		case r == 'ة':
			r = 'ه'
		case r == 'ک':
			r = 'ك'
		}
		if unicode.IsMark(r) && (sep || b.Len() == 0 || unicode.Is(unicode.Variation_Selector, r)) {
			continue // a mark on nothing: an emoji's variation selector
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) {
			writeRune(&b, &sep, r)
			continue
		}
		sep = b.Len() > 0
	}
	return stripArticle(b.String())
}

// stripArticle removes the Arabic definite article "ال" from words of four
// letters or more, so that "التحويل" matches "تحويل". Tables and text go
// through the same folding, so a word whose own letters start with "ال"
// ("الغاء") still matches itself.
func stripArticle(s string) string {
	if !strings.Contains(s, "ال") {
		return s
	}
	words := strings.Split(s, " ")
	for i, w := range words {
		if strings.HasPrefix(w, "ال") && utf8.RuneCountInString(w) >= 5 {
			words[i] = w[len("ال"):]
		}
	}
	return strings.Join(words, " ")
}

func writeRune(b *strings.Builder, sep *bool, r rune) {
	if *sep {
		b.WriteByte(' ')
		*sep = false
	}
	b.WriteRune(r)
}

// normalizeASCII is normalize for a string with only ASCII characters.
func normalizeASCII(s string) string {
	clean := true // already lower case words separated by single spaces
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ' ' && i > 0 && i < len(s)-1 && s[i-1] != ' ') {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	sep := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			sep = len(b) > 0
			continue
		}
		if sep {
			b = append(b, ' ')
			sep = false
		}
		b = append(b, c)
	}
	return string(b)
}

// idWords turns a resource id into words: the part after ":id/" split at
// underscores, dots, dashes, between letters and digits and at
// lower-to-upper case changes ("com.app:id/btnPlaceOrder_2" → "btn place
// order 2", "android:id/button1" → "button 1").
func idWords(id string) string {
	if _, after, ok := strings.Cut(id, ":id/"); ok {
		id = after
	}
	if id == "" {
		return ""
	}
	b := make([]byte, 0, len(id)+8)
	sep := false
	var prev byte
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if prev >= 'a' && prev <= 'z' {
				sep = true
			}
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z':
			if prev >= '0' && prev <= '9' {
				sep = true
			}
		case c >= '0' && c <= '9':
			if prev >= 'a' && prev <= 'z' || prev >= 'A' && prev <= 'Z' {
				sep = true
			}
		default:
			sep = len(b) > 0
			prev = c
			continue
		}
		if sep && len(b) > 0 {
			b = append(b, ' ')
		}
		sep = false
		b = append(b, c)
		prev = id[i]
	}
	return string(b)
}
