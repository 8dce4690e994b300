package sim

import (
	"context"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// This file holds how a display turns. The phone's own screen (display 0)
// takes the rotation the person or a tool set (Android's user_rotation,
// WebDriverAgent's POST /orientation), unless the screen in front locks one
// (a video player's full screen locks landscape) or the lock screen is up
// (it stays portrait, as a phone's keyguard does). Background displays keep
// their own rotation. A turned display swaps its width and height: the
// screen, screenshots, video and every coordinate are in the current
// orientation, as a real phone reports them.

// wantRotation is the rotation the display should have now. p.mu is held.
func (ds *display) wantRotation() int {
	if ds.background() {
		return ds.userRot
	}
	if !ds.screenOn {
		return ds.rot // a dark screen does not turn
	}
	if ds.keyguard() {
		return 0
	}
	if e := ds.top(); e != nil {
		switch e.app.Screens[e.screen].Orientation {
		case "landscape":
			if ds.userRot == 3 {
				return 3 // sensorLandscape: the side the phone is turned to
			}
			return 1
		case "portrait":
			return 0
		}
	}
	return ds.userRot
}

// orient applies the wanted rotation: the size swaps on a quarter turn, and
// fingers down on the screen are lifted, as a turn cancels touches. p.mu is
// held.
func (ds *display) orient() {
	r := ds.wantRotation()
	if r == ds.rot {
		return
	}
	ds.rot = r
	ds.width, ds.height = ds.natW, ds.natH
	if r%2 == 1 {
		ds.width, ds.height = ds.natH, ds.natW
	}
	clear(ds.pointers)
}

// orient turns every display of the phone to its wanted rotation. p.mu is held.
func (p *phone) orient() {
	for _, ds := range p.displays {
		ds.orient()
	}
}

// orientation is the contract's name of the display's current rotation. A
// display whose natural size is wider than tall (a background display made
// so) is landscape unturned.
func (ds *display) orientation() sdk.Orientation {
	r := ds.rot
	if ds.natW > ds.natH {
		r = (r + 1) % 4
	}
	return [4]sdk.Orientation{sdk.OrientationPortrait, sdk.OrientationLandscape,
		sdk.OrientationPortraitUpsideDown, sdk.OrientationLandscapeRight}[r]
}

// Rotation reports a display's current rotation in quarter turns (0 to 3,
// Android's Surface.ROTATION_*) and the rotation the person or a tool set,
// which the screen in front may override. The faces ask it on many of
// their requests (WebDriverAgent's sizes in points), so it is not a driver
// call: the fault knobs neither count nor slow it.
func (d *Driver) Rotation(ctx context.Context, deviceID string, displayID int) (current, user int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	p, err := d.phone(deviceID)
	if err != nil {
		return 0, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ds, err := p.display(displayID)
	if err != nil {
		return 0, 0, err
	}
	ds.orient()
	return ds.rot, ds.userRot, nil
}

// SetRotation sets the rotation the person or a tool asks for (quarter
// turns, 0 to 3), as Android's user_rotation with auto-rotate off or
// WebDriverAgent's POST /orientation do. The display turns at once unless
// the screen in front locks its orientation. It returns the rotation the
// display has afterwards.
func (d *Driver) SetRotation(ctx context.Context, deviceID string, displayID, turns int) (int, error) {
	var now int
	err := d.withDisplay(ctx, "set_rotation", deviceID, displayID, "", func(ds *display) error {
		if turns < 0 || turns > 3 {
			return sdk.Invalid("rotation %d: want 0 to 3 quarter turns", turns)
		}
		ds.userRot = turns
		ds.orient()
		now = ds.rot
		return nil
	})
	return now, err
}
