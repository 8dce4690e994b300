package sim

import (
	"context"
	"fmt"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Limits of background displays.
const (
	maxDisplays    = 4    // background displays per phone, besides display 0
	minDisplaySide = 64   // pixels, as the contract asks
	maxDisplaySide = 4096 // pixels, as the contract asks
	minDensity     = 60
	maxDensity     = 1000
)

// display is one screen of a phone and the app state shown on it. Display 0
// is the phone's own screen; the others are background displays made by
// CreateDisplay. Each has its own back stack, dialog, focus, scrolling,
// animation and fingers; the phone's lock, notifications, clipboard,
// variables and files are shared. The phone's mu guards every field.
type display struct {
	*phone
	id                     int
	width, height, density int     // width and height in the current orientation
	scale                  float64 // pixels per dp
	// natW and natH are the size in the natural orientation; rot is the
	// current rotation in quarter turns (0 to 3, Android's Surface.ROTATION_*)
	// and userRot the one the person or a tool set (rotation.go).
	natW, natH   int
	rot, userRot int

	stack    []*entry // the back stack; empty shows the launcher
	dialog   string   // a screen of the top entry's app shown as a dialog
	focus    string   // the focused field's variable
	selected string   // the field whose whole text is selected (selection.go), or ""
	shade    bool     // display 0 only
	recents  bool     // display 0 only
	anim     *animation
	pointers map[int]sdk.Point

	// video receives the running stream's key frame requests (buffered 1);
	// nil without a stream. gone is closed when the display is removed.
	video   chan struct{}
	gone    chan struct{}
	removed bool
}

func newDisplay(p *phone, id, width, height, density int) *display {
	return &display{
		phone: p, id: id, width: width, height: height, density: density, natW: width, natH: height,
		scale: float64(density) / 160, pointers: map[int]sdk.Point{}, gone: make(chan struct{}),
	}
}

// background reports whether this is a display made by CreateDisplay.
func (ds *display) background() bool { return ds.id != 0 }

// keyguard reports whether the lock screen covers this display: only the
// phone's own screen has one.
func (ds *display) keyguard() bool { return !ds.background() && ds.locked }

// lit reports whether the display shows anything: a background display
// stays on while the phone's screen is off.
func (ds *display) lit() bool { return ds.background() || ds.screenOn }

// display finds a display of the phone; an unknown or removed one is
// ErrInvalidArgument. p.mu is held.
func (p *phone) display(id int) (*display, error) {
	ds := p.displays[id]
	if ds == nil {
		return nil, sdk.Invalid("device %q has no display %d", p.spec.ID, id)
	}
	return ds, nil
}

// withDisplay runs f on a display of a usable phone with the phone's lock held.
func (d *Driver) withDisplay(ctx context.Context, call, id string, displayID int, kind sdk.ActionKind, f func(ds *display) error) error {
	return d.with(ctx, call, id, kind, func(p *phone) error {
		ds, err := p.display(displayID)
		if err != nil {
			return err
		}
		return f(ds)
	})
}

// CreateDisplay adds a background display of width x height pixels to the
// phone; densityDPI 0 takes the phone's density. The display starts on the
// launcher with an empty back stack.
func (d *Driver) CreateDisplay(ctx context.Context, deviceID string, width, height, densityDPI int) (int, error) {
	var id int
	err := d.with(ctx, "create_display", deviceID, "", func(p *phone) error {
		switch {
		case width < minDisplaySide || width > maxDisplaySide || height < minDisplaySide || height > maxDisplaySide:
			return sdk.Invalid("display size %dx%d: want each side %d to %d pixels", width, height, minDisplaySide, maxDisplaySide)
		case densityDPI != 0 && (densityDPI < minDensity || densityDPI > maxDensity):
			return sdk.Invalid("display density %d: want 0 (the phone's) or %d to %d dpi", densityDPI, minDensity, maxDensity)
		case len(p.displays)-1 >= maxDisplays:
			return fmt.Errorf("device %q: already %d background displays, the most a virtual phone has; remove one first: %w",
				deviceID, maxDisplays, sdk.ErrBusy)
		}
		if densityDPI == 0 {
			densityDPI = p.spec.Density
		}
		// Ids only grow, so a removed display's id never names a new one.
		p.lastID++
		id = p.lastID
		p.displays[id] = newDisplay(p, id, width, height, densityDPI)
		return nil
	})
	return id, err
}

// RemoveDisplay removes a background display and ends its video stream. An
// unknown or already removed id succeeds; display 0 cannot be removed.
func (d *Driver) RemoveDisplay(ctx context.Context, deviceID string, displayID int) error {
	return d.with(ctx, "remove_display", deviceID, "", func(p *phone) error {
		if displayID <= 0 {
			return sdk.Invalid("display %d: only background displays (id > 0) can be removed", displayID)
		}
		ds := p.displays[displayID]
		if ds == nil {
			return nil
		}
		delete(p.displays, displayID)
		// The animation timer and the video stream look at removed: the
		// first drops its steps, the second ends.
		ds.removed, ds.anim = true, nil
		close(ds.gone)
		return nil
	})
}
