package mcpserver

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/pinky-gateway/pinky/gateway/agent"
)

// afterAction is the sentence every acting tool's description ends with.
// What to do after an uncertain or approval_pending answer is not repeated
// here: the answer itself says it (and so do the server's instructions),
// at the moment the agent needs it.
const afterAction = " Returns what changed on the screen."

// Keys are the key names phone_key accepts.
var Keys = []string{
	"back", "home", "recents", "enter", "delete", "forward_delete", "tab", "escape",
	"search", "menu", "volume_up", "volume_down", "volume_mute",
	"dpad_up", "dpad_down", "dpad_left", "dpad_right", "dpad_center",
}

// ScrollDirections are the directions phone_scroll accepts.
var ScrollDirections = []string{"down", "up", "left", "right"}

// approvalArg is the argument every acting tool takes last.
type approvalArg struct {
	ApprovalID string `json:"approval_id" desc:"Only to repeat, unchanged, a call that answered approval_pending: its id." check:"len=1..128" schema:"unlisted"`
}

func (a approvalArg) approvalID() string { return a.ApprovalID }

// actArgs are the arguments of an acting tool: they name the action and
// the phone it is for.
type actArgs interface {
	action() (device string, a agent.Action, err error)
	approvalID() string
}

// actTool is an acting tool: it builds an agent.Action from its arguments,
// A, and runs it through the Session's pipeline. The action carries the
// tool's name, which names its step in the history.
func actTool[A actArgs](s toolSpec) Tool {
	s.desc += afterAction
	s.openWorld = true
	s.output = observationOutput()
	s.codes = actCodes
	return newTool(s, func(ctx context.Context, c *call, args A) (*mcp.CallToolResult, error) {
		device, a, err := args.action()
		if err != nil {
			return nil, err
		}
		a.Tool, a.ApprovalID = s.name, args.approvalID()
		obs, err := c.sess.Act(ctx, device, a, c.progress)
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	})
}

// PhoneTap taps an element or a point.
func PhoneTap() Tool {
	return actTool[tapArgs](toolSpec{
		name:        agent.ToolTap,
		title:       "Tap",
		desc:        "Tap an element: by ref (best), by text (with occurrence when several match), by mark from a screenshot with marks, or at x,y when nothing else names it.",
		destructive: true,
	})
}

// tapArgs are phone_tap's arguments.
type tapArgs struct {
	onDevice
	aim
	Mark *int `json:"mark" desc:"Else a mark's number, from the last screenshot with marks." check:"range=1..10000" schema:"unlisted"`
	approvalArg
}

func (a tapArgs) action() (string, agent.Action, error) {
	if a.Mark != nil {
		if _, named, _ := a.target("", "text", false); named {
			return "", agent.Action{}, badArg("mark", "give only one of ref, text, x and y, or mark")
		}
		return a.Device, agent.Action{Kind: "tap", Target: agent.Target{Mark: *a.Mark}}, nil
	}
	t, _, err := a.target("", "text", true)
	return a.Device, agent.Action{Kind: "tap", Target: t}, err
}

// PhoneLongPress long-presses an element or a point.
func PhoneLongPress() Tool {
	return actTool[longPressArgs](toolSpec{
		name:        agent.ToolLongPress,
		title:       "Long press",
		desc:        "Touch and hold an element (by ref, text, or x,y), e.g. to open a context menu or select text.",
		destructive: true,
	})
}

// longPressArgs are phone_long_press's arguments.
type longPressArgs struct {
	onDevice
	aim
	DurationMS int `json:"duration_ms" desc:"How long to hold, in ms; absent: the platform's long press." check:"range=0..{maxPressMillis}"`
	approvalArg
}

func (a longPressArgs) action() (string, agent.Action, error) {
	t, _, err := a.target("", "text", true)
	return a.Device, agent.Action{Kind: "long_press", Target: t, Duration: time.Duration(a.DurationMS) * time.Millisecond}, err
}

// PhoneSwipe swipes from one place to another.
func PhoneSwipe() Tool {
	return actTool[swipeArgs](toolSpec{
		name:  agent.ToolSwipe,
		title: "Swipe",
		desc: "Drag a finger from one place to another, e.g. to swipe a list item aside or drag a slider. " +
			"To move through a list or page, use phone_scroll.",
		destructive: true,
	})
}

