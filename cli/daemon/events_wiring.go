package daemon

import (
	"context"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/notify"
	"github.com/pinky-gateway/pinky/internal/safetext"
)

// wireEvents creates the person's event log and feeds it the approvals (the
// leases and steps come from the agent manager, whose Config.Events is
// this log; the phones from startEvents; the local API serves it with
// eventsSince). New calls it before it builds the agent manager.
func (g *Gateway) wireEvents() {
	g.events = events.New(events.DefaultSize)
	logged := g.approvals.OnChange
	g.approvals.OnChange = func(c approval.Card) {
		if logged != nil {
			logged(c)
		}
		g.events.Publish(approvalEvent(c))
		if c.Status == approval.Pending && g.cfg.Notifier != nil {
			go g.cfg.Notifier.Notify(context.Background(), approvalNote(c)) //nolint:errcheck // best effort; the notifier logs its failures
		}
	}
}

// approvalNote is what the desktop shows of an approval that opened: the
// agent, the phone and the card's one sentence, as the terminal shows
// them (escaped), never its screenshot or arguments.
func approvalNote(c approval.Card) notify.Note {
	body := c.Summary
	if body == "" {
		body = c.Tool + " (" + c.Commit + ")"
	}
	return notify.Note{
		Title: "Pinky: " + safetext.Line(c.Agent) + " asks you",
		Body:  safetext.Line(body) + " on " + safetext.Line(c.Device) + ". pinky approvals, or the console, to answer",
	}
}

// eventsSince reads the event log after a number. A long poll: the handler
// waits for the log, never the other way round, so a slow or gone client
// costs one parked goroutine at most.
func (g *Gateway) eventsSince(ctx context.Context, q api.EventsParams) (api.EventPage, error) {
	return apiEventPage(g.events.Wait(ctx, q.After, q.Max, time.Duration(q.WaitMS)*time.Millisecond)), nil
}

// approvalEvent is an approval's change as the person's stream shows it:
// who, where, which tool and why, never the arguments or the screen (the
// card, read with approvals.list, has them).
func approvalEvent(c approval.Card) events.Event {
	e := events.Event{
		Kind: events.ApprovalDecided, Device: c.Device, Agent: c.Agent, Task: c.TaskID,
		Data: map[string]string{"id": c.ID, "tool": c.Tool, "commit": c.Commit, "rule": c.Rule, "status": string(c.Status)},
	}
	if c.Status == approval.Pending {
		e.Kind = events.ApprovalOpened
	}
	if c.ForTask {
		e.Data["for_task"] = "true"
	}
	return e
}

// startEvents follows the driver host's device events into the log until
// ctx ends or the daemon is told to stop, then closes the log so that long
// polls answer at once instead of holding up the local API's shutdown. Run
// calls it before it starts the drivers, so that the first phones' arrival
// is in the log, and calls the returned function on its way out.
func (g *Gateway) startEvents(ctx context.Context) (stop func()) {
	ch, unsubscribe := g.host.Subscribe()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer g.events.Close()
		online := map[string]bool{}  // the phones the log knows, and whether online
		lacks := map[string]string{} // what each phone lacks, as the log said last (capsEvent)
		for {
			select {
			case <-ctx.Done():
				return
			case <-g.stop:
				return
			case ev, ok := <-ch:
				if !ok {
					return
				}
				g.deviceEvent(online, ev)
				g.capsEvent(lacks, ev)
			}
		}
	}()
	return func() { cancel(); unsubscribe(); <-done }
}

// deviceEvent turns one driver host event into the log's events. online
// is what the log has said of each phone so far; after a resync (the host
// dropped events for us) the differences with the host's list are
// published instead.
func (g *Gateway) deviceEvent(online map[string]bool, ev driverhost.Event) {
	publish := func(kind string, d driverhost.Device) {
		g.events.Publish(events.Event{Kind: kind, Device: d.ID, Data: map[string]string{"driver": d.Driver, "name": d.Name}})
	}
	switch ev.Kind {
	case driverhost.EventAdded:
		online[ev.Device.ID] = ev.Device.Online
		publish(events.DeviceAdded, ev.Device)
	case driverhost.EventOnline:
		online[ev.Device.ID] = true
		publish(events.DeviceOnline, ev.Device)
	case driverhost.EventOffline:
		online[ev.Device.ID] = false
		publish(events.DeviceOffline, ev.Device)
	case driverhost.EventRemoved:
		delete(online, ev.Device.ID)
		publish(events.DeviceRemoved, ev.Device)
	case driverhost.EventResync:
		seen := map[string]bool{}
		for _, d := range g.host.Devices() {
			if d.Duplicate || seen[d.ID] {
				continue
			}
			seen[d.ID] = true
			was, known := online[d.ID]
			switch {
			case !known:
				publish(events.DeviceAdded, d)
			case was && !d.Online:
				publish(events.DeviceOffline, d)
			case !was && d.Online:
				publish(events.DeviceOnline, d)
			}
			online[d.ID] = d.Online
		}
		for id := range online {
			if !seen[id] {
				delete(online, id)
				g.events.Publish(events.Event{Kind: events.DeviceRemoved, Device: id})
			}
		}
	}
}

// capsEvent publishes DeviceCaps when what a phone lacks changes (a
// CHANGED event of its driver, say an iPhone whose broadcast connected),
// so that the person's views (the console's card and mirror) follow it.
// lacks is what the log said last of each phone; after a resync the
// host's list is compared with it instead.
func (g *Gateway) capsEvent(lacks map[string]string, ev driverhost.Event) {
	publish := func(d driverhost.Device) {
		if now, changed := capsChanged(lacks, d); changed {
			g.events.Publish(events.Event{Kind: events.DeviceCaps, Device: d.ID, Data: map[string]string{"driver": d.Driver, "name": d.Name, "missing": now}})
		}
	}
	switch ev.Kind {
	case driverhost.EventRemoved:
		delete(lacks, ev.Device.ID)
	case driverhost.EventResync:
		for _, d := range g.host.Devices() {
			publish(d)
		}
	default:
		publish(ev.Device)
	}
}

// capsChanged records what phone d lacks now in lacks (its capability
// names, comma-separated in its Caps' order; "" for nothing) and reports
// whether that differs from what lacks held. A phone's first sight only
// records it: device.added brings the phone with what it lacks.
func capsChanged(lacks map[string]string, d driverhost.Device) (string, bool) {
	if d.ID == "" || d.Duplicate {
		return "", false
	}
	var names []string
	if d.Caps != nil {
		for _, m := range d.Caps.Missing {
			names = append(names, string(m.Cap))
		}
	}
	now := strings.Join(names, ",")
	was, known := lacks[d.ID]
	lacks[d.ID] = now
	return now, known && was != now
}
