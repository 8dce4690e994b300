package mcpserver

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// defaultWait is phone_wait_for's timeout when the call gives none.
const defaultWait = 10 * time.Second

// PhoneObserve reads the screen.
func PhoneObserve() Tool {
	return newTool(toolSpec{
		name:  agent.ToolObserve,
		title: "Read the screen",
		desc: "Read a phone's screen as text. By default you get only what changed since your last read: " +
			"lines \"+ [15] …\" appeared, \"- [9] …\" went, \"~ [7] … → …\" changed. With full, the whole screen: " +
			"an app line (app Messages (com.google.android.apps.messaging) · unlocked · 1080x2400) and one line per element, " +
			"e.g. [3] button \"Send\" or [7] field \"Message\" (focused). [3] is ref 3; refs stay the same across reads. " +
			"Ask for a screenshot only when the text is not enough, e.g. for images, maps or games. " +
			"A screen with almost no elements (a game, a canvas) comes with numbered marks on a screenshot for phone_tap mark.",
		readOnly:   true,
		idempotent: true,
		output:     observationOutput(),
		codes:      readCodes,
	}, func(ctx context.Context, c *call, a observeArgs) (*mcp.CallToolResult, error) {
		obs, err := c.sess.ObserveWith(ctx, a.Device, agent.ObserveOptions{Full: a.Full, Screenshot: a.Screenshot, Marks: a.Marks})
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	})
}

// observeArgs are phone_observe's arguments.
type observeArgs struct {
	onDevice
	Full       bool `json:"full" desc:"The whole screen, not what changed." default:"false"`
	Screenshot bool `json:"screenshot" desc:"Also a JPEG screenshot." default:"false"`
	Marks      bool `json:"marks" desc:"Numbered marks on a screenshot, on any screen." default:"false"`
}

// PhoneWaitFor waits until a text or ref shows or goes.
func PhoneWaitFor() Tool {
	return newTool(toolSpec{
		name:  agent.ToolWaitFor,
		title: "Wait for something on the screen",
		desc: "Wait until a text or an element (ref) appears on the screen, or with gone until it disappears, " +
			"e.g. a \"Sent\" label or a loading spinner. Returns what changed, or answers timeout (at most 50 s a call). " +
			"Prefer this to reading the screen again and again.",
		readOnly:   true,
		idempotent: true,
		output:     observationOutput(),
		codes:      append(append([]agent.Code{}, readCodes...), agent.CodeTimeout),
	}, func(ctx context.Context, c *call, a waitForArgs) (*mcp.CallToolResult, error) {
		req := agent.WaitRequest{Gone: a.Gone, Timeout: defaultWait}
		switch {
		case a.Text != nil && a.Ref != nil:
			return nil, badArg("text", "give text or ref, not both")
		case a.Text != nil:
			req.Text = *a.Text
		case a.Ref != nil:
			req.Ref = *a.Ref
		default:
			return nil, badArg("text", "say what to wait for: text or ref")
		}
		if a.TimeoutMS != nil {
			req.Timeout = time.Duration(*a.TimeoutMS) * time.Millisecond
		}
		obs, err := c.sess.WaitFor(ctx, a.Device, req, c.progress)
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	})
}

// waitForArgs are phone_wait_for's arguments.
type waitForArgs struct {
	onDevice
	Text      *string `json:"text" desc:"The text to wait for, as the screen text would show it." check:"len=1..1024" schema:"unlisted"`
	Ref       *int    `json:"ref" desc:"Or the element's ref: 9 for [9]; mostly with gone." check:"range=1..1000000" schema:"unlisted"`
	Gone      bool    `json:"gone" desc:"Wait until it is gone instead." default:"false"`
	TimeoutMS *int    `json:"timeout_ms" desc:"How long to wait, in ms." check:"range=1..{maxWaitMillis}" default:"{defaultWaitMillis}"`
}

// PhoneAskPerson hands the phone to the person and waits for it back.
func PhoneAskPerson() Tool {
	return newTool(toolSpec{
		name:  agent.ToolAskPerson,
		title: "Ask the person to do something on the phone",
		desc: "Hand the phone to the person with a message and wait until they hand it back, then read the whole screen. " +
			"Use it for what you must not or cannot do: sign in, enter a password or one-time code, solve a CAPTCHA, " +
			"grant a permission, or choose for them. A call waits at most 50 s: if they still have the phone then, the result says so; call again to keep waiting.",
		output:    observationOutput(),
		codes:     append(append([]agent.Code{}, readCodes...), agent.CodeTimeout),
		openWorld: true,
	}, func(ctx context.Context, c *call, a askPersonArgs) (*mcp.CallToolResult, error) {
		obs, err := c.sess.AskPerson(ctx, a.Device, a.Message, c.progress)
		if err != nil {
			return nil, err
		}
		if obs.WithPerson {
			// No screen was read: a header for the person's phone, and the
			// sentence that says how to go on.
			return textResult(obs.Device+" · with the person\n"+obs.Text, obs), nil
		}
		return observationResult(obs), nil
	})
}

// askPersonArgs are phone_ask_person's arguments.
type askPersonArgs struct {
	onDevice
	Message string `json:"message" desc:"To the person: what to do and why, in one or two sentences, e.g. \"Please sign in to your bank app, then hand the phone back.\"" check:"required,len=1..1000"`
}

// PhoneApproval waits on a pending approval.
func PhoneApproval() Tool {
	return newTool(toolSpec{
		name:  agent.ToolApproval,
		title: "Wait for the person's approval",
		desc: "When an action answers approval_pending, call this with its id (do not repeat the action): " +
			"it waits for the person's decision and, if they approve, returns what the action changed. " +
			"Each call waits at most 45 s; on approval_pending, call it again. " +
			"If they refuse, do not try the action another way; ask or stop.",
		destructive: true,
		openWorld:   true,
		output:      observationOutput(),
		codes:       append(append([]agent.Code{}, actCodes...), agent.CodeLeaseHeld),
	}, func(ctx context.Context, c *call, a approvalArgs) (*mcp.CallToolResult, error) {
		obs, err := c.sess.Approval(ctx, a.ID, c.progress)
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	})
}

// approvalArgs are phone_approval's arguments.
type approvalArgs struct {
	ID string `json:"id" desc:"The id from the approval_pending answer." check:"required,len=1..128" pattern:"^[A-Za-z0-9_-]{1,128}$" schema:"unlisted"`
}
