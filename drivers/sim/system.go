package sim

import (
	"fmt"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// sys makes a system element: android ids get the systemui package.
func (p *phone) sys(role, text, rid string, r sdk.Rect) *node {
	el := sdk.Element{Class: p.class(role, PerPlatform{}), Text: text, Bounds: r, Enabled: true, Visible: true}
	if rid != "" {
		el.ResourceID = rid
		if p.spec.Platform == sdk.PlatformAndroid {
			el.ResourceID = "com.android.systemui:id/" + rid
		}
	}
	if p.spec.Platform == sdk.PlatformIOS && role != "text" {
		el.ContentDescription = text
	}
	return &node{el: el, ink: black}
}

// button makes a clickable system element.
func (p *phone) button(role, text, rid string, r sdk.Rect, tap func() (string, error)) *node {
	n := p.sys(role, text, rid, r)
	n.el.Clickable, n.el.Focusable, n.tap = true, true, tap
	n.fill = paleBlue
	return n
}

func (ds *display) statusBar() *layer {
	r := sdk.Rect{Right: ds.width, Bottom: ds.px(statusBarDP)}
	l := &layer{area: r}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: r, Enabled: true, Visible: true}, fill: darkFill})
	if ds.spec.Platform == sdk.PlatformIOS {
		l.nodes[root].el.Class = "XCUIElementTypeStatusBar"
	}
	clock := ds.sys("text", ds.d.now().Format("15:04"), "clock", sdk.Rect{Left: ds.px(16), Right: ds.px(80), Bottom: r.Bottom})
	clock.ink = white
	l.add(root, clock)
	battery := ds.sys("text", "100%", "battery", sdk.Rect{Left: r.Right - ds.px(64), Right: r.Right - ds.px(8), Bottom: r.Bottom})
	battery.ink = white
	l.add(root, battery)
	if len(ds.notes) > 0 && !ds.keyguard() {
		n := ds.sys("text", plural(len(ds.notes), "notification"), "notification_icon_area",
			sdk.Rect{Left: ds.px(88), Right: ds.px(240), Bottom: r.Bottom})
		n.ink = white
		l.add(root, n)
	}
	return l
}

// grid lays out cells of size w x h, cols per row, starting at r's top-left.
func grid(r sdk.Rect, i, cols, h int) sdk.Rect {
	w := r.Width() / cols
	x, y := r.Left+(i%cols)*w, r.Top+(i/cols)*h
	return sdk.Rect{Left: x, Top: y, Right: x + w, Bottom: y + h}
}

func (ds *display) lockScreen(area sdk.Rect) *layer {
	l := &layer{area: area}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: area, Enabled: true, Visible: true,
		ResourceID: ds.sysID("keyguard_host_view")}, fill: darkFill})
	line := func(i, hdp int) sdk.Rect {
		return sdk.Rect{Left: area.Left + ds.px(24), Top: area.Top + ds.px(i), Right: area.Right - ds.px(24), Bottom: area.Top + ds.px(i+hdp)}
	}
	clock := ds.sys("text", ds.d.now().Format("15:04"), "lock_clock", line(40, 72))
	clock.ink, clock.bold = white, true
	l.add(root, clock)
	if len(ds.notes) > 0 {
		n := ds.sys("text", plural(len(ds.notes), "notification"), "lock_notifications", line(120, 32))
		n.ink = white
		l.add(root, n)
	}
	prompt := "Enter PIN"
	if ds.pinWrong {
		prompt = "Wrong PIN"
	}
	pr := ds.sys("text", prompt, "keyguard_message_area", line(170, 32))
	pr.ink = white
	l.add(root, pr)
	entry := ds.sys("password", strings.Repeat("•", len(ds.pinEntry)), "pinEntry", line(210, 48))
	entry.el.Password, entry.el.Focused, entry.el.Focusable = true, true, true
	entry.fill = fieldFill
	l.add(root, entry)
	pad := line(280, 4*80)
	keys := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "Delete", "0", "OK"}
	for i, k := range keys {
		rid := map[string]string{"Delete": "delete_button", "OK": "key_enter"}[k]
		if rid == "" {
			rid = "key" + k
		}
		label := k
		if k == "Delete" {
			label = "⌫"
		}
		b := ds.button("button", label, rid, inset(grid(pad, i, 3, ds.px(80)), ds.px(6)), func() (string, error) { return ds.pinKey(k) })
		b.el.ContentDescription = k
		b.fill, b.ink = keyFill, black
		l.add(root, b)
	}
	// Below the PIN pad, the newest notifications, as a lock screen shows
	// them; a tap on one asks for the PIN like any other.
	y := 612
	for i := len(ds.notes) - 1; i >= 0; i-- {
		r := line(y, noteRowDP)
		if r.Bottom > area.Bottom {
			break
		}
		ds.noteRow(l, root, ds.notes[i], r, false)
		y += noteRowDP + 8
	}
	return l
}

