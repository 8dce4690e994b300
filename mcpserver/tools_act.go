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
const afterAction = " Returns what changed on the screen (a new app in front gives the whole screen). " +
	"If the answer is uncertain, the action may or may not have happened: observe before repeating it. " +
	"An action the person must approve answers approval_pending with an id: then call phone_approval."

// Keys are the key names phone_key accepts.
var Keys = []string{
	"back", "home", "recents", "enter", "delete", "forward_delete", "tab", "escape",
	"search", "menu", "volume_up", "volume_down", "volume_mute",
	"dpad_up", "dpad_down", "dpad_left", "dpad_right", "dpad_center",
}

// ScrollDirections are the directions phone_scroll accepts.
var ScrollDirections = []string{"down", "up", "left", "right"}

// actTool is an acting tool: it builds an agent.Action from its arguments
// and runs it through the Session's pipeline.
func actTool(s toolSpec, build func(c *call) (device string, a agent.Action, err error)) Tool {
	s.desc += afterAction
	s.openWorld = true
	s.output = observationOutput()
	s.codes = actCodes
	s.params = append(s.params, stringParam("approval_id",
		"Only when repeating a call that answered approval_pending: the id it gave. Repeat the call exactly, with this added.", 1, 128))
	s.run = func(ctx context.Context, c *call) (*mcp.CallToolResult, error) {
		device, a, err := build(c)
		if err != nil {
			return nil, err
		}
		a.ApprovalID, _ = c.args["approval_id"].(string)
		obs, err := c.sess.Act(ctx, device, a, c.progress)
		if err != nil {
			return nil, err
		}
		return observationResult(obs), nil
	}
	return newTool(s)
}

// PhoneTap taps an element or a point.
func PhoneTap() Tool {
	return actTool(toolSpec{
		name:  "phone_tap",
		title: "Tap",
		desc: "Tap an element: by ref from the screen text (best), by its text (with occurrence when several match), " +
			"or at a point x,y when nothing else names it.",
		params:      append([]param{deviceParam()}, targetParams("element", "text")...),
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device string `json:"device"`
			targetArgs
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		t, _, err := a.target("", "text", true)
		return a.Device, agent.Action{Kind: "tap", Target: t}, err
	})
}

// PhoneLongPress long-presses an element or a point.
func PhoneLongPress() Tool {
	return actTool(toolSpec{
		name:  "phone_long_press",
		title: "Long press",
		desc:  "Touch and hold an element (by ref, text, or point), e.g. to open a context menu or select text.",
		params: append(append([]param{deviceParam()}, targetParams("element", "text")...),
			intParam("duration_ms", "How long to hold, in milliseconds; leave out for the platform's long press.", 0, maxPressMillis)),
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device string `json:"device"`
			targetArgs
			DurationMS int `json:"duration_ms"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		t, _, err := a.target("", "text", true)
		return a.Device, agent.Action{Kind: "long_press", Target: t, Duration: time.Duration(a.DurationMS) * time.Millisecond}, err
	})
}

// PhoneSwipe swipes from one place to another.
func PhoneSwipe() Tool {
	endpoint := func(name, what string) param {
		return objectParam(name, what+": by ref, text (with occurrence), or point x,y.", targetParams("element", "text")...).req()
	}
	return actTool(toolSpec{
		name:  "phone_swipe",
		title: "Swipe",
		desc: "Drag a finger from one place to another, e.g. to swipe a list item aside, drag a slider, or move an icon. " +
			"To move through a list or page, use phone_scroll instead.",
		params: []param{
			deviceParam(),
			endpoint("from", "Where the finger goes down"),
			endpoint("to", "Where the finger lifts"),
			intParam("duration_ms", "How long the swipe takes, in milliseconds; leave out for a quick swipe. Slow swipes drag.", 0, maxPressMillis),
		},
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device     string     `json:"device"`
			From       targetArgs `json:"from"`
			To         targetArgs `json:"to"`
			DurationMS int        `json:"duration_ms"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		from, _, err := a.From.target("from.", "text", true)
		if err != nil {
			return "", agent.Action{}, err
		}
		to, _, err := a.To.target("to.", "text", true)
		if err != nil {
			return "", agent.Action{}, err
		}
		return a.Device, agent.Action{Kind: "swipe", Target: from, To: to, Duration: time.Duration(a.DurationMS) * time.Millisecond}, nil
	})
}

