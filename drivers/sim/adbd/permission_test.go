package adbd_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/adbd"
)

// askPermission opens Notes and taps "Get reminders": the permission
// controller's notification dialog comes up over it.
func askPermission(t *testing.T, p *phone) {
	t.Helper()
	p.unlock(t)
	p.run(t, "shell", "monkey", "-p", "com.google.android.keep", "-c", "android.intent.category.LAUNCHER", "1")
	remind, ok := findText(p.screen(t), "Get reminders")
	if !ok {
		t.Fatal("Notes shows no Get reminders")
	}
	c := remind.Bounds.Center()
	p.run(t, "shell", "input", "tap", strconv.Itoa(c.X), strconv.Itoa(c.Y))
}

// A runtime permission dialog is an activity of the permission controller
// that takes the focus: a plain dump (the active window's) holds it alone,
// its decor view the dialog's size; Android 13's --windows has it on top
// of the app's window; before 13 --windows is ignored, as DumpCommand
// ignores any option it does not know.
func TestDumpPermissionDialog(t *testing.T) {
	const perm = "com.google.android.permissioncontroller"
	for _, level := range []int{34, 32} {
		t.Run(strconv.Itoa(level), func(t *testing.T) {
			p := newPhone(t, adbd.Config{SDKLevel: level})
			askPermission(t, p)
			out := p.run(t, "exec-out", "uiautomator", "dump", "/dev/tty")
			xml, _ := strings.CutSuffix(out, "UI hierchary dumped to: /dev/tty\n")
			got, err := dump.ParseUIAutomator(strings.NewReader(xml))
			if err != nil {
				t.Fatalf("plain dump: %v (%.200q)", err, out)
			}
			texts := strings.Join(visibleTexts(got), "|")
			if !strings.Contains(texts, "Allow") || !strings.Contains(texts, "Don't allow") || strings.Contains(texts, "Get reminders") {
				t.Errorf("plain dump texts %q; want the dialog's alone", texts)
			}
			if !strings.Contains(xml, `package="`+perm+`"`) {
				t.Errorf("plain dump: no node of %s", perm)
			}
			if root := got.Elements[0].Bounds; root.Top == 0 || root.Left == 0 {
				t.Errorf("plain dump root bounds %+v; want the dialog's window, not the screen", root)
			}

			p.run(t, "shell", "uiautomator", "dump", "--windows", "/data/local/tmp/w.xml")
			doc := p.run(t, "shell", "cat", "/data/local/tmp/w.xml")
			ws, err := dump.ParseUIAutomatorWindows(strings.NewReader(doc), 0)
			if level < 33 {
				if !errors.Is(err, dump.ErrSingleDisplay) {
					t.Errorf("--windows on API %d: got %v; want the plain document (option ignored)", level, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			all := strings.Join(visibleTexts(ws), "|")
			ia, ir := strings.Index(all, "|Allow|"), strings.Index(all, "Get reminders")
			if ia < 0 || ir < 0 || ia < ir {
				t.Errorf("--windows texts %q; want the app's, then the dialog's on top", all)
			}
			if ws.App.ID != perm {
				t.Errorf("--windows app in front: got %q; want the focused dialog's %s", ws.App.ID, perm)
			}

			// Answering the dialog reaches Notes.
			allow, _ := findText(p.screen(t), "Allow")
			c := allow.Bounds.Center()
			p.run(t, "shell", "input", "tap", strconv.Itoa(c.X), strconv.Itoa(c.Y))
			out = p.run(t, "exec-out", "uiautomator", "dump", "/dev/tty")
			if !strings.Contains(out, `text="Reminders: on"`) || strings.Contains(out, perm) {
				t.Errorf("after Allow: dump %.300q…; want Notes with Reminders: on", out)
			}
		})
	}
}

func findText(s *sdk.Screen, text string) (sdk.Element, bool) {
	for _, e := range s.Elements {
		if e.Text == text {
			return e, true
		}
	}
	return sdk.Element{}, false
}