func (p *phone) sysID(rid string) string {
	if p.spec.Platform == sdk.PlatformAndroid {
		return "com.android.systemui:id/" + rid
	}
	return ""
}

func inset(r sdk.Rect, d int) sdk.Rect {
	return sdk.Rect{Left: r.Left + d, Top: r.Top + d, Right: r.Right - d, Bottom: r.Bottom - d}
}

// pinKey handles a key of the lock screen's PIN pad.
func (p *phone) pinKey(k string) (string, error) {
	switch k {
	case "Delete":
		if p.pinEntry != "" {
			p.pinEntry = p.pinEntry[:len(p.pinEntry)-1]
		}
		return "deleted a digit", nil
	case "OK":
		entered := p.pinEntry
		p.pinEntry = ""
		if entered != p.spec.PIN {
			p.pinWrong = true
			return "wrong PIN", nil
		}
		p.unlock()
		return "unlocked", nil
	}
	if len(p.pinEntry) < 16 {
		p.pinEntry += k
	}
	return "entered a digit", nil
}

func (p *phone) unlock() {
	p.locked, p.pinWrong, p.pinEntry = false, false, ""
	p.changed()
}

func (ds *display) launcher(area sdk.Rect) *layer {
	l := &layer{area: area}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: area, Enabled: true, Visible: true,
		ResourceID: ds.launcherID("workspace")}, fill: launcherFill})
	cells := sdk.Rect{Left: area.Left + ds.px(8), Top: area.Top + ds.px(24), Right: area.Right - ds.px(8), Bottom: area.Bottom}
	i := -1
	for _, a := range ds.apps {
		if a.Hidden {
			continue
		}
		a := a
		i++
		r := inset(grid(cells, i, 4, ds.px(104)), ds.px(4))
		if r.Bottom > area.Bottom {
			break
		}
		n := ds.button("icon", a.Label, "", r, func() (string, error) { return ds.launch(a) })
		n.el.ContentDescription = a.Label
		n.el.ResourceID = ds.launcherID("icon")
		n.fill, _ = parseColor(a.Icon)
		n.ink = white
		l.add(root, n)
	}
	return l
}

func (p *phone) launcherID(rid string) string {
	if p.spec.Platform == sdk.PlatformAndroid {
		return "com.google.android.apps.nexuslauncher:id/" + rid
	}
	return ""
}

