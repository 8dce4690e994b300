package mcpserver

import (
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// devicePattern is a device id as the driver contract defines it, or, for
// a phone host's device whose id another driver listed first, that id
// qualified by the host's name (NAME/ID, the name as pki allows it).
const devicePattern = `^([A-Za-z0-9][A-Za-z0-9._-]{0,62}/)?[A-Za-z0-9._:-]{1,128}$`

// onDevice is the argument of every tool that works on one leased phone.
type onDevice struct {
	Device string `json:"device" desc:"The id from phone_list." check:"required,len=1..128" pattern:"{devicePattern}" schema:"unlisted"`
}

// aim is how an action names the element or point it aims at: ref, or
// text (with occurrence), or x and y. The what tag of the field that holds
// it names the thing aimed at.
type aim struct {
	Ref        *int    `json:"ref" desc:"The {what}'s ref: 12 for [12]." check:"range=1..1000000" schema:"unlisted"`
	Text       *string `json:"text" desc:"Else its text or description, as quoted on the screen." check:"len=1..1024" schema:"unlisted"`
	Occurrence *int    `json:"occurrence" desc:"With text: which match, from 1 in reading order; without it, the text must match once." check:"range=1..1000" schema:"unlisted"`
	X          *int    `json:"x" desc:"Else, with y: a point in screen pixels (the size on the app line, not screenshot pixels)." check:"range=0..100000" schema:"unlisted"`
	Y          *int    `json:"y" desc:"With x." check:"range=0..100000" schema:"unlisted"`
}

// fieldAim is aim for phone_type, whose text is what to type: the field
// is named by its text or hint in field.
type fieldAim struct {
	Ref        *int    `json:"ref" desc:"The field's ref: 12 for [12]." check:"range=1..1000000" schema:"unlisted"`
	Field      *string `json:"field" desc:"Else its text or hint, as quoted on the screen." check:"len=1..1024" schema:"unlisted"`
	Occurrence *int    `json:"occurrence" desc:"With field: which match, from 1 in reading order; without it, the field must match once." check:"range=1..1000" schema:"unlisted"`
	X          *int    `json:"x" desc:"Else, with y: a point in screen pixels (the size on the app line, not screenshot pixels)." check:"range=0..100000" schema:"unlisted"`
	Y          *int    `json:"y" desc:"With x." check:"range=0..100000" schema:"unlisted"`
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
		agent.CodePersonInControl, agent.CodeStopped, agent.CodeLeaseLost)
)

// observationOutput is the output schema of tools that return the screen.
// Its fields go without descriptions: the tools' descriptions and the
// result's text say what the screen text is, and the names say the rest.
func observationOutput() mcp.ToolOutputSchema {
	return outputSchema(
		[]string{"device", "text", "full"},
		stringParam("device", "", 0, 0),
		stringParam("text", "", 0, 0),
		boolParam("full", ""),
		stringParam("app", "", 0, 0),
		boolParam("locked", ""),
		boolParam("settled", ""),
		stringParam("step", "", 0, 0),
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
