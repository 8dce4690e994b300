package secrets

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"hash"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Lengths of the codes a Recall remembers, in digits.
const (
	minRecall = 4
	maxRecall = 8
)

// recallGap is how many other characters may stand between two digits of a
// remembered code where it shows again: "305 118", "305-118", "3 0 5 1 1 8"
// and "305\u200b118" are all 305118.
const recallGap = 3

// Recall remembers the one-time codes seen on one phone for a while, so that
// a copy of one that shows up later (pasted into a note, typed into a
// search) is masked like the code itself, in any spacing. It keeps keyed
// hashes (HMAC-SHA-256 with a key made for it), never the codes, and only in
// memory; a code is forgotten ttl after it was last seen. A Recall is safe
// for concurrent use; the zero value is not usable, use NewRecall.
type Recall struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	mac     hash.Hash
	codes   map[digest]remembered
	lengths [maxRecall + 1]int // how many digit codes of each length
	tokens  int                // how many tokens (passwords, letter codes)
}

type digest [16]byte

// remembered is one code: until when, and its length in digits (0 for a
// token).
type remembered struct {
	until  time.Time
	digits int
}

// NewRecall returns an empty Recall that forgets each code ttl after it was
// last seen.
func NewRecall(ttl time.Duration) *Recall {
	key := make([]byte, 32)
	rand.Read(key) //nolint:errcheck // never fails
	return &Recall{ttl: ttl, now: time.Now, mac: hmac.New(sha256.New, key), codes: map[digest]remembered{}}
}

// Add remembers a code as the screen showed it. A code of 4 to 8 digits is
// remembered by its digits, whatever separates them ("305 118" is 305118);
// any other token of 4 to 64 characters ("K7F2Q9", "Xk7#pq2") as it is.
// Anything else is ignored.
func (r *Recall) Add(code string) {
	if r == nil {
		return
	}
	kind, key, n := byte('d'), "", 0
	if onlyDigitsAndSeparators(code) {
		if key, n = digitsIn(code); n < minRecall || n > maxRecall {
			return
		}
	} else {
		kind, key = 't', strings.TrimSpace(code)
		if l := utf8.RuneCountInString(key); l < 4 || l > 64 || strings.ContainsFunc(key, unicode.IsSpace) {
			return
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire()
	k := r.sum(kind, key)
	if _, ok := r.codes[k]; !ok {
		r.count(n, 1)
	}
	r.codes[k] = remembered{until: r.now().Add(r.ttl), digits: n}
}

// count adds d to the count of codes of n digits (0: tokens); r.mu is held.
func (r *Recall) count(n, d int) {
	if n == 0 {
		r.tokens += d
	} else {
		r.lengths[n] += d
	}
}

// Len returns how many codes r remembers now.
func (r *Recall) Len() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire()
	return len(r.codes)
}

// Find returns where text shows a remembered code, in order: a code's
// digits in order with at most three other characters between two of them,
// or a remembered token between spaces (or the text's ends, or punctuation).
func (r *Recall) Find(text string) []Span {
	if r == nil || text == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.codes) == 0 {
		return nil
	}
	var out []Span
	if len(r.codes) > r.tokens && mayHoldCode(text) {
		out = r.findDigits(text)
	}
	if r.tokens > 0 {
		out = append(out, r.findTokens(text)...)
		sortSpans(out)
	}
	return out
}

// has reports whether r remembers the code with key k now; r.mu is held.
// Expired codes are only dropped by Add and Len, which keeps a search
// cheap: the time is asked for a match only.
func (r *Recall) has(k digest) bool {
	c, ok := r.codes[k]
	return ok && !r.now().After(c.until)
}

