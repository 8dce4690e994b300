package android

import (
	"bytes"
	"context"

	"github.com/pinky-gateway/pinky/drivers/android/adb"
	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// A dialog of another app over the app in front, such as the permission
// controller's runtime permission dialog, is an activity that takes the
// focus: a plain `uiautomator dump` (UiAutomation.getRootInActiveWindow)
// gives that floating window alone, its root the dialog's size, so the
// parsed screen would have the dialog's size and nothing of the app under
// it. Android 13's `uiautomator dump --windows` reads every window of the
// display: the driver then returns them merged, the dialog on top with its
// bounds. Before Android 13 it keeps the dialog alone, with the screen's
// size from `wm size`. See README.md, "System dialogs".

// floating reports whether a plain dump's window is a floating one: its
// root does not start at the screen's corner.
func floating(sc *sdk.Screen) bool {
	for _, e := range sc.Elements {
		if e.ParentID == 0 {
			return e.Bounds.Left > 0 || e.Bounds.Top > 0
		}
	}
	return false
}

// overDialog reads the screen again with every window of display 0 when
// the phone's uiautomator can (Android 13 or later, learned once per
// phone), and else gives the dialog's screen the display's size. A
// failure of either keeps what the plain dump read. p.readMu is held.
func overDialog(ctx context.Context, p *phone, dev *adb.Device, sc *sdk.Screen) *sdk.Screen {
	if p.level == 0 {
		p.level = -1
		if level, _, err := androidVersion(ctx, dev); err == nil {
			p.level = level
		}
	}
	if p.level >= windowsLevel {
		if doc, err := readWindows(ctx, dev); err == nil {
			ws, err := dump.ParseUIAutomatorWindows(bytes.NewReader(doc), 0)
			if err == nil && len(ws.Elements) > len(sc.Elements) {
				return ws
			}
		}
	}
	if w, h, err := screenSize(ctx, dev); err == nil {
		sc.Width, sc.Height = w, h
	}
	return sc
}
