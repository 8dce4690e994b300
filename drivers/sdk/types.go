package sdk

import (
	"slices"
	"time"
)

// Capability names an optional part of the driver contract. A driver serves
// one by implementing the matching optional interface (see Capabilities).
type Capability string

// The optional capabilities. Each matches a CAPABILITY_* value of the proto.
const (
	CapInput         Capability = "input"
	CapVideo         Capability = "video"
	CapFrameCapture  Capability = "frame_capture"
	CapWake          Capability = "wake"
	CapUnlock        Capability = "unlock"
	CapLockEvents    Capability = "lock_events"
	CapWaitIdle      Capability = "wait_idle"
	CapApps          Capability = "apps"
	CapFiles         Capability = "files"
	CapDisplays      Capability = "displays"
	CapNotifications Capability = "notifications"
	CapPinch         Capability = "pinch"
)

// AllCapabilities lists every capability in a fixed order.
var AllCapabilities = []Capability{
	CapInput, CapVideo, CapFrameCapture, CapWake, CapUnlock,
	CapLockEvents, CapWaitIdle, CapApps, CapFiles, CapDisplays, CapNotifications, CapPinch,
}

// Info describes a driver.
type Info struct {
	Name         string // short lowercase name, e.g. "android"
	Version      string
	Description  string
	Platforms    []Platform
	Capabilities []Capability // filled in by the server adapter from the interfaces implemented
}

// Has reports whether the driver serves capability c.
func (i Info) Has(c Capability) bool {
	for _, x := range i.Capabilities {
		if x == c {
			return true
		}
	}
	return false
}

// Platform is a device's operating system family.
type Platform string

// Platforms.
const (
	PlatformUnknown Platform = ""
	PlatformAndroid Platform = "android"
	PlatformIOS     Platform = "ios"
	PlatformOther   Platform = "other"
)

// Connection is how the computer reaches a device.
type Connection string

// Connections.
const (
	ConnUnknown Connection = ""
	ConnUSB     Connection = "usb"
	ConnWiFi    Connection = "wifi"
	ConnVirtual Connection = "virtual"
	ConnNetwork Connection = "network"
)

// DeviceState says whether a device can be used now.
type DeviceState string

// Device states.
const (
	StateUnknown      DeviceState = ""
	StateOnline       DeviceState = "online"
	StateOffline      DeviceState = "offline"
	StateUnauthorized DeviceState = "unauthorized"
	StateBooting      DeviceState = "booting"
)

// LockState is the lock screen's state.
type LockState string

// Lock states.
const (
	LockUnknown  LockState = ""
	LockUnlocked LockState = "unlocked"
	LockLocked   LockState = "locked"
)

// Device is one phone as a driver sees it.
type Device struct {
	ID           string
	Name         string
	Model        string
	Manufacturer string
	Platform     Platform
	OSVersion    string
	Connection   Connection
	State        DeviceState
	LockState    LockState // known only with CapLockEvents
	ScreenOn     bool
	// StateDetail says, when State is not online, why and what the person
	// can do, in one sentence (at most MaxStateDetail bytes are sent).
	StateDetail string
	// Caps is what this device can do now, when that differs from phone to
	// phone; nil means every capability its driver declares (Info), as for
	// drivers that predate per-device capabilities. See DeviceCaps.
	Caps *DeviceCaps
}

// MaxStateDetail bounds Device.StateDetail on the wire, in bytes.
const MaxStateDetail = 256

// DeviceCaps is what one device serves now, and why it lacks the rest of
// its driver's capabilities. A device MUST NOT list in Served what it
// cannot serve now: the host then answers agents "unsupported" with the
// Missing entry's reason and fix, without calling the driver. Served is a
// subset of the driver's Info.Capabilities; a driver sends a device
// CHANGED event when the set changes.
type DeviceCaps struct {
	Served  []Capability
	Missing []MissingCap
}

// MissingCap is a capability of the driver that one device lacks: why
// (Reason, for a person) and how to enable it (Fix, a sentence or a
// command), each at most MaxStateDetail bytes on the wire.
type MissingCap struct {
	Cap    Capability
	Reason string
	Fix    string
}

// Equal reports whether d and o are the same device in every field,
// their Caps compared by content.
func (d Device) Equal(o Device) bool {
	dc, oc := d.Caps, o.Caps
	d.Caps, o.Caps = nil, nil
	if d != o || (dc == nil) != (oc == nil) {
		return false
	}
	return dc == nil || (slices.Equal(dc.Served, oc.Served) && slices.Equal(dc.Missing, oc.Missing))
}

// Serves reports whether a device serves c, given its driver's
// capabilities: by its own Caps when it has them, else by the driver's.
func (d Device) Serves(c Capability, driver []Capability) bool {
	if d.Caps != nil {
		return slices.Contains(d.Caps.Served, c) && slices.Contains(driver, c)
	}
	return slices.Contains(driver, c)
}

