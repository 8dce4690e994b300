package adbd

import (
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// An empty field's hint goes into text="…" as in real dumps, and hint="…"
// with it; a parser of real dumps still reads the field as empty.
func TestDumpEmptyFieldHint(t *testing.T) {
	s := &sdk.Screen{ScreenOn: true, App: sdk.App{ID: "com.example.chat"}, Width: 100, Height: 200, Elements: []sdk.Element{
		{ID: 1, Class: "android.widget.FrameLayout", Bounds: sdk.Rect{Right: 100, Bottom: 200}, Visible: true},
		{ID: 2, ParentID: 1, Class: "android.widget.EditText", Hint: "Message", Editable: true, Bounds: sdk.Rect{Right: 100, Bottom: 50}, Visible: true},
		{ID: 3, ParentID: 1, Class: "android.widget.EditText", Hint: "Name", Text: "Ann", Editable: true, Bounds: sdk.Rect{Top: 50, Right: 100, Bottom: 100}, Visible: true},
	}}
	b, err := uiAutomatorXML(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`text="Message" resource-id=""`, `hint="Message"`, `text="Ann"`, `hint="Name"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("dump %s; want %s in it", b, want)
		}
	}
	got, err := dump.ParseUIAutomator(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, e := range got.Elements {
		if e.Editable {
			texts = append(texts, e.Text+"|"+e.Hint)
		}
	}
	if strings.Join(texts, " ") != "|Message Ann|Name" {
		t.Errorf("parsed fields (text|hint): %q; want [|Message Ann|Name]", texts)
	}
}
