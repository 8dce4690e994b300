package wdad

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

func TestMarshal(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, "null"},
		{"object", map[string]any{"a": 1, "b": "x"}, "{\n  \"a\" : 1,\n  \"b\" : \"x\"\n}"},
		{"colons in strings stay", map[string]any{"k:y": "v: \"w\":"}, "{\n  \"k:y\" : \"v: \\\"w\\\":\"\n}"},
		{"escaped backslash before a quote", map[string]any{"a": `\`, "b": 2}, "{\n  \"a\" : \"\\\\\",\n  \"b\" : 2\n}"},
		{"no HTML escaping", "<a&b>", `"<a&b>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(marshal(tt.in))
			if got != tt.want {
				t.Errorf("marshal(%#v) = %q; want %q", tt.in, got, tt.want)
			}
			var back any
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Errorf("marshal output does not parse: %v", err)
			}
		})
	}
}

func TestPointerTouches(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	move := func(x, y, ms float64) w3cAction {
		return w3cAction{Type: "pointerMove", X: f(x), Y: f(y), Duration: f(ms)}
	}
	rel := func(x, y float64) w3cAction {
		return w3cAction{Type: "pointerMove", X: f(x), Y: f(y), Origin: json.RawMessage(`"pointer"`)}
	}
	down, up := w3cAction{Type: "pointerDown"}, w3cAction{Type: "pointerUp"}
	pause := func(ms float64) w3cAction { return w3cAction{Type: "pause", Duration: f(ms)} }
	tests := []struct {
		name    string
		acts    []w3cAction
		want    []touch
		wantErr bool
	}{
		{"tap", []w3cAction{move(10, 20, 0), down, pause(50), up},
			[]touch{{kind: sdk.ActTap, fx: 10, fy: 20}}, false},
		{"a small wobble is still a tap", []w3cAction{move(10, 20, 0), down, move(13, 22, 10), up},
			[]touch{{kind: sdk.ActTap, fx: 10, fy: 20}}, false},
		{"long press", []w3cAction{move(10, 20, 0), down, pause(600), up},
			[]touch{{kind: sdk.ActLongPress, fx: 10, fy: 20, duration: 600 * time.Millisecond}}, false},
		{"swipe", []w3cAction{move(100, 700, 0), down, move(100, 200, 250), up},
			[]touch{{kind: sdk.ActSwipe, fx: 100, fy: 700, tx: 100, ty: 200, duration: 250 * time.Millisecond}}, false},
		{"relative move", []w3cAction{move(100, 100, 0), down, rel(0, 50), up},
			[]touch{{kind: sdk.ActSwipe, fx: 100, fy: 100, tx: 100, ty: 150}}, false},
		{"two taps", []w3cAction{move(1, 1, 0), down, up, move(50, 50, 0), down, up},
			[]touch{{kind: sdk.ActTap, fx: 1, fy: 1}, {kind: sdk.ActTap, fx: 50, fy: 50}}, false},
		{"cancel drops the touch", []w3cAction{move(1, 1, 0), down, {Type: "pointerCancel"}, up}, nil, false},
		{"up without down", []w3cAction{move(1, 1, 0), up}, nil, false},
		{"down before any move", []w3cAction{down, up}, nil, true},
		{"move without y", []w3cAction{{Type: "pointerMove", X: f(1)}}, nil, true},
		{"negative pause", []w3cAction{pause(-1)}, nil, true},
		{"unknown origin", []w3cAction{{Type: "pointerMove", X: f(1), Y: f(1), Origin: json.RawMessage(`"screen"`)}}, nil, true},
		{"key action in a pointer source", []w3cAction{{Type: "keyDown", Value: "a"}}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := pointerTouches(0, tt.acts)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v; want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(touch{})); diff != "" {
				t.Errorf("touches (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWDAValues(t *testing.T) {
	tests := []struct {
		name              string
		n                 node
		wantName          string
		wantNameOK        bool
		wantValue         string
		wantValueOK       bool
		wantLabel         string
		wantLabelOK       bool
		wantAccessibleish bool
	}{
		{"static text value is its label", node{typ: "XCUIElementTypeStaticText", label: "Hi"}, "Hi", true, "Hi", true, "Hi", true, true},
		{"identifier wins the name", node{typ: "XCUIElementTypeButton", identifier: "send", label: "Send"}, "send", true, "", false, "Send", true, true},
		{"selected button", node{typ: "XCUIElementTypeButton", label: "Tab", selected: true}, "Tab", true, "1", true, "Tab", true, true},
		{"switch off", node{typ: "XCUIElementTypeSwitch", label: "Wi-Fi"}, "Wi-Fi", true, "0", true, "Wi-Fi", true, true},
		{"empty field shows its placeholder", node{typ: "XCUIElementTypeTextField", placeholder: "To"}, "", false, "To", true, "", true, true},
		{"field with text", node{typ: "XCUIElementTypeTextField", value: "ana@", placeholder: "To"}, "", false, "ana@", true, "", true, true},
		{"bare container", node{typ: "XCUIElementTypeOther"}, "", false, "", false, "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, nameOK := tt.n.wdName()
			value, valueOK := tt.n.wdValue()
			label, labelOK := tt.n.wdLabel()
			got := []any{name, nameOK, value, valueOK, label, labelOK, tt.n.accessible()}
			want := []any{tt.wantName, tt.wantNameOK, tt.wantValue, tt.wantValueOK, tt.wantLabel, tt.wantLabelOK, tt.wantAccessibleish}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("name, ok, value, ok, label, ok, accessible (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCGRect(t *testing.T) {
	if got := cgRect(0, 23, 393, 15.333333333333334); got != "{{0, 23}, {393, 15.333333333333334}}" {
		t.Errorf("cgRect = %q", got)
	}
}
