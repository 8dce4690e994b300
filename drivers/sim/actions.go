package sim

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// act performs one action. p.mu is held.
func (p *phone) act(a sdk.Action) (string, error) {
	if err := p.checkAction(a); err != nil {
		return "", err
	}
	if a.Kind == sdk.ActKey {
		return p.key(a.Key)
	}
	if !p.screenOn {
		return "", fmt.Errorf("device %q: %w", p.spec.ID, sdk.ErrScreenOff)
	}
	if p.locked && a.Kind != sdk.ActTap {
		return "", fmt.Errorf("device %q: %s: %w", p.spec.ID, a.Kind, sdk.ErrLocked)
	}
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap:
		return p.tap(a.Point)
	case sdk.ActLongPress:
		n := p.view().hit(a.Point)
		if n != nil && n.long != nil {
			return n.long()
		}
		return p.tap(a.Point)
	case sdk.ActSwipe:
		return p.swipe(a.Point, a.To)
	case sdk.ActScroll:
		return p.scroll(a)
	case sdk.ActType:
		return p.typeText(a.Text, a.Replace, a.Submit)
	case sdk.ActLaunch:
		app := findApp(p.apps, a.AppID)
		if app == nil {
			return "", fmt.Errorf("device %q: app %q: %w", p.spec.ID, a.AppID, sdk.ErrAppNotFound)
		}
		return p.launch(app)
	case sdk.ActStop:
		return p.stop(a.AppID)
	case sdk.ActOpenURL:
		return p.openURL(a.URL)
	}
	return "", sdk.Invalid("action kind %q unknown", a.Kind)
}

// checkAction rejects malformed actions before anything happens.
// inside reports whether pt lies on the screen.
func (p *phone) inside(pt sdk.Point) bool {
	return pt.X >= 0 && pt.Y >= 0 && pt.X < p.spec.Width && pt.Y < p.spec.Height
}

