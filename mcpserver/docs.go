package mcpserver

import (
	"fmt"
	"strings"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// codeDocs says what each error code means to an agent, for docs/mcp.md.
var codeDocs = []struct {
	code agent.Code
	doc  string
}{
	{agent.CodeInvalidArgument, "An argument is missing, of the wrong type, out of range or unknown; the text names it. Fix the call."},
	{agent.CodeNotFound, "No such phone, app, file or approval. Check the id with phone_list, phone_apps or phone_files."},
	{agent.CodeLeaseHeld, "Another agent holds the phone for its task. Pick another phone with phone_list, or wait."},
	{agent.CodeNotLeased, "You have not connected to this phone (or your lease ended). Call phone_connect first."},
	{agent.CodeDeviceOffline, "The phone is not reachable. Try later or pick another phone."},
	{agent.CodeDriverRestarting, "The phone's driver is restarting. Wait a few seconds and try again."},
	{agent.CodeDeviceLocked, "The phone is locked and Pinky could not unlock it. Ask the person with phone_ask_person."},
	{agent.CodeUncertain, "The action's outcome is unknown: it may or may not have happened. Observe before repeating it."},
	{agent.CodeUnsupported, "This phone or its driver cannot do that. The text says what the call tried and why, how the person can enable it when they can, and what to do instead. Do it another way, or ask the person with phone_ask_person."},
	{agent.CodeTimeout, "What you waited for did not happen in time. Observe, then decide."},
	{agent.CodeApprovalPending, "The person has not decided yet. Do not act another way: wait with phone_approval, or repeat the exact call with approval_id."},
	{agent.CodeDenied, "The person or the policy refused it. Do not try another way; tell the user, or ask the person."},
	{agent.CodeStale, "The screen changed while the person decided, so the action was not done. Observe and decide again."},
	{agent.CodeCredentials, "Typing passwords and one-time codes is the person's job. Ask them with phone_ask_person."},
	{agent.CodePersonInControl, "The person has the phone in hand. Reads work; act again after they hand it back."},
	{agent.CodeStopped, "The person stopped you on this phone for this task. Do not use it again for the task; tell the user."},
	{agent.CodeLeaseLost, "Another gateway has leased the phone since your lease was lost (this gateway was paused or cut off); nothing reached the phone. Call phone_connect again before you go on."},
	{agent.CodeBlockedApp, "The app is blocked: you may not see or use it. Go home, or ask the person."},
	{agent.CodeScopeDenied, "Outside what you may do: read-only mode, a watch-only agent, or an app the task did not name at phone_connect. Do not act there."},
	{agent.CodeInternal, "Pinky failed; the detail is in its log. Try again; if it keeps failing, tell the person."},
}

// Docs is the tool reference, docs/mcp.md, generated from the inventory.
func Docs() string {
	var b strings.Builder
	b.WriteString("<!-- Generated from the mcpserver inventory by `UPDATE_GOLDEN=1 go test ./mcpserver/`. Do not edit. -->\n\n")
	b.WriteString("# Pinky MCP tools\n\n")
	b.WriteString("`pinky mcp` (stdio) and the daemon's Streamable HTTP endpoint serve these tools. ")
	b.WriteString("How to use them well: [SKILL.md](SKILL.md). In read-only mode (`mcpserver.Options.ReadOnly`) only the tools marked read-only are offered.\n\n")
	b.WriteString("| tool | what it does | read-only | destructive | idempotent | open world |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, t := range AllTools() {
		a := t.Def.Annotations
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s | %s | %s | %s | %s |\n", t.Def.Name, t.Def.Name, a.Title,
			yesNo(a.ReadOnlyHint), yesNo(a.DestructiveHint), yesNo(a.IdempotentHint), yesNo(a.OpenWorldHint))
	}
	b.WriteString("\n## Results and errors\n\n")
	b.WriteString("Tools that show the screen answer with one header line (`sim-android-1 · Messages · unlocked · changes since your last read`, ")
	b.WriteString("or `sim-android-1 · whole screen`) and the screen text, plus the same as structured content ")
	b.WriteString("(`device`, `text`, `full`, `app`, `locked`, `settled`, `step`); `phone_observe` with `screenshot` adds a JPEG image.\n\n")
	b.WriteString("A failure the agent should react to is a tool result with `isError: true` whose text starts with a stable code, ")
	b.WriteString("then a sentence saying what to do next, e.g. `lease_held: sim-android-1 is in use by \"Claude Code\" for the task \"book a table\". Pick another phone with phone_list, or wait.` ")
	b.WriteString("An unknown tool is a JSON-RPC error. Acting tools may also answer with the policy's codes, such as `approval_pending` (then call `phone_approval`).\n\n")
	b.WriteString("| code | meaning and what to do |\n| --- | --- |\n")
	for _, c := range codeDocs {
		fmt.Fprintf(&b, "| `%s` | %s |\n", c.code, c.doc)
	}
	b.WriteString("\nLimits: the arguments of one call are at most 64 KiB (phone_upload: its file, up to 10 MiB, in base64; over HTTP, phone_upload_link takes files up to 100 MiB in one PUT to a one-time link), typed text at most 4096 characters, ")
	b.WriteString("waits at most 50 000 ms, presses and swipes at most 10 000 ms. Calls that wait send `notifications/progress` when the request has a progress token, ")
	b.WriteString("and stop when the client cancels them.\n\n")
	fmt.Fprintf(&b, "No call waits longer than %s, because some hosts end a tool call at 60 s whatever they are told. ", agent.MaxWait)
	b.WriteString("`phone_wait_for` then answers `timeout`; `phone_ask_person` answers, as a result and not an error, that the person still has the phone ")
	b.WriteString("(structured content `with_person: true`): call it again to keep waiting, or observe later. ")
	fmt.Fprintf(&b, "An action waiting for the person's approval, and `phone_approval`, answer `approval_pending` after at most %s: call `phone_approval` again. ", agent.MaxApprovalWait)
	b.WriteString("Progress comes every few seconds while they wait.\n")

	b.WriteString(protocolVersionsDoc) // versions.go
	for _, t := range AllTools() {
		fmt.Fprintf(&b, "\n## %s\n\n", t.Def.Name)
		fmt.Fprintf(&b, "**%s.** %s\n\n", t.Def.Annotations.Title, t.Def.Description)
		if len(t.params) == 0 {
			b.WriteString("No arguments.\n\n")
		} else {
			b.WriteString("| argument | type | required | description |\n| --- | --- | --- | --- |\n")
			for _, p := range t.params {
				writeParamRows(&b, "", p)
			}
			b.WriteByte('\n')
		}
		a := t.Def.Annotations
		fmt.Fprintf(&b, "Annotations: readOnlyHint %s, destructiveHint %s, idempotentHint %s, openWorldHint %s.\n\n",
			yesNo(a.ReadOnlyHint), yesNo(a.DestructiveHint), yesNo(a.IdempotentHint), yesNo(a.OpenWorldHint))
		codes := make([]string, len(t.Codes))
		for i, c := range t.Codes {
			codes[i] = "`" + string(c) + "`"
		}
		fmt.Fprintf(&b, "Errors: %s.\n", strings.Join(codes, ", "))
	}
	return b.String()
}