// kinds reports whether r remembers digit codes and tokens.
func (r *Recall) kinds() (digits, tokens bool) {
	if r == nil {
		return false, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expire()
	return len(r.codes) > r.tokens, r.tokens > 0
}

// digit is one digit of a text: its value and its bytes.
type digit struct {
	v          byte
	start, end int
}

// findDigits finds remembered digit codes; r.mu is held.
func (r *Recall) findDigits(text string) []Span {
	var out []Span
	var chain []digit
	gap := 0
	flush := func() {
		out = append(out, r.inChain(chain)...)
		chain = chain[:0]
	}
	for i, c := range text {
		v, ok := digitValue(c)
		if !ok {
			if len(chain) > 0 {
				if gap++; gap > recallGap {
					flush()
				}
			}
			continue
		}
		gap = 0
		chain = append(chain, digit{v: v, start: i, end: i + utf8.RuneLen(c)})
	}
	flush()
	return out
}

// inChain finds remembered codes among a chain of digits, each window of
// a remembered length in turn; r.mu is held.
func (r *Recall) inChain(chain []digit) []Span {
	var out []Span
	var buf [maxRecall]byte
	last := -1 // the last digit masked so far, so that windows do not overlap
	for n := minRecall; n <= maxRecall; n++ {
		if r.lengths[n] == 0 || len(chain) < n {
			continue
		}
		for s := 0; s+n <= len(chain); s++ {
			for i := range n {
				buf[i] = '0' + chain[s+i].v
			}
			if s > last && r.has(r.sum('d', string(buf[:n]))) {
				out = append(out, Span{chain[s].start, chain[s+n-1].end})
				last = s + n - 1
			}
		}
		last = -1
	}
	sortSpans(out)
	return out
}

// findTokens finds remembered tokens; r.mu is held.
func (r *Recall) findTokens(text string) []Span {
	var out []Span
	for i := 0; i < len(text); {
		c, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(c) {
			i += size
			continue
		}
		j := i
		for j < len(text) {
			c, size := utf8.DecodeRuneInString(text[j:])
			if unicode.IsSpace(c) {
				break
			}
			j += size
		}
		word := text[i:j]
		// The token as it is, and without the punctuation around it.
		for _, w := range []string{word, strings.TrimFunc(word, isEdgePunct)} {
			if w != "" && r.has(r.sum('t', w)) {
				start := i + strings.Index(word, w)
				out = append(out, Span{start, start + len(w)})
				break
			}
		}
		i = j
	}
	return out
}

func isEdgePunct(c rune) bool { return strings.ContainsRune(".,;:!?\"'()[]«»“”", c) }

// sum is the keyed hash of a code of kind 'd' (digits) or 't' (token); r.mu
// is held.
func (r *Recall) sum(kind byte, s string) digest {
	r.mac.Reset()
	r.mac.Write([]byte{kind})
	r.mac.Write([]byte(s))
	var d digest
	copy(d[:], r.mac.Sum(nil))
	return d
}

// expire forgets the codes whose time is up; r.mu is held.
func (r *Recall) expire() {
	now := r.now()
	for k, c := range r.codes {
		if now.After(c.until) {
			delete(r.codes, k)
			r.count(c.digits, -1)
		}
	}
}

// digitsIn returns the digits of s as ASCII, and how many there are.
func digitsIn(s string) (string, int) {
	var b strings.Builder
	for _, c := range s {
		if v, ok := digitValue(c); ok {
			b.WriteByte('0' + v)
		}
	}
	return b.String(), b.Len()
}

// onlyDigitsAndSeparators reports whether s holds digits and nothing but
// spaces, dashes, dots and invisible characters between them.
func onlyDigitsAndSeparators(s string) bool {
	for _, c := range s {
		if _, ok := digitValue(c); ok || unicode.IsSpace(c) || invisible(c) || strings.ContainsRune("-.‐‑‒–−", c) {
			continue
		}
		return false
	}
	return true
}

// digitValue is the value of a decimal digit of any script.
func digitValue(c rune) (byte, bool) {
	if c < utf8.RuneSelf {
		if '0' <= c && c <= '9' {
			return byte(c - '0'), true
		}
		return 0, false
	}
	if !unicode.IsDigit(c) {
		return 0, false
	}
	// Unicode lays decimal digits out in runs of ten from zero: find the
	// run's start.
	z := c
	for z > 0 && c-z < 60 && unicode.IsDigit(z-1) {
		z--
	}
	return byte((c - z) % 10), true
}
