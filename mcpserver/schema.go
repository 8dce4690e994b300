package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
)

// param describes one argument of a tool. The same description produces
// the JSON schema a client sees and checks the arguments a call brings, so
// the two cannot drift apart. A tool's arguments get theirs from its
// argument struct (args.go); the constructors below describe the fields
// of output schemas.
type param struct {
	name     string
	typ      string // string, integer, boolean, array, object
	desc     string
	required bool

	enum    []string
	minLen  int // characters, for strings
	maxLen  int // characters, for strings; 0: no limit
	pattern *regexp.Regexp

	min, max *int64 // integers
	def      any

	items    *param // arrays
	maxItems int

	props []param // objects

	// unlisted leaves the bounds and the pattern out of the schema: they
	// are still checked, but they only stop runaway input, and an agent
	// that passes what the description says never meets them.
	unlisted bool
	// terse leaves the descriptions of an object's fields out of the
	// schema, when the object's own description says what they are.
	terse bool
}

func (p param) req() param { p.required = true; return p }

func stringParam(name, desc string, minLen, maxLen int) param {
	return param{name: name, typ: "string", desc: desc, minLen: minLen, maxLen: maxLen}
}

func boolParam(name, desc string) param {
	return param{name: name, typ: "boolean", desc: desc}
}

func enumParam(name, desc string, values ...string) param {
	return param{name: name, typ: "string", desc: desc, enum: values}
}

func arrayParam(name, desc string, items param, maxItems int) param {
	return param{name: name, typ: "array", desc: desc, items: &items, maxItems: maxItems}
}

func objectParam(name, desc string, props ...param) param {
	return param{name: name, typ: "object", desc: desc, props: props}
}

// schema is the JSON schema of p. It carries what an agent needs to call
// right and nothing else: no unlisted bounds, and no default of false,
// which an absent boolean means anyway.
func (p param) schema() map[string]any {
	s := map[string]any{"type": p.typ}
	if p.desc != "" {
		s["description"] = p.desc
	}
	if len(p.enum) > 0 {
		s["enum"] = p.enum
	}
	if !p.unlisted {
		p.addBounds(s)
	}
	if p.def != nil && p.def != false {
		s["default"] = p.def
	}
	if p.items != nil {
		items := *p.items
		items.unlisted = items.unlisted || p.unlisted
		s["items"] = items.schema()
	}
	if p.typ == "object" {
		props := map[string]any{}
		var required []string
		for _, c := range p.props {
			cs := c.schema()
			if p.terse {
				delete(cs, "description")
			}
			props[c.name] = cs
			if c.required {
				required = append(required, c.name)
			}
		}
		s["properties"] = props
		if len(required) > 0 {
			s["required"] = required
		}
		s["additionalProperties"] = false
	}
	return s
}

// addBounds adds p's lengths, pattern, range and item count to its schema s.
func (p param) addBounds(s map[string]any) {
	if p.typ == "string" && len(p.enum) == 0 {
		if p.minLen > 0 {
			s["minLength"] = p.minLen
		}
		if p.maxLen > 0 {
			s["maxLength"] = p.maxLen
		}
	}
	if p.pattern != nil {
		s["pattern"] = p.pattern.String()
	}
	if p.min != nil {
		s["minimum"] = *p.min
	}
	if p.max != nil {
		s["maximum"] = *p.max
	}
	if p.maxItems > 0 {
		s["maxItems"] = p.maxItems
	}
}

// inputSchema is the input schema of a tool taking params.
func inputSchema(params []param) mcp.ToolInputSchema {
	s := mcp.ToolInputSchema{
		Type:                 "object",
		Properties:           map[string]any{},
		AdditionalProperties: false,
	}
	for _, p := range params {
		s.Properties[p.name] = p.schema()
		s.PropertyOrder = append(s.PropertyOrder, p.name)
		if p.required {
			s.Required = append(s.Required, p.name)
		}
	}
	return s
}

// argError is a bad argument: the field and what is wrong with it.
type argError struct {
	field string
	msg   string
}

