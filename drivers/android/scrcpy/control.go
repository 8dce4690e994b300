package scrcpy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// MsgType is a control message's type byte. The numbers are those of 3.0–4.x;
// 4.x adds types 18–22, which this package does not send.
type MsgType uint8

// Control message types (client → server).
const (
	TypeInjectKeycode           MsgType = 0
	TypeInjectText              MsgType = 1
	TypeInjectTouchEvent        MsgType = 2
	TypeInjectScrollEvent       MsgType = 3
	TypeBackOrScreenOn          MsgType = 4
	TypeExpandNotificationPanel MsgType = 5
	TypeExpandSettingsPanel     MsgType = 6
	TypeCollapsePanels          MsgType = 7
	TypeGetClipboard            MsgType = 8
	TypeSetClipboard            MsgType = 9
	TypeSetDisplayPower         MsgType = 10
	TypeRotateDevice            MsgType = 11
	TypeStartApp                MsgType = 16 // 3.0+
	TypeResetVideo              MsgType = 17 // 3.0+
)

// Limits of the protocol.
const (
	// MaxInjectText is the most UTF-8 bytes scrcpy's client sends in one
	// INJECT_TEXT; Text splits longer text.
	MaxInjectText = 300
	// MaxMessage is the largest control or device message (1<<18).
	MaxMessage = 1 << 18
	// MaxClipboard is the most UTF-8 bytes of one SET_CLIPBOARD.
	MaxClipboard = MaxMessage - 14
	// MaxAppName is the most UTF-8 bytes of START_APP's name (a u8 length).
	MaxAppName = 255
)

// ErrProtocol means a peer sent bytes that are not a message: the stream has
// no length prefix, so it cannot be read further.
var ErrProtocol = errors.New("scrcpy protocol error")

// KeyAction is a key's phase (Android's AKEY_EVENT_ACTION_*).
type KeyAction uint8

// Key actions.
const (
	KeyActionDown KeyAction = 0
	KeyActionUp   KeyAction = 1
)

// MotionAction is a touch's phase (Android's AMOTION_EVENT_ACTION_*).
type MotionAction uint8

// Motion actions.
const (
	MotionDown   MotionAction = 0
	MotionUp     MotionAction = 1
	MotionMove   MotionAction = 2
	MotionCancel MotionAction = 3
)

// Pointer ids with a meaning of their own; any other value is a finger.
const (
	PointerMouse         uint64 = math.MaxUint64     // -1
	PointerGenericFinger uint64 = math.MaxUint64 - 1 // -2
	PointerVirtualFinger uint64 = math.MaxUint64 - 2 // -3
)

// Mouse buttons (AMOTION_EVENT_BUTTON_*).
const (
	ButtonPrimary   uint32 = 1
	ButtonSecondary uint32 = 2
	ButtonTertiary  uint32 = 4
	ButtonBack      uint32 = 8
	ButtonForward   uint32 = 16
)

// CopyKey is what GET_CLIPBOARD presses on the phone before reading.
type CopyKey uint8

// Copy keys.
const (
	CopyKeyNone CopyKey = 0
	CopyKeyCopy CopyKey = 1
	CopyKeyCut  CopyKey = 2
)

// Message is a control message (client → server).
type Message interface {
	Type() MsgType
}

// InjectKeycode presses or releases an Android key.
type InjectKeycode struct {
	Action    KeyAction
	Keycode   uint32
	Repeat    uint32
	MetaState uint32
}

// InjectText types UTF-8 text (at most MaxInjectText bytes).
type InjectText struct{ Text string }

// InjectTouch is one touch event. X and Y are in video-frame pixels, and
// Width and Height must be the current video size exactly, or the server
// drops the event.
type InjectTouch struct {
	Action        MotionAction
	PointerID     uint64
	X, Y          int32
	Width, Height uint16
	Pressure      float32 // 0..1; 0 on up
	ActionButton  uint32
	Buttons       uint32
}

// InjectScroll is a mouse wheel event at a position (see InjectTouch).
// HScroll and VScroll are wheel steps: ±1 in 3.0–3.3.0, up to ±16 from 3.3.1.
type InjectScroll struct {
	X, Y             int32
	Width, Height    uint16
	HScroll, VScroll float32
	Buttons          uint32
}

// BackOrScreenOn presses BACK if the screen is on, else POWER (on down).
type BackOrScreenOn struct{ Action KeyAction }

// ExpandNotificationPanel pulls the notification shade down.
type ExpandNotificationPanel struct{}

// ExpandSettingsPanel pulls the quick settings down.
type ExpandSettingsPanel struct{}

// CollapsePanels closes the shade.
type CollapsePanels struct{}

// GetClipboard asks for the phone's clipboard, which comes back as a
// DeviceClipboard message.
type GetClipboard struct{ CopyKey CopyKey }

