// Package goclients tests Pinky against the MCP clients Go programs use:
// the official Go SDK's (github.com/modelcontextprotocol/go-sdk) and
// mcp-go's, each over stdio (spawning `pinky mcp`, as an agent host does)
// and over Streamable HTTP (`pinky daemon --http` with its bearer token),
// with the real binaries that internal/e2e builds. Each client lists the
// tools, checks their schemas, and does a real task on a virtual phone.
//
// It also holds Pinky to what each protocol version says over HTTP
// (2025-03-26, 2025-06-18, 2025-11-25), with raw requests and with clients
// that ask for the version: the version initialize answers, JSON-RPC
// batches (2025-03-26 only), structuredContent and outputSchema (2025-06-18
// and later), the Origin rule and the MCP-Protocol-Version header.
//
// The package has tests only.
package goclients
