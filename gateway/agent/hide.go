package agent

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/secrets"
)

// What the gateway hides beyond a screen's own secrets (issue 12, items 5
// and 6). A blocked app's notifications show in the shade, on the lock
// screen and as banners over other apps, where a row names its app by its
// label and never by its id; and a code the gateway saw (on a blocked app's
// screen, which no agent sees, or masked anywhere) may come back on another
// screen through the clipboard. For that each phone keeps its apps' labels
// and its notifications, listed from the driver only when a read shows a
// notification the gateway cannot place, and a secrets.Recall of the codes
// it saw.

// Timing of what a phone keeps.
const (
	recallFor   = 10 * time.Minute // how long a code seen on the phone is remembered
	appsFor     = 10 * time.Minute // how long the phone's app list is trusted
	appsRetry   = 30 * time.Second // the least time between two listings for a label nobody knows
	notesRetry  = time.Second      // the least time between two listings for a notification nobody knows
	listTimeout = 3 * time.Second  // the most a listing may take in a read
)

// hideState is one phone's part of what is hidden. It has its own lock,
// never held across a driver call; the zero value is ready.
type hideState struct {
	mu     sync.Mutex
	recall *secrets.Recall

	apps    []sdk.App // the phone's apps, as last listed
	appsAt  time.Time // when they were last asked for
	appsOK  bool      // a listing succeeded
	noApps  bool      // the driver cannot list apps
	notes   []sdk.Notification
	notesAt time.Time
	noNotes bool // the driver cannot list notifications
}

// codes returns the phone's Recall, made on first use.
func (h *hideState) codes() *secrets.Recall {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.recall == nil {
		h.recall = secrets.NewRecall(recallFor)
	}
	return h.recall
}

// mask is secrets.MaskScreen for a screen of device, with what the gateway
// hides beyond it: blocked apps' notifications and the codes it saw on the
// phone. fresh marks an agent's read, which may list the phone's apps or
// notifications from the driver when the screen shows a notification the
// gateway cannot place; the recorder's reads use what is known. A
// notification the gateway cannot tell apart from a blocked app's is
// hidden.
func (m *Manager) mask(p *phone, device string, sc *sdk.Screen, fresh bool) (*sdk.Screen, []sdk.Rect) {
	if sc == nil {
		return nil, nil
	}
	h := &p.hide
	opts := secrets.Options{AuthenticatorApp: m.category(sc.App.ID) == "authenticators", Recall: h.codes()}
	if g := m.cfg.Guard; g != nil {
		if notices := secrets.Notices(sc); len(notices) > 0 {
			if fresh {
				m.refresh(p, device, notices)
			}
			opts.Hide = h.hider(g.Blocked, m.appName)
		}
	}
	return secrets.MaskScreen(sc, opts)
}

// remember learns every code on a screen that no agent sees (a blocked
// app's): a blind copy of one is masked wherever it shows later.
func (m *Manager) remember(p *phone, sc *sdk.Screen) {
	if sc == nil {
		return
	}
	secrets.MaskScreen(sc, secrets.Options{AllCodes: true, AuthenticatorApp: true, Recall: p.hide.codes()})
}

// appName is the policy's name of an app, when the guard knows names
// (Android's drivers list apps by package name only).
func (m *Manager) appName(id string) string {
	if n, ok := m.cfg.Guard.(interface{ AppName(string) string }); ok {
		return n.AppName(id)
	}
	return ""
}

