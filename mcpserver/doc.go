// Package mcpserver is the agents' front door: the phone_* MCP tools over
// mark3labs/mcp-go, served on a stream (ServeStream, for `pinky mcp`'s
// stdio bridge) or over HTTP (NewHTTPHandler). Each tool has one
// constructor whose static definition (AllTools) can be listed, snapshotted
// and documented without a gateway; a call runs against a Session, the
// gateway's agent side. The golden schemas in testdata/ and docs/mcp.md
// are rewritten with UPDATE_GOLDEN=1 go test ./mcpserver/.
package mcpserver
