package secrets

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Span is the byte range [Start, End) of a text that holds a secret.
type Span struct {
	Start, End int
}

// Mask is what a hidden character becomes.
const Mask = "•"

// window is how many characters may separate a code from its code word.
const window = 64

// FindCodes returns where text holds one-time codes, in order. A code is a
// number of 4 to 8 digits (or two groups of 3 or 4, "482 913", or after a
// short prefix, "G-482913") in the same sentence as a code word and at most
// 64 characters from it, or alone in the sentence right before or after
// one ("Verification code\n482913"). An upper-case token of letters and
// digits right after a code word ("Your code: K7F2Q9") counts too, and so
// does every repeat of a code found in the same text (in a login link).
// Spans cover the digits (and a separator between two groups), not a
// prefix.
func FindCodes(text string) []Span {
	return findCodes(text, scope{})
}

// MaskCodes replaces every letter and digit of each code in text with "•"
// and keeps the rest: "Your code is 482913" becomes "Your code is ••••••".
func MaskCodes(text string) string {
	return maskSpans(text, FindCodes(text))
}

// scope is what the caller knows beyond the text itself.
type scope struct {
	// authenticator: the text comes from an authenticator app, where every
	// number of 6 to 8 digits is a code.
	authenticator bool
	// aboutCodes, when set, tells whether the text sits among others that
	// talk about codes (a screen with a code field or "Enter the code"),
	// where a number alone in its sentence is a code. It is asked only
	// when that decides, because answering may cost a pass over a screen.
	aboutCodes func() bool
}

// candidate is a number (or token) that may be a code: runes [s, e) of the
// folded text, with a letter prefix from pre.
type candidate struct {
	s, e, pre int
	digits    int
	alnum     bool
}

// findCodes finds codes with what sc adds.
func findCodes(text string, sc scope) []Span {
	if !mayHoldCode(text) {
		return nil
	}
	f := fold(text)
	cands := numbers(f)
	if len(cands) == 0 && !mixedToken(f.r) {
		return nil
	}
	hits := secretText.find(f)
	cands = append(cands, tokensAfter(f, text, hits)...)
	if len(cands) == 0 {
		return nil
	}
	sent := sentences(f.r)
	var out []Span
	var found []string
	rest := cands[:0]
	for _, c := range cands {
		if isCode(f, sent, c, hits, sc) {
			out = append(out, Span{f.off[c.s], f.off[c.e]})
			found = append(found, digitsOf(f.r[c.s:c.e]))
		} else {
			rest = append(rest, c)
		}
	}
	// A code given once is a code everywhere in the text: "Telegram code:
	// 48291 … https://t.me/login/48291".
	for _, c := range rest {
		if slices.Contains(found, digitsOf(f.r[c.s:c.e])) {
			out = append(out, Span{f.off[c.s], f.off[c.e]})
		}
	}
	sortSpans(out)
	return out
}

