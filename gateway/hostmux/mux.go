package hostmux

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// Source is what a Mux needs of the driver host: *driverhost.Host is one.
type Source interface {
	// Devices lists every device of every driver, online or not.
	Devices() []driverhost.Device
	// DriverForDevice returns the driver that serves deviceID and its
	// name, or an error wrapping sdk.ErrDeviceNotFound.
	DriverForDevice(deviceID string) (sdk.Full, string, error)
	// Drivers returns the status of every driver.
	Drivers() []driverhost.DriverStatus
	// Subscribe returns a channel of device events and the function that
	// ends the subscription.
	Subscribe() (<-chan driverhost.Event, func())
}

// Mux is the drivers of a Source as one sdk.Full. It is safe for
// concurrent use.
type Mux struct {
	src     Source
	version string
	log     *slog.Logger
}

var (
	_ sdk.Full     = (*Mux)(nil)
	_ sdk.Narrower = (*Mux)(nil)
	_ sdk.Pincher  = (*Mux)(nil)
)

// New returns a Mux over src whose Info carries version. A nil log
// discards.
func New(src Source, version string, log *slog.Logger) *Mux {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Mux{src: src, version: version, log: log}
}

// running reports whether a driver in state s serves calls now.
func running(s driverhost.State) bool {
	return s == driverhost.StateRunning || s == driverhost.StateAttached
}

// Info names the mux "host" and declares the union of the capabilities
// and platforms of the drivers running now, sorted.
func (m *Mux) Info(context.Context) (sdk.Info, error) {
	info := sdk.Info{Name: "host", Version: m.version, Description: "the phone drivers of a Pinky phone host"}
	for _, d := range m.src.Drivers() {
		if !running(d.State) {
			continue
		}
		for _, c := range d.Capabilities {
			if !slices.Contains(info.Capabilities, c) {
				info.Capabilities = append(info.Capabilities, c)
			}
		}
		for _, p := range d.Platforms {
			if !slices.Contains(info.Platforms, p) {
				info.Platforms = append(info.Platforms, p)
			}
		}
	}
	slices.Sort(info.Capabilities)
	slices.Sort(info.Platforms)
	return info, nil
}

// NarrowCapabilities is what Info declares. The SDK's server adapter asks
// it at each GetInfo, so that the link declares what the running drivers
// serve rather than every method the Mux has.
func (m *Mux) NarrowCapabilities() []sdk.Capability {
	info, _ := m.Info(context.Background())
	return info.Capabilities
}

// Pinches is true so that the SDK's server adapter, which decides once
// when it is built, hands pinches to Act; Act refuses one for a device
// whose driver does not serve sdk.CapPinch.
func (m *Mux) Pinches() bool { return true }

// serves reports whether the running drivers together serve c.
func (m *Mux) serves(c sdk.Capability) bool {
	for _, d := range m.src.Drivers() {
		if running(d.State) && slices.Contains(d.Capabilities, c) {
			return true
		}
	}
	return false
}

// capsOf returns the capabilities the named driver declared.
func (m *Mux) capsOf(name string) []sdk.Capability {
	for _, d := range m.src.Drivers() {
		if d.Name == name {
			return d.Capabilities
		}
	}
	return nil
}

// route returns the driver of deviceID and its name, checking that it serves c ("" for
// the calls every driver serves). What no running driver serves is
// unsupported whatever the device, as it is for a single driver that does
// not declare it; otherwise an unknown device is not found, and a device
// whose driver lacks c is unsupported with a sentence naming the driver.
func (m *Mux) route(deviceID string, c sdk.Capability) (sdk.Full, string, error) {
	if c != "" && !m.serves(c) {
		return nil, "", sdk.Errorf(sdk.ErrUnsupported, "no driver of this phone host serves %s", c)
	}
	d, name, err := m.src.DriverForDevice(deviceID)
	if err != nil {
		return nil, "", err
	}
	if d == nil {
		return nil, "", fmt.Errorf("device %q: %w", deviceID, sdk.ErrDeviceNotFound)
	}
	if c != "" && !slices.Contains(m.capsOf(name), c) {
		return nil, "", sdk.Errorf(sdk.ErrUnsupported, "the %s driver of device %q does not serve %s", name, deviceID, c)
	}
	return d, name, nil
}
