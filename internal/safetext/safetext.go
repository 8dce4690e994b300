// Package safetext makes text that came from an agent or a phone safe to
// show to the person: in a terminal, where a control character or an
// escape sequence would act instead of showing, and on a page, where a
// bidirectional control would reorder what the person reads ("$100"
// shown backwards). Every such character becomes a visible escape:
//
//   - C0 controls, DEL and bytes that are not UTF-8: \x1b, \x7f, \xff;
//     tab, carriage return and newline as \t, \r, \n;
//   - C1 controls (U+0080 to U+009F): \u009b;
//   - bidirectional controls (U+202A to U+202E, U+2066 to U+2069, U+200E,
//     U+200F, U+061C) and the line and paragraph separators (U+2028,
//     U+2029): ‹U+202E›.
//
// Line is for a value that must stay on one line (a name, a table cell);
// Text is for text of several lines, whose newlines and tabs stay. Both
// return s itself when nothing needs escaping. Backslashes are left as
// they are: the escapes keep the person's screen in the person's hands,
// they are not a reversible encoding (JSON output is that).
//
// The web console's page does the same in JavaScript (show in
// gateway/console/web/app.js); the two are tested against one table.
package safetext

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Line returns s with every control character, bidirectional control and
// invalid byte replaced by a visible escape, newlines and tabs included.
func Line(s string) string { return escape(s, false) }

// Text is Line for text of several lines: newlines and tabs stay as they
// are, and everything else Line escapes is escaped.
func Text(s string) string { return escape(s, true) }

// Safe reports whether s shows as it is on one line: Line(s) == s.
func Safe(s string) bool { return clean(s, false) }

func escape(s string, multiline bool) string {
	if clean(s, multiline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += n
		switch {
		case !needsEscape(r, multiline):
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0xa0:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, "‹U+%04X›", r)
		}
	}
	return b.String()
}

// clean reports whether s has nothing to escape.
func clean(s string, multiline bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || needsEscape(r, multiline) {
			return false
		}
		i += n
	}
	return true
}

// needsEscape reports whether r is shown as an escape.
func needsEscape(r rune, multiline bool) bool {
	switch {
	case r == '\n' || r == '\t':
		return !multiline
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	}
	return Bidi(r) || r == 0x2028 || r == 0x2029
}

// Bidi reports whether r is a bidirectional control: an embedding,
// override or isolate, a directional mark, or the Arabic letter mark.
func Bidi(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return r == 0x200e || r == 0x200f || r == 0x061c
}

// JSON returns the JSON text b with every DEL, C1 control, bidirectional
// control and line or paragraph separator written as a \u escape. The
// data stays exactly the same for any JSON reader; only a person reading
// the JSON in a terminal is spared what encoding/json leaves raw (it
// escapes the C0 controls itself). Such characters can stand only inside
// strings, where a \u escape means the same character.
func JSON(b []byte) []byte {
	var out []byte
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if n > 0 && r != utf8.RuneError && (r == 0x7f || (r >= 0x80 && r < 0xa0) || Bidi(r) || r == 0x2028 || r == 0x2029) {
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}
