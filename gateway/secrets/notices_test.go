package secrets

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// salary is the blocked Bank's notification of issue 12, item 6.
const salary = "Salary received +$1,850.00, balance $4,281.08"

// withNotes gives every phone of the default world more notifications.
func withNotes(notes ...sim.NotifySpec) simtest.Option {
	return simtest.Edit(func(w *sim.World) {
		for _, p := range w.Phones {
			p.Notifications = append(p.Notifications, notes...)
		}
	})
}

func hideBank(n Notice) bool { return n.App == "Bank" }

// leaks reports the first text of s that holds any of secrets.
func leaks(s *sdk.Screen, secrets ...string) string {
	for _, e := range s.Elements {
		for _, f := range []string{e.Text, e.ContentDescription, e.Value, e.Hint} {
			for _, x := range secrets {
				if strings.Contains(f, x) {
					return f
				}
			}
		}
	}
	return ""
}

// TestHideNotifications: a blocked app's notification shows nothing of
// itself on every surface of the virtual phones (the lock screen, the
// shade, a heads-up banner over an app), and its row is covered; the other
// notifications stay readable.
func TestHideNotifications(t *testing.T) {
	ctx := context.Background()
	for _, dev := range []string{android, "sim-ios-1"} {
		d := simtest.New(t, withNotes(sim.NotifySpec{App: "bank", Title: "Bank", Text: salary}))
		surfaces := []struct {
			name string
			open func(t *testing.T)
		}{
			{"lock screen", func(t *testing.T) {}},
			{"shade", func(t *testing.T) {
				if err := d.Unlock(ctx, dev, "1234"); err != nil {
					t.Fatal(err)
				}
				if _, err := d.Act(ctx, dev, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: 540, Y: 10}, To: sdk.Point{X: 540, Y: 1200}}); err != nil {
					t.Fatal(err)
				}
			}},
		}
		for _, sf := range surfaces {
			t.Run(dev+"/"+sf.name, func(t *testing.T) {
				sf.open(t)
				s, err := d.Screen(ctx, dev, 0)
				if err != nil {
					t.Fatal(err)
				}
				if leaks(s, "Salary") == "" {
					t.Fatalf("the phone does not show the notification to begin with: %+v", Notices(s))
				}
				out, boxes := maskChecked(t, s, Options{Hide: hideBank})
				if f := leaks(out, "Salary", "1,850", "4,281", "Bank ·"); f != "" {
					t.Errorf("masked screen shows %q", f)
				}
				if leaks(out, HiddenNotice) == "" {
					t.Errorf("masked screen does not say a notification was hidden")
				}
				if leaks(s, "Did you get the tickets?") != "" && leaks(out, "Did you get the tickets?") == "" {
					t.Errorf("Ben's message was hidden too")
				}
				var row sdk.Rect
				for _, e := range s.Elements {
					if strings.HasSuffix(e.ResourceID, "notification") && strings.HasPrefix(e.ContentDescription, "Bank") {
						row = e.Bounds
					}
				}
				if row.Empty() || !covered(boxes, row) {
					t.Errorf("boxes %v: the Bank's row %v is not covered", boxes, row)
				}
			})
		}
	}

	t.Run("heads-up", func(t *testing.T) {
		p := simtest.NewPhone(t, android, withNotes(sim.NotifySpec{App: "bank", Title: "Bank", Text: salary, After: 300 * time.Millisecond}),
			simtest.Unlocked(android))
		p.Launch("com.google.android.keep")
		var s *sdk.Screen
		testkit.Poll(3*time.Second, func() bool { s = p.Screen(); return leaks(s, "Salary") != "" })
		if leaks(s, "Salary") == "" {
			t.Fatal("no heads-up banner came")
		}
		if s.App.ID != "com.google.android.keep" {
			t.Errorf("app in front: got %s; want Notes under the banner", s.App.ID)
		}
		out, boxes := maskChecked(t, s, Options{Hide: hideBank})
		if f := leaks(out, "Salary", "1,850"); f != "" {
			t.Errorf("masked banner shows %q", f)
		}
		if len(boxes) != 1 || boxes[0].Top > 100 {
			t.Errorf("boxes %v: want the banner at the top covered", boxes)
		}
	})
}