// digitsOf keeps the letters and digits of r.
func digitsOf(r []rune) string {
	var b strings.Builder
	for _, c := range r {
		if isWordRune(c) {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// mayHoldCode is a fast test: every code holds a digit. Most texts on a
// screen have none, and this keeps them cheap.
func mayHoldCode(text string) bool {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if '0' <= c && c <= '9' {
			return true
		}
		if c >= utf8.RuneSelf {
			for _, r := range text[i:] {
				if isDigit(r) {
					return true
				}
			}
			return false
		}
	}
	return false
}

func isCode(f folded, sent []int32, c candidate, hits []hit, sc scope) bool {
	if !c.alnum && sc.authenticator && c.digits >= 6 && c.digits <= 8 {
		return true
	}
	alone := standalone(f.r, sent, c)
	for _, h := range hits {
		gap := c.pre - h.e
		if h.s >= c.e {
			gap = h.s - c.e
		}
		if gap < 0 || gap > window {
			continue
		}
		d := sent[c.s] - sent[h.s]
		if d == 0 || alone && (d == 1 || d == -1) {
			return true
		}
	}
	return alone && !c.alnum && sc.aboutCodes != nil && sc.aboutCodes()
}

// mixedToken reports whether r holds a run of 4 to 10 ASCII letters and
// digits with both, the shape of a code like "K7F2Q9".
func mixedToken(r []rune) bool {
	n, letters, digits := 0, false, false
	for i := 0; i <= len(r); i++ {
		if i < len(r) && r[i] < utf8.RuneSelf && isWordRune(r[i]) && r[i] != '_' {
			n++
			if isDigit(r[i]) {
				digits = true
			} else {
				letters = true
			}
			continue
		}
		if n >= 4 && n <= 10 && letters && digits {
			return true
		}
		n, letters, digits = 0, false, false
	}
	return false
}

// standalone reports whether c is all its sentence holds, apart from
// punctuation and spaces.
func standalone(r []rune, sent []int32, c candidate) bool {
	id := sent[c.s]
	for i := c.pre - 1; i >= 0 && sent[i] == id; i-- {
		if isWordRune(r[i]) {
			return false
		}
	}
	for i := c.e; i < len(r) && sent[i] == id; i++ {
		if isWordRune(r[i]) {
			return false
		}
	}
	return true
}

// sentences numbers each rune's sentence. Sentences end at line breaks and
// at . ! ? ; (a "." only before a space or the end, so "1.5" and
// "example.com" do not split), 。！？ and ؟. Empty sentences get no number.
func sentences(r []rune) []int32 {
	sent := make([]int32, len(r))
	var cur int32
	ended := false
	for i, c := range r {
		if endsSentence(r, i) {
			ended = true
		} else if ended && c != ' ' {
			cur++
			ended = false
		}
		sent[i] = cur
	}
	return sent
}

func endsSentence(r []rune, i int) bool {
	switch r[i] {
	case '\n', '\r', '!', '?', ';', '。', '؟', '۔', '…', '｡':
		return true
	case '.':
		return i+1 == len(r) || r[i+1] == ' ' || r[i+1] == '\n'
	}
	return false
}

// numbers finds the numbers of f that look like codes on their own: 4 to 8
// digits, or two groups of 3 or 4 joined by one space or dash, with nothing
// around them that makes them a price, a time, a date, a phone number, a
// card ending or part of a word.
func numbers(f folded) []candidate {
	r := f.r
	var out []candidate
	for i := 0; i < len(r); {
		if !isDigit(r[i]) {
			i++
			continue
		}
		// A cluster: digit groups joined by single spaces or dashes.
		var groups [][2]int
		seps := ""
		j := i
		for {
			k := j
			for k < len(r) && isDigit(r[k]) {
				k++
			}
			groups = append(groups, [2]int{j, k})
			if k+1 < len(r) && (r[k] == ' ' || r[k] == '-') && isDigit(r[k+1]) {
				seps += string(r[k])
				j = k + 1
				continue
			}
			j = k
			break
		}
		i = j
		switch {
		case len(groups) == 1:
			if c, ok := number(r, groups[0][0], groups[0][1], groups[0][1]-groups[0][0]); ok {
				out = append(out, c)
			}
		case len(groups) == 2 && twoGroups(groups):
			n := groups[0][1] - groups[0][0] + groups[1][1] - groups[1][0]
			if c, ok := number(r, groups[0][0], groups[1][1], n); ok {
				out = append(out, c)
			}
		case len(groups) == 2 && seps == " ":
			// "Step 2 482913": two numbers, each judged alone.
			for _, g := range groups {
				if c, ok := number(r, g[0], g[1], g[1]-g[0]); ok {
					out = append(out, c)
				}
			}
		}
		// Three groups or more are phone, card or account numbers and dates.
	}
	return out
}

func twoGroups(g [][2]int) bool {
	a, b := g[0][1]-g[0][0], g[1][1]-g[1][0]
	return a >= 3 && a <= 4 && b >= 3 && b <= 4
}

// number checks a number of n digits at runes [s, e) and what surrounds it.
func number(r []rune, s, e, n int) (candidate, bool) {
	c := candidate{s: s, e: e, pre: s, digits: n}
	if c.digits < 4 || c.digits > 8 {
		return c, false
	}
	if s > 0 {
		p := r[s-1]
		switch {
		case p == '-':
			// "G-482913" is a code with a prefix; "-1234" is an amount.
			k := s - 1
			for k > 0 && 'a' <= r[k-1] && r[k-1] <= 'z' {
				k--
			}
			if n := s - 1 - k; n < 1 || n > 4 || k > 0 && isWordRune(r[k-1]) {
				return c, false
			}
			c.pre = k
		case isWordRune(p):
			if !unspaced(p) {
				return c, false
			}
		case strings.ContainsRune("+#№*•$€£¥₩₽₹₺¢@%^~×©®", p):
			return c, false
		case strings.ContainsRune(".,:/'", p):
			if s > 1 && isDigit(r[s-2]) {
				return c, false
			}
		case p == ' ':
			if s > 1 && strings.ContainsRune("+#№*•$€£¥₩₽₹₺¢", r[s-2]) {
				return c, false
			}
			if year(r, s, e) {
				return c, false
			}
		}
	}
	if e < len(r) {
		next := r[e]
		switch {
		case isWordRune(next):
			if !unspaced(next) || strings.ContainsRune("年月日時时点分秒號号円元원년월일시분초개건번位", next) {
				return c, false
			}
		case strings.ContainsRune("%°$€£¥₩₽₹₺¢+@#‰'′″", next):
			return c, false
		case strings.ContainsRune(".,:/", next):
			if e+1 < len(r) && isDigit(r[e+1]) {
				return c, false
			}
		case next == ' ':
			if unit(r[e+1:]) {
				return c, false
			}
		}
	}
	return c, true
}

// year reports whether the 4-digit number [s, e), after a space, reads as a
// year in a date: "May 12, 2026", "12 mai 2026".
func year(r []rune, s, e int) bool {
	if e-s != 4 || !(r[s] == '1' && r[s+1] == '9' || r[s] == '2' && r[s+1] == '0') {
		return false
	}
	i := s - 1
	for i > 0 && r[i-1] == ' ' {
		i--
	}
	if i > 0 && r[i-1] == ',' {
		return i > 1 && isDigit(r[i-2])
	}
	w := i
	for w > 0 && isWordRune(r[w-1]) {
		w--
	}
	word := r[w:i]
	if len(word) < 3 {
		return false
	}
	return months[string(word[:3])]
}

var months = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("jan feb mar apr may jun jul aug sep oct nov dec " +
		"ene abr ago dic " + // Spanish
		"fev mai avr jui aou dec " + // French, folded
		"mär okt dez " + // German
		"out set " + // Portuguese
		"янв фев мар апр мая июн июл авг сен окт ноя дек") {
		m[foldString(w)] = true
	}
	return m
}()

// unit reports whether rest (after a number and a space) starts with a
// currency or unit: "1234 USD", "1500 руб", "2048 MB".
func unit(rest []rune) bool {
	if len(rest) > 0 && strings.ContainsRune("$€£¥₩₽₹₺¢", rest[0]) {
		return true
	}
	i := 0
	for i < len(rest) && isWordRune(rest[i]) && !isDigit(rest[i]) {
		i++
	}
	return i > 0 && units[string(rest[:i])]
}

var units = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("usd eur gbp jpy cny rmb rub krw inr brl mxn aud cad chf sar aed egp try " +
		"dollars euros pesos reais reales yen yuan won rupees " +
		"руб рублей рубля р 元 円 원 ريال جنيه درهم دولار " +
		"km mi kg lb lbs g mg ml mb gb kb tb kcal cal steps pts points miles") {
		m[w] = true
	}
	return m
}()

