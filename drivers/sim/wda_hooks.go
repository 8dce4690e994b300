package sim

import (
	"context"
	"unicode/utf8"
)

// This file holds what the WebDriverAgent face (package wdad) reads or sets
// on a phone and the driver contract does not carry: the pasteboard, the
// passcode's length and the captured screen on display.

// CapturedScreen names the captured screen (a world's dump:) that a phone
// shows on its own screen.
type CapturedScreen struct {
	// File is the dump as the world file names it, relative to the world
	// file's folder.
	File string
	// Width and Height are the capture's own size: points for a
	// WebDriverAgent source, pixels for UI Automator XML.
	Width, Height int
}

// CapturedScreen reports the captured screen the phone shows now on display
// 0, so that a face can serve the capture's own bytes. ok is false when the
// screen is off or shows no capture (a locked phone shows its lock screen).
func (d *Driver) CapturedScreen(ctx context.Context, deviceID string) (c CapturedScreen, ok bool, err error) {
	err = d.with(ctx, "screen", deviceID, "", func(p *phone) error {
		if !p.screenOn {
			return nil
		}
		switch e := p.main().top(); {
		case p.spec.dump != nil:
			c, ok = CapturedScreen{File: p.spec.Dump, Width: p.spec.dump.Width, Height: p.spec.dump.Height}, true
		case e != nil && !p.locked && e.app.Screens[e.screen].dump != nil:
			s := e.app.Screens[e.screen]
			c, ok = CapturedScreen{File: s.Dump, Width: s.dump.Width, Height: s.dump.Height}, true
		}
		return nil
	})
	return c, ok, err
}

// Clipboard returns the phone's clipboard (an iPhone's general pasteboard).
func (d *Driver) Clipboard(ctx context.Context, deviceID string) (string, error) {
	var text string
	err := d.with(ctx, "clipboard", deviceID, "", func(p *phone) error {
		text = p.clipboard
		return nil
	})
	return text, err
}

// SetClipboard replaces the phone's clipboard.
func (d *Driver) SetClipboard(ctx context.Context, deviceID, text string) error {
	return d.with(ctx, "clipboard", deviceID, "", func(p *phone) error {
		p.setClipboard(text)
		return nil
	})
}

// PINLength returns how many digits the phone's PIN has, 0 without one. An
// iPhone's passcode pad checks the code as soon as that many digits are in.
func (d *Driver) PINLength(ctx context.Context, deviceID string) (int, error) {
	var n int
	err := d.with(ctx, "pin_length", deviceID, "", func(p *phone) error {
		n = utf8.RuneCountInString(p.spec.PIN)
		return nil
	})
	return n, err
}
