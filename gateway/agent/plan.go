package agent

import (
	"slices"
	"strings"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// How an agent's action becomes driver actions, and what the history
// keeps of it.

// redactTyped keeps a password or a code typed into its field out of the
// history, even for a call that is refused. blind says the field cannot be
// known (the screen was not shown): then nothing typed is kept.
func redactTyped(args map[string]any, a Action, target *screen.Node, blind bool) {
	if a.Kind != "type" {
		return
	}
	if blind || (target != nil && (target.Password || secrets.IsPasswordField(target.Element) || secrets.IsCodeField(target.Element))) {
		args["text"] = "[redacted]"
	}
}

// plan turns an agent's action into driver actions, resolving its target
// on view once: it returns the element the action aims at too (the
// element named, the one under a point, or for typing and keys the
// focused element), nil when none.
func plan(view *screen.View, a Action) ([]sdk.Action, *screen.Node, error) {
	switch a.Kind {
	case "tap", "long_press":
		pt, n, err := resolve(view, a.Target, true)
		if err != nil {
			return nil, nil, err
		}
		kind := sdk.ActTap
		if a.Kind == "long_press" {
			kind = sdk.ActLongPress
		}
		return []sdk.Action{{Kind: kind, Point: pt, Duration: a.Duration}}, n, nil
	case "swipe":
		from, n, err := resolve(view, a.Target, true)
		if err != nil {
			return nil, nil, err
		}
		to, _, err := resolve(view, a.To, true)
		if err != nil {
			return nil, nil, err
		}
		return []sdk.Action{{Kind: sdk.ActSwipe, Point: from, To: to, Duration: a.Duration}}, n, nil
	case "pinch":
		if a.Scale < sdk.MinPinchScale || a.Scale > sdk.MaxPinchScale || a.Scale == 1000 {
			return nil, nil, Errorf(CodeInvalidArgument, "scale_percent %d: want 10 to 1000, not 100 (above 100 zooms in, below zooms out)", a.Scale/10)
		}
		pt := sdk.Point{X: view.Width / 2, Y: view.Height / 2}
		n := nodeAt(view, pt)
		if a.Target != (Target{}) {
			p, node, err := resolve(view, a.Target, false)
			if err != nil {
				return nil, nil, err
			}
			pt, n = p, node
		}
		return []sdk.Action{{Kind: sdk.ActPinch, Point: pt, Scale: a.Scale, Duration: a.Duration}}, n, nil
	case "scroll":
		dir := sdk.ScrollDirection(a.Direction)
		if !slices.Contains([]sdk.ScrollDirection{sdk.ScrollUp, sdk.ScrollDown, sdk.ScrollLeft, sdk.ScrollRight}, dir) {
			return nil, nil, Errorf(CodeInvalidArgument, "direction %q: want up, down, left or right", a.Direction)
		}
		sa := sdk.Action{Kind: sdk.ActScroll, Direction: dir}
		var n *screen.Node
		if a.Target != (Target{}) {
			pt, node, err := resolve(view, a.Target, false)
			if err != nil {
				return nil, nil, err
			}
			sa.Point, sa.HasPoint, n = pt, true, node
		}
		return []sdk.Action{sa}, n, nil
	case "type":
		var out []sdk.Action
		n := focused(view)
		if a.Target != (Target{}) {
			pt, node, err := resolve(view, a.Target, false)
			if err != nil {
				return nil, nil, err
			}
			out, n = append(out, sdk.Action{Kind: sdk.ActTap, Point: pt}), node
		}
		return append(out, sdk.Action{Kind: sdk.ActType, Text: a.Text, Replace: a.Replace, Submit: a.Submit}), n, nil
	case "key":
		k := sdk.Key(strings.ToLower(a.Key))
		if !slices.Contains(sdk.AllKeys, k) {
			names := make([]string, len(sdk.AllKeys))
			for i, k := range sdk.AllKeys {
				names[i] = string(k)
			}
			return nil, nil, Errorf(CodeInvalidArgument, "key %q: want one of %s", a.Key, strings.Join(names, ", "))
		}
		return []sdk.Action{{Kind: sdk.ActKey, Key: k}}, focused(view), nil
	case "launch", "stop":
		if a.App == "" {
			return nil, nil, Errorf(CodeInvalidArgument, "app is required: an app id or label from phone_apps")
		}
		kind := sdk.ActLaunch
		if a.Kind == "stop" {
			kind = sdk.ActStop
		}
		return []sdk.Action{{Kind: kind, AppID: a.App}}, nil, nil
	case "open_url":
		return []sdk.Action{{Kind: sdk.ActOpenURL, URL: a.URL}}, nil, nil
	}
	return nil, nil, Errorf(CodeInvalidArgument, "unknown action %q", a.Kind)
}

// resolve finds the point an action aims at, and the element there (nil
// when a point holds none). needed says whether a target is required.
func resolve(view *screen.View, t Target, needed bool) (sdk.Point, *screen.Node, error) {
	switch {
	case t.HasPoint:
		p := sdk.Point{X: t.X, Y: t.Y}
		if n, ok := view.ByPoint(p); ok {
			return p, &n, nil
		}
		return p, nil, nil
	case t.Ref != 0:
		n, err := view.ByRef(t.Ref)
		if err != nil {
			return sdk.Point{}, nil, Errorf(CodeNotFound, "%v", err)
		}
		return n.Center(), &n, nil
	case t.Text != "":
		n, err := view.ByText(t.Text, t.Occurrence)
		if err != nil {
			return sdk.Point{}, nil, Errorf(CodeNotFound, "%v", err)
		}
		return n.Center(), &n, nil
	}
	if needed {
		return sdk.Point{}, nil, Errorf(CodeInvalidArgument, "say where: a ref from the screen (ref), a visible text (text), or a point (x and y)")
	}
	return sdk.Point{}, nil, nil
}

// nodeAt is the element under p, nil when none.
func nodeAt(view *screen.View, p sdk.Point) *screen.Node {
	if n, ok := view.ByPoint(p); ok {
		return &n
	}
	return nil
}

// focused is the focused element of view (what typing and keys go to),
// nil when none.
func focused(view *screen.View) *screen.Node {
	for i := range view.Nodes {
		if view.Nodes[i].Focused {
			n := view.Nodes[i]
			return &n
		}
	}
	return nil
}

// args is what the history keeps of the action's arguments, on device:
// its tool's arguments with the defaults left out, and a swipe's end as
// to_ref, to_text or to_x and to_y.
func (a Action) args(device string) map[string]any {
	args := map[string]any{"device": device}
	t := func(name string, t Target) {
		text := name + "text"
		if a.Kind == "type" {
			text = "field" // "text" is what is typed
		}
		switch {
		case t.Mark != 0:
			args[name+"mark"] = t.Mark // the point it names is added once known (pipeline.go)
		case t.Ref != 0:
			args[name+"ref"] = t.Ref
		case t.Text != "":
			args[text] = t.Text
			if t.Occurrence > 0 {
				args[name+"occurrence"] = t.Occurrence
			}
		case t.HasPoint:
			args[name+"x"], args[name+"y"] = t.X, t.Y
		}
	}
	t("", a.Target)
	if a.Kind == "swipe" {
		t("to_", a.To)
	}
	for k, v := range map[string]any{
		"duration_ms": a.Duration.Milliseconds(), "scale_percent": int64(a.Scale / 10), "direction": a.Direction, "until": a.Until, "replace": a.Replace,
		"submit": a.Submit, "key": a.Key, "app": a.App, "url": a.URL,
	} {
		switch x := v.(type) {
		case string:
			if x != "" {
				args[k] = x
			}
		case bool:
			if x {
				args[k] = x
			}
		case int64:
			if x != 0 {
				args[k] = x
			}
		}
	}
	if a.Kind == "type" {
		args["text"] = a.Text
	}
	return args
}
