// Package hostmux serves the drivers of a phone host as one driver, for
// `pinky host` to carry over its single link to the gateway
// (gateway/remote.Serve serves one sdk.Driver).
//
// A Mux reads a Source, which *driverhost.Host is: its devices are every
// driver's devices, each sent once even when two drivers list one id (the
// entry DriverForDevice picks); each per-device call goes to the driver of
// its device; and Info declares the union of what the running drivers
// serve. A call for a device whose own driver does not serve the
// capability answers sdk.ErrUnsupported with a sentence naming that
// driver, and a call for an unknown device answers sdk.ErrDeviceNotFound.
// Each device says so with its capabilities (sdk.Device.Caps): what it
// serves itself, and for what another driver of the host serves, that its
// driver does not; so a host that mixes drivers passes the conformance
// suite, which checks each device against what it declares. A host of one
// driver sends its devices' own Caps, or none, as that driver does.
//
// # Devices
//
// WatchDevices keeps what it last told the peer about each id and, on
// every event from the Source, reads the device as the Source lists it now
// and sends the difference: DeviceAdded for an id not sent yet,
// DeviceChanged when any field differs, DeviceRemoved when the id is no
// longer listed, nothing when nothing changed. An EventResync (the
// subscriber fell behind) compares the whole list the same way, so nothing
// is lost. A device whose driver is down is sent offline, with a sentence
// saying why.
package hostmux