// PhoneScroll scrolls the screen or a container.
func PhoneScroll() Tool {
	return actTool(toolSpec{
		name:  "phone_scroll",
		title: "Scroll",
		desc: "Scroll to bring more content into view: down shows what is further down (the finger moves up). " +
			"Scrolls the screen's main list, or the container you name by ref, text, or point. " +
			"With until, keeps scrolling (a bounded number of times) until that text shows.",
		params: append(append([]param{
			deviceParam(),
			enumParam("direction", "Which way to move through the content.", ScrollDirections...).req(),
		}, targetParams("scrollable container", "text")...),
			stringParam("until", "Keep scrolling until this text shows on the screen.", 1, 1024),
		),
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device    string `json:"device"`
			Direction string `json:"direction"`
			targetArgs
			Until string `json:"until"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		t, _, err := a.target("", "text", false)
		return a.Device, agent.Action{Kind: "scroll", Direction: a.Direction, Target: t, Until: a.Until}, err
	})
}

// PhoneType types text.
func PhoneType() Tool {
	return actTool(toolSpec{
		name:  "phone_type",
		title: "Type text",
		desc: "Type text into the focused field, or into the field you name by ref, field (its text or hint), or point (it is tapped first). " +
			"replace clears the field first; submit presses the keyboard's action key (send, search, go) after typing. " +
			"Never type passwords or one-time codes: ask the person with phone_ask_person.",
		params: append(append([]param{
			deviceParam(),
			stringParam("text", "The text to type, up to 4096 characters. May be empty with replace, to clear the field.", 0, maxTypedText).req(),
		}, targetParams("field", "field")...),
			boolParam("replace", "Clear the field before typing.").withDefault(false),
			boolParam("submit", "Press the keyboard's action key (send, search, go) after typing.").withDefault(false),
		),
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device     string  `json:"device"`
			Text       string  `json:"text"`
			Ref        *int    `json:"ref"`
			Field      *string `json:"field"`
			Occurrence *int    `json:"occurrence"`
			X          *int    `json:"x"`
			Y          *int    `json:"y"`
			Replace    bool    `json:"replace"`
			Submit     bool    `json:"submit"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		if a.Text == "" && !a.Replace {
			return "", agent.Action{}, badArg("text", "must not be empty (to clear a field, pass an empty text with replace: true)")
		}
		field := targetArgs{Ref: a.Ref, Text: a.Field, Occurrence: a.Occurrence, X: a.X, Y: a.Y}
		t, _, err := field.target("", "field", false)
		return a.Device, agent.Action{Kind: "type", Target: t, Text: a.Text, Replace: a.Replace, Submit: a.Submit}, err
	})
}

// PhoneKey presses a named key.
func PhoneKey() Tool {
	return actTool(toolSpec{
		name:  "phone_key",
		title: "Press a key",
		desc: "Press a key: back (leave a screen or close the keyboard), home, recents (the app switcher), enter, delete " +
			"(backspace), and the rest of the list; dpad keys move the focus on TVs and in some apps.",
		params: []param{
			deviceParam(),
			enumParam("key", "The key to press.", Keys...).req(),
		},
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device string `json:"device"`
			Key    string `json:"key"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		return a.Device, agent.Action{Kind: "key", Key: a.Key}, nil
	})
}

func appParam(desc string) param {
	return stringParam("app", desc, 1, 256).req()
}

// PhoneLaunch brings an app to the front.
func PhoneLaunch() Tool {
	return appTool("launch", toolSpec{
		name:  "phone_launch",
		title: "Open an app",
		desc: "Open an app, or bring it to the front if it is running. Name it by id or label from phone_apps. " +
			"Opening apps directly beats finding their icons.",
		params:     []param{deviceParam(), appParam(`The app's id or label from phone_apps, e.g. "com.google.android.apps.messaging" or "Messages".`)},
		idempotent: true,
	})
}

// PhoneStopApp force-stops an app.
func PhoneStopApp() Tool {
	return appTool("stop", toolSpec{
		name:  "phone_stop_app",
		title: "Stop an app",
		desc: "Force-stop an app, e.g. when it hangs or to start it again from its first screen with phone_launch. " +
			"Unsaved work in the app is lost.",
		params:      []param{deviceParam(), appParam(`The app's id or label from phone_apps.`)},
		destructive: true,
		idempotent:  true,
	})
}

// appTool is an acting tool whose only argument besides the device is an app.
func appTool(kind string, spec toolSpec) Tool {
	return actTool(spec, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device string `json:"device"`
			App    string `json:"app"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		return a.Device, agent.Action{Kind: kind, App: a.App}, nil
	})
}

// PhoneOpenURL opens a URL or deep link.
func PhoneOpenURL() Tool {
	return actTool(toolSpec{
		name:  "phone_open_url",
		title: "Open a URL",
		desc: "Open a web address in the browser, or a deep link (e.g. geo:, tel:, or an app's own scheme) in its app. " +
			"A link may act at once (a tel: link dials), so treat it like a tap.",
		params: []param{
			deviceParam(),
			stringParam("url", "The absolute URL, with its scheme, e.g. https://example.com/menu.", 1, 4096).req(),
		},
		destructive: true,
	}, func(c *call) (string, agent.Action, error) {
		var a struct {
			Device string `json:"device"`
			URL    string `json:"url"`
		}
		if err := c.bind(&a); err != nil {
			return "", agent.Action{}, err
		}
		u, err := url.Parse(a.URL)
		if err != nil || u.Scheme == "" || strings.ContainsAny(a.URL, " \t\r\n") {
			return "", agent.Action{}, badArg("url", "must be an absolute URL with a scheme, e.g. https://example.com")
		}
		return a.Device, agent.Action{Kind: "open_url", URL: a.URL}, nil
	})
}