// keyboard is the software keyboard; its keys type into the focused field.
func (ds *display) keyboard(area sdk.Rect) *layer {
	l := &layer{area: area}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("keyboard", PerPlatform{}), Bounds: area, Enabled: true, Visible: true,
		ResourceID: ds.imeID("keyboard_holder")}, fill: keyboardFill})
	rows := []string{"qwertyuiop", "asdfghjkl", "zxcvbnm⌫"}
	rowH := area.Height() / 4
	for ri, row := range rows {
		keys := []rune(row)
		band := sdk.Rect{Left: area.Left, Top: area.Top + ri*rowH, Right: area.Right, Bottom: area.Top + (ri+1)*rowH}
		for i, k := range keys {
			k := string(k)
			key := ds.button("key", k, "", inset(grid(band, i, len(keys), rowH), ds.px(3)), func() (string, error) {
				if k == "⌫" {
					return ds.key(sdk.KeyDelete)
				}
				return ds.typeText(k, false, false)
			})
			key.el.ContentDescription = k
			key.fill = white
			l.add(root, key)
		}
	}
	band := sdk.Rect{Left: area.Left, Top: area.Top + 3*rowH, Right: area.Right, Bottom: area.Bottom}
	space := ds.button("key", "space", "", inset(sdk.Rect{Left: band.Left + band.Width()/4, Top: band.Top, Right: band.Right - band.Width()/4, Bottom: band.Bottom}, ds.px(3)),
		func() (string, error) { return ds.typeText(" ", false, false) })
	space.fill = white
	l.add(root, space)
	enter := ds.button("key", "enter", "", inset(sdk.Rect{Left: band.Right - band.Width()/4, Top: band.Top, Right: band.Right, Bottom: band.Bottom}, ds.px(3)),
		func() (string, error) { return ds.key(sdk.KeyEnter) })
	l.add(root, enter)
	return l
}

func (p *phone) imeID(rid string) string {
	if p.spec.Platform == sdk.PlatformAndroid {
		return "com.google.android.inputmethod.latin:id/" + rid
	}
	return ""
}

// shadeLayer is the notification shade pulled down from the top.
func (ds *display) shadeLayer(area sdk.Rect) *layer {
	l := &layer{area: area, modal: true}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: area, Enabled: true, Visible: true,
		ResourceID: ds.sysID("notification_panel")}, fill: shadeFill})
	row := func(i, h int) sdk.Rect {
		return sdk.Rect{Left: area.Left + ds.px(12), Top: area.Top + ds.px(i), Right: area.Right - ds.px(12), Bottom: area.Top + ds.px(i+h)}
	}
	title := ds.sys("text", "Notifications", "", row(8, 40))
	title.bold = true
	l.add(root, title)
	y := 56
	for _, n := range ds.notes {
		r := row(y, noteRowDP)
		if r.Bottom > area.Bottom-ds.px(64) {
			break
		}
		ds.noteRow(l, root, n, r, true)
		y += noteRowDP + 8
	}
	clr := ds.button("button", "Clear all", "clear_all", sdk.Rect{Left: area.Right - ds.px(140), Top: area.Bottom - ds.px(56), Right: area.Right - ds.px(12), Bottom: area.Bottom - ds.px(8)},
		func() (string, error) {
			ds.notes, ds.shade, ds.headsUp = nil, false, nil
			return "cleared notifications", nil
		})
	l.add(root, clr)
	return l
}

// noteRowDP is the height of a notification's row, in dp.
const noteRowDP = 88

// noteRow adds a notification's row at r under parent, as SystemUI draws
// one in the shade, on the lock screen and as a heads-up banner: the app's
// label and the time (app_name_text), the title and the text. A tappable
// row opens the notification.
func (ds *display) noteRow(l *layer, parent int, n notification, r sdk.Rect, tappable bool) {
	label := ""
	if n.app != nil {
		label = n.app.Label
	}
	item := ds.sys("item", "", "notification", r)
	if tappable {
		item = ds.button("item", "", "notification", r, func() (string, error) { return ds.openNote(n.id) })
	}
	item.el.ContentDescription = strings.TrimSpace(label + " " + n.title)
	item.fill = white
	i := l.add(parent, item)
	l.add(i, ds.sys("text", label+" · "+ds.age(n.posted), "app_name_text", sdk.Rect{Left: r.Left + ds.px(12), Top: r.Top + ds.px(4), Right: r.Right, Bottom: r.Top + ds.px(28)}))
	t := ds.sys("text", n.title, "title", sdk.Rect{Left: r.Left + ds.px(12), Top: r.Top + ds.px(28), Right: r.Right, Bottom: r.Top + ds.px(56)})
	t.bold = true
	l.add(i, t)
	l.add(i, ds.sys("text", n.text, "text", sdk.Rect{Left: r.Left + ds.px(12), Top: r.Top + ds.px(56), Right: r.Right, Bottom: r.Bottom}))
}

