package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// MaxNesting is how deeply arrays and objects may nest in one JSON-RPC
// message. Pinky's tools take flat arguments; the cap keeps a parser from
// spending its stack on a message built to be deep.
const MaxNesting = 1000

// bom is the UTF-8 byte-order mark.
var bom = []byte("\xef\xbb\xbf")

// PrepareMessage readies one JSON-RPC message, a line of a stream or the
// body of an HTTP request, for parsing. It drops surrounding white space
// and a leading UTF-8 byte-order mark, which some Windows tools write and
// RFC 8259 lets a parser ignore: the message is then served as if the mark
// were not there. A message that nests arrays and objects deeper than
// MaxNesting is refused with the parse error to answer (-32700), which
// carries the request's id when the message's top-level "id" could be read
// before the nesting got too deep, and null otherwise, so that a client
// waiting for its answer gets one. A batch (a JSON array of messages) is
// refused as an invalid request (-32600) that says batches are not taken:
// it is valid JSON, and a parse error would say it is not.
func PrepareMessage(msg []byte) ([]byte, *mcp.JSONRPCError) {
	msg = bytes.TrimSpace(msg)
	if rest, ok := bytes.CutPrefix(msg, bom); ok {
		msg = bytes.TrimSpace(rest)
	}
	if !tooDeep(msg, MaxNesting) {
		if len(msg) > 0 && msg[0] == '[' && json.Valid(msg) {
			e := mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST,
				"Invalid Request: this is a JSON-RPC batch, which Pinky does not take (MCP dropped batches in protocol version 2025-06-18): "+
					"send each request as a message of its own", nil)
			return nil, &e
		}
		return msg, nil
	}
	e := mcp.NewJSONRPCError(mcp.NewRequestId(topLevelID(msg)), mcp.PARSE_ERROR,
		fmt.Sprintf("Parse error: the message nests arrays and objects deeper than %d levels; send it with less nesting", MaxNesting), nil)
	return nil, &e
}

// tooDeep reports whether arrays and objects nest deeper than max in msg,
// read as JSON text (brackets inside strings do not count).
func tooDeep(msg []byte, max int) bool {
	depth := 0
	inString, escaped := false, false
	for _, c := range msg {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// topLevelID returns the id of a request object, a string or a number, if
// it comes before anything nested too deep; otherwise nil (a null id).
func topLevelID(msg []byte) any {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil
		}
		if key != "id" {
			if !skipValue(dec) {
				return nil
			}
			continue
		}
		t, err = dec.Token()
		if err != nil {
			return nil
		}
		switch v := t.(type) {
		case string:
			return v
		case json.Number:
			if n, err := v.Int64(); err == nil {
				return n
			}
		}
		return nil
	}
	return nil
}

// skipValue reads one value and reports whether it was no deeper than
// MaxNesting.
func skipValue(dec *json.Decoder) bool {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			if depth++; depth > MaxNesting {
				return false
			}
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return true
		}
	}
}