// swipeArgs are phone_swipe's arguments.
type swipeArgs struct {
	onDevice
	From       aim `json:"from" desc:"Where the finger goes down: ref, text (with occurrence), or x,y in screen pixels, as for phone_tap." check:"required" schema:"terse"`
	To         aim `json:"to" desc:"Where the finger lifts, named the same way." check:"required" schema:"terse"`
	DurationMS int `json:"duration_ms" desc:"How long the swipe takes, in ms; absent: a quick swipe. Slow swipes drag." check:"range=0..{maxPressMillis}"`
	approvalArg
}

func (a swipeArgs) action() (string, agent.Action, error) {
	from, _, err := a.From.target("from.", "text", true)
	if err != nil {
		return "", agent.Action{}, err
	}
	to, _, err := a.To.target("to.", "text", true)
	if err != nil {
		return "", agent.Action{}, err
	}
	return a.Device, agent.Action{Kind: "swipe", Target: from, To: to, Duration: time.Duration(a.DurationMS) * time.Millisecond}, nil
}

// PhonePinch zooms in or out with two fingers.
func PhonePinch() Tool {
	return actTool[pinchArgs](toolSpec{
		name:  agent.ToolPinch,
		title: "Pinch",
		desc:  "Zoom in or out with two fingers (a map, a photo) around the element named by ref, text, or x,y; absent, the screen's centre.",
	})
}

// pinchArgs are phone_pinch's arguments.
type pinchArgs struct {
	onDevice
	ScalePercent int `json:"scale_percent" desc:"Finger spread at the end, in percent of the start: 200 zooms in 2x, 50 zooms out." check:"required,range=10..1000"`
	aim          `what:"element to zoom"`
	DurationMS   int `json:"duration_ms" desc:"In ms; absent: the driver's default." check:"range=0..{maxPressMillis}"`
	approvalArg
}

func (a pinchArgs) action() (string, agent.Action, error) {
	if a.ScalePercent == 100 {
		return "", agent.Action{}, badArg("scale_percent", "must not be 100, which zooms nothing: above 100 zooms in, below zooms out")
	}
	t, _, err := a.target("", "text", false)
	return a.Device, agent.Action{Kind: "pinch", Target: t, Scale: a.ScalePercent * 10, Duration: time.Duration(a.DurationMS) * time.Millisecond}, err
}

// PhoneScroll scrolls the screen or a container.
func PhoneScroll() Tool {
	return actTool[scrollArgs](toolSpec{
		name:  agent.ToolScroll,
		title: "Scroll",
		desc: "Scroll to bring more content into view: down shows what is further down. " +
			"Scrolls the screen's main list, or the container you name by ref, text, or x,y. " +
			"With until, keeps scrolling (a bounded number of times) until that text shows.",
	})
}

// scrollDirection is a direction phone_scroll accepts.
type scrollDirection string

func (scrollDirection) enum() []string { return ScrollDirections }

// scrollArgs are phone_scroll's arguments.
type scrollArgs struct {
	onDevice
	Direction scrollDirection `json:"direction" desc:"Which way to move through the content." check:"required"`
	aim       `what:"scrollable container"`
	Until     string `json:"until" desc:"Keep scrolling until this text shows." check:"len=1..1024" schema:"unlisted"`
	approvalArg
}

func (a scrollArgs) action() (string, agent.Action, error) {
	t, _, err := a.target("", "text", false)
	return a.Device, agent.Action{Kind: "scroll", Direction: string(a.Direction), Target: t, Until: a.Until}, err
}

// PhoneType types text.
func PhoneType() Tool {
	return actTool[typeArgs](toolSpec{
		name:  agent.ToolType,
		title: "Type text",
		desc: "Type into the focused field, or the field you name by ref, field (its text or hint), or x,y (it is tapped first). " +
			"Never type passwords or one-time codes: ask the person with phone_ask_person.",
		destructive: true,
	})
}

