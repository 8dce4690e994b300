package mcpserver

// Protocol versions: what each MCP revision Pinky serves gets. Every
// session (a stream, or an HTTP session) negotiates its version at
// initialize, and is answered as that version says:
//
//	version     structuredContent, outputSchema   JSON-RPC batch (HTTP)
//	2025-03-26  no                                yes
//	2025-06-18  yes                               no
//	2025-11-25  yes                               no

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// HTTPProtocolVersions are the protocol versions served over Streamable
// HTTP, newest first: those with sessions, since leases belong to
// sessions. The stateless 2026-07-28 core has none.
var HTTPProtocolVersions = []string{
	mcp.ProtocolVersion20251125,
	mcp.ProtocolVersion20250618,
	mcp.ProtocolVersion20250326,
}

// structuredSince is the first protocol version whose tools have output
// schemas and whose results carry structured content.
const structuredSince = mcp.ProtocolVersion20250618

// batchVersion is the only protocol version served over HTTP that has
// JSON-RPC batches: 2025-06-18 dropped them.
const batchVersion = mcp.ProtocolVersion20250326

// hasStructured reports whether the protocol version of ctx's session has
// structuredContent and outputSchema. A session that negotiated no version
// (none was initialized) gets them, as every client did before versions
// were told apart.
func hasStructured(ctx context.Context) bool {
	v := server.RequestProtocolVersion(ctx)
	return v == "" || v >= structuredSince
}

// outputSchemasFor is a tool filter: for a session whose protocol version
// has no output schemas, tools/list gives each tool without its own. The
// tools are mcp-go's copies for this one answer; nothing registered changes.
func outputSchemasFor(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	if hasStructured(ctx) {
		return tools
	}
	out := make([]mcp.Tool, len(tools))
	for i, t := range tools {
		t.OutputSchema = mcp.ToolOutputSchema{}
		t.RawOutputSchema = nil
		out[i] = t
	}
	return out
}

// structuredContentFor is a tool middleware: for a session whose protocol
// version has no structured content, a result keeps only its content
// blocks, which say everything a model needs anyway.
func structuredContentFor(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := next(ctx, req)
		if res != nil && !hasStructured(ctx) {
			res.StructuredContent = nil
			res.RawStructuredContent = nil
		}
		return res, err
	}
}

// offerHTTPVersions is a before-initialize hook for HTTP: a client that asks
// for a version not served over HTTP (2024-11-05, which predates
// Streamable HTTP, or one unknown) is answered with the newest that is,
// and may then decide whether it speaks it, as the lifecycle prescribes.
func offerHTTPVersions(_ context.Context, _ any, req *mcp.InitializeRequest) {
	if !slices.Contains(HTTPProtocolVersions, req.Params.ProtocolVersion) {
		req.Params.ProtocolVersion = HTTPProtocolVersions[0]
	}
}

// refuseVersionHeader answers 400 to a request whose MCP-Protocol-Version
// header names a version not served over HTTP, and reports whether it did
// (Streamable HTTP, 2025-06-18: "invalid or unsupported" is a Bad Request).
// No header is served: clients of 2025-03-26 send none. Nor is a request
// without a session checked (initialize: the header comes after it). A
// stateless version (2026-07-28 and later) is left to mcp-go, whose answer
// lists the versions the client may use instead.
func refuseVersionHeader(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get("Mcp-Protocol-Version")
	if v == "" || r.Header.Get("Mcp-Session-Id") == "" || slices.Contains(HTTPProtocolVersions, v) || (mcp.IsValidProtocolVersion(v) && mcp.IsModernProtocol(v)) {
		return false
	}
	writeRPCError(w, mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INVALID_REQUEST,
		"Bad Request: unsupported MCP-Protocol-Version "+quoteVersion(v)+"; Pinky serves "+strings.Join(HTTPProtocolVersions, ", ")+
			" over HTTP: send the version initialize answered", nil))
	return true
}

// quoteVersion quotes a header's value for a message, cut short.
func quoteVersion(v string) string {
	if len(v) > 40 {
		v = v[:40]
	}
	return `"` + strings.Map(func(r rune) rune {
		if r < ' ' || r == '"' || r == 0x7f {
			return '?'
		}
		return r
	}, v) + `"`
}

// protocolVersionsDoc is the "Protocol versions" section of docs/mcp.md.
const protocolVersionsDoc = "\n## Protocol versions\n\n" +
	"Pinky negotiates the protocol version at `initialize` and answers each session as its version says. " +
	"Over Streamable HTTP it serves 2025-03-26, 2025-06-18 and 2025-11-25, the versions with sessions (leases belong to sessions); " +
	"a client that asks for another (2024-11-05, which predates Streamable HTTP, or the stateless 2026-07-28) is answered 2025-11-25. " +
	"Over stdio the connection is the session, so `pinky mcp` also serves 2024-11-05 and the stateless 2026-07-28.\n\n" +
	"| version | `outputSchema` in tools/list, `structuredContent` in results | JSON-RPC batch over HTTP |\n" +
	"| --- | --- | --- |\n" +
	"| 2024-11-05 (stdio only) | no | no |\n" +
	"| 2025-03-26 | no: results keep their text content only | yes: an array of requests and notifications, answered with an array of the responses " +
	"(HTTP 202 when it holds no request); `initialize` may not be part of one |\n" +
	"| 2025-06-18 | yes | no: a batch is a JSON-RPC invalid request (-32600), HTTP 400 |\n" +
	"| 2025-11-25 | yes | no, as for 2025-06-18 |\n\n" +
	"Over stdio a batch is refused under every version. Over HTTP, a request whose `MCP-Protocol-Version` header names a version " +
	"not served there is refused with HTTP 400; a request without the header is served, since clients of 2025-03-26 send none.\n\n" +
	"Origin: a request with an `Origin` header is served only when it names the daemon's own address (its listen address, or " +
	"127.0.0.1, localhost or [::1] with its port); any other origin, `null` included, gets HTTP 403 whatever the version, so that a " +
	"web page of another site cannot reach the daemon through the person's browser. Agents send no `Origin`, and are served.\n\n" +
	"Tested by `mcpserver`'s unit tests (each version over a stream and over HTTP) and by `internal/goclients`, which runs the " +
	"official Go SDK's client (`github.com/modelcontextprotocol/go-sdk`) and mcp-go's against the real binaries, over stdio and HTTP: " +
	"a task on a virtual phone, raw requests for each version (initialize, batches, structured content, Origin, the version header), " +
	"and each client asking for each version.\n"
