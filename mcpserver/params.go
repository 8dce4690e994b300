package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// devicePattern is a device id as the driver contract defines it.
const devicePattern = `^[A-Za-z0-9._:-]{1,128}$`

// onDevice is the argument of every tool that works on one leased phone.
type onDevice struct {
	Device string `json:"device" desc:"The phone's id from phone_list, e.g. \"sim-android-1\"." check:"required,len=1..128" pattern:"{devicePattern}"`
}

// aim is how an action names the element or point it aims at: ref, or
// text (with occurrence), or x and y. The what tag of the field that holds
// it names the thing aimed at.
type aim struct {
	Ref        *int    `json:"ref" desc:"The {what}'s ref from the screen text: 12 for [12]. Refs stay the same across reads while the element stays on screen." check:"range=1..1000000"`
	Text       *string `json:"text" desc:"The {what}'s visible text or description, as quoted in the screen text, when you have no ref." check:"len=1..1024"`
	Occurrence *int    `json:"occurrence" desc:"With text: which match to use, counting from 1 in reading order. Without it the text must match exactly one element." check:"range=1..1000"`
	X          *int    `json:"x" desc:"With y: a point in screen pixels (the size on the app line, e.g. 1080x2400; not screenshot pixels). Use only when no ref or text names the {what}." check:"range=0..100000"`
	Y          *int    `json:"y" desc:"With x: the point's vertical position in screen pixels." check:"range=0..100000"`
}

// fieldAim is aim for phone_type, whose text is what to type: the field
// is named by its text or hint in field.
type fieldAim struct {
	Ref        *int    `json:"ref" desc:"The field's ref from the screen text: 12 for [12]. Refs stay the same across reads while the element stays on screen." check:"range=1..1000000"`
	Field      *string `json:"field" desc:"The field's visible text or description, as quoted in the screen text, when you have no ref." check:"len=1..1024"`
	Occurrence *int    `json:"occurrence" desc:"With field: which match to use, counting from 1 in reading order. Without it the field must match exactly one element." check:"range=1..1000"`
	X          *int    `json:"x" desc:"With y: a point in screen pixels (the size on the app line, e.g. 1080x2400; not screenshot pixels). Use only when no ref or text names the field." check:"range=0..100000"`
	Y          *int    `json:"y" desc:"With x: the point's vertical position in screen pixels." check:"range=0..100000"`
}

// target is the field the arguments name, if any.
func (f fieldAim) target() (agent.Target, bool, error) {
	return aim{Ref: f.Ref, Text: f.Field, Occurrence: f.Occurrence, X: f.X, Y: f.Y}.target("", "field", false)
}

// target returns the agent.Target the arguments name, and false when they
// name none. Exactly one of ref, text and the point x,y may be given.
// prefix names the fields in errors ("" or "from."), and textName the text
// argument.
func (a aim) target(prefix, textName string, required bool) (agent.Target, bool, error) {
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