func writeParamRows(b *strings.Builder, prefix string, p param) {
	req := ""
	if p.required {
		req = "yes"
	}
	fmt.Fprintf(b, "| `%s%s` | %s | %s | %s |\n", prefix, p.name, p.typ, req, escapeCell(strings.TrimSpace(p.desc+limits(p))))
	for _, c := range p.props {
		writeParamRows(b, prefix+p.name+".", c)
	}
}

// limits describes p's constraints in words for the docs.
func limits(p param) string {
	var parts []string
	if len(p.enum) > 0 {
		parts = append(parts, "one of "+strings.Join(quoteAll(p.enum), ", "))
	}
	if p.typ == "string" && len(p.enum) == 0 && p.pattern == nil {
		switch {
		case p.minLen > 0 && p.maxLen > 0:
			parts = append(parts, fmt.Sprintf("%d to %d characters", p.minLen, p.maxLen))
		case p.maxLen > 0:
			parts = append(parts, fmt.Sprintf("at most %d characters", p.maxLen))
		}
	}
	if p.pattern != nil {
		parts = append(parts, "matches `"+p.pattern.String()+"`")
	}
	if p.min != nil && p.max != nil {
		parts = append(parts, fmt.Sprintf("%d to %d", *p.min, *p.max))
	}
	if p.items != nil {
		parts = append(parts, fmt.Sprintf("strings, each %d to %d characters", p.items.minLen, p.items.maxLen))
	}
	if p.maxItems > 0 {
		parts = append(parts, fmt.Sprintf("at most %d items", p.maxItems))
	}
	if p.def != nil {
		parts = append(parts, fmt.Sprintf("default %v", p.def))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

func escapeCell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

func yesNo(b *bool) string {
	if b != nil && *b {
		return "yes"
	}
	return "no"
}
