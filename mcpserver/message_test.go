package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func TestPrepareMessage(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tt := range []struct {
		name    string
		in      string
		want    string // the message served, when not refused
		refused bool
		id      string // the refusal's id, as JSON
		batch   bool   // refused as a batch
	}{
		{name: "plain", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, want: `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{name: "white space", in: " \t{\"id\":1}\r\n", want: `{"id":1}`},
		{name: "byte-order mark", in: "\ufeff{\"id\":1}", want: `{"id":1}`},
		{name: "byte-order mark and space", in: " \ufeff {\"id\":1}\n", want: `{"id":1}`},
		{name: "only a byte-order mark", in: "\ufeff", want: ""},
		{name: "a mark inside stays", in: "{\"a\":\"\ufeff\"}", want: "{\"a\":\"\ufeff\"}"},
		{name: "at the limit", in: `{"id":1,"params":` + nest(MaxNesting-1) + `}`, want: `{"id":1,"params":` + nest(MaxNesting-1) + `}`},
		{name: "over the limit, id first", in: `{"jsonrpc":"2.0","id":7,"method":"x","params":` + nest(MaxNesting) + `}`, refused: true, id: "7"},
		{name: "string id", in: `{"id":"abc","params":{"a":` + nest(10001) + `}}`, refused: true, id: `"abc"`},
		{name: "id after the nesting", in: `{"params":` + nest(10001) + `,"id":9}`, refused: true, id: "null"},
		{name: "object id", in: `{"id":{"a":1},"params":` + nest(10001) + `}`, refused: true, id: "null"},
		{name: "only nesting", in: nest(20000), refused: true, id: "null"},
		{name: "brackets in strings do not count", in: `{"id":1,"s":"` + strings.Repeat("[", 5000) + `\"[["}`,
			want: `{"id":1,"s":"` + strings.Repeat("[", 5000) + `\"[["}`},
		{name: "objects count", in: `{"id":2,"p":` + strings.Repeat(`{"a":`, MaxNesting) + `1` + strings.Repeat("}", MaxNesting) + `}`, refused: true, id: "2"},
		{name: "a batch", in: `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, refused: true, id: "null", batch: true},
		{name: "an empty batch", in: ` [] `, refused: true, id: "null", batch: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, refusal := PrepareMessage([]byte(tt.in))
			if (refusal != nil) != tt.refused {
				t.Fatalf("refused: got %v; want %v", refusal, tt.refused)
			}
			if !tt.refused {
				if string(got) != tt.want {
					t.Errorf("got %q; want %q", got, tt.want)
				}
				return
			}
			switch {
			case tt.batch && (refusal.Error.Code != mcp.INVALID_REQUEST || !strings.Contains(refusal.Error.Message, "batch")):
				t.Errorf("refusal %+v; want an invalid request that says batches are not taken", refusal.Error)
			case !tt.batch && (refusal.Error.Code != mcp.PARSE_ERROR || !strings.Contains(refusal.Error.Message, "nests")):
				t.Errorf("refusal %+v; want a parse error saying why", refusal.Error)
			}
			b, err := json.Marshal(refusal)
			if err != nil {
				t.Fatal(err)
			}
			var msg struct{ ID json.RawMessage }
			json.Unmarshal(b, &msg)
			if string(msg.ID) != tt.id {
				t.Errorf("refusal's id: got %s; want %s", msg.ID, tt.id)
			}
		})
	}
}

func TestAgentClientIsPrintableAndStable(t *testing.T) {
	for _, tt := range []struct {
		name, version, wantName, wantVersion string
	}{
		{"claude-code", "2.1.0", "claude-code", "2.1.0"},
		{"evil\x1b[2J\nfake card line", "1\r", `evil\x1b[2J\nfake card line`, "1"}, // spaces around are trimmed
		{"  spaced  ", "", "spaced", ""},
		{"pay \u202e001$", "\u2066x\u2069", "pay ‹U+202E›001$", "‹U+2066›x‹U+2069›"},
		{"Café 日本", "v1", "Café 日本", "v1"},
		{strings.Repeat("a", 300), "", strings.Repeat("a", maxClientName-1) + "…", ""},
	} {
		c := agentClient(mcp.Implementation{Name: tt.name, Version: tt.version})
		if c.Name != tt.wantName || c.Version != tt.wantVersion {
			t.Errorf("agentClient(%q, %q) = %q, %q; want %q, %q", tt.name, tt.version, c.Name, c.Version, tt.wantName, tt.wantVersion)
		}
		// The same client, the same name: leases resume by it.
		if again := agentClient(mcp.Implementation{Name: tt.name, Version: tt.version}); again != c {
			t.Errorf("agentClient(%q) is not stable: %q then %q", tt.name, c, again)
		}
	}
}