// SetClipboard sets the phone's clipboard and, with Paste, pastes it. A
// non-zero Sequence makes the phone answer AckClipboard.
type SetClipboard struct {
	Sequence uint64
	Paste    bool
	Text     string
}

// SetDisplayPower turns the physical panel on or off; mirroring continues.
type SetDisplayPower struct{ On bool }

// RotateDevice rotates the phone's screen.
type RotateDevice struct{}

// ResetVideo restarts the encoder: a new config packet and key frame follow.
type ResetVideo struct{}

// StartApp launches an app on the session's display (3.0+): on the display
// the server mirrors, or on the virtual display it made for new_display.
// Name is a package name; a "?" prefix searches by label instead, and a
// "+" prefix force-stops the app first. The server answers nothing: it logs
// `Starting app "LABEL" [PACKAGE] on display N...` on stdout, or
// `No app found for package "NAME"` on stderr.
type StartApp struct{ Name string }

// Type implementations.
func (InjectKeycode) Type() MsgType           { return TypeInjectKeycode }
func (InjectText) Type() MsgType              { return TypeInjectText }
func (InjectTouch) Type() MsgType             { return TypeInjectTouchEvent }
func (InjectScroll) Type() MsgType            { return TypeInjectScrollEvent }
func (BackOrScreenOn) Type() MsgType          { return TypeBackOrScreenOn }
func (ExpandNotificationPanel) Type() MsgType { return TypeExpandNotificationPanel }
func (ExpandSettingsPanel) Type() MsgType     { return TypeExpandSettingsPanel }
func (CollapsePanels) Type() MsgType          { return TypeCollapsePanels }
func (GetClipboard) Type() MsgType            { return TypeGetClipboard }
func (SetClipboard) Type() MsgType            { return TypeSetClipboard }
func (SetDisplayPower) Type() MsgType         { return TypeSetDisplayPower }
func (RotateDevice) Type() MsgType            { return TypeRotateDevice }
func (ResetVideo) Type() MsgType              { return TypeResetVideo }
func (StartApp) Type() MsgType                { return TypeStartApp }

// Marshal encodes m for a server of version v. All integers are big-endian.
func Marshal(m Message, v Version) ([]byte, error) {
	b := []byte{byte(m.Type())}
	switch m := m.(type) {
	case InjectKeycode:
		b = append(b, byte(m.Action))
		b = binary.BigEndian.AppendUint32(b, m.Keycode)
		b = binary.BigEndian.AppendUint32(b, m.Repeat)
		b = binary.BigEndian.AppendUint32(b, m.MetaState)
	case InjectText:
		if len(m.Text) > MaxInjectText {
			return nil, fmt.Errorf("inject text: %d bytes, the limit is %d", len(m.Text), MaxInjectText)
		}
		b = appendString32(b, m.Text)
	case InjectTouch:
		b = append(b, byte(m.Action))
		b = binary.BigEndian.AppendUint64(b, m.PointerID)
		b = appendPosition(b, m.X, m.Y, m.Width, m.Height)
		b = binary.BigEndian.AppendUint16(b, pressureFixed(m.Pressure))
		b = binary.BigEndian.AppendUint32(b, m.ActionButton)
		b = binary.BigEndian.AppendUint32(b, m.Buttons)
	case InjectScroll:
		b = appendPosition(b, m.X, m.Y, m.Width, m.Height)
		b = binary.BigEndian.AppendUint16(b, uint16(scrollFixed(m.HScroll, v)))
		b = binary.BigEndian.AppendUint16(b, uint16(scrollFixed(m.VScroll, v)))
		b = binary.BigEndian.AppendUint32(b, m.Buttons)
	case BackOrScreenOn:
		b = append(b, byte(m.Action))
	case GetClipboard:
		b = append(b, byte(m.CopyKey))
	case SetClipboard:
		if len(m.Text) > MaxClipboard {
			return nil, fmt.Errorf("set clipboard: %d bytes, the limit is %d", len(m.Text), MaxClipboard)
		}
		b = binary.BigEndian.AppendUint64(b, m.Sequence)
		b = append(b, boolByte(m.Paste))
		b = appendString32(b, m.Text)
	case SetDisplayPower:
		b = append(b, boolByte(m.On))
	case StartApp:
		if len(m.Name) > MaxAppName {
			return nil, fmt.Errorf("start app: a name of %d bytes, the limit is %d", len(m.Name), MaxAppName)
		}
		b = append(b, byte(len(m.Name)))
		b = append(b, m.Name...)
	case ExpandNotificationPanel, ExpandSettingsPanel, CollapsePanels, RotateDevice, ResetVideo:
	default:
		return nil, fmt.Errorf("control message %T: not supported", m)
	}
	return b, nil
}

func appendString32(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendPosition(b []byte, x, y int32, w, h uint16) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(x))
	b = binary.BigEndian.AppendUint32(b, uint32(y))
	b = binary.BigEndian.AppendUint16(b, w)
	return binary.BigEndian.AppendUint16(b, h)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// pressureFixed encodes 0..1 as u16 fixed point (×2^16, 1.0 → 0xffff).
