package sim

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// act performs one action on the display. The phone's mu is held.
func (ds *display) act(a sdk.Action) (string, error) {
	if err := ds.checkAction(a); err != nil {
		return "", err
	}
	if a.Kind != sdk.ActType && (a.Kind != sdk.ActKey || a.Key != sdk.KeyDelete) {
		ds.selected = "" // a tap, a swipe or another key drops the selection
	}
	if a.Kind == sdk.ActKey {
		return ds.key(a.Key)
	}
	if !ds.lit() {
		return "", fmt.Errorf("device %q: %w", ds.spec.ID, sdk.ErrScreenOff)
	}
	if ds.keyguard() && a.Kind != sdk.ActTap {
		return "", fmt.Errorf("device %q: %s: %w", ds.spec.ID, a.Kind, sdk.ErrLocked)
	}
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap:
		return ds.tap(a.Point)
	case sdk.ActLongPress:
		n := ds.view().hit(a.Point)
		if n != nil && n.long != nil {
			return n.long()
		}
		return ds.tap(a.Point)
	case sdk.ActSwipe:
		return ds.swipe(a.Point, a.To)
	case sdk.ActScroll:
		return ds.scroll(a)
	case sdk.ActType:
		return ds.typeText(a.Text, a.Replace, a.Submit)
	case sdk.ActLaunch:
		app := findApp(ds.apps, a.AppID)
		if app == nil {
			return "", fmt.Errorf("device %q: app %q: %w", ds.spec.ID, a.AppID, sdk.ErrAppNotFound)
		}
		return ds.launch(app)
	case sdk.ActStop:
		return ds.stop(a.AppID)
	case sdk.ActOpenURL:
		return ds.openURL(a.URL)
	case sdk.ActPinch:
		return ds.pinch(a.Point, a.Scale), nil
	}
	return "", sdk.Invalid("action kind %q unknown", a.Kind)
}

// inside reports whether pt lies on the display.
func (ds *display) inside(pt sdk.Point) bool {
	return pt.X >= 0 && pt.Y >= 0 && pt.X < ds.width && pt.Y < ds.height
}

// checkAction rejects malformed actions before anything happens.
func (ds *display) checkAction(a sdk.Action) error {
	in := ds.inside
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress:
		if !in(a.Point) {
			return sdk.Invalid("point (%d,%d) outside the %dx%d screen", a.Point.X, a.Point.Y, ds.width, ds.height)
		}
	case sdk.ActSwipe:
		if !in(a.Point) || !in(a.To) {
			return sdk.Invalid("swipe (%d,%d)→(%d,%d) leaves the %dx%d screen", a.Point.X, a.Point.Y, a.To.X, a.To.Y, ds.width, ds.height)
		}
	case sdk.ActPinch:
		if !in(a.Point) {
			return sdk.Invalid("pinch centre (%d,%d) outside the %dx%d screen", a.Point.X, a.Point.Y, ds.width, ds.height)
		}
		if a.Scale < sdk.MinPinchScale || a.Scale > sdk.MaxPinchScale || a.Scale == 1000 {
			return sdk.Invalid("pinch scale %d: want %d to %d, not 1000", a.Scale, sdk.MinPinchScale, sdk.MaxPinchScale)
		}
	case sdk.ActScroll:
		if a.HasPoint && !in(a.Point) {
			return sdk.Invalid("point (%d,%d) outside the %dx%d screen", a.Point.X, a.Point.Y, ds.width, ds.height)
		}
		if a.Amount < 0 || a.Amount > 1000 {
			return sdk.Invalid("scroll amount %d: want 0 to 1000", a.Amount)
		}
		switch a.Direction {
		case sdk.ScrollUp, sdk.ScrollDown, sdk.ScrollLeft, sdk.ScrollRight:
		default:
			return sdk.Invalid("scroll direction %q unknown", a.Direction)
		}
	case sdk.ActType:
		if n := utf8.RuneCountInString(a.Text); n < 1 || n > 4096 || !utf8.ValidString(a.Text) {
			return sdk.Invalid("text: want 1 to 4096 UTF-8 characters")
		}
	case sdk.ActLaunch, sdk.ActStop:
		if a.AppID == "" {
			return sdk.Invalid("app id is required")
		}
	case sdk.ActOpenURL:
		if a.URL == "" {
			return sdk.Invalid("url is required")
		}
	}
	return nil
}

