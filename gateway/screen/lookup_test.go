package screen

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// dialogScreen has three OK buttons, an "OK Google" text and a list.
func dialogScreen() *sdk.Screen {
	row := func(top int) sdk.Rect { return sdk.Rect{Left: 100, Top: top, Right: 900, Bottom: top + 100} }
	return &sdk.Screen{
		App: sdk.App{ID: "com.example"}, ScreenOn: true, Width: 1000, Height: 2000,
		Elements: []sdk.Element{
			el(1, 0, "android.widget.ListView", sdk.Rect{Top: 0, Right: 1000, Bottom: 1000}, func(e *sdk.Element) { e.Scrollable = true }),
			el(2, 1, "android.widget.Button", row(100), func(e *sdk.Element) { e.Text, e.Clickable = "OK", true }),
			el(3, 1, "android.widget.Button", row(300), func(e *sdk.Element) { e.Text, e.Clickable = "ok ", true }),
			el(4, 1, "android.widget.Button", row(500), func(e *sdk.Element) { e.ContentDescription, e.Clickable = "OK", true }),
			el(5, 0, "android.widget.TextView", row(1200), func(e *sdk.Element) { e.Text = "OK Google" }),
			el(6, 0, "android.widget.Button", row(1400), func(e *sdk.Element) { e.Text, e.Clickable = "Cancel", true }),
		},
	}
}

func TestByText(t *testing.T) {
	v := NewModel().Read(dialogScreen())
	tests := []struct {
		name       string
		text       string
		occurrence int
		wantRef    int
		wantKind   string
		wantCands  []int
	}{
		{"exact unique", "cancel", 0, 6, "", nil},
		{"substring when no exact", "google", 0, 5, "", nil},
		{"trims", "  Cancel ", 0, 6, "", nil},
		{"ambiguous prefers exact", "ok", 0, 0, Ambiguous, []int{2, 3, 4}},
		{"occurrence", "OK", 2, 3, "", nil},
		{"occurrence out of range", "OK", 4, 0, NotFound, []int{2, 3, 4}},
		{"not found lists labelled nodes, controls first", "Submit", 0, 0, NotFound, []int{2, 3, 4, 6, 5}},
		{"empty", " ", 0, 0, NotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := v.ByText(tt.text, tt.occurrence)
			if tt.wantKind == "" {
				if err != nil || n.Ref != tt.wantRef {
					t.Fatalf("got %d, %v; want ref %d", n.Ref, err, tt.wantRef)
				}
				return
			}
			var le *LookupError
			if !errors.As(err, &le) {
				t.Fatalf("got %v; want a *LookupError", err)
			}
			if le.Kind != tt.wantKind {
				t.Errorf("kind: got %v; want %v", le.Kind, tt.wantKind)
			}
			var got []int
			for _, c := range le.Candidates {
				got = append(got, c.Ref)
				if !strings.Contains(err.Error(), c.brief()) {
					t.Errorf("error %q: want candidate %q in it", err, c.brief())
				}
			}
			if diff := cmp.Diff(tt.wantCands, got); diff != "" {
				t.Errorf("candidates (-want +got):\n%s", diff)
			}
		})
	}
	_, err := v.ByText("ok", 0)
	want := "3 elements show \"ok\"; pass an occurrence from 1 to 3 (in this order) or use a ref:\n[2] button \"OK\"\n[3] button \"ok\"\n[4] button \"OK\""
	if err == nil || err.Error() != want {
		t.Errorf("ambiguous error: got %q; want %q", err, want)
	}
	if !errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrNotFound) {
		t.Errorf("errors.Is: got %v; want ErrAmbiguous only", err)
	}
}