func pressureFixed(f float32) uint16 {
	f = min(max(f, 0), 1)
	return uint16(min(uint32(f*65536), 0xffff))
}

// scrollFixed encodes a wheel step as i16 fixed point: ×2^15 of v in [-1, 1]
// before 3.3.1, of v/16 from 3.3.1 (the server multiplies by 16 again).
func scrollFixed(f float32, v Version) int16 {
	if v.atLeast(3, 3, 1) {
		f /= 16
	}
	f = min(max(f, -1), 1)
	return int16(min(int32(f*32768), 0x7fff))
}

// ReadMessage reads one control message, as a server of version v does. An
// unknown type is ErrProtocol.
func ReadMessage(r io.Reader, v Version) (Message, error) {
	var t [1]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return nil, err
	}
	fixed := func(n int) ([]byte, error) {
		b := make([]byte, n)
		_, err := io.ReadFull(r, b)
		return b, unexpected(err)
	}
	be := binary.BigEndian
	switch MsgType(t[0]) {
	case TypeInjectKeycode:
		b, err := fixed(13)
		if err != nil {
			return nil, err
		}
		return InjectKeycode{Action: KeyAction(b[0]), Keycode: be.Uint32(b[1:]), Repeat: be.Uint32(b[5:]), MetaState: be.Uint32(b[9:])}, nil
	case TypeInjectText:
		s, err := readString32(r, MaxMessage-5)
		return InjectText{Text: s}, err
	case TypeInjectTouchEvent:
		b, err := fixed(31)
		if err != nil {
			return nil, err
		}
		return InjectTouch{
			Action: MotionAction(b[0]), PointerID: be.Uint64(b[1:]),
			X: int32(be.Uint32(b[9:])), Y: int32(be.Uint32(b[13:])), Width: be.Uint16(b[17:]), Height: be.Uint16(b[19:]),
			Pressure: float32(be.Uint16(b[21:])) / 65536, ActionButton: be.Uint32(b[23:]), Buttons: be.Uint32(b[27:]),
		}, nil
	case TypeInjectScrollEvent:
		b, err := fixed(20)
		if err != nil {
			return nil, err
		}
		scale := float32(1)
		if v.atLeast(3, 3, 1) {
			scale = 16
		}
		return InjectScroll{
			X: int32(be.Uint32(b[0:])), Y: int32(be.Uint32(b[4:])), Width: be.Uint16(b[8:]), Height: be.Uint16(b[10:]),
			HScroll: float32(int16(be.Uint16(b[12:]))) / 32768 * scale, VScroll: float32(int16(be.Uint16(b[14:]))) / 32768 * scale,
			Buttons: be.Uint32(b[16:]),
		}, nil
	case TypeBackOrScreenOn:
		b, err := fixed(1)
		if err != nil {
			return nil, err
		}
		return BackOrScreenOn{Action: KeyAction(b[0])}, nil
	case TypeExpandNotificationPanel:
		return ExpandNotificationPanel{}, nil
	case TypeExpandSettingsPanel:
		return ExpandSettingsPanel{}, nil
	case TypeCollapsePanels:
		return CollapsePanels{}, nil
	case TypeGetClipboard:
		b, err := fixed(1)
		if err != nil {
			return nil, err
		}
		return GetClipboard{CopyKey: CopyKey(b[0])}, nil
	case TypeSetClipboard:
		b, err := fixed(9)
		if err != nil {
			return nil, err
		}
		s, err := readString32(r, MaxClipboard)
		return SetClipboard{Sequence: be.Uint64(b), Paste: b[8] != 0, Text: s}, err
	case TypeSetDisplayPower:
		b, err := fixed(1)
		if err != nil {
			return nil, err
		}
		return SetDisplayPower{On: b[0] != 0}, nil
	case TypeRotateDevice:
		return RotateDevice{}, nil
	case TypeResetVideo:
		return ResetVideo{}, nil
	case TypeStartApp:
		n, err := fixed(1)
		if err != nil {
			return nil, err
		}
		name, err := fixed(int(n[0]))
		if err != nil {
			return nil, err
		}
		return StartApp{Name: string(name)}, nil
	}
	return nil, fmt.Errorf("control message type %d: unknown: %w", t[0], ErrProtocol)
}

// readString32 reads a u32 length and that many bytes of UTF-8.
func readString32(r io.Reader, limit int) (string, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return "", unexpected(err)
	}
	size := binary.BigEndian.Uint32(n[:])
	if size > uint32(limit) {
		return "", fmt.Errorf("string of %d bytes: the limit is %d: %w", size, limit, ErrProtocol)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", unexpected(err)
	}
	return string(b), nil
}

// unexpected turns an EOF inside a message into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
