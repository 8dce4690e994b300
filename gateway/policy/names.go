package policy

import (
	"slices"
	"strings"
)

// The decisions, from the most lenient to the strictest.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// The codes a Verdict carries when it is not an ordinary rule's decision.
const (
	CodeScopeDenied = "scope_denied" // read-only mode or a watch-only agent
	CodeBlockedApp  = "blocked_app"  // the app is blocked
)

// strictness orders the decisions; an unknown decision counts as deny.
func (d Decision) strictness() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	}
	return 3
}

// Actions lists the action kinds rules match on: what an agent does.
var Actions = []string{
	// Acting.
	"tap", "long_press", "swipe", "pinch", "scroll", "type", "key", "launch", "stop",
	"open_url", "files_push", "upload",
	// Reading.
	"read", "wait", "apps", "notifications", "files_list", "files_pull",
}

// readActions are the action kinds of reading tools: they work in read-only
// mode.
var readActions = map[string]bool{
	"read": true, "wait": true, "apps": true, "notifications": true,
	"files_list": true, "files_pull": true,
}

// IsRead reports whether action is the kind of a reading tool.
func IsRead(action string) bool { return readActions[action] }

// Commits lists the commit kinds that gateway/commit detects: what an action
// would commit the person to.
var Commits = []string{
	"payment", "purchase", "transfer", "send_message", "post", "call",
	"install_app", "uninstall_app", "delete", "change_setting", "open_url",
	"grant_permission", "sign_in",
}

// anyCommit in a rule's commit field matches every commit kind.
const anyCommit = "any"

// Categories lists the app categories of the app table.
var Categories = []string{
	"banking", "payments", "wallets", "password_managers", "authenticators",
	"email", "messaging", "social", "stores", "health",
}

// noCategory in apps.yaml files an app under no category.
const noCategory = "none"

func known(list []string, v string) bool { return slices.Contains(list, v) }

func oneOf(list []string) string { return strings.Join(list, ", ") }
