package cli

// The edits `pinky mcp install` and `uninstall` make to an agent host's
// configuration file: put pinky's server entry in, or take it out, and keep
// everything else the file holds.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// serverName is the name of pinky's entry in every host's configuration.
const serverName = "pinky"

// errMalformed marks a configuration file that cannot be read as its
// format; such a file is never rewritten.
var errMalformed = errors.New("malformed configuration file")

// jsonObject is a JSON object that keeps its keys in the order the file
// had them, so that a rewritten file differs only where pinky's entry is.
type jsonObject struct {
	keys []string
	vals map[string]json.RawMessage
}

// parseJSONObject reads data as one JSON object. Empty data is an empty
// object (a file the host created but left blank).
func parseJSONObject(data []byte) (*jsonObject, error) {
	o := &jsonObject{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(data, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("%w: the file is not a JSON object", errMalformed)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, jsonError(data, err)
		}
		key := tok.(string) // an object's tokens alternate key, value
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, jsonError(data, err)
		}
		o.set(key, val)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, jsonError(data, err)
	}
	if _, err := dec.Token(); err == nil {
		return nil, fmt.Errorf("%w: more than one JSON value in the file", errMalformed)
	}
	return o, nil
}

// jsonError says where the JSON went wrong, by line.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line := 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte("\n"))
		return fmt.Errorf("%w: not valid JSON at line %d (%v); comments and trailing commas are not taken", errMalformed, line, err)
	}
	return fmt.Errorf("%w: not valid JSON (%v)", errMalformed, err)
}

func (o *jsonObject) set(key string, val json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = val
}

func (o *jsonObject) del(key string) bool {
	if _, ok := o.vals[key]; !ok {
		return false
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return true
}

// marshal writes the object compactly, its keys in order.
func (o *jsonObject) marshal() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(k))
		b.WriteByte(':')
		if err := json.Compact(&b, o.vals[k]); err != nil {
			b.Write(o.vals[k]) // parsed already: cannot happen
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// jsonString is s as a JSON string, without escaping <, > and &.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// indentJSON is the file's text: two-space indents, a final newline.
func indentJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return append(raw, '\n')
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// marshalJSON encodes v compactly, without escaping <, > and &.
func marshalJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only maps and slices of strings are encoded here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sameJSON says whether a and b are the same JSON value.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// serversObject is the object under key (mcpServers, servers) in top: a new
// one when there is none.
func serversObject(top *jsonObject, key string) (*jsonObject, error) {
	raw, ok := top.vals[key]
	if !ok {
		return &jsonObject{vals: map[string]json.RawMessage{}}, nil
	}
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		return nil, fmt.Errorf("%w: %q is not an object", errMalformed, key)
	}
	return parseJSONObject(raw)
}

// installJSON puts entry under key.pinky in the JSON document data,
// keeping every other key. changed is false when the same entry is there.
func installJSON(data []byte, key string, entry json.RawMessage) (out []byte, changed bool, err error) {
	top, err := parseJSONObject(data)
	if err != nil {
		return nil, false, err
	}
	servers, err := serversObject(top, key)
	if err != nil {
		return nil, false, err
	}
	if old, ok := servers.vals[serverName]; ok && sameJSON(old, entry) {
		return data, false, nil
	}
	servers.set(serverName, entry)
	top.set(key, servers.marshal())
	return indentJSON(top.marshal()), true, nil
}

// uninstallJSON takes key.pinky out of the JSON document data, keeping
// every other key. changed is false when there was no such entry.
func uninstallJSON(data []byte, key string) (out []byte, changed bool, err error) {
	top, err := parseJSONObject(data)
	if err != nil {
		return nil, false, err
	}
	servers, err := serversObject(top, key)
	if err != nil {
		return nil, false, err
	}
	if !servers.del(serverName) {
		return data, false, nil
	}
	top.set(key, servers.marshal())
	return indentJSON(top.marshal()), true, nil
}

// TOML (Codex's config.toml). The file is edited as text, so that its
// comments and layout stay: pinky's tables are cut out and the new ones
// appended. The result is then parsed and must equal the old document
// with pinky's entry replaced; when it does not (pinky's entry written as
// an inline table or with dotted keys, say), the whole document is
// encoded again instead, which drops the file's comments: lost is true.

// tomlHeader matches a table header line: [a.b] or [[a.b]].
var tomlHeader = regexp.MustCompile(`^\s*\[\[?([^\[\]]*)\]\]?\s*(#.*)?$`)