// typeArgs are phone_type's arguments.
type typeArgs struct {
	onDevice
	Text string `json:"text" desc:"What to type. Empty with replace, it clears the field." check:"required,len=0..{maxTypedText}"`
	fieldAim
	Replace bool `json:"replace" desc:"Clear the field first." default:"false"`
	Submit  bool `json:"submit" desc:"Then press the keyboard's action key (send, search, go)." default:"false"`
	approvalArg
}

func (a typeArgs) action() (string, agent.Action, error) {
	if a.Text == "" && !a.Replace {
		return "", agent.Action{}, badArg("text", "must not be empty (to clear a field, pass an empty text with replace: true)")
	}
	t, _, err := a.target()
	return a.Device, agent.Action{Kind: "type", Target: t, Text: a.Text, Replace: a.Replace, Submit: a.Submit}, err
}

// PhoneKey presses a named key.
func PhoneKey() Tool {
	return actTool[keyArgs](toolSpec{
		name:  agent.ToolKey,
		title: "Press a key",
		desc: "Press a key: back (leave a screen or close the keyboard), home, recents (the app switcher), delete (backspace), " +
			"and the rest of the list; dpad keys move the focus on TVs and in some apps.",
		destructive: true,
	})
}

// keyName is a key phone_key accepts.
type keyName string

func (keyName) enum() []string { return Keys }

// keyArgs are phone_key's arguments.
type keyArgs struct {
	onDevice
	Key keyName `json:"key" check:"required"`
	approvalArg
}

func (a keyArgs) action() (string, agent.Action, error) {
	return a.Device, agent.Action{Kind: "key", Key: string(a.Key)}, nil
}

// PhoneLaunch brings an app to the front.
func PhoneLaunch() Tool {
	return actTool[launchArgs](toolSpec{
		name:       agent.ToolLaunch,
		title:      "Open an app",
		desc:       "Open an app, or bring it to the front if it is running. This beats finding its icon.",
		idempotent: true,
	})
}

// launchArgs are phone_launch's arguments.
type launchArgs struct {
	onDevice
	App string `json:"app" desc:"The app's id or label from phone_apps." check:"required,len=1..256" schema:"unlisted"`
	approvalArg
}

func (a launchArgs) action() (string, agent.Action, error) {
	return a.Device, agent.Action{Kind: "launch", App: a.App}, nil
}

// PhoneStopApp force-stops an app.
func PhoneStopApp() Tool {
	return actTool[stopAppArgs](toolSpec{
		name:  agent.ToolStopApp,
		title: "Stop an app",
		desc: "Force-stop an app, e.g. when it hangs or to start it again from its first screen. " +
			"Unsaved work in the app is lost.",
		destructive: true,
		idempotent:  true,
	})
}

// stopAppArgs are phone_stop_app's arguments.
type stopAppArgs struct {
	onDevice
	App string `json:"app" desc:"The app's id or label from phone_apps." check:"required,len=1..256" schema:"unlisted"`
	approvalArg
}

func (a stopAppArgs) action() (string, agent.Action, error) {
	return a.Device, agent.Action{Kind: "stop", App: a.App}, nil
}

// PhoneOpenURL opens a URL or deep link.
func PhoneOpenURL() Tool {
	return actTool[openURLArgs](toolSpec{
		name:  agent.ToolOpenURL,
		title: "Open a URL",
		desc: "Open a web address in the browser, or a deep link (geo:, tel:, an app's own scheme) in its app. " +
			"A link may act at once (tel: dials), so treat it like a tap.",
		destructive: true,
	})
}

// openURLArgs are phone_open_url's arguments.
type openURLArgs struct {
	onDevice
	URL string `json:"url" desc:"An absolute URL with its scheme, e.g. https://example.com/menu." check:"required,len=1..4096" schema:"unlisted"`
	approvalArg
}

func (a openURLArgs) action() (string, agent.Action, error) {
	u, err := url.Parse(a.URL)
	if err != nil || u.Scheme == "" || strings.ContainsAny(a.URL, " \t\r\n") {
		return "", agent.Action{}, badArg("url", "must be an absolute URL with a scheme, e.g. https://example.com")
	}
	return a.Device, agent.Action{Kind: "open_url", URL: a.URL}, nil
}
