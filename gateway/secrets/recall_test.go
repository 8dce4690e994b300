package secrets

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestRecall(t *testing.T) {
	r := NewRecall(time.Minute)
	r.Add("305 118")
	r.Add("Xk7#pq2")
	r.Add("12")     // too short: ignored
	r.Add("Hello!") // a word is remembered like a token, harmlessly
	if got := r.Len(); got != 3 {
		t.Errorf("Len: got %d; want 3", got)
	}
	tests := []struct {
		text string
		want []string
	}{
		{"305 118", []string{"305 118"}},
		{"305118", []string{"305118"}},
		{"Note: 305-118 for later", []string{"305-118"}},
		{"3 0 5 1 1 8", []string{"3 0 5 1 1 8"}},
		{"305" + zwsp + "118", []string{"305" + zwsp + "118"}},
		{"x9305118y", []string{"305118"}},
		{"٣٠٥١١٨", []string{"٣٠٥١١٨"}},
		{"３０５１１８", []string{"３０５１１８"}},
		{"pasted: Xk7#pq2.", []string{"Xk7#pq2"}},
		{"305 117", nil},
		{"305 11 is not it, 8", nil},
		{"Order #1042 ships May 12", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, sp := range r.Find(tt.text) {
			got = append(got, tt.text[sp.Start:sp.End])
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Find(%q) (-want +got):\n%s", tt.text, diff)
		}
	}

	// Codes are forgotten a while after they were last seen.
	now := time.Now()
	r.now = func() time.Time { return now.Add(59 * time.Second) }
	r.Add("305118") // seen again: remembered a minute more
	r.now = func() time.Time { return now.Add(90 * time.Second) }
	if r.Find("305118") == nil {
		t.Error("a code seen again is forgotten at its first expiry")
	}
	if r.Find("Xk7#pq2") != nil || r.Len() != 1 {
		t.Errorf("after its time a token is still remembered (Len %d)", r.Len())
	}
	r.now = func() time.Time { return now.Add(10 * time.Minute) }
	if r.Find("305118") != nil || r.Len() != 0 {
		t.Error("after its time a code is still remembered")
	}

	var none *Recall
	none.Add("305118")
	if none.Find("305118") != nil || none.Len() != 0 {
		t.Error("a nil Recall remembers")
	}
}

// TestRecallKeepsNoCode: what a Recall holds is keyed hashes, different for
// two Recalls, with no code in it.
func TestRecallKeepsNoCode(t *testing.T) {
	a, b := NewRecall(time.Minute), NewRecall(time.Minute)
	a.Add("305118")
	b.Add("305118")
	var ka, kb digest
	for k := range a.codes {
		ka = k
	}
	for k := range b.codes {
		kb = k
	}
	if ka == kb {
		t.Error("two Recalls hash a code the same: the hash is not keyed")
	}
	if strings.Contains(string(ka[:]), "305118") {
		t.Error("the hash holds the code")
	}
}

// TestPastedCode is the clipboard attack of issue 12, item 5, on the
// virtual phone: the Authenticator's copy action puts "305 118" on the
// clipboard, a long press on a Notes field pastes it, and the note shows
// it. The Authenticator's screen (blocked: read, never shown) teaches the
// phone's Recall; the note is masked like the code, and covered.
func TestPastedCode(t *testing.T) {
	p := simtest.NewPhone(t, android, simtest.Unlocked(android))
	recall := NewRecall(10 * time.Minute)
	p.Launch("com.google.android.apps.authenticator2")
	MaskScreen(p.Screen(), Options{AllCodes: true, Recall: recall})
	p.Tap("305 118") // copies the code
	p.Launch("com.google.android.keep")
	p.Tap("New note")
	note, ok := simtest.Find(p.Screen(), "edit_note_text")
	if !ok {
		t.Fatal("no note field")
	}
	p.Act(sdk.Action{Kind: sdk.ActLongPress, Point: note.Bounds.Center()})
	s := p.Screen()
	if !holds(s, "305 118") {
		t.Fatal("the paste did not put the code in the note")
	}
	// Without the Recall the note is an ordinary text.
	if out, _ := MaskScreen(s, Options{}); !holds(out, "305 118") {
		t.Fatal("the note is masked without the Recall: the test proves nothing")
	}
	out, boxes := maskChecked(t, s, Options{Recall: recall})
	if holds(out, "305 118") || holds(out, "305118") {
		t.Errorf("masked note holds the code")
	}
	field, _ := simtest.Find(s, "edit_note_text")
	if !covered(boxes, field.Bounds) {
		t.Errorf("boxes %v: the note %v is not covered", boxes, field.Bounds)
	}
	// The other code on the Authenticator's screen is remembered too.
	if recall.Find("771042") == nil {
		t.Error("the second code is not remembered")
	}
}

// TestMaskScreenTeachesRecall: codes masked on a screen are remembered, a
// number that is not one is not.
func TestMaskScreenTeachesRecall(t *testing.T) {
	r := NewRecall(time.Minute)
	s := &sdk.Screen{Elements: []sdk.Element{
		{ID: 1, Text: "Your code is 482 913"},
		{ID: 2, Text: "Order #1042"},
		{ID: 3, Class: editText, Editable: true, Hint: "6-digit code", Text: "771042"},
	}}
	MaskScreen(s, Options{Recall: r})
	for _, c := range []string{"482913", "771042"} {
		if r.Find(c) == nil {
			t.Errorf("%s is not remembered", c)
		}
	}
	if r.Find("1042") != nil {
		t.Error("an order number is remembered")
	}
}
