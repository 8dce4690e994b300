package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// devicePattern is a device id as the driver contract defines it.
const devicePattern = `^[A-Za-z0-9._:-]{1,128}$`

func deviceParam() param {
	return patternParam("device", `The phone's id from phone_list, e.g. "sim-android-1".`, devicePattern, 128).req()
}

// targetParams are the ways to aim at an element or a point: ref, or text
// (with occurrence), or x and y. what names the thing aimed at; textName
// is the name of the text argument ("text", or "field" where text is what
// to type).
func targetParams(what, textName string) []param {
	return []param{
		intParam("ref", "The "+what+"'s ref from the screen text: 12 for [12]. Refs stay the same across reads while the element stays on screen.", 1, 1_000_000),
		stringParam(textName, "The "+what+"'s visible text or description, as quoted in the screen text, when you have no ref.", 1, 1024),
		intParam("occurrence", "With "+textName+": which match to use, counting from 1 in reading order. Without it the "+textName+" must match exactly one element.", 1, 1000),
		intParam("x", "With y: a point in screen pixels (the size on the app line, e.g. 1080x2400; not screenshot pixels). Use only when no ref or text names the "+what+".", 0, 100_000),
		intParam("y", "With x: the point's vertical position in screen pixels.", 0, 100_000),
	}
}

// targetArgs is the typed form of targetParams.
type targetArgs struct {
	Ref        *int    `json:"ref"`
	Text       *string `json:"text"`
	Occurrence *int    `json:"occurrence"`
	X          *int    `json:"x"`
	Y          *int    `json:"y"`
}

// target returns the agent.Target the arguments name, and false when they
// name none. Exactly one of ref, text and the point x,y may be given.
// prefix names the fields in errors ("" or "from."), and textName the text
// argument.
func (a targetArgs) target(prefix, textName string, required bool) (agent.Target, bool, error) {
	n := 0
	if a.Ref != nil {
		n++
	}
	if a.Text != nil {
		n++
	}
	if a.X != nil || a.Y != nil {
		n++
		if a.X == nil {
			return agent.Target{}, false, badArg(prefix+"x", "is required with %sy", prefix)
		}
		if a.Y == nil {
			return agent.Target{}, false, badArg(prefix+"y", "is required with %sx", prefix)
		}
	}
	if a.Occurrence != nil && a.Text == nil {
		return agent.Target{}, false, badArg(prefix+"occurrence", "is allowed only with %s%s", prefix, textName)
	}
	switch {
	case n > 1:
		return agent.Target{}, false, badArg(prefix+"ref", "give only one of %sref, %s%s, or %sx and %sy", prefix, prefix, textName, prefix, prefix)
	case n == 0 && required:
		return agent.Target{}, false, badArg(prefix+"ref", "say what to aim at: %sref, %s%s, or %sx and %sy", prefix, prefix, textName, prefix, prefix)
	case n == 0:
		return agent.Target{}, false, nil
	}
	var t agent.Target
	switch {
	case a.Ref != nil:
		t.Ref = *a.Ref
	case a.Text != nil:
		t.Text = *a.Text
		if a.Occurrence != nil {
			t.Occurrence = *a.Occurrence
		}
	default:
		t.X, t.Y, t.HasPoint = *a.X, *a.Y, true
	}
	return t, true, nil
}

// Codes most device tools may answer with.
var (
	readCodes = []agent.Code{
		agent.CodeInvalidArgument, agent.CodeNotFound, agent.CodeNotLeased,
		agent.CodeDeviceOffline, agent.CodeDriverRestarting, agent.CodeDeviceLocked,
		agent.CodeUnsupported, agent.CodeBlockedApp, agent.CodeInternal,
	}
	actCodes = append(append([]agent.Code{}, readCodes...), agent.CodeUncertain, agent.CodeTimeout,
		agent.CodeApprovalPending, agent.CodeDenied, agent.CodeStale, agent.CodeCredentials, agent.CodeScopeDenied,
		agent.CodePersonInControl, agent.CodeStopped)
)

// observationOutput is the output schema of tools that return the screen.
func observationOutput() mcp.ToolOutputSchema {
	return outputSchema(
		[]string{"device", "text", "full"},
		stringParam("device", "The phone's id.", 0, 0),
		stringParam("text", "The screen as text: the whole screen when full, else only what changed since your last read.", 0, 0),
		boolParam("full", "Whether text is the whole screen."),
		stringParam("app", "The app in front.", 0, 0),
		boolParam("locked", "Whether the phone is locked."),
		boolParam("settled", "False when the screen was still changing when it was read."),
		stringParam("step", "The history step recorded for this call.", 0, 0),
	)
}

// outputSchema is an output schema with the given properties. Output
// objects stay open (no additionalProperties: false) so that the gateway
// may add fields without breaking clients that validate results.
func outputSchema(required []string, props ...param) mcp.ToolOutputSchema {
	s := mcp.ToolOutputSchema{Type: "object", Properties: map[string]any{}, Required: required}
	for _, p := range props {
		s.Properties[p.name] = p.openSchema()
		s.PropertyOrder = append(s.PropertyOrder, p.name)
	}
	return s
}

// openSchema is p's schema without additionalProperties: false anywhere.
func (p param) openSchema() map[string]any {
	s := p.schema()
	var open func(m map[string]any)
	open = func(m map[string]any) {
		delete(m, "additionalProperties")
		if props, ok := m["properties"].(map[string]any); ok {
			for _, v := range props {
				if c, ok := v.(map[string]any); ok {
					open(c)
				}
			}
		}
		if items, ok := m["items"].(map[string]any); ok {
			open(items)
		}
	}
	open(s)
	return s
}