// Missing returns why the device lacks c and how to enable it, when its
// Caps say so.
func (d Device) Missing(c Capability) (MissingCap, bool) {
	if d.Caps == nil {
		return MissingCap{}, false
	}
	for _, m := range d.Caps.Missing {
		if m.Cap == c {
			return m, true
		}
	}
	return MissingCap{}, false
}

// DeviceEventKind is what happened to a device.
type DeviceEventKind string

// Device event kinds.
const (
	DeviceAdded   DeviceEventKind = "added"
	DeviceChanged DeviceEventKind = "changed"
	DeviceRemoved DeviceEventKind = "removed"
	// DevicesSynced follows the Added events for the devices known when the watch began.
	DevicesSynced DeviceEventKind = "synced"
)

// DeviceEvent is one change in a driver's device list.
type DeviceEvent struct {
	Kind   DeviceEventKind
	Device Device // zero for DevicesSynced; only ID is required for DeviceRemoved
}

// Orientation is the screen's rotation from its natural position.
type Orientation string

// Orientations.
const (
	OrientationUnknown            Orientation = ""
	OrientationPortrait           Orientation = "portrait"
	OrientationLandscape          Orientation = "landscape"
	OrientationPortraitUpsideDown Orientation = "portrait_upside_down"
	OrientationLandscapeRight     Orientation = "landscape_right"
)

// App is an installed app.
type App struct {
	ID      string // Android package name or iOS bundle id
	Label   string
	Version string
	System  bool
}

// Rect is a rectangle in screen pixels; Right and Bottom are exclusive.
type Rect struct {
	Left, Top, Right, Bottom int
}

// Width is the rectangle's width.
func (r Rect) Width() int { return r.Right - r.Left }

// Height is the rectangle's height.
func (r Rect) Height() int { return r.Bottom - r.Top }

// Empty reports whether the rectangle has no area.
func (r Rect) Empty() bool { return r.Right <= r.Left || r.Bottom <= r.Top }

// Contains reports whether p lies inside r.
func (r Rect) Contains(p Point) bool {
	return p.X >= r.Left && p.X < r.Right && p.Y >= r.Top && p.Y < r.Bottom
}

// Center is the rectangle's centre point.
func (r Rect) Center() Point { return Point{X: (r.Left + r.Right) / 2, Y: (r.Top + r.Bottom) / 2} }

// Point is a position in screen pixels.
type Point struct {
	X, Y int
}

// Element is one node of the screen's element tree.
type Element struct {
	ID                 int // positive, unique within one Screen
	ParentID           int // 0 for a root; the parent comes earlier in Screen.Elements
	Class              string
	Text               string
	ContentDescription string
	ResourceID         string
	Hint               string
	Value              string
	Bounds             Rect
	Clickable          bool
	LongClickable      bool
	Focusable          bool
	Focused            bool
	Editable           bool
	Password           bool
	Scrollable         bool
	Checkable          bool
	Checked            bool
	Enabled            bool
	Selected           bool
	Visible            bool
}

// Screen is what a display shows, as an element tree in pre-order.
type Screen struct {
	App           App
	LockState     LockState
	ScreenOn      bool
	Width, Height int // pixels, in the current orientation
	DensityDPI    int
	Orientation   Orientation
	KeyboardShown bool
	Elements      []Element
	CapturedAt    time.Time
}

// ImageFormat is an encoded still image's format.
type ImageFormat string

// Image formats.
const (
	FormatPNG  ImageFormat = "png"
	FormatJPEG ImageFormat = "jpeg"
)

// ScreenshotRequest asks for a still image of a display.
type ScreenshotRequest struct {
	DeviceID  string
	DisplayID int
	Format    ImageFormat // "" means PNG (JPEG for CaptureFrame)
	MaxSide   int         // 0 keeps the size
	Quality   int         // JPEG quality 1..100; 0 is the driver's default
}

// Image is an encoded still image.
type Image struct {
	Format        ImageFormat
	Width, Height int
	Data          []byte
	// Blanked says that a window on the display forbids capture (Android's
	// FLAG_SECURE) and the picture shows its area black: the picture is not
	// what the person sees, though the window's elements can still be read.
	Blanked bool
}

// Key is a named key.
type Key string

// Keys. Drivers map them to platform codes.
const (
	KeyBack          Key = "back"
	KeyHome          Key = "home"
	KeyRecents       Key = "recents"
	KeyEnter         Key = "enter"
	KeyDelete        Key = "delete"
	KeyForwardDelete Key = "forward_delete"
	KeyTab           Key = "tab"
	KeyEscape        Key = "escape"
	KeyVolumeUp      Key = "volume_up"
	KeyVolumeDown    Key = "volume_down"
	KeyVolumeMute    Key = "volume_mute"
	KeyPower         Key = "power"
	KeyWake          Key = "wake"
	KeySleep         Key = "sleep"
	KeyMenu          Key = "menu"
	KeySearch        Key = "search"
	KeyDpadUp        Key = "dpad_up"
	KeyDpadDown      Key = "dpad_down"
	KeyDpadLeft      Key = "dpad_left"
	KeyDpadRight     Key = "dpad_right"
	KeyDpadCenter    Key = "dpad_center"
)

