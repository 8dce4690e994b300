package sim

import (
	"context"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// This file holds the one text selection the virtual phone models: all of
// the focused field's text, selected as Ctrl+A selects it in an Android
// text field (TextView.onKeyShortcut, android.R.id.selectAll). The scrcpy
// face uses it for an injected Ctrl+A, which is how the Android driver
// clears a field before typing over it.

// SelectAll selects the whole text of the focused field on a display of
// the phone: the next text typed replaces it, and the delete key removes
// it; any other action drops the selection. With no focused field, or an
// empty one, it does nothing, as on a phone.
func (d *Driver) SelectAll(ctx context.Context, deviceID string, displayID int) error {
	return d.withDisplay(ctx, "act", deviceID, displayID, sdk.ActKey, func(ds *display) error {
		ds.selected = ""
		if ds.lit() && !ds.keyguard() && ds.keyboardShown() && ds.vars[ds.focus] != "" {
			ds.selected = ds.focus
		}
		return nil
	})
}

// takeSelection reports whether the focused field's whole text is selected,
// and drops the selection: typing or deleting uses it up. p.mu is held.
func (ds *display) takeSelection() bool {
	sel := ds.selected != "" && ds.selected == ds.focus
	ds.selected = ""
	return sel
}
