package adb

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"strconv"
	"strings"
)

// Version returns the adb server's protocol version (41 for adb 29 to 36).
func (c *Client) Version(ctx context.Context) (int, error) {
	s, err := c.query(ctx, "host:version")
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, protoErrorf("adb host:version: bad version %q", s)
	}
	return int(v), nil
}

// Kill asks the adb server to exit (adb kill-server).
func (c *Client) Kill(ctx context.Context) error {
	cn, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	err = cn.request("host:kill")
	// The server may exit before its OKAY reaches us.
	if errors.Is(err, errNoReply) {
		return nil
	}
	return err
}

// Connect asks the server to connect to a device over TCP/IP
// ("HOST:PORT"), like adb connect. It returns the server's message
// ("connected to …" or "already connected to …"); a failure to connect is a
// *ServerError with the server's message.
func (c *Client) Connect(ctx context.Context, addr string) (string, error) {
	req := "host:connect:" + addr
	msg, err := c.query(ctx, req)
	if err != nil {
		return "", err
	}
	// adb 29 answers OKAY and puts the outcome in the text.
	if strings.HasPrefix(msg, "connected to") || strings.HasPrefix(msg, "already connected to") {
		return msg, nil
	}
	return "", failError(req, msg)
}

// Disconnect asks the server to drop a TCP/IP device ("HOST:PORT"), like adb
// disconnect. An unknown address gives an error wrapping ErrDeviceNotFound.
func (c *Client) Disconnect(ctx context.Context, addr string) error {
	cn, err := c.open(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	return cn.request("host:disconnect:" + addr)
}

// Devices returns the devices the server knows (adb devices -l).
func (c *Client) Devices(ctx context.Context) ([]DeviceInfo, error) {
	s, err := c.query(ctx, "host:devices-l")
	if err != nil {
		return nil, err
	}
	return parseDevices(s), nil
}

// TrackDevices yields the server's device list now and after each change,
// until ctx ends or the connection fails, whose error it yields last. The
// adb server sends a snapshot per change; an empty list is a snapshot too.
// When the server restarts the sequence ends with an error: call again.
func (c *Client) TrackDevices(ctx context.Context) iter.Seq2[[]DeviceInfo, error] {
	return func(yield func([]DeviceInfo, error) bool) {
		cn, req, err := c.track(ctx)
		if err != nil {
			yield(nil, err)
			return
		}
		defer cn.Close()
		for {
			s, err := cn.readString(req)
			if errors.Is(err, errClosed) {
				// The stream is endless; the server closes it when it exits.
				err = fmt.Errorf("adb %s: the stream ended: %w", req, ErrServerNotRunning)
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(parseDevices(s), nil) {
				return
			}
		}
	}
}

func (c *Client) track(ctx context.Context) (*conn, string, error) {
	var last error
	// track-devices-l is newer (adb 29 has it); fall back for older servers.
	for _, req := range []string{"host:track-devices-l", "host:track-devices"} {
		cn, err := c.open(ctx)
		if err != nil {
			return nil, "", err
		}
		if last = cn.request(req); last == nil {
			return cn, req, nil
		}
		cn.Close()
		var se *ServerError
		if !errors.As(last, &se) {
			break
		}
	}
	return nil, "", last
}

// WatchDevices yields the changes between the snapshots of TrackDevices: at
// first one DeviceAdded per device already there, then additions, removals
// and changes (of state or details) as they happen. It ends like
// TrackDevices, with the error last.
func (c *Client) WatchDevices(ctx context.Context) iter.Seq2[DeviceEvent, error] {
	return func(yield func(DeviceEvent, error) bool) {
		var prev []DeviceInfo
		for list, err := range c.TrackDevices(ctx) {
			if err != nil {
				yield(DeviceEvent{}, err)
				return
			}
			for _, ev := range Diff(prev, list) {
				if !yield(ev, nil) {
					return
				}
			}
			prev = list
		}
	}
}

// EventKind says what happened to a device.
type EventKind int

// The event kinds.
const (
	DeviceAdded EventKind = iota + 1
	DeviceRemoved
	DeviceChanged
)

func (k EventKind) String() string {
	switch k {
	case DeviceAdded:
		return "added"
	case DeviceRemoved:
		return "removed"
	case DeviceChanged:
		return "changed"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// DeviceEvent is one change in the device list.
type DeviceEvent struct {
	Kind EventKind
	// Device is the device as it is now; for DeviceRemoved, as it was last.
	Device DeviceInfo
	// OldState is the state before a DeviceChanged, else empty.
	OldState State
}

// Diff returns the events that turn the device list prev into next: removals
// first, then additions and changes in next's order.
func Diff(prev, next []DeviceInfo) []DeviceEvent {
	old := make(map[string]DeviceInfo, len(prev))
	for _, d := range prev {
		old[d.Serial] = d
	}
	now := make(map[string]bool, len(next))
	for _, d := range next {
		now[d.Serial] = true
	}
	var evs []DeviceEvent
	for _, d := range prev {
		if !now[d.Serial] {
			evs = append(evs, DeviceEvent{Kind: DeviceRemoved, Device: d})
		}
	}
	for _, d := range next {
		o, ok := old[d.Serial]
		switch {
		case !ok:
			evs = append(evs, DeviceEvent{Kind: DeviceAdded, Device: d})
		case !o.equal(d):
			evs = append(evs, DeviceEvent{Kind: DeviceChanged, Device: d, OldState: o.State})
		}
	}
	return evs
}

// State is a device's connection state as the adb server reports it.
type State string

// The states adb reports. A state not listed here is kept as the server's text.
const (
	StateDevice        State = "device"
	StateOffline       State = "offline"
	StateUnauthorized  State = "unauthorized"
	StateAuthorizing   State = "authorizing"
	StateConnecting    State = "connecting"
	StateNoPermissions State = "no permissions"
	StateBootloader    State = "bootloader"
	StateRecovery      State = "recovery"
	StateRescue        State = "rescue"
	StateSideload      State = "sideload"
	StateHost          State = "host"
)

// DeviceInfo is one line of adb devices -l.
type DeviceInfo struct {
	Serial string
	State  State
	// StateText is the server's full state text when it says more than
	// State, e.g. the udev help after "no permissions".
	StateText   string
	Product     string
	Model       string
	Device      string
	USB         string
	TransportID int64
	// Attrs holds every key:value detail, including those above.
	Attrs map[string]string
}

func (d DeviceInfo) equal(o DeviceInfo) bool {
	return d.Serial == o.Serial && d.State == o.State && d.StateText == o.StateText && maps.Equal(d.Attrs, o.Attrs)
}

// Err returns nil when the device can run services (state "device"), else
// an error for the person that wraps ErrUnauthorized, ErrNoPermission or
// ErrOffline.
func (d DeviceInfo) Err() error {
	switch d.State {
	case StateDevice:
		return nil
	case StateUnauthorized:
		return fmt.Errorf("phone %s has not authorized this computer: unlock it and accept the "+
			"\"Allow USB debugging?\" prompt on its screen (tick \"Always allow from this computer\"); "+
			"if no prompt shows, unplug and replug the cable: %w", d.Serial, ErrUnauthorized)
	case StateNoPermissions:
		return fmt.Errorf("phone %s cannot be opened by this user (%s): add a udev rule for it "+
			"(Debian: apt install android-sdk-platform-tools-common) and replug the cable: %w",
			d.Serial, d.StateText, ErrNoPermission)
	case StateOffline, StateConnecting, StateAuthorizing:
		return fmt.Errorf("phone %s is %s: wait, or unplug and replug it: %w", d.Serial, d.State, ErrOffline)
	}
	return fmt.Errorf("phone %s is in %s mode: restart it normally: %w", d.Serial, d.State, ErrOffline)
}

// parseDevices parses the output of host:devices-l (or host:devices):
// "SERIAL<spaces>STATE[ key:value…]" per line. The state may hold spaces
// ("no permissions (…); see [http://…]"), so details are taken from the end.
func parseDevices(s string) []DeviceInfo {
	var list []DeviceInfo
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		d := DeviceInfo{Serial: f[0], Attrs: map[string]string{}}
		i := len(f)
		for i > 1 && isDetail(f[i-1]) {
			i--
		}
		for _, kv := range f[i:] {
			k, v, _ := strings.Cut(kv, ":")
			d.Attrs[k] = v
		}
		text := strings.Join(f[1:i], " ")
		d.State = State(text)
		if strings.HasPrefix(text, string(StateNoPermissions)) {
			d.State, d.StateText = StateNoPermissions, text
		}
		d.Product, d.Model, d.Device, d.USB = d.Attrs["product"], d.Attrs["model"], d.Attrs["device"], d.Attrs["usb"]
		d.TransportID, _ = strconv.ParseInt(d.Attrs["transport_id"], 10, 64)
		list = append(list, d)
	}
	return list
}

// isDetail reports whether a devices-l field is a key:value detail.
func isDetail(f string) bool {
	k, _, ok := strings.Cut(f, ":")
	if !ok || k == "" {
		return false
	}
	for _, r := range k {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// Forward is one port forward, from adb forward --list or adb reverse --list.
type Forward struct {
	// Serial is the device's serial; "host" in a reverse list.
	Serial string
	// Local and Remote are socket specs, e.g. "tcp:27183", "localabstract:scrcpy".
	Local, Remote string
}

// ListForward returns every forward the server holds, for all devices.
func (c *Client) ListForward(ctx context.Context) ([]Forward, error) {
	s, err := c.query(ctx, "host:list-forward")
	if err != nil {
		return nil, err
	}
	return parseForwards(s), nil
}

func parseForwards(s string) []Forward {
	var list []Forward
	for line := range strings.Lines(s) {
		if f := strings.Fields(line); len(f) == 3 {
			list = append(list, Forward{Serial: f[0], Local: f[1], Remote: f[2]})
		}
	}
	return list
}