func (ds *display) tap(pt sdk.Point) (string, error) {
	n := ds.view().hit(pt)
	if n == nil {
		if ds.keyguard() {
			return "", fmt.Errorf("device %q: tap outside the PIN pad: %w", ds.spec.ID, sdk.ErrLocked)
		}
		return "nothing there", nil
	}
	return n.tap()
}

// swipe pulls the shade down from the top edge of display 0, or scrolls
// what is under the finger.
func (ds *display) swipe(from, to sdk.Point) (string, error) {
	dy := to.Y - from.Y
	switch {
	case !ds.background() && from.Y < ds.px(statusBarDP*2) && dy > ds.px(48):
		ds.shade, ds.recents, ds.focus = true, false, ""
		return "opened the notification shade", nil
	case ds.shade && dy < -ds.px(48):
		ds.shade = false
		return "closed the notification shade", nil
	}
	n := ds.view().scrollerAt(from)
	if n == nil || dy == 0 {
		return "nothing to scroll", nil
	}
	return ds.scrollBy(n.scroll, -dy)
}

// pinch zooms the zoomable element under the centre, if there is one.
func (ds *display) pinch(center sdk.Point, scale int) string {
	n := ds.view().zoomerAt(center)
	if n == nil {
		return "nothing to zoom"
	}
	return n.zoom(scale)
}

func (ds *display) scroll(a sdk.Action) (string, error) {
	pt := a.Point
	if !a.HasPoint {
		pt = sdk.Point{X: ds.width / 2, Y: ds.height / 2}
	}
	amount := a.Amount
	if amount == 0 {
		amount = 600
	}
	d := amount * ds.height / 1000
	switch a.Direction {
	case sdk.ScrollUp:
		d = -d
	case sdk.ScrollLeft, sdk.ScrollRight:
		return "nothing scrolls sideways here", nil
	}
	n := ds.view().scrollerAt(pt)
	if n == nil {
		return "nothing to scroll", nil
	}
	return ds.scrollBy(n.scroll, d)
}

func (ds *display) scrollBy(s *scroller, d int) (string, error) {
	if s.entry.scroll == nil {
		s.entry.scroll = map[string]int{}
	}
	off := min(max(s.offset+d, 0), s.max)
	s.entry.scroll[s.key] = off
	if off == s.offset {
		return "already at the end", nil
	}
	return fmt.Sprintf("scrolled %d px", off-s.offset), nil
}

// typeText types into the focused field.
func (ds *display) typeText(text string, replace, submit bool) (string, error) {
	if !ds.keyboardShown() {
		return "", sdk.Errorf(sdk.ErrNoFocus, "no text field has focus; tap one first")
	}
	if ds.takeSelection() || replace {
		ds.vars[ds.focus] = ""
	}
	ds.vars[ds.focus] += text
	if submit {
		return ds.key(sdk.KeyEnter)
	}
	return fmt.Sprintf("typed %d characters", utf8.RuneCountInString(text)), nil
}

// key presses a named key; it works on a locked phone too. The power keys
// act on the phone; the others on the display.
func (ds *display) key(k sdk.Key) (string, error) {
	switch k {
	case sdk.KeyPower:
		if ds.screenOn {
			return ds.sleep(), nil
		}
		return ds.wake(), nil
	case sdk.KeyWake:
		return ds.wake(), nil
	case sdk.KeySleep:
		return ds.sleep(), nil
	}
	if !ds.lit() {
		return "screen is off", nil
	}
	if ds.keyguard() {
		switch k {
		case sdk.KeyEnter:
			return ds.pinKey("OK")
		case sdk.KeyDelete:
			return ds.pinKey("Delete")
		}
		return "locked", nil
	}
	switch k {
	case sdk.KeyBack, sdk.KeyEscape:
		return ds.back(), nil
	case sdk.KeyHome:
		return ds.home(), nil
	case sdk.KeyRecents:
		if ds.background() {
			return "no recent apps on a background display", nil
		}
		ds.recents, ds.shade, ds.focus = !ds.recents, false, ""
		return "toggled recent apps", nil
	case sdk.KeyEnter:
		return ds.submit()
	case sdk.KeyDelete:
		if ds.takeSelection() && ds.keyboardShown() {
			ds.vars[ds.focus] = ""
			return "deleted the selected text", nil
		}
		if v := ds.vars[ds.focus]; ds.keyboardShown() && v != "" {
			_, size := utf8.DecodeLastRuneInString(v)
			ds.vars[ds.focus] = v[:len(v)-size]
			return "deleted a character", nil
		}
	}
	return "no effect", nil
}

