// Package peers holds tests that run clients and tools written by others
// against the virtual phone's adb face (pinky-driver-sim --adb-listen),
// each through a private Debian adb server: @devicefarmer/adbkit,
// @yume-chan/adb with @yume-chan/scrcpy, and the peer MCP server mobile-mcp
// (@mobilenext/mobile-mcp) in its default mode (mobilecli) and its adb-only
// mode (MOBILEMCP_LEGACY_ROBOT=1). Each test checks what the client did
// against the phone's state as the face reports it (UI dumps, dumpsys).
//
// The npm packages are pinned in testdata/node (package.json and
// package-lock.json) and installed there by scripts/test-deps.sh with
// npm ci. Without node or the installed packages the tests skip, except in
// CI (CI=true), where they fail, as internal/testdep does for programs.
//
// The package has no code of its own outside its tests.
package peers