func (p *phone) checkAction(a sdk.Action) error {
	in := p.inside
	switch a.Kind {
	case sdk.ActTap, sdk.ActDoubleTap, sdk.ActLongPress:
		if !in(a.Point) {
			return sdk.Invalid("point (%d,%d) outside the %dx%d screen", a.Point.X, a.Point.Y, p.spec.Width, p.spec.Height)
		}
	case sdk.ActSwipe:
		if !in(a.Point) || !in(a.To) {
			return sdk.Invalid("swipe (%d,%d)→(%d,%d) leaves the %dx%d screen", a.Point.X, a.Point.Y, a.To.X, a.To.Y, p.spec.Width, p.spec.Height)
		}
	case sdk.ActScroll:
		if a.HasPoint && !in(a.Point) {
			return sdk.Invalid("point (%d,%d) outside the %dx%d screen", a.Point.X, a.Point.Y, p.spec.Width, p.spec.Height)
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

func (p *phone) tap(pt sdk.Point) (string, error) {
	n := p.view().hit(pt)
	if n == nil {
		if p.locked {
			return "", fmt.Errorf("device %q: tap outside the PIN pad: %w", p.spec.ID, sdk.ErrLocked)
		}
		return "nothing there", nil
	}
	return n.tap()
}

// swipe pulls the shade down from the top edge, or scrolls what is under the finger.
func (p *phone) swipe(from, to sdk.Point) (string, error) {
	dy := to.Y - from.Y
	switch {
	case from.Y < p.px(statusBarDP*2) && dy > p.px(48):
		p.shade, p.recents, p.focus = true, false, ""
		return "opened the notification shade", nil
	case p.shade && dy < -p.px(48):
		p.shade = false
		return "closed the notification shade", nil
	}
	n := p.view().scrollerAt(from)
	if n == nil || dy == 0 {
		return "nothing to scroll", nil
	}
	return p.scrollBy(n.scroll, -dy)
}

func (p *phone) scroll(a sdk.Action) (string, error) {
	pt := a.Point
	if !a.HasPoint {
		pt = sdk.Point{X: p.spec.Width / 2, Y: p.spec.Height / 2}
	}
	amount := a.Amount
	if amount == 0 {
		amount = 600
	}
	d := amount * p.spec.Height / 1000
	switch a.Direction {
	case sdk.ScrollUp:
		d = -d
	case sdk.ScrollLeft, sdk.ScrollRight:
		return "nothing scrolls sideways here", nil
	}
	n := p.view().scrollerAt(pt)
	if n == nil {
		return "nothing to scroll", nil
	}
	return p.scrollBy(n.scroll, d)
}

func (p *phone) scrollBy(s *scroller, d int) (string, error) {
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
func (p *phone) typeText(text string, replace, submit bool) (string, error) {
	if !p.keyboardShown() {
		return "", sdk.Invalid("no text field has focus; tap one first")
	}
	if replace {
		p.vars[p.focus] = ""
	}
	p.vars[p.focus] += text
	if submit {
		return p.key(sdk.KeyEnter)
	}
	return fmt.Sprintf("typed %d characters", utf8.RuneCountInString(text)), nil
}

// key presses a named key; it works on a locked phone too.
func (p *phone) key(k sdk.Key) (string, error) {
	switch k {
	case sdk.KeyPower:
		if p.screenOn {
			return p.sleep(), nil
		}
		return p.wake(), nil
	case sdk.KeyWake:
		return p.wake(), nil
	case sdk.KeySleep:
		return p.sleep(), nil
	}
	if !p.screenOn {
		return "screen is off", nil
	}
	if p.locked {
		switch k {
		case sdk.KeyEnter:
			return p.pinKey("OK")
		case sdk.KeyDelete:
			return p.pinKey("Delete")
		}
		return "locked", nil
	}
	switch k {
	case sdk.KeyBack, sdk.KeyEscape:
		return p.back(), nil
	case sdk.KeyHome:
		return p.home(), nil
	case sdk.KeyRecents:
		p.recents, p.shade, p.focus = !p.recents, false, ""
		return "toggled recent apps", nil
	case sdk.KeyEnter:
		return p.submit()
	case sdk.KeyDelete:
		if v := p.vars[p.focus]; p.keyboardShown() && v != "" {
			_, size := utf8.DecodeLastRuneInString(v)
			p.vars[p.focus] = v[:len(v)-size]
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
	p.screenOn, p.focus, p.shade, p.recents = false, "", false, false
	if p.spec.PIN != "" {
		p.locked = true
	}
	p.changed()
	return "screen off"
}

// submit runs the focused field's on_submit steps.
func (p *phone) submit() (string, error) {
	e := p.top()
	if !p.keyboardShown() || e == nil {
		return "no effect", nil
	}
	screen := e.app.Screens[e.screen]
	if p.dialog != "" {
		screen = e.app.Screens[p.dialog]
	}
	f := findField(screen.Elements, p.focus)
	if len(f.OnSubmit) == 0 {
		return "no effect", nil
	}
	return p.run(e.app, f.OnSubmit, nil)
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

// back closes what is on top: the keyboard, a panel, a dialog, then a screen.
func (p *phone) back() string {
	switch {
	case p.shade || p.recents:
		p.shade, p.recents = false, false
		return "closed the panel"
	case p.keyboardShown():
		p.focus = ""
		return "hid the keyboard"
	case p.dialog != "":
		p.dialog = ""
		return "closed the dialog"
	case len(p.stack) > 0:
		p.pop()
		return "went back"
	}
	return "already home"
}

// pop leaves the screen in front.
func (p *phone) pop() {
	if len(p.stack) > 0 {
		p.stack = p.stack[:len(p.stack)-1]
	}
	p.focus, p.dialog = "", ""
}

func (p *phone) home() string {
	p.stack, p.dialog, p.focus, p.shade, p.recents = nil, "", "", false, false
	return "went home"
}

// push shows a screen of app on top of the stack.
func (p *phone) push(app *AppSpec, screen string) {
	p.stack = append(p.stack, &entry{app: app, screen: screen})
	p.dialog, p.focus, p.shade, p.recents = "", "", false, false
	for i, a := range p.recent {
		if a == app {
			p.recent = append(p.recent[:i:i], p.recent[i+1:]...)
			break
		}
	}
	p.recent = append([]*AppSpec{app}, p.recent...)
}

// launch brings app to the front on its start screen.
func (p *phone) launch(app *AppSpec) (string, error) {
	p.push(app, app.Start)
	return "launched " + p.appID(app), nil
}

func (p *phone) stop(id string) (string, error) {
	app := findApp(p.apps, id)
	if app == nil {
		return "", fmt.Errorf("device %q: app %q: %w", p.spec.ID, id, sdk.ErrAppNotFound)
	}
	kept := p.stack[:0]
	for _, e := range p.stack {
		if e.app != app {
			kept = append(kept, e)
		}
	}
	p.stack = kept
	p.dialog, p.focus = "", ""
	return "stopped " + p.appID(app), nil
}

// openURL opens the browser (the app with a url_screen) on url.
func (p *phone) openURL(url string) (string, error) {
	for _, a := range p.apps {
		if a.URLScreen != "" {
			p.vars["url"] = url
			p.push(a, a.URLScreen)
			return "opened " + url + " in " + a.Label, nil
		}
	}
	return "", fmt.Errorf("device %q: no browser: %w", p.spec.ID, sdk.ErrAppNotFound)
}

// run performs steps of app's screens with template values locals.
func (p *phone) run(app *AppSpec, steps []*Step, locals map[string]string) (string, error) {
	var done []string
	for _, s := range steps {
		switch {
		case s.Go != "":
			a, name := app, s.Go
			if k, n, ok := strings.Cut(s.Go, "/"); ok {
				a, name = findApp(p.apps, k), n
			}
			if a == nil {
				return "", fmt.Errorf("device %q: app of %q: %w", p.spec.ID, s.Go, sdk.ErrAppNotFound)
			}
			p.push(a, name)
		case s.Back:
			p.pop()
		case s.Home:
			p.home()
		case s.Launch != "":
			a := findApp(p.apps, s.Launch)
			if a == nil {
				return "", fmt.Errorf("device %q: app %q: %w", p.spec.ID, s.Launch, sdk.ErrAppNotFound)
			}
			p.push(a, a.Start)
		case s.Dialog != "":
			p.dialog, p.focus = s.Dialog, ""
		case s.Dismiss:
			p.dialog = ""
		case s.Set != nil:
			for k, v := range s.Set {
				p.vars[k] = p.expand(v, locals)
			}
		case s.Append != nil:
			list := p.expand(s.Append.List, locals)
			p.lists[list] = append(p.lists[list], p.expand(s.Append.Text, locals))
		case s.Notify != nil:
			n := *s.Notify
			n.Title, n.Text = p.expand(n.Title, locals), p.expand(n.Text, locals)
			p.post(n)
		case s.Copy != "":
			p.clipboard = p.expand(s.Copy, locals)
		case s.Require != "":
			if p.vars[s.Require] == "" {
				return "nothing happens: " + s.Require + " is empty", nil
			}
			continue
		case s.Animate != nil:
			an := &animation{start: p.d.now(), dur: s.Animate.Duration, label: p.expand(s.Animate.Label, locals)}
			p.anim = an
			then := s.Animate.Then
			p.after(an.dur, func() {
				if p.anim == an {
					p.anim = nil
				}
				if _, err := p.run(app, then, locals); err != nil {
					p.d.log.Warn("animation end", "device", p.spec.ID, "err", err)
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