func (e *argError) Error() string {
	if e.field == "" {
		return e.msg
	}
	return e.field + ": " + e.msg
}

func badArg(field, format string, args ...any) *argError {
	return &argError{field: field, msg: fmt.Sprintf(format, args...)}
}

// checkArgs checks a call's arguments against params: unknown names,
// missing required ones, types, ranges, lengths, enums and UTF-8.
func checkArgs(params []param, args map[string]any) error {
	return checkObject("", params, args)
}

func checkObject(prefix string, params []param, obj map[string]any) error {
	known := make(map[string]param, len(params))
	for _, p := range params {
		known[p.name] = p
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := known[name]; !ok {
			allowed := make([]string, 0, len(params))
			for _, p := range params {
				allowed = append(allowed, p.name)
			}
			if len(allowed) == 0 {
				return badArg(prefix+name, "unknown argument; this tool takes no arguments")
			}
			return badArg(prefix+name, "unknown argument; the arguments are %s", strings.Join(allowed, ", "))
		}
	}
	for _, p := range params {
		v, ok := obj[p.name]
		if !ok || v == nil {
			if p.required {
				return badArg(prefix+p.name, "is required")
			}
			continue
		}
		if err := p.check(prefix+p.name, v); err != nil {
			return err
		}
	}
	return nil
}

func (p param) check(field string, v any) error {
	switch p.typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return badArg(field, "must be a string, not %s", jsonType(v))
		}
		// Invalid UTF-8 sent over JSON arrives as U+FFFD, the replacement
		// character; a raw Go string may hold the invalid bytes themselves.
		if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
			return badArg(field, "is not valid UTF-8 text")
		}
		if len(p.enum) > 0 {
			if !slices.Contains(p.enum, s) {
				return badArg(field, "%q is not one of %s", s, strings.Join(p.enum, ", "))
			}
			return nil
		}
		n := utf8.RuneCountInString(s)
		if n < p.minLen {
			if p.minLen == 1 {
				return badArg(field, "must not be empty")
			}
			return badArg(field, "must be at least %d characters, not %d", p.minLen, n)
		}
		if p.maxLen > 0 && n > p.maxLen {
			return badArg(field, "must be at most %d characters, not %d", p.maxLen, n)
		}
		if p.pattern != nil && !p.pattern.MatchString(s) {
			return badArg(field, "%q does not match %s", clip(s, 40), p.pattern)
		}
	case "integer":
		n, ok := toInt(v)
		if !ok {
			return badArg(field, "must be an integer, not %s", jsonType(v))
		}
		if p.min != nil && n < *p.min {
			return badArg(field, "must be at least %d, not %d", *p.min, n)
		}
		if p.max != nil && n > *p.max {
			return badArg(field, "must be at most %d, not %d", *p.max, n)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return badArg(field, "must be true or false, not %s", jsonType(v))
		}
	case "array":
		list, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				list = make([]any, len(ss))
				for i, s := range ss {
					list[i] = s
				}
			} else {
				return badArg(field, "must be an array, not %s", jsonType(v))
			}
		}
		if p.maxItems > 0 && len(list) > p.maxItems {
			return badArg(field, "must have at most %d items, not %d", p.maxItems, len(list))
		}
		for i, item := range list {
			if err := p.items.check(fmt.Sprintf("%s[%d]", field, i), item); err != nil {
				return err
			}
		}
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return badArg(field, "must be an object, not %s", jsonType(v))
		}
		return checkObject(field+".", p.props, obj)
	}
	return nil
}

// toInt converts a decoded JSON number to an int64 when it is integral.
func toInt(v any) (int64, bool) {
	switch n := v.(type) {
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) || n > 1<<53 || n < -(1<<53) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int:
		return int64(n), true
	case int64:
		return n, true
	case int32:
		return int64(n), true
	}
	return 0, false
}

func jsonType(v any) string {
	switch n := v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		if n != math.Trunc(n) {
			return "a fractional number"
		}
		return "a number"
	case json.Number, int, int64, int32:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
