package sim

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

const android = "sim-android-1"

func newDefault(t testing.TB, opts ...Option) *Driver {
	t.Helper()
	w, err := DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	d := New(w, opts...)
	t.Cleanup(func() { d.Close() })
	return d
}

func screen(t testing.TB, d *Driver, id string) *sdk.Screen {
	t.Helper()
	s, err := d.Screen(context.Background(), id, 0)
	if err != nil {
		t.Fatalf("Screen(%s): %v", id, err)
	}
	checkScreen(t, s)
	return s
}

// find returns the first element whose text, description or resource id is
// want (or ends with ":id/"+want).
func find(s *sdk.Screen, want string) (sdk.Element, bool) {
	for _, e := range s.Elements {
		if e.Text == want || e.ContentDescription == want || e.ResourceID == want || strings.HasSuffix(e.ResourceID, ":id/"+want) {
			return e, true
		}
	}
	return sdk.Element{}, false
}

func act(t testing.TB, d *Driver, id string, a sdk.Action) string {
	t.Helper()
	r, err := d.Act(context.Background(), id, a)
	if err != nil {
		t.Fatalf("Act(%+v): %v", a, err)
	}
	return r.Detail
}

func tapOn(t testing.TB, d *Driver, id, what string) {
	t.Helper()
	e, ok := find(screen(t, d, id), what)
	if !ok {
		t.Fatalf("tap %q: no such element on screen", what)
	}
	act(t, d, id, sdk.Action{Kind: sdk.ActTap, Point: e.Bounds.Center()})
}

func unlock(t testing.TB, d *Driver, id string) {
	t.Helper()
	if err := d.Unlock(context.Background(), id, "1234"); err != nil {
		t.Fatal(err)
	}
}

// checkScreen asserts the contract's shape rules.
func checkScreen(t testing.TB, s *sdk.Screen) {
	t.Helper()
	seen := map[int]bool{}
	for i, e := range s.Elements {
		if e.ID <= 0 || seen[e.ID] {
			t.Fatalf("element %d: id %d not positive and unique", i, e.ID)
		}
		if e.ParentID != 0 && !seen[e.ParentID] {
			t.Fatalf("element %d: parent %d does not come earlier", e.ID, e.ParentID)
		}
		seen[e.ID] = true
		b := e.Bounds
		if b.Left < 0 || b.Top < 0 || b.Right > s.Width || b.Bottom > s.Height || b.Right < b.Left || b.Bottom < b.Top {
			t.Fatalf("element %d %q: bounds %+v outside %dx%d", e.ID, e.Text, b, s.Width, s.Height)
		}
		if !utf8.ValidString(e.Text) || !utf8.ValidString(e.ContentDescription) {
			t.Fatalf("element %d: invalid UTF-8", e.ID)
		}
	}
}
