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

// FindCodes returns where text holds one-time codes and passwords, in
// order. A code is a number of 4 to 8 digits (whole, in equal groups,
// "482 913", "4829-1357", "48 29 13", "4 8 2 9 1 3", or after a short
// prefix, "G-482913"; an invisible space inside it does not count) in the
// same sentence as a code word and at most 64 characters from it, or alone
// in the sentence right before or after one ("Verification code\n482913").
// An upper-case token of letters and digits right after a code word ("Your
// code: K7F2Q9") counts too, as does a token with a digit right after a
// password word ("temporary password: Xk7#pq2"), and every repeat of a code
// found in the same text (in a login link). Spans cover the digits (and the
// separators between groups), not a prefix.
func FindCodes(text string) []Span {
	return findCodes(text, scope{})
}

// MaskCodes replaces every visible character of each code in text, but
// spaces, with "•" and keeps the rest: "Your code is 482913" becomes "Your
// code is ••••••".
func MaskCodes(text string) string {
	return maskSpans(text, FindCodes(text))
}

// scope is what the caller knows beyond the text itself.
type scope struct {
	// authenticator: the text comes from an authenticator app, where every
	// number of 6 to 8 digits is a code.
	authenticator bool
	// notice: the text is a notification's (in the list, the shade, the
	// lock screen or a banner), where a number alone in its sentence is a
	// code: "482913" sent by SMS, or under a title that names no code.
	notice bool
	// all: every number that has the shape of a code is one; for a screen
	// the agent never sees (a blocked app's), whose codes are remembered.
	all bool
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
	return slices.Compact(out)
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
	if !c.alnum && (sc.all || sc.authenticator && c.digits >= 6 && c.digits <= 8) {
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
	return alone && !c.alnum && (sc.notice || sc.aboutCodes != nil && sc.aboutCodes())
}

// mixedToken reports whether r holds a run of 4 to 64 visible ASCII
// characters with a letter and a digit, the shape of a code like "K7F2Q9"
// or a password like "Xk7#pq2".
func mixedToken(r []rune) bool {
	n, letters, digits := 0, false, false
	for i := 0; i <= len(r); i++ {
		if i < len(r) && r[i] > ' ' && r[i] < utf8.RuneSelf {
			n++
			if isDigit(r[i]) {
				digits = true
			} else if 'a' <= r[i] && r[i] <= 'z' {
				letters = true
			}
			continue
		}
		if n >= 4 && n <= 64 && letters && digits {
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
// digits, whole or in groups of equal size (see grouped), with nothing
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
		// A cluster: digit groups joined by one or two spaces or a dash.
		var groups [][2]int
		dashed := false
		j := i
		for {
			k := j
			for k < len(r) && isDigit(r[k]) {
				k++
			}
			groups = append(groups, [2]int{j, k})
			if n, dash := separator(r, k); n > 0 {
				dashed = dashed || dash
				j = k + n
				continue
			}
			j = k
			break
		}
		i = j
		last := groups[len(groups)-1][1]
		switch n, size := groupSizes(groups); {
		case len(groups) == 1:
			if c, ok := number(r, groups[0][0], last, n); ok {
				out = append(out, c)
			}
		case size > 0 && grouped(n, size, dashed):
			if c, ok := number(r, groups[0][0], last, n); ok {
				out = append(out, c)
			}
		case len(groups) == 2 && !dashed && !phoneLike(groups):
			// "Step 2 482913": two numbers, each judged alone.
			for _, g := range groups {
				if c, ok := number(r, g[0], g[1], g[1]-g[0]); ok {
					out = append(out, c)
				}
			}
		}
		// Other clusters of three groups or more are phone, card or account
		// numbers and dates.
	}
	return out
}

// separator returns the length of the separator of two digit groups at
// r[k:] (one or two spaces, or one dash, before a digit), or 0, and
// whether it is a dash.
func separator(r []rune, k int) (int, bool) {
	switch {
	case k+1 < len(r) && r[k] == '-' && isDigit(r[k+1]):
		return 1, true
	case k+1 < len(r) && r[k] == ' ' && isDigit(r[k+1]):
		return 1, false
	case k+2 < len(r) && r[k] == ' ' && r[k+1] == ' ' && isDigit(r[k+2]):
		return 2, false
	}
	return 0, false
}

// groupSizes returns how many digits the groups hold, and their size when
// all have the same (else 0).
func groupSizes(groups [][2]int) (n, size int) {
	size = groups[0][1] - groups[0][0]
	for _, g := range groups {
		d := g[1] - g[0]
		n += d
		if d != size {
			size = 0
		}
	}
	return n, size
}

// grouped reports whether equal groups of size digits, n in all, are one
// code: "482 913", "4829-1357", "48 29 13", "4 8 2 9 1 3". Groups of one or
// two digits joined by dashes are dates ("12-05-26"), and two pairs are a
// time ("12 30"), not codes.
func grouped(n, size int, dashed bool) bool {
	return n >= 4 && n <= 8 && size <= 4 && (size >= 3 || !dashed) && !(size == 2 && n == 4)
}

// phoneLike reports whether two groups of 3 and 4 digits read as a phone
// number ("555 0100"), which is neither one code nor two.
func phoneLike(groups [][2]int) bool {
	a, b := groups[0][1]-groups[0][0], groups[1][1]-groups[1][0]
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
		if h.group == passwordGroup {
			if c, ok := passwordToken(r, h); ok {
				out = append(out, c)
			}
			continue
		}
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

// passwordToken finds a password given after a password word, with at most
// a colon, a dash, "is" or a word such as "temporary" between: "temporary
// password: Xk7#pq2", "임시 비밀번호는 Xk7#pq2입니다". The token is visible
// ASCII up to a space, 4 to 64 characters with a digit: "Your password is
// incorrect" holds none.
func passwordToken(r []rune, h hit) (candidate, bool) {
	i := skipSpaces(r, h.e)
	for step := 0; step < 4 && i < len(r); step++ {
		if strings.ContainsRune(":=-—\"'«“(", r[i]) {
			i = skipSpaces(r, i+1)
			continue
		}
		w := wordAt(r, i)
		if w == "" || !connectors[w] && !passwordConnectors[w] {
			break
		}
		i = skipSpaces(r, i+len([]rune(w)))
	}
	j, digits := i, 0
	for j < len(r) && r[j] > ' ' && r[j] < utf8.RuneSelf && r[j] != '"' && r[j] != '`' {
		if isDigit(r[j]) {
			digits++
		}
		j++
	}
	for j > i && strings.ContainsRune(".,;)]}'", r[j-1]) {
		if isDigit(r[j-1]) {
			digits--
		}
		j--
	}
	if j-i < 4 || j-i > 64 || digits == 0 {
		return candidate{}, false
	}
	return candidate{s: i, e: j, pre: i, digits: digits, alnum: true}, true
}

// passwordConnectors may stand between a password word and the password:
// particles, and "temporary" or "new" where it follows the noun.
var passwordConnectors = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields("는 은 이 가 هو هي temporal temporaire provisoire temporária provisória " +
		"nueva nouveau nova nuevo novo المؤقتة المؤقت الجديدة") {
		m[foldString(w)] = true
	}
	return m
}()

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

// maskSpans replaces what is visible inside spans, but spaces, with Mask.
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

// maskWords replaces every visible character of s but spaces with Mask:
// letters, digits and the symbols of a password ("Xk7#pq2" gives
// "•••••••").
func maskWords(s string) string {
	var b strings.Builder
	b.Grow(len(s) * 3)
	for _, c := range s {
		if unicode.IsSpace(c) || invisible(c) {
			b.WriteRune(c)
		} else {
			b.WriteString(Mask)
		}
	}
	return b.String()
}