// AllKeys lists every named key in the proto's order.
var AllKeys = []Key{
	KeyBack, KeyHome, KeyRecents, KeyEnter, KeyDelete, KeyForwardDelete, KeyTab, KeyEscape,
	KeyVolumeUp, KeyVolumeDown, KeyVolumeMute, KeyPower, KeyWake, KeySleep, KeyMenu, KeySearch,
	KeyDpadUp, KeyDpadDown, KeyDpadLeft, KeyDpadRight, KeyDpadCenter,
}

// ScrollDirection is where new content comes from: ScrollDown shows what is
// further down (the finger moves up).
type ScrollDirection string

// Scroll directions.
const (
	ScrollUp    ScrollDirection = "up"
	ScrollDown  ScrollDirection = "down"
	ScrollLeft  ScrollDirection = "left"
	ScrollRight ScrollDirection = "right"
)

// ActionKind names the kind of an Action.
type ActionKind string

// Action kinds.
const (
	ActTap       ActionKind = "tap"
	ActDoubleTap ActionKind = "double_tap"
	ActLongPress ActionKind = "long_press"
	ActSwipe     ActionKind = "swipe"
	ActScroll    ActionKind = "scroll"
	ActType      ActionKind = "type"
	ActKey       ActionKind = "key"
	ActLaunch    ActionKind = "launch"
	ActStop      ActionKind = "stop"
	ActOpenURL   ActionKind = "open_url"
	ActPinch     ActionKind = "pinch" // only for a driver that declares CapPinch
)

// AllActionKinds lists every action kind.
var AllActionKinds = []ActionKind{
	ActTap, ActDoubleTap, ActLongPress, ActSwipe, ActScroll, ActType, ActKey, ActLaunch, ActStop, ActOpenURL, ActPinch,
}

// Action is one thing to do on a phone. Kind says which fields matter:
//
//	tap, double_tap:  Point
//	long_press:       Point, Duration (0: the platform's default)
//	swipe:            Point (from), To, Duration (0: the driver's default)
//	scroll:           Direction, Point (zero: screen centre), Amount (thousandths of the screen; 0: 600)
//	type:             Text, Replace, Submit
//	key:              Key
//	launch, stop:     AppID
//	open_url:         URL
//	pinch:            Point (the centre), Scale (thousandths: above 1000 zooms in), Duration (0: the driver's default)
type Action struct {
	Kind      ActionKind
	DisplayID int
	Point     Point
	To        Point
	Duration  time.Duration
	Direction ScrollDirection
	HasPoint  bool // for scroll: Point was given
	Amount    int
	Scale     int // for pinch: end span over start span, in thousandths
	Text      string
	Replace   bool
	Submit    bool
	Key       Key
	AppID     string
	URL       string
}

// ActResult is what a driver says about an action it performed.
type ActResult struct {
	Detail string
}

// PointerAction is a touch phase.
type PointerAction string

// Pointer actions.
const (
	PointerDown   PointerAction = "down"
	PointerMove   PointerAction = "move"
	PointerUp     PointerAction = "up"
	PointerCancel PointerAction = "cancel"
)

// KeyAction is a key phase.
type KeyAction string

// Key actions.
const (
	KeyDown KeyAction = "down"
	KeyUp   KeyAction = "up"
)

// InputEvent is one raw event from a person's mirror. Exactly one of
// Pointer, Key and Text is set.
type InputEvent struct {
	DeviceID  string
	DisplayID int
	Pointer   *PointerEvent
	Key       *KeyEvent
	Text      string
}

// PointerEvent is a finger going down, moving or lifting.
type PointerEvent struct {
	Action    PointerAction
	PointerID int
	Point     Point
}

// KeyEvent is a key going down or up.
type KeyEvent struct {
	Action KeyAction
	Key    Key
}

// Codec is a video codec.
type Codec string

// Codecs.
const (
	CodecH264 Codec = "h264"
	CodecH265 Codec = "h265"
)

// VideoRequest asks for a display's video stream.
type VideoRequest struct {
	DeviceID  string
	DisplayID int
	Codec     Codec // preferred; "" is the driver's choice
	MaxSide   int
	MaxFPS    int
	BitRate   int
}

// VideoPacket is one encoded unit of a video stream (Annex B).
type VideoPacket struct {
	Codec    Codec
	Config   bool // SPS/PPS (and VPS) rather than a frame
	KeyFrame bool
	PTS      time.Duration // microsecond resolution on the wire
	Width    int
	Height   int
	Data     []byte
}

// FileInfo describes an entry of the phone's Pinky folder.
type FileInfo struct {
	Name     string
	Size     int64
	Dir      bool
	Modified time.Time
}

// Notification is one notification on a phone.
type Notification struct {
	ID     string
	AppID  string
	Title  string
	Text   string // may hold a one-time code: the gateway masks those
	Posted time.Time
}
