package mcpserver

import (
	"cmp"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// A tool's arguments are described once, as a struct: its fields and their
// tags give the schema a client sees (inputSchema), the checks a call's
// arguments pass before anything runs (checkArgs), the reference in
// docs/mcp.md, and the binding, since the tool's code receives the checked
// arguments decoded into that same struct.
//
// The tags of a field:
//
//	json     the argument's name
//	desc     its description; {what} stands for the word the what tag of
//	         the enclosing field gives ("element" when none does)
//	check    comma-separated: required; len=MIN..MAX, the characters of a
//	         string (or of each string of a list); range=MIN..MAX, an
//	         integer's bounds; items=MAX, the most items of a list
//	pattern  a regular expression a string must match
//	default  the value the tool assumes when the argument is absent
//	what     on an embedded or object field: the word for {what} inside it
//	schema   comma-separated, how the field shows in the input schema:
//	         unlisted leaves its bounds and pattern out (they are still
//	         checked; they stop runaway input, and an agent that passes
//	         what the description says never meets them); terse, on an
//	         object field, leaves out the descriptions of its fields (its
//	         own description says what they are). docs/mcp.md shows all.
//
// A bound, a pattern or a default may be {name}, one of tagValues. The JSON
// type comes from the Go type: a string (a named string type with an enum
// method takes only the values it lists), an integer, a bool, a []string,
// a struct (an object that takes no other names), or a pointer to one of
// these, for an optional argument whose absence the tool must tell from
// its zero value. An embedded struct adds its fields in its place.

// enumer is a string type that takes only some values.
type enumer interface{ enum() []string }

// tagValues are the values a tag may name as {name}, so that a limit the
// code also uses is written once.
var tagValues = map[string]string{
	"devicePattern":      devicePattern,
	"maxTypedText":       strconv.Itoa(maxTypedText),
	"maxPressMillis":     strconv.Itoa(maxPressMillis),
	"maxWaitMillis":      strconv.Itoa(maxWaitMillis),
	"defaultWaitMillis":  strconv.FormatInt(defaultWait.Milliseconds(), 10),
	"maxUploadBase64":    strconv.Itoa(maxUploadBase64),
	"MaxUploadLinkBytes": strconv.Itoa(MaxUploadLinkBytes),
}

// paramsOf is the parameters the argument struct A describes. A bad tag
// panics: the inventory is built by every test of the package.
func paramsOf[A any]() []param {
	t := reflect.TypeFor[A]()
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("mcpserver: the arguments of a tool are a struct, not %s", t))
	}
	return structParams(t, "element")
}

func structParams(t reflect.Type, what string) []param {
	var ps []param
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			ps = append(ps, structParams(f.Type, cmp.Or(f.Tag.Get("what"), what))...)
			continue
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			panic(fmt.Sprintf("mcpserver: %s.%s has no json name", t, f.Name))
		}
		ps = append(ps, fieldParam(t, f, name, what))
	}
	return ps
}

var enumerType = reflect.TypeFor[enumer]()

func fieldParam(owner reflect.Type, f reflect.StructField, name, what string) param {
	bad := func(format string, args ...any) {
		panic(fmt.Sprintf("mcpserver: %s.%s: %s", owner, f.Name, fmt.Sprintf(format, args...)))
	}
	p := param{name: name, desc: strings.ReplaceAll(f.Tag.Get("desc"), "{what}", what)}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.Implements(enumerType):
		p.typ, p.enum = "string", reflect.Zero(t).Interface().(enumer).enum()
	case t.Kind() == reflect.String:
		p.typ = "string"
	case t.Kind() == reflect.Bool:
		p.typ = "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
		p.typ = "integer"
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		p.typ, p.items = "array", &param{typ: "string"}
	case t.Kind() == reflect.Struct:
		p.typ, p.props = "object", structParams(t, cmp.Or(f.Tag.Get("what"), what))
	default:
		bad("no JSON type for %s", f.Type)
	}
	for opt := range strings.SplitSeq(f.Tag.Get("check"), ",") {
		key, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
		switch key {
		case "":
		case "required":
			p.required = true
		case "len":
			lo, hi := bounds(val, bad)
			s := &p
			if p.items != nil {
				s = p.items
			}
			s.minLen, s.maxLen = int(lo), int(hi)
		case "range":
			lo, hi := bounds(val, bad)
			p.min, p.max = &lo, &hi
		case "items":
			p.maxItems = int(number(val, bad))
		default:
			bad("unknown check %q", key)
		}
	}
	for opt := range strings.SplitSeq(f.Tag.Get("schema"), ",") {
		switch strings.TrimSpace(opt) {
		case "":
		case "unlisted":
			p.unlisted = true
		case "terse":
			if p.typ != "object" {
				bad("terse is for object fields")
			}
			p.terse = true
		default:
			bad("unknown schema option %q", opt)
		}
	}
	if pat, ok := f.Tag.Lookup("pattern"); ok {
		p.pattern = regexp.MustCompile(tagValue(pat, bad))
	}
	if def, ok := f.Tag.Lookup("default"); ok {
		def = tagValue(def, bad)
		switch p.typ {
		case "boolean":
			v, err := strconv.ParseBool(def)
			if err != nil {
				bad("default %q: %v", def, err)
			}
			p.def = v
		case "integer":
			p.def = int(number(def, bad))
		default:
			p.def = def
		}
	}
	return p
}

// bounds parses MIN..MAX.
func bounds(s string, bad func(string, ...any)) (int64, int64) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		bad("bounds %q: want MIN..MAX", s)
	}
	return number(lo, bad), number(hi, bad)
}

func number(s string, bad func(string, ...any)) int64 {
	n, err := strconv.ParseInt(tagValue(s, bad), 10, 64)
	if err != nil {
		bad("%q is not a number", s)
	}
	return n
}

// tagValue is s, or the value it names as {name}.
func tagValue(s string, bad func(string, ...any)) string {
	name, ok := strings.CutPrefix(s, "{")
	if name, ok2 := strings.CutSuffix(name, "}"); ok && ok2 {
		v, known := tagValues[name]
		if !known {
			bad("no tag value {%s}", name)
		}
		return v
	}
	return s
}

// bind decodes a call's checked arguments into the tool's struct.
func bind[A any](args map[string]any) (A, error) {
	var a A
	b, err := json.Marshal(args)
	if err != nil {
		return a, fmt.Errorf("encode arguments: %w", err)
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, fmt.Errorf("decode arguments: %w", err)
	}
	return a, nil
}