// TestNoticeRows reads the notifications of screens as phones give them.
func TestNoticeRows(t *testing.T) {
	el := func(id, parent int, rid, text string, r sdk.Rect, f ...func(*sdk.Element)) sdk.Element {
		e := sdk.Element{ID: id, ParentID: parent, ResourceID: rid, Text: text, Bounds: r, Visible: true}
		for _, g := range f {
			g(&e)
		}
		return e
	}
	full := sdk.Rect{Right: 1080, Bottom: 2400}
	rowA := sdk.Rect{Left: 20, Top: 300, Right: 1060, Bottom: 500}
	rowB := sdk.Rect{Left: 20, Top: 520, Right: 1060, Bottom: 720}
	tests := []struct {
		name string
		s    *sdk.Screen
		want []Notice
	}{
		{"android shade", &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
			el(1, 0, "com.android.systemui:id/notification_stack_scroller", "", full, func(e *sdk.Element) { e.Scrollable = true }),
			el(2, 1, "com.android.systemui:id/expandableNotificationRow", "", rowA),
			el(3, 2, "android:id/app_name_text", "Bank", rowA),
			el(4, 2, "android:id/time", "5m", rowA),
			el(5, 2, "android:id/title", "Salary", rowA),
			el(6, 2, "android:id/text", salary, rowA),
			el(7, 1, "com.android.systemui:id/expandableNotificationRow", "", rowB),
			el(8, 7, "android:id/app_name_text", "Messages", rowB),
			el(9, 7, "android:id/title", "Ben", rowB),
			el(10, 7, "android:id/big_text", "Did you get the tickets?", rowB),
		}}, []Notice{{App: "Bank", Title: "Salary", Text: salary}, {App: "Messages", Title: "Ben", Text: "Did you get the tickets?"}}},
		{"rows without a row id", &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
			el(1, 0, "", "", full),
			el(2, 1, "", "", rowA),
			el(3, 2, "", "", rowA),
			el(4, 3, "android:id/app_name_text", "Bank", rowA),
			el(5, 2, "android:id/title", "Salary", rowA),
			el(6, 1, "", "", rowB),
			el(7, 6, "android:id/app_name_text", "Messages", rowB),
			el(8, 6, "android:id/text", "Hi", rowB),
		}}, []Notice{{App: "Bank", Title: "Salary"}, {App: "Messages", Text: "Hi"}}},
		{"ios banner", &sdk.Screen{Width: 1179, Height: 2556, Elements: []sdk.Element{
			el(1, 0, "", "", full),
			el(2, 1, "NotificationShortLookView", "", rowA, func(e *sdk.Element) { e.ContentDescription = "BANK, now, Salary, " + salary }),
		}}, []Notice{{App: "BANK", Text: "now, Salary, " + salary}}},
		{"quick settings tiles are not notifications", fixture(t, "systemui-quick-settings-en.xml"), nil},
		{"an app's own notification bell", &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
			el(1, 0, "com.shop:id/notification", "3", rowA),
		}}, nil},
		{"an app's own app names", &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
			el(1, 0, "", "", rowA),
			el(2, 1, "com.android.vending:id/app_name_text", "Chase", rowA),
		}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Notices(tt.s)
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Notices (-want +got):\n%s", diff)
			}
		})
	}

	// Hiding the first of the Android rows blanks all of it, covers it, and
	// leaves the other row alone.
	s := tests[0].s
	out, boxes := maskChecked(t, s, Options{Hide: hideBank})
	if f := leaks(out, "Salary", "Bank", "5m"); f != "" {
		t.Errorf("hidden row shows %q", f)
	}
	if got := out.Elements[1].ContentDescription; got != HiddenNotice {
		t.Errorf("hidden row's description: got %q; want %q", got, HiddenNotice)
	}
	if out.Elements[9].Text != "Did you get the tickets?" {
		t.Errorf("the other row: got %q; want it unchanged", out.Elements[9].Text)
	}
	if diff := cmp.Diff([]sdk.Rect{rowA}, boxes); diff != "" {
		t.Errorf("boxes (-want +got):\n%s", diff)
	}
}

// TestNoticeScope: in a notification's row a number alone is a code; a
// sender's short code in the title is not, unless the row has no text.
func TestNoticeScope(t *testing.T) {
	row := sdk.Rect{Left: 20, Top: 300, Right: 1060, Bottom: 500}
	s := &sdk.Screen{Width: 1080, Height: 2400, Elements: []sdk.Element{
		{ID: 1, ResourceID: "com.android.systemui:id/expandableNotificationRow", Bounds: row},
		{ID: 2, ParentID: 1, ResourceID: "android:id/app_name_text", Text: "Messages", Bounds: row},
		{ID: 3, ParentID: 1, ResourceID: "android:id/title", Text: "22395", Bounds: row},
		{ID: 4, ParentID: 1, ResourceID: "android:id/text", Text: "482 913", Bounds: row},
		// The same number outside a notification is a number.
		{ID: 5, Text: "482 913", Bounds: sdk.Rect{Top: 900, Right: 100, Bottom: 1000}},
	}}
	out, boxes := maskChecked(t, s, Options{})
	if got := out.Elements[3].Text; got != "••• •••" {
		t.Errorf("the notification's text: got %q; want it masked", got)
	}
	if got := out.Elements[2].Text; got != "22395" {
		t.Errorf("the sender: got %q; want it shown", got)
	}
	if got := out.Elements[4].Text; got != "482 913" {
		t.Errorf("a number elsewhere: got %q; want it shown", got)
	}
	if len(boxes) != 1 {
		t.Errorf("boxes: got %v; want the text's", boxes)
	}
}
