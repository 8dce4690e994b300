// Package mcpclients holds tests that run the official MCP clients and the
// official conformance suite against Pinky, over stdio (`pinky mcp`) and
// over Streamable HTTP (`pinky daemon --http`), with the real binaries and
// the virtual phones: the TypeScript SDK's client
// (@modelcontextprotocol/sdk), the MCP Inspector's CLI
// (@modelcontextprotocol/inspector --cli) and the conformance suite
// (@modelcontextprotocol/conformance), which reaches `pinky mcp` through the
// stdio-to-HTTP bridge supergateway.
//
// The npm packages are pinned in testdata/node (package.json and
// package-lock.json) and installed there by scripts/test-deps.sh, with
// npm's node@22 in testdata/node/.node (the Inspector and the suite need
// Node 22). Without them the tests skip, except in CI (CI=true), where
// they fail, as internal/testdep does for programs.
//
// The suite's server scenarios that apply to a tools-only server must
// pass; the others are listed, each with its reason, in
// testdata/conformance-na.txt, and a scenario in neither list fails the
// test, so that a newer suite's scenarios are looked at. What Pinky fails
// today is in knownFailures, with the reason, until it is fixed.
//
// The package has no code of its own outside its tests.
package mcpclients
