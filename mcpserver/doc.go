// Package mcpserver is the agents' front door: the phone_* MCP tools over
// mark3labs/mcp-go, served on a stream (ServeStream, for `pinky mcp`'s
// stdio bridge) or over HTTP (NewHTTPHandler). Each tool has one
// constructor whose static definition (AllTools) can be listed, snapshotted
// and documented without a gateway, and one struct of arguments whose
// tags give its input schema, its checks and the values its code gets
// (args.go); a call runs against a Session, the gateway's agent side. An
// acting tool's arguments become an agent.Action that carries the tool's
// name and renders what the history keeps of them. The golden schemas in
// testdata/ and docs/mcp.md are rewritten with UPDATE_GOLDEN=1 go test
// ./mcpserver/.
package mcpserver