func (p *phone) wake() string {
	if p.screenOn {
		return "screen already on"
	}
	p.screenOn = true
	p.changed()
	return "screen on"
}

func (p *phone) sleep() string {
	if !p.screenOn {
		return "screen already off"
	}
	// Background displays keep their state: they stay on.
	m := p.main()
	p.screenOn, m.focus, m.shade, m.recents, p.headsUp = false, "", false, false, nil
	if p.spec.PIN != "" {
		p.locked = true
	}
	p.changed()
	return "screen off"
}

// submit runs the focused field's on_submit steps.
func (ds *display) submit() (string, error) {
	e := ds.top()
	if !ds.keyboardShown() || e == nil {
		return "no effect", nil
	}
	screen := e.app.Screens[e.screen]
	if ds.dialog != "" {
		_, screen = ds.dialogScreen(e)
	}
	f := findField(screen.Elements, ds.focus)
	if len(f.OnSubmit) == 0 {
		return "no effect", nil
	}
	return ds.run(e.app, f.OnSubmit, nil)
}

func findField(els []*ElementSpec, name string) *ElementSpec {
	for _, e := range els {
		if e.editable() && e.Name == name {
			return e
		}
		if f := findField(e.Children, name); f != nil {
			return f
		}
	}
	return nil
}

// dialogScreen is the dialog shown over entry e: a screen of e's app, or
// with "app/screen" another app's (the permission controller's). An app
// not installed on the phone gives e's screen, which the world's check
// rules out for the bundled world.
func (ds *display) dialogScreen(e *entry) (*AppSpec, *ScreenSpec) {
	if k, name, ok := strings.Cut(ds.dialog, "/"); ok {
		if a := findApp(ds.apps, k); a != nil && a.Screens[name] != nil {
			return a, a.Screens[name]
		}
		return e.app, e.app.Screens[e.screen]
	}
	return e.app, e.app.Screens[ds.dialog]
}

// back closes what is on top: the keyboard, a panel, a dialog, then a screen.
func (ds *display) back() string {
	switch {
	case ds.shade || ds.recents:
		ds.shade, ds.recents = false, false
		return "closed the panel"
	case ds.keyboardShown():
		ds.focus = ""
		return "hid the keyboard"
	case ds.dialog != "":
		ds.dialog = ""
		return "closed the dialog"
	case len(ds.stack) > 0:
		ds.pop()
		return "went back"
	}
	return "already home"
}

// pop leaves the screen in front.
func (ds *display) pop() {
	if len(ds.stack) > 0 {
		ds.stack = ds.stack[:len(ds.stack)-1]
	}
	ds.focus, ds.dialog = "", ""
}

func (ds *display) home() string {
	ds.stack, ds.dialog, ds.focus, ds.shade, ds.recents = nil, "", "", false, false
	return "went home"
}

// push shows a screen of app on top of the stack.
func (ds *display) push(app *AppSpec, screen string) {
	ds.stack = append(ds.stack, &entry{app: app, screen: screen})
	ds.dialog, ds.focus, ds.shade, ds.recents = "", "", false, false
	if ds.background() {
		return // the recents panel lists display 0's apps
	}
	for i, a := range ds.recent {
		if a == app {
			ds.recent = append(ds.recent[:i:i], ds.recent[i+1:]...)
			break
		}
	}
	ds.recent = append([]*AppSpec{app}, ds.recent...)
}

