package sim

import (
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// input applies one raw event. Errors of the gesture itself (a locked phone)
// are dropped: a person's mirror does not stop for them. The phone's mu is held.
func (ds *display) input(ev sdk.InputEvent) error {
	var a *sdk.Action
	switch {
	case ev.Pointer != nil:
		pe := ev.Pointer
		if !ds.inside(pe.Point) {
			return sdk.Invalid("pointer at (%d,%d) is outside the %dx%d screen", pe.Point.X, pe.Point.Y, ds.width, ds.height)
		}
		switch pe.Action {
		case sdk.PointerDown:
			ds.pointers[pe.PointerID] = pe.Point
		case sdk.PointerCancel:
			delete(ds.pointers, pe.PointerID)
		case sdk.PointerUp:
			from, ok := ds.pointers[pe.PointerID]
			delete(ds.pointers, pe.PointerID)
			if !ok {
				return nil
			}
			a = &sdk.Action{Kind: sdk.ActTap, Point: from}
			if dx, dy := pe.Point.X-from.X, pe.Point.Y-from.Y; dx*dx+dy*dy > ds.px(8)*ds.px(8) {
				a = &sdk.Action{Kind: sdk.ActSwipe, Point: from, To: pe.Point}
			}
		}
	case ev.Key != nil && ev.Key.Action == sdk.KeyUp:
		a = &sdk.Action{Kind: sdk.ActKey, Key: ev.Key.Key}
	case ev.Text != "":
		a = &sdk.Action{Kind: sdk.ActType, Text: ev.Text}
	}
	if a == nil {
		return nil
	}
	if _, err := ds.act(*a); err != nil {
		ds.d.log.Debug("input ignored", "device", ds.spec.ID, "err", err)
	}
	return nil
}
