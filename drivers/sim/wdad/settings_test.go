package wdad_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

// TestSettingsValues sets one setting at a time as WebDriverAgent's
// FBSettingsHandler reads it: unknown names and nulls are skipped, numbers
// may come as strings, seconds keep their fractions, and a value of the
// wrong kind is refused without changing anything.
func TestSettingsValues(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value any
		want  any // the setting afterwards; nil: absent
		fails bool
	}{
		{"integer", "snapshotMaxDepth", 60, 60.0, false},
		{"integer from a string", "snapshotMaxDepth", "70", 70.0, false},
		{"integer truncated", "snapshotMaxDepth", 61.9, 61.0, false},
		{"seconds keep fractions", "animationCoolOffTimeout", 0.25, 0.25, false},
		{"seconds zero", "waitForIdleTimeout", 0, 0.0, false},
		{"null skipped", "waitForIdleTimeout", nil, 10.0, false},
		{"boolean", "reduceMotion", true, true, false},
		{"boolean from a number", "reduceMotion", 1, true, false},
		{"string", "defaultActiveApplication", "com.apple.Preferences", "com.apple.Preferences", false},
		{"unknown skipped", "madeUp", 1, nil, false},
		{"number refused", "snapshotMaxDepth", map[string]any{"a": 1}, nil, true},
		{"string refused", "defaultActiveApplication", 3, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newRig(t, nil, wdad.Config{})
			sid := g.session(nil)
			path := "/session/" + sid + "/appium/settings"
			var before map[string]any
			g.ok("GET", path, nil, &before)
			body := map[string]any{"settings": map[string]any{tt.key: tt.value}}
			if tt.fails {
				g.fails("POST", path, body, http.StatusBadRequest, "invalid argument")
				var after map[string]any
				g.ok("GET", path, nil, &after)
				if after[tt.key] != before[tt.key] {
					t.Errorf("%s = %v after a refused value; want %v still", tt.key, after[tt.key], before[tt.key])
				}
				return
			}
			var answer, after map[string]any
			g.ok("POST", path, body, &answer)
			g.ok("GET", path, nil, &after)
			got, ok := after[tt.key]
			if tt.want == nil {
				if ok {
					t.Errorf("%s = %v; want no such setting", tt.key, got)
				}
				return
			}
			if got != tt.want || answer[tt.key] != tt.want {
				t.Errorf("%s = %v (answer %v); want %v", tt.key, got, answer[tt.key], tt.want)
			}
		})
	}
}

// TestSettingsBody checks the body's shape: no "settings" changes nothing,
// a "settings" that is no object is refused.
func TestSettingsBody(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	path := "/session/" + sid + "/appium/settings"
	var v map[string]any
	g.ok("POST", path, map[string]any{}, &v)
	if v["snapshotMaxDepth"] != 50.0 || v["waitForIdleTimeout"] != 10.0 || v["animationCoolOffTimeout"] != 2.0 {
		t.Errorf("defaults %v; want snapshotMaxDepth 50, waitForIdleTimeout 10, animationCoolOffTimeout 2", v)
	}
	g.fails("POST", path, map[string]any{"settings": []any{1}}, http.StatusBadRequest, "invalid argument")
}

// jsonDepth is the depth of the deepest element of a JSON source's tree.
func jsonDepth(t *testing.T, value json.RawMessage) (depth, count int) {
	t.Helper()
	type el struct {
		Children []json.RawMessage `json:"children"`
	}
	var walk func(raw json.RawMessage, d int)
	walk = func(raw json.RawMessage, d int) {
		var e el
		if err := json.Unmarshal(raw, &e); err != nil {
			t.Fatal(err)
		}
		count++
		depth = max(depth, d)
		for _, c := range e.Children {
			walk(c, d+1)
		}
	}
	walk(value, 0)
	return depth, count
}

// TestSnapshotMaxDepth cuts the source below snapshotMaxDepth, in both
// formats, as XCTest's snapshot does, and gives the whole tree back when
// the depth is raised again.
func TestSnapshotMaxDepth(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	src := "/session/" + sid + "/source?format=json"
	full, fullCount := jsonDepth(t, g.ok("GET", src, nil, nil).value)
	if full < 3 {
		t.Fatalf("the home screen's tree is %d deep; the test needs 3 or more", full)
	}
	set := func(depth int) {
		g.ok("POST", "/session/"+sid+"/appium/settings", map[string]any{"settings": map[string]any{"snapshotMaxDepth": depth}}, nil)
	}
	set(2)
	cut, cutCount := jsonDepth(t, g.ok("GET", src, nil, nil).value)
	if cut != 2 || cutCount >= fullCount {
		t.Errorf("depth 2: tree %d deep with %d elements; want 2 deep and fewer than %d", cut, cutCount, fullCount)
	}
	xml := g.sourceXML(sid)
	if n := maxIndent(xml); n != 2 {
		t.Errorf("depth 2: XML nests %d deep; want 2", n)
	}
	set(50)
	if again, n := jsonDepth(t, g.ok("GET", src, nil, nil).value); again != full || n != fullCount {
		t.Errorf("depth 50 again: %d deep, %d elements; want %d and %d", again, n, full, fullCount)
	}
}

// maxIndent is the deepest element of an FBXPath-formatted XML source, by
// its indent of two spaces a level.
func maxIndent(xml string) int {
	deepest, indent, start := 0, 0, true
	for _, c := range xml {
		switch {
		case c == '\n':
			indent, start = 0, true
		case start && c == ' ':
			indent++
		case start:
			if c == '<' {
				deepest = max(deepest, indent/2)
			}
			start = false
		}
	}
	return deepest
}