// launch brings app to the front on its start screen.
func (ds *display) launch(app *AppSpec) (string, error) {
	ds.push(app, app.Start)
	return "launched " + ds.appID(app), nil
}

// stop closes app's screens on this display; other displays keep theirs.
func (ds *display) stop(id string) (string, error) {
	app := findApp(ds.apps, id)
	if app == nil {
		return "", fmt.Errorf("device %q: app %q: %w", ds.spec.ID, id, sdk.ErrAppNotFound)
	}
	kept := ds.stack[:0]
	for _, e := range ds.stack {
		if e.app != app {
			kept = append(kept, e)
		}
	}
	ds.stack = kept
	ds.dialog, ds.focus = "", ""
	return "stopped " + ds.appID(app), nil
}

// openURL opens the browser (the app with a url_screen) on url.
func (ds *display) openURL(url string) (string, error) {
	for _, a := range ds.apps {
		if a.URLScreen != "" {
			ds.vars["url"] = url
			ds.push(a, a.URLScreen)
			return "opened " + url + " in " + a.Label, nil
		}
	}
	return "", fmt.Errorf("device %q: no browser: %w", ds.spec.ID, sdk.ErrAppNotFound)
}

// run performs steps of app's screens with template values locals.
func (ds *display) run(app *AppSpec, steps []*Step, locals map[string]string) (string, error) {
	var done []string
	for _, s := range steps {
		switch {
		case s.Go != "":
			a, name := app, s.Go
			if k, n, ok := strings.Cut(s.Go, "/"); ok {
				a, name = findApp(ds.apps, k), n
			}
			if a == nil {
				return "", fmt.Errorf("device %q: app of %q: %w", ds.spec.ID, s.Go, sdk.ErrAppNotFound)
			}
			ds.push(a, name)
		case s.Back:
			ds.pop()
		case s.Home:
			ds.home()
		case s.Launch != "":
			a := findApp(ds.apps, s.Launch)
			if a == nil {
				return "", fmt.Errorf("device %q: app %q: %w", ds.spec.ID, s.Launch, sdk.ErrAppNotFound)
			}
			ds.push(a, a.Start)
		case s.Dialog != "":
			ds.dialog, ds.focus = s.Dialog, ""
		case s.Dismiss:
			ds.dialog = ""
		case s.Set != nil:
			for k, v := range s.Set {
				ds.vars[k] = ds.expand(v, locals)
			}
		case s.Append != nil:
			list := ds.expand(s.Append.List, locals)
			ds.lists[list] = append(ds.lists[list], ds.expand(s.Append.Text, locals))
		case s.Notify != nil:
			n := *s.Notify
			n.Title, n.Text = ds.expand(n.Title, locals), ds.expand(n.Text, locals)
			ds.post(n)
		case s.Copy != "":
			ds.setClipboard(ds.expand(s.Copy, locals))
		case s.Require != "":
			if ds.vars[s.Require] == "" {
				return "nothing happens: " + s.Require + " is empty", nil
			}
			continue
		case s.Animate != nil:
			an := &animation{start: ds.d.now(), dur: s.Animate.Duration, label: ds.expand(s.Animate.Label, locals)}
			ds.anim = an
			then := s.Animate.Then
			ds.after(an.dur, func() {
				if ds.anim == an {
					ds.anim = nil
				}
				if ds.removed {
					return // the display went away while animating
				}
				if _, err := ds.run(app, then, locals); err != nil {
					ds.d.log.Warn("animation end", "device", ds.spec.ID, "err", err)
				}
			})
		}
		done = append(done, stepName(s))
	}
	return strings.Join(done, ", "), nil
}

func stepName(s *Step) string {
	switch {
	case s.Go != "":
		return "went to " + s.Go
	case s.Launch != "":
		return "launched " + s.Launch
	case s.Dialog != "":
		return "showed " + s.Dialog
	case s.Animate != nil:
		return "animating"
	case s.Notify != nil:
		return "notification scheduled"
	}
	return "done"
}
