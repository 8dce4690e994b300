package driverhost

import (
	"fmt"
	"strconv"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// State is where a driver is in its life.
type State string

// Driver states; the package comment draws the transitions.
const (
	// StateStarting: the first start is under way.
	StateStarting State = "starting"
	// StateRunning: the process answered the handshake and serves calls.
	StateRunning State = "running"
	// StateRestarting: the process exited, failed to start or is being
	// restarted on purpose; a new one starts after the backoff.
	StateRestarting State = "restarting"
	// StateFailed: the driver failed too often; it is retried every
	// Backoff.FailedRetry, or at once by Restart.
	StateFailed State = "failed"
	// StateStopped: Stop ended it.
	StateStopped State = "stopped"
	// StateAttached: a driver started by hand and attached; it is not restarted.
	StateAttached State = "attached"
	// StateExited: an attached driver exited.
	StateExited State = "exited"
)

// DriverStatus describes one driver for `pinky drivers`.
type DriverStatus struct {
	Name         string
	Host         string // the phone host's name for a remote driver (SourceRemote); "" for a local one
	Version      string // from Info; empty until the driver first ran
	Path         string // empty for an attached driver
	Source       string // where Path was found (SourcePin…), or "attach"
	Pid          int    // 0 while no process runs
	State        State
	Restarts     int // restarts begun after the first start, on purpose or after a failure
	Devices      int // devices listed now, online or not
	Capabilities []sdk.Capability
	Platforms    []sdk.Platform // from Info
	LastError    string         // why the driver last failed: a start, an exit, or missed deadlines; kept after a good restart
	Stderr       []string       // the last lines the driver wrote to stderr, oldest first, after each check line (SPEC.md §1.9) that has left them
	StartedAt    time.Time      // when the running process started, or a phone host's link opened; zero when none runs
	UnlinkedAt   time.Time      // when a phone host's link went (StateUnlinked); zero otherwise
}

// String is the short form: name, version, path, pid, state, restarts, devices.
func (s DriverStatus) String() string {
	pid := "-"
	if s.Pid != 0 {
		pid = strconv.Itoa(s.Pid)
	}
	v := s.Version
	if v == "" {
		v = "-"
	}
	p := s.Path
	if p == "" {
		p = "-"
	}
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%d", s.Name, v, p, pid, s.State, s.Restarts, s.Devices)
}

// StatusHeader is the header line that matches DriverStatus.String.
const StatusHeader = "NAME\tVERSION\tPATH\tPID\tSTATE\tRESTARTS\tDEVICES"

// Device is a phone as the host lists it.
type Device struct {
	sdk.Device
	// Driver is the name of the driver that reports the device.
	Driver string
	// Host is the name of the phone host the device is attached to, for a
	// host's device (AddRemote); "" for a device of this machine.
	Host string
	// Online is true while the driver runs and reports the device online.
	Online bool
	// Duplicate is true when another driver listed the same id first;
	// DriverForDevice prefers the other one while it is online.
	Duplicate bool
	// Offered is what the device's driver declared it can do (its Info's
	// capabilities); nil while the host does not know the driver's Info.
	Offered []sdk.Capability
}

// EventKind is what happened to a device.
type EventKind string

// Event kinds.
const (
	EventAdded   EventKind = "added"   // a device was listed for the first time
	EventChanged EventKind = "changed" // its details changed, online or not
	EventOnline  EventKind = "online"  // it became usable (its driver came back, or the device did)
	EventOffline EventKind = "offline" // it became unusable (its driver exited, or the device did)
	EventRemoved EventKind = "removed" // the driver no longer lists it
	// EventResync carries no device: events were dropped because the
	// subscriber fell behind; read Devices again.
	EventResync EventKind = "resync"
)

// Event is one change in the device list.
type Event struct {
	Kind   EventKind
	Device Device
}
