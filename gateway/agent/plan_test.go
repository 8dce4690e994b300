package agent

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestActionArgs: what the history keeps of an action's arguments (the
// step's args, read by pinky history, the export and approval cards) is
// its tool's arguments without the defaults, whatever tool built it.
func TestActionArgs(t *testing.T) {
	const dev = "sim-android-1"
	tests := []struct {
		name string
		a    Action
		want map[string]any
	}{
		{"tap by ref", Action{Tool: ToolTap, Kind: "tap", Target: Target{Ref: 12}},
			map[string]any{"device": dev, "ref": 12}},
		{"tap by text", Action{Tool: ToolTap, Kind: "tap", Target: Target{Text: "Send", Occurrence: 2}},
			map[string]any{"device": dev, "text": "Send", "occurrence": 2}},
		{"tap at a point", Action{Tool: ToolTap, Kind: "tap", Target: Target{X: 0, Y: 900, HasPoint: true}},
			map[string]any{"device": dev, "x": 0, "y": 900}},
		{"long press", Action{Tool: ToolLongPress, Kind: "long_press", Target: Target{Ref: 4}, Duration: 1500 * time.Millisecond},
			map[string]any{"device": dev, "ref": 4, "duration_ms": int64(1500)}},
		{"swipe", Action{Tool: ToolSwipe, Kind: "swipe", Target: Target{Ref: 4}, To: Target{X: 10, Y: 900, HasPoint: true}, Duration: 300 * time.Millisecond},
			map[string]any{"device": dev, "ref": 4, "to_x": 10, "to_y": 900, "duration_ms": int64(300)}},
		{"swipe to a text", Action{Tool: ToolSwipe, Kind: "swipe", Target: Target{Text: "a"}, To: Target{Text: "b", Occurrence: 3}},
			map[string]any{"device": dev, "text": "a", "to_text": "b", "to_occurrence": 3}},
		{"pinch", Action{Tool: ToolPinch, Kind: "pinch", Target: Target{Ref: 9}, Scale: 2500, Duration: 400 * time.Millisecond},
			map[string]any{"device": dev, "ref": 9, "scale_percent": int64(250), "duration_ms": int64(400)}},
		{"pinch at the centre", Action{Tool: ToolPinch, Kind: "pinch", Scale: 500},
			map[string]any{"device": dev, "scale_percent": int64(50)}},
		{"scroll until", Action{Tool: ToolScroll, Kind: "scroll", Direction: "down", Until: "Dessert"},
			map[string]any{"device": dev, "direction": "down", "until": "Dessert"}},
		{"type into a field", Action{Tool: ToolType, Kind: "type", Target: Target{Text: "Guests"}, Text: "12", Submit: true},
			map[string]any{"device": dev, "field": "Guests", "text": "12", "submit": true}},
		{"clear a field", Action{Tool: ToolType, Kind: "type", Target: Target{Ref: 7}, Replace: true},
			map[string]any{"device": dev, "ref": 7, "text": "", "replace": true}},
		{"key", Action{Tool: ToolKey, Kind: "key", Key: "back"}, map[string]any{"device": dev, "key": "back"}},
		{"launch", Action{Tool: ToolLaunch, Kind: "launch", App: "Messages"}, map[string]any{"device": dev, "app": "Messages"}},
		{"stop an app", Action{Tool: ToolStopApp, Kind: "stop", App: "com.example"}, map[string]any{"device": dev, "app": "com.example"}},
		{"open a URL", Action{Tool: ToolOpenURL, Kind: "open_url", URL: "https://example.com"},
			map[string]any{"device": dev, "url": "https://example.com"}},
		{"the approval id is not kept", Action{Tool: ToolKey, Kind: "key", Key: "home", ApprovalID: "ap_1"},
			map[string]any{"device": dev, "key": "home"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.a.args(dev)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
		})
	}
}
