package commit

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// entry is one normalized phrase of a word table.
type entry struct {
	phrase string
	kind   Kind
	lang   string
	inWord bool // matched inside words: Chinese, Japanese and Korean phrases
	whole  bool // matched only as the whole text: one-character CJK words ("是", "예")
}

// table finds the phrases of a word table in normalized text. Phrases of
// languages written with spaces match whole words; CJK phrases match
// anywhere. Both lookups go through indexes built once, so a scan costs a
// few map lookups per word and per CJK character.
type table struct {
	entries   []entry
	byWord    map[string][]int32 // first word of a spaced phrase
	byRune    map[rune][]int32   // first character of a CJK phrase that starts with CJK
	byMixed   map[rune][]int32   // first character of a CJK phrase that starts with Latin ("googleでログイン")
	conflicts []string           // one phrase given two kinds; a test keeps this empty
}

// match is a phrase found in a text, at bytes [start, end).
type match struct {
	e          *entry
	start, end int
}

// controlLists are every table of control words.
var controlLists = append(controlWords[:len(controlWords):len(controlWords)], moreControlWords...)

var (
	controls = buildTable(controlLists)
	fields   = buildTable(fieldWords)
)

func buildTable(lists []wordList) *table {
	t := &table{byWord: map[string][]int32{}, byRune: map[rune][]int32{}, byMixed: map[rune][]int32{}}
	seen := map[string]int{}
	for _, l := range lists {
		for _, w := range strings.Split(l.words, "|") {
			p := normalize(w)
			if p == "" {
				continue
			}
			if i, ok := seen[p]; ok {
				if t.entries[i].kind != l.kind {
					t.conflicts = append(t.conflicts, fmt.Sprintf("%q: %s (%s) and %s (%s)", p, t.entries[i].kind, t.entries[i].lang, l.kind, l.lang))
				}
				continue
			}
			e := entry{phrase: p, kind: l.kind, lang: l.lang, inWord: hasCJK(p)}
			e.whole = e.inWord && utf8.RuneCountInString(p) == 1
			idx := int32(len(t.entries))
			seen[p] = len(t.entries)
			t.entries = append(t.entries, e)
			first, _ := utf8.DecodeRuneInString(p)
			switch {
			case !e.inWord:
				w, _, _ := strings.Cut(p, " ")
				t.byWord[w] = append(t.byWord[w], idx)
			case isCJK(first):
				t.byRune[first] = append(t.byRune[first], idx)
			default:
				t.byMixed[first] = append(t.byMixed[first], idx)
			}
		}
	}
	return t
}

// isCJK reports whether r is written without spaces between words (Han,
// kana) or, for Hangul, carries endings that whole-word matching would miss.
func isCJK(r rune) bool {
	return r >= 0x1100 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r) || r == 'ー')
}

func hasCJK(s string) bool {
	for _, r := range s {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// scan appends to out every phrase of t found in text, a normalized string.
func (t *table) scan(text string, out []match) []match {
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if i == 0 || text[i-1] == ' ' {
			w := text[i:]
			if j := strings.IndexByte(w, ' '); j >= 0 {
				w = w[:j]
			}
			for _, k := range t.byWord[w] {
				e := &t.entries[k]
				if end := i + len(e.phrase); strings.HasPrefix(text[i:], e.phrase) && (end == len(text) || text[end] == ' ') {
					out = append(out, match{e, i, end})
				}
			}
			for _, k := range t.byMixed[r] {
				e := &t.entries[k]
				if strings.HasPrefix(text[i:], e.phrase) {
					out = append(out, match{e, i, i + len(e.phrase)})
				}
			}
		}
		if isCJK(r) {
			for _, k := range t.byRune[r] {
				e := &t.entries[k]
				switch {
				case e.whole:
					if i == 0 && len(text) == len(e.phrase) {
						out = append(out, match{e, 0, len(text)})
					}
				case strings.HasPrefix(text[i:], e.phrase):
					out = append(out, match{e, i, i + len(e.phrase)})
				}
			}
		}
		i += size
	}
	return out
}

// longest keeps, of overlapping matches, the longest (the earliest when
// they are as long), so "send feedback" hides "send" and "delete app" hides
// "delete". The kept matches are returned in text order.
func longest(ms []match) []match {
	if len(ms) < 2 {
		return ms
	}
	// Few matches: a simple insertion sort by length, longest first.
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && better(ms[j], ms[j-1]); j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
	kept := ms[:0]
	for _, m := range ms {
		ok := true
		for _, k := range kept {
			if m.start < k.end && k.start < m.end {
				ok = false
				break
			}
		}
		if ok {
			kept = append(kept, m)
		}
	}
	for i := 1; i < len(kept); i++ {
		for j := i; j > 0 && kept[j].start < kept[j-1].start; j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	return kept
}

func better(a, b match) bool {
	la, lb := a.end-a.start, b.end-b.start
	if la != lb {
		return la > lb
	}
	return a.start < b.start
}