// age is how long ago a notification came, as a row writes it: "now",
// "5m", "2h", "May 12".
func (ds *display) age(t time.Time) string {
	switch d := ds.d.now().Sub(t); {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return t.Format("Jan 2")
}

// headsUpFor is how long a new notification shows as a banner over the
// app; a variable for tests.
var headsUpFor = 5 * time.Second

// headsUpLayer is the banner of a notification that just came, over the top
// of the screen.
func (ds *display) headsUpLayer() *layer {
	r := sdk.Rect{Left: ds.px(8), Top: ds.px(8), Right: ds.width - ds.px(8), Bottom: ds.px(8 + noteRowDP)}
	l := &layer{area: r}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: r, Enabled: true, Visible: true,
		ResourceID: ds.sysID("heads_up")}, fill: shadeFill})
	ds.noteRow(l, root, *ds.headsUp, r, true)
	return l
}

// headsUpNote shows a notification that just came as a banner for a few
// seconds, on a phone in use: on and unlocked.
func (p *phone) headsUpNote(n notification) {
	if !p.started || !p.screenOn || p.locked {
		return
	}
	p.headsUp = &n
	shown := p.headsUp
	p.after(headsUpFor, func() {
		if p.headsUp == shown {
			p.headsUp = nil
		}
	})
}

// openNote opens a notification's app and removes it.
func (ds *display) openNote(id int) (string, error) {
	for i, n := range ds.notes {
		if n.id == id {
			ds.notes = append(ds.notes[:i:i], ds.notes[i+1:]...)
			ds.shade = false
			if ds.headsUp != nil && ds.headsUp.id == id {
				ds.headsUp = nil
			}
			if n.app != nil {
				return ds.launch(n.app)
			}
			return "dismissed notification", nil
		}
	}
	return "", nil
}

// recentsLayer lists recently used apps.
func (ds *display) recentsLayer(area sdk.Rect) *layer {
	l := &layer{area: area, modal: true}
	root := l.add(-1, &node{el: sdk.Element{Class: ds.class("group", PerPlatform{}), Bounds: area, Enabled: true, Visible: true,
		ResourceID: ds.launcherID("overview_panel")}, fill: shadeFill})
	for i, a := range ds.recent {
		a := a
		r := sdk.Rect{Left: area.Left + ds.px(24), Top: area.Top + ds.px(16+i*120), Right: area.Right - ds.px(24), Bottom: area.Top + ds.px(16+i*120+104)}
		if r.Bottom > area.Bottom {
			break
		}
		n := ds.button("item", a.Label, "snapshot", r, func() (string, error) { return ds.launch(a) })
		n.el.ContentDescription = a.Label
		n.fill = white
		l.add(root, n)
	}
	return l
}

// progress is the running animation: a bar that grows until it settles.
func (ds *display) progress(area sdk.Rect) *layer {
	frac := min(float64(ds.d.now().Sub(ds.anim.start))/float64(ds.anim.dur), 1)
	r := sdk.Rect{Left: area.Left, Top: area.Bottom - ds.px(48), Right: area.Right, Bottom: area.Bottom}
	l := &layer{area: r}
	bar := ds.sys("progress", ds.anim.label, "progress", sdk.Rect{Left: r.Left, Top: r.Top, Right: r.Left + max(1, int(frac*float64(r.Width()))), Bottom: r.Bottom})
	bar.el.Value = fmt.Sprintf("%.0f%%", frac*100)
	bar.fill = accent
	bar.ink = white
	l.add(-1, bar)
	return l
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
