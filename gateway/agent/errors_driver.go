package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// definiteErrors are the driver's categories that say an action did not
// happen (SPEC.md section 2, "Action outcome"): the driver refused it
// before it reached the phone.
var definiteErrors = []error{
	sdk.ErrInvalidArgument, sdk.ErrDeviceNotFound, sdk.ErrAppNotFound, sdk.ErrFileNotFound,
	sdk.ErrUnsupported, sdk.ErrDeviceUnauthorized, sdk.ErrLocked, sdk.ErrScreenOff,
	sdk.ErrNoFocus, sdk.ErrScreenProtected, sdk.ErrUnlockMethod, sdk.ErrFailedPrecondition,
	sdk.ErrWrongPIN, sdk.ErrStorageFull, sdk.ErrResourceExhausted, sdk.ErrLeaseLost,
}

// definite reports whether a driver error means the action did not run.
func definite(err error) bool {
	for _, e := range definiteErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	var ae *Error
	return errors.As(err, &ae)
}

// fromDriver turns a driver error into what the agent reads. acting says
// whether an action may have reached the phone. The conditions a driver
// names keep its message (driverMessage), so that the agent learns which
// field, which file or which limit; a bare FAILED_PRECONDITION or
// RESOURCE_EXHAUSTED names no condition, and the message is all there is.
func fromDriver(device string, err error, acting bool) error {
	if err == nil {
		return nil
	}
	if e, ok := AsError(err); ok {
		return e
	}
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		if acting {
			return Errorf(CodeUncertain, "the call was cancelled while the action ran on %s: it may or may not have happened; observe before repeating", device)
		}
		return err
	case errors.Is(err, sdk.ErrLeaseLost):
		// The phone's host refused the call before it reached the phone.
		return Errorf(CodeLeaseLost, "your lease on %s was lost: another gateway has leased the phone since, and nothing reached it. Connect to it again with phone_connect before you go on", device)
	case errors.Is(err, sdk.ErrInvalidArgument):
		return Errorf(CodeInvalidArgument, "%s", driverMessage(err))
	case errors.Is(err, sdk.ErrLocked):
		return Errorf(CodeDeviceLocked, "%s is locked; ask the person to unlock it with phone_ask_person", device)
	case errors.Is(err, sdk.ErrScreenOff):
		return Errorf(CodeDeviceLocked, "the screen of %s is off; press the wake key with phone_key, or ask the person", device)
	case errors.Is(err, sdk.ErrUnlockMethod):
		return Errorf(CodeDeviceLocked, "%s is not locked with a PIN that Pinky can enter (%s); ask the person to unlock it with phone_ask_person", device, driverMessage(err))
	case errors.Is(err, sdk.ErrNoFocus):
		return Errorf(CodeInvalidArgument, "no text field has the focus on %s (%s); tap the field first, then type", device, driverMessage(err))
	case errors.Is(err, sdk.ErrScreenProtected):
		return Errorf(CodeUnsupported, "the app in front of %s does not let its screen be captured (%s); observe without a screenshot", device, driverMessage(err))
	case errors.Is(err, sdk.ErrStorageFull):
		return Errorf(CodeUnsupported, "the storage of %s is full (%s): nothing was written; ask the person to free some space", device, driverMessage(err))
	case errors.Is(err, sdk.ErrFailedPrecondition), errors.Is(err, sdk.ErrResourceExhausted):
		return Errorf(CodeUnsupported, "%s cannot do that now: %s", device, driverMessage(err))
	case errors.Is(err, sdk.ErrAppNotFound):
		return Errorf(CodeNotFound, "%s; phone_apps lists the apps", driverMessage(err))
	case errors.Is(err, sdk.ErrFileNotFound):
		return Errorf(CodeNotFound, "%s; phone_files lists the folder", driverMessage(err))
	case errors.Is(err, sdk.ErrUnsupported):
		// refused says more once the call that met it is known.
		e := Errorf(CodeUnsupported, "%s cannot do that: %s", device, driverMessage(err))
		e.refusal = err
		return e
	case errors.Is(err, sdk.ErrTimeout):
		// The driver, or the driver host's deadline, gave up on the call.
		if acting {
			return Errorf(CodeUncertain, "the driver of %s did not answer in time while the action ran: it may or may not have happened; observe before repeating", device)
		}
		return Errorf(CodeTimeout, "the driver of %s did not answer in time (%s); try again in a few seconds. A driver that keeps missing its deadlines is restarted", device, driverMessage(err))
	case errors.Is(err, sdk.ErrDriverGone), errors.Is(err, sdk.ErrDeviceOffline):
		if acting {
			return Errorf(CodeUncertain, "%s went away while the action ran: it may or may not have happened; observe before repeating", device)
		}
		if errors.Is(err, sdk.ErrDriverGone) {
			return Errorf(CodeDriverRestarting, "the driver of %s is restarting; try again in a few seconds", device)
		}
		return Errorf(CodeDeviceOffline, "%s is offline; wait, then observe", device)
	case errors.Is(err, sdk.ErrDeviceNotFound):
		return Errorf(CodeDeviceOffline, "%s is not listed by its driver now; wait, then observe", device)
	}
	if acting {
		return Errorf(CodeUncertain, "the driver of %s failed during the action (%s): it may or may not have happened; observe before repeating", device, driverMessage(err))
	}
	return err
}