// pinkyTable matches the key of pinky's table or one of its subtables.
var pinkyTable = regexp.MustCompile(`^\s*mcp_servers\s*\.\s*(pinky|"pinky"|'pinky')\s*(\..*)?$`)

// cutPinkyTables removes [mcp_servers.pinky] and its subtables from the
// text. The comments and blank lines just above the next table's header
// stay: they belong to that table.
func cutPinkyTables(text string) string {
	lines := strings.SplitAfter(text, "\n")
	var out []string
	for i := 0; i < len(lines); {
		m := tomlHeader.FindStringSubmatch(strings.TrimRight(lines[i], "\r\n"))
		if m == nil || !pinkyTable.MatchString(m[1]) {
			out = append(out, lines[i])
			i++
			continue
		}
		end := i + 1
		for end < len(lines) {
			h := tomlHeader.FindStringSubmatch(strings.TrimRight(lines[end], "\r\n"))
			if h != nil && !pinkyTable.MatchString(h[1]) {
				break
			}
			end++
		}
		keep := end
		if end < len(lines) {
			for keep > i+1 && isTOMLTrivia(lines[keep-1]) {
				keep--
			}
		}
		out = append(out, lines[keep:end]...)
		i = end
	}
	return strings.Join(out, "")
}

func isTOMLTrivia(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// decodeTOML reads a TOML document.
func decodeTOML(text string) (map[string]any, error) {
	m := map[string]any{}
	if _, err := toml.Decode(text, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// withPinky is doc with mcp_servers.pinky set to entry (nil: removed); an
// emptied mcp_servers goes too. doc is not changed.
func withPinky(doc map[string]any, entry any) map[string]any {
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	servers := map[string]any{}
	if old, ok := doc["mcp_servers"].(map[string]any); ok {
		for k, v := range old {
			servers[k] = v
		}
	}
	if entry == nil {
		delete(servers, serverName)
	} else {
		servers[serverName] = entry
	}
	if len(servers) == 0 {
		delete(out, "mcp_servers")
	} else {
		out["mcp_servers"] = servers
	}
	return out
}

// withoutEmptyServers is doc without an empty mcp_servers table, which
// says nothing (an uninstall may leave its header behind).
func withoutEmptyServers(doc map[string]any) map[string]any {
	if s, ok := doc["mcp_servers"].(map[string]any); ok && len(s) == 0 {
		delete(doc, "mcp_servers")
	}
	return doc
}

// editTOML replaces pinky's entry in data with the tables in entryText
// ("" removes it). changed is false when nothing would change.
func editTOML(data []byte, entryText string) (out []byte, changed, lost bool, err error) {
	old, err := decodeTOML(string(data))
	if err != nil {
		return nil, false, false, fmt.Errorf("%w: not valid TOML (%v)", errMalformed, err)
	}
	if s, ok := old["mcp_servers"]; ok {
		if _, table := s.(map[string]any); !table {
			return nil, false, false, fmt.Errorf("%w: mcp_servers is not a table", errMalformed)
		}
	}
	var entry any
	if entryText != "" {
		doc, err := decodeTOML(entryText)
		if err != nil {
			return nil, false, false, fmt.Errorf("pinky's own entry is not valid TOML: %w", err)
		}
		entry = doc["mcp_servers"].(map[string]any)[serverName]
	}
	servers, _ := old["mcp_servers"].(map[string]any)
	if cur, ok := servers[serverName]; (ok && entry != nil && reflect.DeepEqual(cur, entry)) || (!ok && entry == nil) {
		return data, false, false, nil
	}
	want := withPinky(old, entry)

	text := strings.TrimRight(cutPinkyTables(string(data)), " \t\r\n")
	if entryText != "" {
		if text != "" {
			text += "\n\n"
		}
		text += entryText
	} else if text != "" {
		text += "\n"
	}
	if got, err := decodeTOML(text); err == nil && reflect.DeepEqual(withoutEmptyServers(got), want) {
		return []byte(text), true, false, nil
	}

	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(want); err != nil {
		return nil, false, false, fmt.Errorf("writing the configuration: %w", err)
	}
	if got, err := decodeTOML(b.String()); err != nil || !reflect.DeepEqual(got, want) {
		return nil, false, false, errors.New("the file could not be rewritten without changing its other entries; add the entry by hand (pinky mcp install --print)")
	}
	return b.Bytes(), true, true, nil
}
