package policy

import "strings"

// pattern is one value of a match field: an exact value, or a glob where *
// matches any run of characters and ? one character.
type pattern struct {
	s    string
	glob bool
	fold bool // ASCII upper and lower case are equal (agent names)
}

func newPattern(s string, fold bool) pattern {
	if fold {
		s = strings.ToLower(s)
	}
	return pattern{s: s, glob: strings.ContainsAny(s, "*?"), fold: fold}
}

func (p pattern) match(v string) bool {
	if !p.glob {
		if p.fold {
			return strings.EqualFold(p.s, v)
		}
		return p.s == v
	}
	return globMatch(p.s, v, p.fold)
}

// globMatch matches v against pat (* and ?) without allocating: the classic
// backtracking to the last star, which is linear enough for short names.
func globMatch(pat, v string, fold bool) bool {
	pi, vi := 0, 0
	star, mark := -1, 0
	for vi < len(v) {
		switch {
		case pi < len(pat) && pat[pi] == '*':
			star, mark = pi, vi
			pi++
		case pi < len(pat) && (pat[pi] == '?' || pat[pi] == lower(v[vi], fold)):
			pi++
			vi++
		case star >= 0:
			pi = star + 1
			mark++
			vi = mark
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi] == '*' {
		pi++
	}
	return pi == len(pat)
}

func lower(c byte, fold bool) byte {
	if fold && 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// patterns is a match field's values; it matches when any value does.
type patterns []pattern

func (ps patterns) match(v string) bool {
	for _, p := range ps {
		if p.match(v) {
			return true
		}
	}
	return false
}
