package commit

import (
	"math"
	"strings"
	"unicode/utf8"
)

// role is how an app shows a control, in the terms of the real-app corpus
// (corpus/README.md): the model reads it as a feature.
type role uint8

const (
	roleButton    role = iota // a button, a dialog's button, a FAB, a bottom-bar action
	roleMenuItem              // a menu entry, a drawer entry, a settings row
	roleToggle                // a switch, checkbox or radio
	roleLink                  // a clickable text that opens a page
	roleFieldHint             // a text field's hint
	roleText                  // a title, a message, a label
	numRoles
)

var roleNames = [numRoles]string{"button", "menu_item", "toggle", "link", "field_hint", "text"}

func (r role) String() string { return roleNames[r] }

// parseRole returns the role a corpus or classify line names.
func parseRole(s string) (role, bool) {
	for i, n := range roleNames {
		if n == s {
			return role(i), true
		}
	}
	return 0, false
}

// modelInput is what the model reads of one control.
type modelInput struct {
	text string // the label, normalized
	raw  string // the label as shown, for its punctuation
	role role
	app  appClass
	// tables are the word tables' matches in text (longest, in text order).
	tables []match
}

// The feature families. Each feature is hashed with its family's byte
// first, so that the word "send" and the character trigram "end" never
// share a hash by construction.
const (
	fBias      = 'B'
	fChar      = 'c' // character n-grams, the n follows
	fWord      = 'w'
	fBigram    = 'b'
	fFirst     = 'f'
	fLast      = 'l'
	fRole      = 'r'
	fApp       = 'a'
	fRoleFirst = 'F'
	fRoleLast  = 'L'
	fAppFirst  = 'G'
	fAppLast   = 'H'
	fRoleApp   = 'R'
	fShape     = 's'
	fTable     = 't'
	fTableRole = 'T'
	fTableApp  = 'A'
	fRoleWord  = 'W'
	fAppWord   = 'V'
	fStem      = 'P'
	fCJKEdge   = 'j'
)

// featureHash is FNV-1a over a family byte and a string, with digits folded
// to '0' so that amounts and counts share their features.
type featureHash uint32

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func startHash(family byte) featureHash {
	return (fnvOffset ^ featureHash(family)) * fnvPrime
}

func (h featureHash) byte(c byte) featureHash {
	if c >= '0' && c <= '9' {
		c = '0'
	}
	return (h ^ featureHash(c)) * fnvPrime
}

// tag adds a byte as it is: a role, a class, an n.
func (h featureHash) tag(c byte) featureHash { return (h ^ featureHash(c)) * fnvPrime }

func (h featureHash) str(s string) featureHash {
	for i := 0; i < len(s); i++ {
		h = h.byte(s[i])
	}
	return h
}

func (h featureHash) bytes(s []byte) featureHash {
	for _, c := range s {
		h = h.byte(c)
	}
	return h
}

// sep marks the boundary between two parts of a feature.
func (h featureHash) sep() featureHash { return h.byte(0) }

// final mixes the hash's bits (murmur3's finalizer), so that its low bits,
// which pick the bucket, depend on every byte.
func (h featureHash) final() uint32 {
	x := uint32(h)
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	return x
}

// maxGram is the longest character n-gram.
const maxGram = 4

// featureSet is a control's hashed features in three groups, each
// weighing as much in total however long the text: the character n-grams
// (each counts 1/√n of n), the word features (likewise), and the few
// fixed ones (the role, the app's class, the shape, the tables' matches).
// Without it a long label's many n-grams would drown its role.
type featureSet struct {
	h           []uint32 // the character n-grams, then the word features, then the fixed ones
	chars, word int      // how many of each of the first two groups
}

// weights are the values of the three groups' features.
func (f *featureSet) weights() (chars, word float64) {
	chars, word = 1, 1
	if f.chars > 0 {
		chars = 1 / math.Sqrt(float64(f.chars))
	}
	if f.word > 0 {
		word = 1 / math.Sqrt(float64(f.word))
	}
	return chars, word
}

