package main

import (
	"bytes"
	"encoding/binary"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// parseAndroid reads the <string> resources of an Android strings.xml, as
// a person reads them: markup dropped, escapes resolved, format arguments
// shown as "…", whitespace collapsed. translatable="false" strings are
// skipped.
func parseAndroid(data []byte) (map[string]string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	out := map[string]string{}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "string" {
			continue
		}
		name, skip := "", false
		for _, a := range se.Attr {
			switch a.Name.Local {
			case "name":
				name = a.Value
			case "translatable":
				skip = a.Value == "false"
			}
		}
		var raw strings.Builder
		depth := 1
		for depth > 0 {
			tok, err := d.Token()
			if err != nil {
				return nil, fmt.Errorf("string %q: %w", name, err)
			}
			switch t := tok.(type) {
			case xml.StartElement:
				depth++
			case xml.EndElement:
				depth--
			case xml.CharData:
				raw.Write(t)
			}
		}
		if name != "" && !skip {
			out[name] = readable(androidUnescape(raw.String()))
		}
	}
}

// androidUnescape resolves the escapes of an Android string resource: a
// text in double quotes keeps its spaces, \' \" \\ \n \t \@ \? and \uXXXX.
func androidUnescape(s string) string {
	var b strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			quoted = !quoted
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if i+4 < len(s) {
					if r, err := strconv.ParseUint(s[i+1:i+5], 16, 32); err == nil {
						b.WriteRune(rune(r))
						i += 4
						continue
					}
				}
				b.WriteByte('u')
			default:
				b.WriteByte(s[i])
			}
		case !quoted && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// formatArg matches printf-style arguments (%s, %1$d, %.2f) and ICU-style
// placeholders ({count}, {0}).
var formatArg = regexp.MustCompile(`%(\d+\$)?[-#+ 0,(]*\d*(\.\d+)?(hh|h|ll|l|q|z|t|j)?[sSdiufeEgGxXoc@]|\{[A-Za-z0-9_]+\}`)

// readable is a resource's text as a person reads it: arguments shown as
// "…", "%%" as "%", spaces collapsed.
func readable(s string) string {
	parts := strings.Split(s, "%%") // a literal percent sign is never an argument
	for i, p := range parts {
		parts[i] = formatArg.ReplaceAllString(p, "…")
	}
	return strings.Join(strings.Fields(strings.Join(parts, "%")), " ")
}

// parseStrings reads an iOS .strings file ("key" = "value"; with /* */ and
// // comments), in UTF-8 or UTF-16.
func parseStrings(data []byte) (map[string]string, error) {
	text, err := decodeText(data)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	p := stringsParser{s: text}
	for {
		p.space()
		if p.done() {
			return out, nil
		}
		key, err := p.quoted()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat('=') {
			return nil, p.errorf("want = after %q", key)
		}
		p.space()
		val, err := p.quoted()
		if err != nil {
			return nil, err
		}
		p.space()
		if !p.eat(';') {
			return nil, p.errorf("want ; after the value of %q", key)
		}
		out[key] = readable(val)
	}
}

// decodeText turns UTF-16 (with a byte-order mark) or UTF-8 into a string.
func decodeText(b []byte) (string, error) {
	switch {
	case len(b) >= 2 && (b[0] == 0xff && b[1] == 0xfe || b[0] == 0xfe && b[1] == 0xff):
		var order binary.ByteOrder = binary.LittleEndian
		if b[0] == 0xfe {
			order = binary.BigEndian
		}
		u := make([]uint16, 0, len(b)/2)
		for i := 2; i+1 < len(b); i += 2 {
			u = append(u, order.Uint16(b[i:]))
		}
		return string(utf16.Decode(u)), nil
	case bytes.HasPrefix(b, []byte{0xef, 0xbb, 0xbf}):
		b = b[3:]
	}
	if !utf8.Valid(b) {
		return "", errors.New("not UTF-8 or UTF-16")
	}
	return string(b), nil
}

type stringsParser struct {
	s string
	i int
}

func (p *stringsParser) done() bool { return p.i >= len(p.s) }

func (p *stringsParser) errorf(format string, args ...any) error {
	line := strings.Count(p.s[:p.i], "\n") + 1
	return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, args...))
}

// space skips white space and comments.
func (p *stringsParser) space() {
	for !p.done() {
		switch {
		case strings.HasPrefix(p.s[p.i:], "/*"):
			end := strings.Index(p.s[p.i+2:], "*/")
			if end < 0 {
				p.i = len(p.s)
				return
			}
			p.i += end + 4
		case strings.HasPrefix(p.s[p.i:], "//"):
			end := strings.IndexByte(p.s[p.i:], '\n')
			if end < 0 {
				p.i = len(p.s)
				return
			}
			p.i += end
		case strings.ContainsRune(" \t\r\n\ufeff", rune(p.s[p.i])) || p.s[p.i] >= utf8.RuneSelf && strings.HasPrefix(p.s[p.i:], "\ufeff"):
			if p.s[p.i] >= utf8.RuneSelf {
				p.i += len("\ufeff")
			} else {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *stringsParser) eat(c byte) bool {
	if !p.done() && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// quoted reads a "…" string with its escapes (\" \\ \n \t \Uxxxx), or a
// bare word.
func (p *stringsParser) quoted() (string, error) {
	if !p.eat('"') {
		start := p.i
		for !p.done() && !strings.ContainsRune(" \t\r\n=;", rune(p.s[p.i])) {
			p.i++
		}
		if p.i == start {
			return "", p.errorf("want a quoted string")
		}
		return p.s[start:p.i], nil
	}
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return b.String(), nil
		case c == '\\' && !p.done():
			e := p.s[p.i]
			p.i++
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'U', 'u':
				if p.i+4 <= len(p.s) {
					if r, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32); err == nil {
						b.WriteRune(rune(r))
						p.i += 4
						continue
					}
				}
				b.WriteByte(e)
			default:
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", p.errorf("a string is not closed")
}
