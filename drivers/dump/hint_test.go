package dump

import (
	"strings"
	"testing"
)

// A real dump gives an empty field's hint as its text; the parser gives
// the field no text, so that an agent can tell it is empty.
func TestEmptyFieldHint(t *testing.T) {
	tests := []struct {
		name, node       string
		wantText, wantHi string
	}{
		{"empty field", `class="android.widget.EditText" text="Message" hint="Message"`, "", "Message"},
		{"filled field", `class="android.widget.EditText" text="hello" hint="Message"`, "hello", "Message"},
		{"no hint attribute", `class="android.widget.EditText" text="Message"`, "Message", ""},
		{"a label equal to its hint", `class="android.widget.TextView" text="Message" hint="Message"`, "Message", "Message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" ` + tt.node + ` package="p" bounds="[0,0][100,100]" /></hierarchy>`
			s, err := ParseUIAutomator(strings.NewReader(doc))
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Elements) != 1 {
				t.Fatalf("got %d elements; want 1", len(s.Elements))
			}
			if e := s.Elements[0]; e.Text != tt.wantText || e.Hint != tt.wantHi {
				t.Errorf("got text %q hint %q; want text %q hint %q", e.Text, e.Hint, tt.wantText, tt.wantHi)
			}
		})
	}
}
