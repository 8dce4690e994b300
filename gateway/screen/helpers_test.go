package screen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

const (
	android = simtest.Android
	ios     = simtest.IOS
)

// fixtureDir holds real captured dumps (see its SOURCES.md).
const fixtureDir = "../../drivers/dump/testdata"

// fixtures lists the real captured dumps.
func fixtures(t testing.TB) []string {
	t.Helper()
	ents, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".xml") || strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	if len(names) < 10 {
		t.Fatalf("fixtures: got %d; want at least 10", len(names))
	}
	return names
}

// loadFixture parses a captured dump and returns it with its raw bytes.
func loadFixture(t testing.TB, name string) (*sdk.Screen, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var s *sdk.Screen
	if isUIAutomator(data) {
		s, err = dump.ParseUIAutomator(strings.NewReader(string(data)))
	} else {
		s, err = dump.ParseWDA(data)
	}
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s, data
}

func isUIAutomator(data []byte) bool { return strings.Contains(string(data), "<hierarchy") }

// golden compares got with testdata/name.golden; UPDATE_GOLDEN=1 rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testkit.Golden(t, filepath.Join("testdata", name+".golden"), []byte(got))
}

// flatElement is one element of the naive form an agent could be given: a
// flat JSON list of every element with its fields.
type flatElement struct {
	ID            int    `json:"id"`
	ParentID      int    `json:"parent_id,omitempty"`
	Class         string `json:"class,omitempty"`
	Text          string `json:"text,omitempty"`
	Description   string `json:"content_description,omitempty"`
	ResourceID    string `json:"resource_id,omitempty"`
	Hint          string `json:"hint,omitempty"`
	Value         string `json:"value,omitempty"`
	Bounds        [4]int `json:"bounds"`
	Clickable     bool   `json:"clickable,omitempty"`
	LongClickable bool   `json:"long_clickable,omitempty"`
	Focusable     bool   `json:"focusable,omitempty"`
	Focused       bool   `json:"focused,omitempty"`
	Editable      bool   `json:"editable,omitempty"`
	Password      bool   `json:"password,omitempty"`
	Scrollable    bool   `json:"scrollable,omitempty"`
	Checkable     bool   `json:"checkable,omitempty"`
	Checked       bool   `json:"checked,omitempty"`
	Enabled       bool   `json:"enabled,omitempty"`
	Selected      bool   `json:"selected,omitempty"`
	Visible       bool   `json:"visible,omitempty"`
}

// flatJSON is the size baseline: every element of s as flat JSON.
func flatJSON(t testing.TB, s *sdk.Screen) []byte {
	t.Helper()
	list := make([]flatElement, len(s.Elements))
	for i, e := range s.Elements {
		b := e.Bounds
		list[i] = flatElement{e.ID, e.ParentID, e.Class, e.Text, e.ContentDescription, e.ResourceID, e.Hint, e.Value,
			[4]int{b.Left, b.Top, b.Right, b.Bottom}, e.Clickable, e.LongClickable, e.Focusable, e.Focused, e.Editable,
			e.Password, e.Scrollable, e.Checkable, e.Checked, e.Enabled, e.Selected, e.Visible}
	}
	data, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// node returns the only node of v whose text matches, failing the test otherwise.
func node(t testing.TB, v *View, text string) Node {
	t.Helper()
	n, err := v.ByText(text, 0)
	if err != nil {
		t.Fatalf("ByText(%q): %v\n%s", text, err, v.Text())
	}
	return n
}

// refs maps each labelled node's label to its ref.
func refs(v *View) map[string]int {
	m := map[string]int{}
	for _, n := range v.Nodes {
		m[string(n.Role)+" "+n.Label+" "+n.Hint] = n.Ref
	}
	return m
}