// maxDriverMessage caps, in characters, the driver's sentence in what an
// agent reads.
const maxDriverMessage = 300

// driverMessage is the driver's sentence without the category suffix, made
// safe to show: the driver is another program, and its text reaches the
// agent and the person's history, so control characters, bidirectional
// controls and invalid bytes become visible escapes (safetext.Line) and a
// long sentence is cut. An empty message becomes the category's own text.
func driverMessage(err error) string {
	return safeDriverText(driverSentence(err))
}

// driverSentence is the driver's sentence without the category suffix, as
// the driver wrote it (not yet safe to show); an empty one is the
// category's own text.
func driverSentence(err error) string {
	msg := err.Error()
	c := sdk.Category(err)
	msg = strings.TrimSpace(strings.TrimSuffix(msg, ": "+c.Error()))
	if msg == "" {
		msg = c.Error()
	}
	return msg
}

// safeDriverText is a driver's text made safe to show: control characters,
// bidirectional controls and invalid bytes become visible escapes
// (safetext.Line), and it is cut at maxDriverMessage runes.
func safeDriverText(s string) string {
	s = safetext.Line(s)
	if r := []rune(s); len(r) > maxDriverMessage {
		s = string(r[:maxDriverMessage-1]) + "…"
	}
	return s
}

// attempt is what an agent's call asked of a phone, for the answer to a
// driver that refuses it at call time (sdk.ErrUnsupported that the
// phone's capabilities did not foresee).
type attempt struct {
	what    string         // after "cannot": "type that text"; from lacks when need is set
	need    sdk.Capability // the capability the call needs, "" when none applies
	instead string         // what the agent does next, a clause that starts with a verb; from lacks when need is set
}

// attempts names, for each tool, what its call tries. A tool that needs a
// capability takes lacks' wording for it.
var attempts = map[string]attempt{
	ToolObserve:       {what: "take a screenshot", instead: "observe without a screenshot"},
	ToolTap:           {what: "tap", instead: "reach the same control another way, such as a long press or a key, or ask the person with phone_ask_person"},
	ToolLongPress:     {what: "long press", instead: "look for a menu or button that offers the same, or ask the person with phone_ask_person"},
	ToolSwipe:         {what: "swipe", instead: "scroll with phone_scroll, or tap the control that moves the screen"},
	ToolScroll:        {what: "scroll", instead: "swipe with phone_swipe instead (a swipe up scrolls down), or tap the control that moves the screen"},
	ToolPinch:         {need: sdk.CapPinch},
	ToolType:          {what: "type that text", instead: "observe first (a tap that focused the field may have run), then type it in parts the phone can take, or ask the person with phone_ask_person"},
	ToolKey:           {what: "press that key", instead: "use the app's own control for it, such as its back button or a swipe from the left edge, or go home with phone_key"},
	ToolApps:          {need: sdk.CapApps},
	ToolLaunch:        {what: "launch that app", instead: "open it from the home screen: go home with phone_key, then tap its icon"},
	ToolStopApp:       {what: "stop that app", instead: "leave it with phone_key (home) and go on"},
	ToolOpenURL:       {what: "open that link", instead: "launch the browser with phone_launch and type the address into its address bar"},
	ToolNotifications: {need: sdk.CapNotifications},
	ToolFiles:         {need: sdk.CapFiles},
	ToolConnect:       {need: sdk.CapDisplays},
}

// refused is the answer to the call c when its driver refused it as
// unsupported at call time (m.refused); any other error is returned as it
// is.
func (c *call) refused(err error) error {
	return c.s.m.refused(c.p, c.device, c.tool, err)
}

// refused is the answer to a call of tool on device (phone p) when err is
// its driver's refusal as unsupported at call time (fromDriver): what the
// call tried, the driver's message, and what the agent does next. When the
// phone now lists why it lacks the capability the call needs, the answer
// is lacks.go's, with the person's fix. Any other error is returned as it
// is.
func (m *Manager) refused(p *phone, device, tool string, err error) error {
	e, ok := AsError(err)
	if !ok || e.refusal == nil {
		return err
	}
	a, known := attempts[tool]
	if a.need != "" {
		if foreseen, ok := m.lacking(p, device, a.need); ok {
			return foreseen
		}
		l := lacks[a.need]
		a.what, a.instead = l.what, l.instead
	}
	if !known {
		a = attempt{what: "do that", instead: "observe, then reach the same result another way, or ask the person with phone_ask_person"}
	}
	said := clause(driverSentence(e.refusal))
	return &Error{Code: CodeUnsupported, Message: device + " cannot " + a.what + ": " + said + ". " + upper(a.instead)}
}