// features returns the features of in, appended to out: the character 1- to 4-grams
// of the text with a space at each end; its words (alone, with the role
// and with the app's class), word pairs, first and last words (likewise),
// the first word's stem (alone and with the role), a CJK label's first
// and last two characters; the role,
// the app's class, the text's shape (length, a question, a trailing colon,
// an ellipsis or chevron, an amount), and what the word tables found in
// it.
func features(in *modelInput, out []uint32) featureSet {
	var f featureSet
	r, a := byte(in.role), byte(in.app)

	// Character n-grams over " text ".
	t := in.text
	var starts [maxGram + 1]int // byte offsets of the last runes' starts, in a ring
	pos := 0                    // runes seen, the leading space included
	var pb [128]byte
	padded := append(append(append(pb[:0], ' '), t...), ' ')
	if len(t) > 0 {
		for i := 0; i < len(padded); {
			_, size := utf8.DecodeRune(padded[i:])
			starts[pos%(maxGram+1)] = i
			pos++
			end := i + size
			for n := 1; n <= maxGram && n <= pos; n++ {
				s := starts[(pos-n)%(maxGram+1)]
				g := padded[s:end]
				if len(g) == 1 && g[0] == ' ' {
					continue
				}
				out = append(out, startHash(fChar).tag(byte(n)).bytes(g).final())
			}
			i = end
		}
	}
	f.chars = len(out)

	// Words.
	words := 0
	first, last, prev := "", "", ""
	for rest := t; rest != ""; {
		w := rest
		if i := strings.IndexByte(rest, ' '); i >= 0 {
			w, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if w == "" {
			continue
		}
		words++
		if first == "" {
			first = w
		}
		last = w
		out = append(out, startHash(fWord).str(w).final(),
			startHash(fRoleWord).tag(r).str(w).final(), startHash(fAppWord).tag(a).str(w).final())
		if prev != "" {
			out = append(out, startHash(fBigram).str(prev).sep().str(w).final())
		}
		prev = w
	}
	if words > 0 {
		out = append(out,
			startHash(fFirst).str(first).final(), startHash(fLast).str(last).final(),
			startHash(fRoleFirst).tag(r).str(first).final(), startHash(fRoleLast).tag(r).str(last).final(),
			startHash(fAppFirst).tag(a).str(first).final(), startHash(fAppLast).tag(a).str(last).final())
		// The first word's first five letters stand for its verb's stem
		// ("Deleting", "Delete"); a CJK label, which has no spaces, has its
		// first and last two characters instead.
		stem := prefixRunes(first, 5)
		out = append(out, startHash(fStem).str(stem).final(), startHash(fStem).tag(r).str(stem).final())
		if hasCJK(t) {
			head, tail := prefixRunes(t, 2), suffixRunes(t, 2)
			out = append(out, startHash(fCJKEdge).str(head).final(), startHash(fCJKEdge).tag('>').str(tail).final(),
				startHash(fCJKEdge).tag(r).str(head).final(), startHash(fCJKEdge).tag(a).str(head).final())
		}
	}
	f.word = len(out) - f.chars

	// The fixed features.
	out = append(out, startHash(fBias).final(), startHash(fRole).tag(r).final(), startHash(fApp).tag(a).final(),
		startHash(fRoleApp).tag(r).tag(a).final())
	out = shapeFeatures(in.raw, t, words, out)
	f.h = tableFeatures(in.tables, t, r, a, out)
	return f
}

// shapeFeatures appends the features of the text's shape: its length, a
// question, a trailing colon or full stop, an ellipsis or chevron, an
// amount. raw is the text as shown, t normalized, with words words.
func shapeFeatures(raw, t string, words int, out []uint32) []uint32 {
	shape := ""
	switch {
	case words == 0:
		shape = "empty"
	case hasCJK(t):
		switch n := utf8.RuneCountInString(t); {
		case n <= 2:
			shape = "cjk<=2"
		case n <= 4:
			shape = "cjk<=4"
		case n <= 8:
			shape = "cjk<=8"
		default:
			shape = "cjk>8"
		}
	case words == 1:
		shape = "w1"
	case words == 2:
		shape = "w2"
	case words == 3:
		shape = "w3"
	case words <= 6:
		shape = "w<=6"
	default:
		shape = "w>6"
	}
	out = append(out, startHash(fShape).str(shape).final())
	raw = strings.TrimSpace(raw)
	shape = ""
	switch {
	case strings.HasSuffix(raw, "?") || strings.HasSuffix(raw, "？") || strings.HasSuffix(raw, "؟"):
		shape = "question"
	case strings.HasSuffix(raw, ":") || strings.HasSuffix(raw, "："):
		shape = "colon"
	case strings.HasSuffix(raw, ".") || strings.HasSuffix(raw, "。") || strings.HasSuffix(raw, "!") || strings.HasSuffix(raw, "！"):
		shape = "sentence"
	}
	if shape != "" {
		out = append(out, startHash(fShape).str(shape).final())
	}
	if navMarked(raw) {
		out = append(out, startHash(fShape).str("nav").final())
	}
	if hasAmount(raw) {
		out = append(out, startHash(fShape).str("amount").final())
	}
	return out
}

// tableFeatures appends the features of what the word tables found in t:
// each match's kind, where it lies (the whole text, its start, its end,
// inside), with the role and the app's class, and the first match's kind.
func tableFeatures(tables []match, t string, r, a byte, out []uint32) []uint32 {
	for i, m := range tables {
		k := string(m.e.kind)
		h := startHash(fTable).str(k)
		out = append(out, h.final())
		where := "in"
		switch {
		case m.start == 0 && m.end == len(t):
			where = "whole"
		case m.start == 0:
			where = "lead"
		case m.end == len(t):
			where = "tail"
		}
		out = append(out, h.sep().str(where).final(),
			startHash(fTableRole).tag(r).str(k).final(),
			startHash(fTableApp).tag(a).str(k).final())
		if i == 0 {
			out = append(out, startHash(fTable).str("first").sep().str(k).final())
		}
	}
	if len(tables) == 0 {
		out = append(out, startHash(fTable).str("none").final())
	}
	return out
}

// prefixRunes is the first n runes of s.
func prefixRunes(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// suffixRunes is the last n runes of s.
func suffixRunes(s string, n int) string {
	i := len(s)
	for ; i > 0 && n > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}
