package daemon

import (
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/agent"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/approval"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/events"
	"github.com/pinky-gateway/pinky/gateway/settings"
)

// The core's values as the local API's wire types. Package api keeps its
// own types so that its clients see the same JSON while the core changes;
// these functions are the one place that copies one into the other
// (wire_test.go fails when a field of the core is not copied).

// APIDevices is the local API's view of the driver host's phones.
// It is never nil ([] on the wire when there are none).
func APIDevices(ds []driverhost.Device) []api.Device {
	out := make([]api.Device, len(ds))
	for i, d := range ds {
		out[i] = apiDevice(d)
	}
	return out
}

// apiDevice is a phone on the wire, with what it lacks (sdk.Device.Caps).
func apiDevice(d driverhost.Device) api.Device {
	out := api.Device{
		ID: d.ID, Driver: d.Driver, Host: d.Host, Online: d.Online, Name: d.Name, Model: d.Model, Manufacturer: d.Manufacturer,
		Platform: string(d.Platform), OSVersion: d.OSVersion, Connection: string(d.Connection), State: string(d.State),
		LockState: string(d.LockState), Duplicate: d.Duplicate, Detail: d.StateDetail,
	}
	if d.Caps != nil {
		out.Missing = wireList(d.Caps.Missing, func(m sdk.MissingCap) api.MissingCap {
			return api.MissingCap{Capability: string(m.Cap), Reason: m.Reason, Fix: m.Fix}
		})
	}
	out.NotOffered = notOffered(d)
	return out
}

// notOffered lists what a phone cannot do without a Missing entry that
// says why: what its driver does not offer, and what the phone's own
// Caps leave out of both lists. Nothing while the driver's capabilities
// are unknown (d.Offered nil), so that such a phone does not look bare.
func notOffered(d driverhost.Device) []string {
	if d.Offered == nil {
		return nil
	}
	var out []string
	for _, c := range sdk.AllCapabilities {
		if _, missing := d.Missing(c); !missing && !d.Serves(c, d.Offered) {
			out = append(out, string(c))
		}
	}
	return out
}

// apiCard is an approval's card on the wire.
func apiCard(c approval.Card) api.Card {
	return api.Card{
		ID: c.ID, Agent: c.Agent, TaskText: c.TaskText, Device: c.Device, Tool: c.Tool, Args: c.Args,
		Commit: c.Commit, Rule: c.Rule, Target: c.Target, Evidence: c.Evidence, Summary: c.Summary,
		Counterpart: c.Counterpart, ForTaskCovers: c.ForTaskCovers, Screen: c.Screen, Screenshot: c.Screenshot,
		ScreenshotPath: c.ScreenshotPath, Status: string(c.Status), OpenedAt: c.OpenedAt, ExpiresAt: c.ExpiresAt,
		DecidedAt: c.DecidedAt, Reason: c.Reason, ForTask: c.ForTask, TaskID: c.TaskID,
	}
}

// apiLease is a lease on the wire.
func apiLease(l agent.LeaseStatus) api.Lease {
	return api.Lease{
		Device: l.Device, Agent: l.Agent, Task: l.Task, TaskID: l.TaskID, Since: l.Since, LastUsed: l.LastUsed,
		Steps: l.Steps, WithPerson: l.WithPerson, Display: l.Display, ParkedUntil: l.ParkedUntil,
		Fence: l.Fence,
	}
}

// apiEvent is an event of the log on the wire.
func apiEvent(e events.Event) api.Event {
	return api.Event{Seq: e.Seq, Time: e.Time, Kind: e.Kind, Device: e.Device, Agent: e.Agent, Task: e.Task, Data: e.Data}
}

// apiEventPage is a read of the event log on the wire.
func apiEventPage(p events.Page) api.EventPage {
	return api.EventPage{Events: wireList(p.Events, apiEvent), Next: p.Next, Gap: p.Gap, Last: p.Last, Closed: p.Closed}
}

// apiSettings is the person's settings on the wire.
func apiSettings(s settings.Settings) api.Settings {
	return api.Settings{Recording: s.Recording, RetentionDays: s.RetentionDays, ReadOnly: s.ReadOnly}
}

func apiCards(cs []approval.Card) []api.Card       { return wireList(cs, apiCard) }
func apiLeases(ls []agent.LeaseStatus) []api.Lease { return wireList(ls, apiLease) }

// wireList converts each element; nil stays nil (null on the wire), empty
// stays empty ([]), as the core's list was.
func wireList[T, W any](in []T, f func(T) W) []W {
	if in == nil {
		return nil
	}
	out := make([]W, len(in))
	for i, v := range in {
		out[i] = f(v)
	}
	return out
}