// tokensAfter finds codes of letters and digits that follow a code word,
// with at most a colon or "is" between: "Your code: K7F2Q9". The token must
// be upper case in the original text and hold a digit and a letter.
func tokensAfter(f folded, text string, hits []hit) []candidate {
	var out []candidate
	r := f.r
	for _, h := range hits {
		i := skipSpaces(r, h.e)
		if i < len(r) && (r[i] == ':' || r[i] == '=') {
			i = skipSpaces(r, i+1)
		} else if w := wordAt(r, i); connectors[w] {
			i = skipSpaces(r, i+len([]rune(w)))
		}
		j := i
		letters, digits, lower := 0, 0, false
		for j < len(r) && r[j] < utf8.RuneSelf && isWordRune(r[j]) && r[j] != '_' {
			if isDigit(r[j]) {
				digits++
			} else if o, _ := utf8.DecodeRuneInString(text[f.off[j]:]); unicode.IsUpper(o) {
				letters++
			} else {
				lower = true // a word, not a code
			}
			j++
		}
		if lower || j-i < 4 || j-i > 10 || letters < 1 || digits < 1 || j < len(r) && isWordRune(r[j]) {
			continue
		}
		out = append(out, candidate{s: i, e: j, pre: i, digits: digits, alnum: true})
	}
	return out
}

var connectors = map[string]bool{"is": true, "es": true, "est": true, "ist": true, "e": true, "lautet": true, "是": true, "为": true, "為": true, "は": true}

func skipSpaces(r []rune, i int) int {
	for i < len(r) && r[i] == ' ' {
		i++
	}
	return i
}

// wordAt is the word that starts at i; in scripts without spaces, one
// character.
func wordAt(r []rune, i int) string {
	if i < len(r) && unspaced(r[i]) {
		return string(r[i])
	}
	j := i
	for j < len(r) && isWordRune(r[j]) && !isDigit(r[j]) {
		j++
	}
	return string(r[i:j])
}

func sortSpans(s []Span) {
	slices.SortFunc(s, func(a, b Span) int { return a.Start - b.Start })
}

// maskSpans replaces the letters and digits inside spans with Mask.
func maskSpans(text string, spans []Span) string {
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8*len(spans))
	last := 0
	for _, sp := range spans {
		if sp.Start < last {
			sp.Start = last
		}
		if sp.End <= sp.Start {
			continue
		}
		b.WriteString(text[last:sp.Start])
		b.WriteString(maskWords(text[sp.Start:sp.End]))
		last = sp.End
	}
	b.WriteString(text[last:])
	return b.String()
}

// maskWords replaces every letter and digit of s with Mask.
func maskWords(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 3)
	for _, c := range s {
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteString(Mask)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}