// refresh lists the phone's apps and notifications when the notices on a
// screen need it: the apps when never listed, when the list is old, or
// (at most every 30 s) when a row names an app the list does not have; the
// notifications when a row shows one the last list did not have (at most
// every second). A driver that cannot list is not asked again.
func (m *Manager) refresh(p *phone, device string, notices []secrets.Notice) {
	h := &p.hide
	now := time.Now()
	h.mu.Lock()
	labels := map[string]bool{}
	for _, a := range h.apps {
		for _, l := range labelsOf(a, m.appName) {
			labels[l] = true
		}
	}
	unknownLabel, unknownNote := false, false
	for _, n := range notices {
		if l := fold(n.App); l != "" && !labels[l] {
			unknownLabel = true
		}
		if !h.placed(n) {
			unknownNote = true
		}
	}
	needApps := !h.noApps && (h.appsAt.IsZero() || now.Sub(h.appsAt) >= appsFor || unknownLabel && now.Sub(h.appsAt) >= appsRetry)
	needNotes := !h.noNotes && unknownNote && (h.notesAt.IsZero() || now.Sub(h.notesAt) >= notesRetry)
	if needApps {
		h.appsAt = now
	}
	if needNotes {
		h.notesAt = now
	}
	h.mu.Unlock()
	if !needApps && !needNotes {
		return
	}
	drv, _, err := m.cfg.Drivers.DriverForDevice(device)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), listTimeout)
	defer cancel()
	if needApps {
		var apps []sdk.App
		var err error = sdk.ErrUnsupported
		if m.serves(p, sdk.CapApps) {
			apps, err = drv.ListApps(ctx, device)
		}
		h.mu.Lock()
		switch {
		case err == nil:
			h.apps, h.appsOK = apps, true
		case errors.Is(err, sdk.ErrUnsupported):
			h.noApps = true
		default:
			m.log.Debug("listing apps to place notifications", "device", device, "err", err)
		}
		h.mu.Unlock()
	}
	if needNotes {
		var notes []sdk.Notification
		var err error = sdk.ErrUnsupported
		if m.serves(p, sdk.CapNotifications) {
			notes, err = drv.ListNotifications(ctx, device)
		}
		recall := h.codes()
		h.mu.Lock()
		switch {
		case err == nil:
			h.notes = notes
		case errors.Is(err, sdk.ErrUnsupported):
			h.noNotes = true
		default:
			m.log.Debug("listing notifications to place them", "device", device, "err", err)
		}
		h.mu.Unlock()
		for _, n := range notes {
			// A code the phone received is remembered like one it showed.
			recall.AddNotification(n, m.cfg.Guard.Blocked(n.AppID))
		}
	}
}

// placed reports whether a notice matches a listed notification; h.mu is
// held.
func (h *hideState) placed(n secrets.Notice) bool {
	for _, note := range h.notes {
		if sameNotice(n, note) {
			return true
		}
	}
	return false
}

// hider returns the rule that hides a phone's notices, from what is known
// now: a notice is hidden when its label is a blocked app's (as the phone
// or the app table names it), when it shows a listed notification of a
// blocked app, or, when the phone does not tell some blocked app's label
// (its apps could not be listed, or the driver lists Android packages by
// id: a name from the app table may differ from the launcher's), when its
// label is not an allowed app's.
func (h *hideState) hider(blocked func(string) bool, name func(string) string) func(secrets.Notice) bool {
	h.mu.Lock()
	apps, notes, complete := h.apps, h.notes, h.appsOK
	h.mu.Unlock()
	hiddenLabels, shownLabels := map[string]bool{}, map[string]bool{}
	for _, a := range apps {
		labels := labelsOf(a, name)
		if !blocked(a.ID) {
			for _, l := range labels {
				shownLabels[l] = true
			}
			continue
		}
		if fold(a.Label) == "" || fold(a.Label) == fold(a.ID) {
			complete = false
		}
		for _, l := range labels {
			hiddenLabels[l] = true
		}
	}
	var hiddenNotes []sdk.Notification
	for _, n := range notes {
		if n.AppID != "" && blocked(n.AppID) {
			hiddenNotes = append(hiddenNotes, n)
		}
	}
	return func(n secrets.Notice) bool {
		l := fold(n.App)
		if l != "" && hiddenLabels[l] {
			return true
		}
		for _, note := range hiddenNotes {
			if sameNotice(n, note) {
				return true
			}
		}
		if l != "" && shownLabels[l] {
			return false
		}
		return !complete
	}
}

// labelsOf is what a notification row may call an app: its label on the
// phone (unless that is only its id) and its name in the policy's table.
func labelsOf(a sdk.App, name func(string) string) []string {
	var out []string
	if l := fold(a.Label); l != "" && l != fold(a.ID) {
		out = append(out, l)
	}
	if l := fold(name(a.ID)); l != "" && (len(out) == 0 || out[0] != l) {
		out = append(out, l)
	}
	return out
}

// sameNotice reports whether a notice on screen shows a listed
// notification: the same title, and the same text or the start of it (a
// row cuts a long text).
func sameNotice(n secrets.Notice, note sdk.Notification) bool {
	title, text := clip(n.Title), clip(n.Text)
	if title == "" && text == "" {
		return false
	}
	if title != "" && title != strings.TrimSpace(note.Title) {
		return false
	}
	full := strings.TrimSpace(note.Text)
	return text == full || text != "" && strings.HasPrefix(full, text) || text == "" && full == ""
}

// clip trims a row's text and the ellipsis it was cut with.
func clip(s string) string {
	s = strings.TrimSpace(s)
	s = strings.TrimSuffix(strings.TrimSuffix(s, "…"), "...")
	return strings.TrimSpace(s)
}

// fold is how labels compare: "MESSAGES" on an iPhone's banner is Messages.
func fold(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
