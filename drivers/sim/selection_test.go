package sim

import (
	"context"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// TestSelectAll: the selection SelectAll makes is used up by the next text
// or delete, and dropped by any other action; without text there is none.
func TestSelectAll(t *testing.T) {
	ctx := context.Background()
	d := newDefault(t)
	unlock(t, d, android)
	act(t, d, android, sdk.Action{Kind: sdk.ActLaunch, AppID: "notes"})
	tapOn(t, d, android, "New note")
	tapOn(t, d, android, "edit_note_text")
	note := func() string {
		t.Helper()
		e, _ := find(screen(t, d, android), "edit_note_text")
		return e.Text
	}
	selectAll := func() {
		t.Helper()
		if err := d.SelectAll(ctx, android, 0); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"nothing to select", func() { selectAll(); act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "שָׁלוֹם"}) }, "שָׁלוֹם"},
		{"typing replaces the selection", func() {
			selectAll()
			act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "👨\u200d👩\u200d👧"})
		}, "👨\u200d👩\u200d👧"},
		{"the selection is used once", func() { act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "!"}) }, "👨\u200d👩\u200d👧!"},
		{"delete removes the selection", func() { selectAll(); act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyDelete}) }, ""},
		{"another key drops it", func() {
			act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "ab"})
			selectAll()
			act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyTab})
			act(t, d, android, sdk.Action{Kind: sdk.ActType, Text: "c"})
		}, "abc"},
		{"delete without a selection deletes a character", func() { act(t, d, android, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyDelete}) }, "ab"},
	}
	for _, st := range steps {
		st.do()
		if got := note(); got != st.want {
			t.Errorf("%s: the note holds %+q; want %+q", st.name, got, st.want)
		}
	}
	if err := d.SelectAll(ctx, "no-such-phone", 0); err == nil {
		t.Error("SelectAll on an unknown phone: nil error; want one")
	}
}
