package hostmux

import (
	"context"
	"fmt"
	"slices"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// WatchDevices sends DeviceAdded for every device listed now, then
// DevicesSynced, then every change the Source reports, until ctx ends
// (nil) or send fails (its error). Each change is sent as the difference
// between what the peer was last told and what the Source lists now (see
// the package comment), so events that describe a state already sent
// send nothing. It fails when the Source stops, since no change could be
// sent after that.
func (m *Mux) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	// Subscribe before the first list: a change made between the two is
	// then both in the list and in an event, and the event sends nothing.
	events, stop := m.src.Subscribe()
	defer stop()
	sent := map[string]sdk.Device{}
	if err := m.sendDiff(sent, "", send); err != nil {
		return err
	}
	if err := send(sdk.DeviceEvent{Kind: sdk.DevicesSynced}); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				return fmt.Errorf("device watch: %w", driverhost.ErrStopped)
			}
			only := ev.Device.ID
			if ev.Kind == driverhost.EventResync {
				m.log.Debug("device watch fell behind; comparing the whole list")
				only = ""
			}
			if err := m.sendDiff(sent, only, send); err != nil {
				return err
			}
		}
	}
}

// sendDiff sends what differs between sent and the devices listed now, for
// the id only, or for every id when only is "", and records what it sent.
// Additions and changes come first, by id, then removals, by id.
func (m *Mux) sendDiff(sent map[string]sdk.Device, only string, send func(sdk.DeviceEvent) error) error {
	now := m.view(only)
	for _, id := range sortedKeys(now) {
		dev := now[id]
		old, ok := sent[id]
		if ok && old.Equal(dev) {
			continue
		}
		kind := sdk.DeviceChanged
		if !ok {
			kind = sdk.DeviceAdded
		}
		sent[id] = dev
		if err := send(sdk.DeviceEvent{Kind: kind, Device: dev}); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(sent) {
		if _, ok := now[id]; ok || (only != "" && id != only) {
			continue
		}
		delete(sent, id)
		if err := send(sdk.DeviceEvent{Kind: sdk.DeviceRemoved, Device: sdk.Device{ID: id}}); err != nil {
			return err
		}
	}
	return nil
}

// view returns the devices listed now as the peer should see them, by id:
// the id only, or every id when only is "". An id that several drivers
// list is the entry of the driver DriverForDevice picks.
func (m *Mux) view(only string) map[string]sdk.Device {
	byID := map[string][]driverhost.Device{}
	for _, d := range m.src.Devices() {
		if only == "" || d.ID == only {
			byID[d.ID] = append(byID[d.ID], d)
		}
	}
	states := map[string]driverhost.State{}
	caps := map[string][]sdk.Capability{}
	for _, s := range m.src.Drivers() {
		states[s.Name], caps[s.Name] = s.State, s.Capabilities
	}
	info, _ := m.Info(context.Background())
	out := make(map[string]sdk.Device, len(byID))
	for id, entries := range byID {
		e := m.pick(id, entries)
		dev := wire(e, states[e.Driver])
		dev.Caps = narrowed(dev, e.Driver, caps[e.Driver], info.Capabilities)
		out[id] = dev
	}
	return out
}

// narrowed is what a device of the named driver serves among the
// capabilities the link declares (all, the union of the host's drivers):
// nil when that is all of them and the device says nothing itself (a host
// of one driver, as before per-device capabilities); else the device's
// own (or its driver's) with, for each capability of another driver of
// the host, why this phone lacks it.
func narrowed(dev sdk.Device, driver string, driverCaps, all []sdk.Capability) *sdk.DeviceCaps {
	var lacked []sdk.Capability
	for _, c := range all {
		if !slices.Contains(driverCaps, c) {
			lacked = append(lacked, c)
		}
	}
	if dev.Caps == nil && len(lacked) == 0 {
		return nil
	}
	out := &sdk.DeviceCaps{}
	if dev.Caps != nil {
		out.Served = slices.DeleteFunc(slices.Clone(dev.Caps.Served), func(c sdk.Capability) bool { return !slices.Contains(all, c) })
		out.Missing = slices.Clone(dev.Caps.Missing)
	} else {
		out.Served = slices.Clone(driverCaps)
	}
	if out.Served == nil {
		out.Served = []sdk.Capability{}
	}
	for _, c := range lacked {
		if _, ok := dev.Missing(c); !ok {
			out.Missing = append(out.Missing, sdk.MissingCap{Cap: c, Reason: fmt.Sprintf("the %s driver on this phone host, which serves this phone, does not serve it", driver)})
		}
	}
	return out
}

// pick chooses, among the entries of one id, the one whose driver
// DriverForDevice names; failing that, the first one not marked
// Duplicate, else the first.
func (m *Mux) pick(id string, entries []driverhost.Device) driverhost.Device {
	if len(entries) == 1 {
		return entries[0]
	}
	if _, name, err := m.src.DriverForDevice(id); err == nil {
		if i := slices.IndexFunc(entries, func(e driverhost.Device) bool { return e.Driver == name }); i >= 0 {
			return entries[i]
		}
	}
	if i := slices.IndexFunc(entries, func(e driverhost.Device) bool { return !e.Duplicate }); i >= 0 {
		return entries[i]
	}
	return entries[0]
}

// wire is the device as the peer sees it: offline, with a sentence saying
// why, while its driver does not run or has lost it.
func wire(d driverhost.Device, driver driverhost.State) sdk.Device {
	dev := d.Device
	switch {
	case !running(driver):
		dev.State = sdk.StateOffline
		dev.StateDetail = fmt.Sprintf("The %s driver on this phone host is not running (%s).", d.Driver, stateWord(driver))
	case !d.Online && dev.State == sdk.StateOnline:
		dev.State = sdk.StateOffline
		dev.StateDetail = fmt.Sprintf("The %s driver on this phone host cannot reach the phone now.", d.Driver)
	}
	return dev
}

// stateWord names a driver's state in a sentence.
func stateWord(s driverhost.State) string {
	if s == "" {
		return "unknown"
	}
	return string(s)
}

func sortedKeys(m map[string]sdk.Device) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
