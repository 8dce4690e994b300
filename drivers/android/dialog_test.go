package android

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestPermissionDialog: Notes asks for the notification permission and the
// permission controller's dialog comes up. From Android 13 the read merges
// the windows: the app's, then the dialog's on top with its bounds; before
// 13 the dialog alone. Either way the screen has the display's size, and
// a tap on Allow answers the dialog.
func TestPermissionDialog(t *testing.T) {
	for _, tt := range []struct {
		name    string
		level   int
		withApp bool // the app's window is read under the dialog
	}{
		{"Android 14", 34, true},
		{"Android 12L", 32, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(cfg *adbd.Config) { cfg.SDKLevel = tt.level })
			d := r.driver(t)
			ctx := testkit.Context(t)
			if err := r.sim.Unlock(ctx, simPhone, "1234"); err != nil {
				t.Fatal(err)
			}
			if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.google.android.keep"}); err != nil {
				t.Fatal(err)
			}
			tap := func(text string) {
				t.Helper()
				sc, err := d.Screen(ctx, r.serial, 0)
				if err != nil {
					t.Fatal(err)
				}
				e, ok := byText(sc, text)
				if !ok {
					t.Fatalf("no %q on the screen", text)
				}
				if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: e.Bounds.Center()}); err != nil {
					t.Fatal(err)
				}
			}
			tap("Get reminders")
			sc, err := d.Screen(ctx, r.serial, 0)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Width != 1080 || sc.Height != 2400 {
				t.Errorf("screen size %dx%d with the dialog; want the display's 1080x2400", sc.Width, sc.Height)
			}
			allow, ok := byText(sc, "Allow")
			if _, deny := byText(sc, "Don't allow"); !ok || !deny {
				t.Fatalf("the dialog's Allow / Don't allow are not read: %v", texts(sc))
			}
			remind, under := byText(sc, "Get reminders")
			if under != tt.withApp {
				t.Errorf("the app under the dialog read = %v; want %v (%v)", under, tt.withApp, texts(sc))
			}
			if under && remind.ID > allow.ID {
				t.Errorf("the dialog (%d) comes before the app (%d); want it on top", allow.ID, remind.ID)
			}
			if b := allow.Bounds; b.Left <= 0 || b.Top <= 0 || b.Right >= sc.Width {
				t.Errorf("Allow's bounds %+v; want inside the dialog", b)
			}
			tap("Allow")
			sc, err = d.Screen(ctx, r.serial, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := byText(sc, "Reminders: on"); !ok {
				t.Errorf("after Allow: %v; want Reminders: on", texts(sc))
			}
		})
	}
}

func byText(sc *sdk.Screen, text string) (sdk.Element, bool) {
	for _, e := range sc.Elements {
		if e.Text == text {
			return e, true
		}
	}
	return sdk.Element{}, false
}

func texts(sc *sdk.Screen) []string {
	var out []string
	for _, e := range sc.Elements {
		if e.Text != "" {
			out = append(out, e.Text)
		}
	}
	return out
}