func TestByTextCandidatesCapped(t *testing.T) {
	s := &sdk.Screen{ScreenOn: true, Width: 100, Height: 2000}
	for i := 1; i <= 15; i++ {
		s.Elements = append(s.Elements, el(i, 0, "android.widget.Button", sdk.Rect{Top: i * 100, Right: 100, Bottom: i*100 + 50},
			func(e *sdk.Element) { e.Text, e.Clickable = "Item", true }))
	}
	v := NewModel().Read(s)
	_, err := v.ByText("item", 0)
	var le *LookupError
	if !errors.As(err, &le) || len(le.Candidates) != maxCandidates {
		t.Errorf("got %v; want %d candidates", err, maxCandidates)
	}
	if n, err := v.ByText("item", 15); err != nil || n.Ref != 15 {
		t.Errorf("occurrence 15: got %d, %v; want ref 15", n.Ref, err)
	}
}

func TestByTextOnSim(t *testing.T) {
	p := simtest.NewPhone(t, ios)
	p.Unlock()
	p.Launch("messages")
	p.Tap("Mum")
	v := NewModel().Read(p.Screen())
	send := node(t, v, "send sms") // the description matches too
	if send.Role != RoleButton || send.Label != "Send" {
		t.Errorf("got %s; want the Send button", send.line())
	}
	_, err := v.ByText("Reply", 0)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `button "Send"`) {
		t.Errorf("got %v; want not found listing the Send button", err)
	}
}

func TestByRef(t *testing.T) {
	v := NewModel().Read(dialogScreen())
	n, err := v.ByRef(6)
	if err != nil || n.Label != "Cancel" {
		t.Errorf("ByRef(6): got %s, %v; want Cancel", n.line(), err)
	}
	_, err = v.ByRef(99)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "[99]") {
		t.Errorf("ByRef(99): got %v; want not found naming [99]", err)
	}
}

func TestByPoint(t *testing.T) {
	v := NewModel().Read(dialogScreen())
	tests := []struct {
		p      sdk.Point
		want   int
		wantOK bool
	}{
		{sdk.Point{X: 500, Y: 150}, 2, true},
		{sdk.Point{X: 500, Y: 250}, 1, true},  // in the list, between buttons
		{sdk.Point{X: 50, Y: 1250}, 0, false}, // beside the text
		{sdk.Point{X: 500, Y: 1250}, 5, true},
	}
	for _, tt := range tests {
		n, ok := v.ByPoint(tt.p)
		if ok != tt.wantOK || n.Ref != tt.want {
			t.Errorf("ByPoint(%v): got %d, %v; want %d, %v", tt.p, n.Ref, ok, tt.want, tt.wantOK)
		}
	}
	if got := node(t, v, "Cancel").Center(); got != (sdk.Point{X: 500, Y: 1450}) {
		t.Errorf("Center: got %v; want {500 1450}", got)
	}
}

func TestSame(t *testing.T) {
	p := simtest.NewPhone(t, android)
	p.Unlock()
	p.Launch("messages")
	p.Tap("Ben Okafor")
	p.Tap("compose_message_text")
	a, b := p.Screen(), p.Screen()
	renumbered := *b
	renumbered.Elements = append([]sdk.Element(nil), b.Elements...)
	for i := range renumbered.Elements {
		renumbered.Elements[i].ID += 100
		if renumbered.Elements[i].ParentID != 0 {
			renumbered.Elements[i].ParentID += 100
		}
	}
	p.Type("x")
	c := p.Screen()

	tests := []struct {
		name string
		x, y *sdk.Screen
		want bool
	}{
		{"two reads", a, b, true},
		{"renumbered", a, &renumbered, true},
		{"after typing", a, c, false},
		{"nil", a, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SameScreen(tt.x, tt.y); got != tt.want {
				t.Errorf("SameScreen: got %v; want %v", got, tt.want)
			}
			var vx, vy *View
			if tt.x != nil {
				vx = NewModel().Read(tt.x)
			}
			if tt.y != nil {
				vy = NewModel().Read(tt.y)
			}
			if got := Same(vx, vy); got != tt.want {
				t.Errorf("Same: got %v; want %v", got, tt.want)
			}
		})
	}
}
