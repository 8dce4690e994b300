package sim

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// phone is one virtual phone's state. mu guards every field below it and
// the phone's displays; lock order: phone.mu before Driver.watchMu.
type phone struct {
	d    *Driver
	spec *PhoneSpec
	apps []*AppSpec

	mu        sync.Mutex
	present   bool // false while a drop fault has removed it
	online    bool
	screenOn  bool
	locked    bool
	pinEntry  string
	pinWrong  bool
	displays  map[int]*display // by id; 0, the phone's own screen, is always there
	lastID    int              // the last background display id handed out
	recent    []*AppSpec       // apps used on display 0, for its recents panel
	vars      map[string]string
	lists     map[string][]string
	notes     []notification
	nextNote  int
	headsUp   *notification // the banner of the notification that just came, on display 0
	started   bool          // the world's own notifications are in: later ones come as banners
	clipboard string
	clipWatch map[*func(string)]struct{} // WatchClipboard's callbacks
	timers    map[*time.Timer]struct{}
	folder    string // the Pinky folder, made on first use
	closed    bool
	lacks     map[sdk.Capability]LackSpec // what the phone does not serve now
}

// entry is one screen on the back stack.
type entry struct {
	app    *AppSpec
	screen string
	scroll map[string]int // pixels scrolled, by element path
}

type notification struct {
	id          int
	app         *AppSpec
	title, text string
	posted      time.Time
}

type animation struct {
	start time.Time
	dur   time.Duration
	label string
}

func newPhone(d *Driver, spec *PhoneSpec, all []*AppSpec) *phone {
	p := &phone{
		d: d, spec: spec,
		present: true, online: true, screenOn: !spec.ScreenOff, locked: spec.Locked,
		vars: map[string]string{}, lists: map[string][]string{},
		clipboard: spec.Clipboard, timers: map[*time.Timer]struct{}{},
		lacks: map[sdk.Capability]LackSpec{},
	}
	for _, l := range spec.Lacks {
		p.lacks[l.Capability] = l
	}
	p.displays = map[int]*display{0: newDisplay(p, 0, spec.Width, spec.Height, spec.Density)}
	for _, a := range all {
		if spec.dump == nil && (len(spec.Apps) == 0 || slices.Contains(spec.Apps, a.Key)) {
			p.apps = append(p.apps, a)
		}
	}
	for _, a := range p.apps {
		for k, v := range a.Vars {
			p.vars[k] = v
		}
		for k, v := range a.Lists {
			p.lists[k] = append([]string(nil), v...)
		}
	}
	// Under the lock: a notification that comes later starts a timer that
	// takes it.
	p.mu.Lock()
	for _, n := range spec.Notifications {
		p.post(n)
	}
	p.started = true
	p.mu.Unlock()
	return p
}

// device describes the phone for WatchDevices.
func (p *phone) device() sdk.Device {
	s := p.spec
	dev := sdk.Device{
		ID: s.ID, Name: s.Name, Model: s.Model, Manufacturer: s.Manufacturer, Platform: s.Platform,
		OSVersion: s.OSVersion, Connection: sdk.ConnVirtual, State: sdk.StateOnline,
		LockState: sdk.LockUnlocked, ScreenOn: p.screenOn, Caps: p.caps(),
	}
	if !p.online {
		dev.State = sdk.StateOffline
	}
	if p.locked {
		dev.LockState = sdk.LockLocked
	}
	return dev
}

// changed tells watchers about the phone's new state.
func (p *phone) changed() {
	p.d.publish(sdk.DeviceEvent{Kind: sdk.DeviceChanged, Device: p.device()})
}

// after runs f with p.mu held once delay has passed, unless the phone closes first.
func (p *phone) after(delay time.Duration, f func()) {
	var t *time.Timer
	t = time.AfterFunc(delay, func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, ok := p.timers[t]; !ok || p.closed {
			return
		}
		delete(p.timers, t)
		f()
	})
	p.timers[t] = struct{}{}
}

// close stops the phone's timers. It returns the Pinky folder to remove.
func (p *phone) close() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for t := range p.timers {
		t.Stop()
	}
	clear(p.timers)
	return p.folder
}

// appID is an app's id on this phone's platform.
func (p *phone) appID(a *AppSpec) string { return a.ID.For(p.spec.Platform) }

// main is display 0, the phone's own screen.
func (p *phone) main() *display { return p.displays[0] }

// top is the entry in front, or nil for the launcher.
func (ds *display) top() *entry {
	if len(ds.stack) == 0 {
		return nil
	}
	return ds.stack[len(ds.stack)-1]
}

// expand replaces {name} with locals, then variables.
func (p *phone) expand(s string, locals map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '{')
		j := strings.IndexByte(s[i+1:], '}')
		if i < 0 || j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+1 : i+1+j]
		b.WriteString(s[:i])
		if v, ok := locals[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(p.vars[name])
		}
		s = s[i+2+j:]
	}
}

// post adds a notification now, or later when n.After is set.
func (p *phone) post(n NotifySpec) {
	add := func() {
		p.nextNote++
		note := notification{id: p.nextNote, app: findApp(p.apps, n.App), title: n.Title, text: n.Text, posted: p.d.now()}
		p.notes = append(p.notes, note)
		p.headsUpNote(note)
	}
	if n.After > 0 {
		p.after(n.After, add)
		return
	}
	add()
}

// idle reports whether no animation is running on any display.
func (p *phone) idle() bool {
	for _, ds := range p.displays {
		if ds.anim != nil {
			return false
		}
	}
	return true
}
