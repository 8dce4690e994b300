package scrcpyd

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
)

// This file reads control messages and writes device messages on the
// control socket. It is written from the real server's
// ControlMessageReader.java and DeviceMessageWriter.java (3.3.4, 4.0 and
// 4.1), not from the Android driver's client, so that a layout bug in the
// client shows up as a test failure instead of being mirrored here.

// Control message types, numbered as in ControlMessage.java.
const (
	typeInjectKeycode = iota
	typeInjectText
	typeInjectTouch
	typeInjectScroll
	typeBackOrScreenOn
	typeExpandNotificationPanel
	typeExpandSettingsPanel
	typeCollapsePanels
	typeGetClipboard
	typeSetClipboard
	typeSetDisplayPower
	typeRotateDevice
	typeUHIDCreate
	typeUHIDInput
	typeUHIDDestroy
	typeOpenHardKeyboardSettings
	typeStartApp
	typeResetVideo // the last type of 3.x
	typeCameraSetTorch
	typeCameraZoomIn
	typeCameraZoomOut
	typeResizeDisplay // the last type of 4.0
	typeScanFile      // the last type of 4.1
)

// Device message types, numbered as in DeviceMessage.java.
const (
	deviceClipboard    = 0
	deviceAckClipboard = 1
)

// Android's action values, which the messages carry unchanged.
const (
	keyActionDown = 0 // KeyEvent.ACTION_DOWN
	keyActionUp   = 1 // KeyEvent.ACTION_UP

	motionDown   = 0 // MotionEvent.ACTION_DOWN
	motionUp     = 1 // MotionEvent.ACTION_UP
	motionMove   = 2 // MotionEvent.ACTION_MOVE
	motionCancel = 3 // MotionEvent.ACTION_CANCEL
)

// GET_CLIPBOARD's copy keys, as in ControlMessage.java.
const (
	copyKeyNone = 0
	copyKeyCopy = 1
	copyKeyCut  = 2
)

// Sizes from ControlMessageReader.java and DeviceMessageWriter.java.
const (
	messageMaxSize = 1 << 18
	// deviceClipboardMax is the most UTF-8 bytes of a clipboard the
	// server sends: the rest is cut on a character boundary.
	deviceClipboardMax = messageMaxSize - 5
	// stringMax bounds what the fake allocates for one string; the real
	// server allocates whatever length the client announces.
	stringMax = 16 << 20
)

// errProtocol is the real server's ControlProtocolException: a message it
// does not know, which ends the controller (and with it the server).
var errProtocol = errors.New("control protocol error")

// position is a positional event's point and the video size it was made
// for (Position.java).
type position struct {
	x, y          int32
	width, height uint16
}

// control is one control message: like ControlMessage.java, one struct for
// all types, in which each type uses its own fields.
type control struct {
	typ       int
	action    int // KeyEvent or MotionEvent action
	keycode   int32
	repeat    int32
	metaState int32
	text      string // text, clipboard, app name, UHID name, file path
	pointerID uint64
	pos       position
	pressure  float32
	actionBtn int32
	buttons   int32
	hScroll   float32
	vScroll   float32
	copyKey   int
	paste     bool
	sequence  uint64
	on        bool
	id        int // UHID id
	vendorID  int
	productID int
	data      []byte
	width     int // RESIZE_DISPLAY
	height    int
}

// lastType is the highest message type the server of version v reads.
func lastType(v scrcpy.Version) int {
	switch {
	case v.Major < 4:
		return typeResetVideo
	case v.Major == 4 && v.Minor == 0:
		return typeResizeDisplay
	default:
		return typeScanFile
	}
}

// controlReader reads control messages as ControlMessageReader.read does.
type controlReader struct {
	r    io.Reader
	last int
	buf  [8]byte
}

func newControlReader(r io.Reader, v scrcpy.Version) *controlReader {
	return &controlReader{r: r, last: lastType(v)}
}

func (cr *controlReader) bytes(n int) ([]byte, error) {
	b := cr.buf[:n]
	_, err := io.ReadFull(cr.r, b)
	return b, err
}

func (cr *controlReader) u8() (int, error) {
	b, err := cr.bytes(1)
	if err != nil {
		return 0, err
	}
	return int(b[0]), nil
}

func (cr *controlReader) u16() (int, error) {
	b, err := cr.bytes(2)
	if err != nil {
		return 0, err
	}
	return int(binary.BigEndian.Uint16(b)), nil
}

func (cr *controlReader) i32() (int32, error) {
	b, err := cr.bytes(4)
	if err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}

func (cr *controlReader) u64() (uint64, error) {
	b, err := cr.bytes(8)
	if err != nil {
		return 0, err
	}
	return binary.BigEndian.Uint64(b), nil
}

// byteArray reads a length of sizeBytes bytes, then that many bytes
// (parseByteArray).
func (cr *controlReader) byteArray(sizeBytes int) ([]byte, error) {
	b, err := cr.bytes(sizeBytes)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, c := range b {
		n = n<<8 | int(c)
	}
	if n > stringMax {
		return nil, fmt.Errorf("%w: a string of %d bytes", errProtocol, n)
	}
	data := make([]byte, n)
	_, err = io.ReadFull(cr.r, data)
	return data, err
}

// str reads a UTF-8 string with a length of sizeBytes bytes; Java's
// decoder replaces invalid sequences with U+FFFD.
func (cr *controlReader) str(sizeBytes int) (string, error) {
	b, err := cr.byteArray(sizeBytes)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return string([]rune(string(b))), nil
	}
	return string(b), nil
}

func (cr *controlReader) position() (position, error) {
	var p position
	var err error
	if p.x, err = cr.i32(); err != nil {
		return p, err
	}
	if p.y, err = cr.i32(); err != nil {
		return p, err
	}
	w, err := cr.u16()
	if err != nil {
		return p, err
	}
	h, err := cr.u16()
	p.width, p.height = uint16(w), uint16(h)
	return p, err
}

// u16Fixed is Binary.u16FixedPointToFloat: 0xffff is 1, else n / 2^16.
func u16Fixed(n int) float32 {
	if n == 0xffff {
		return 1
	}
	return float32(n) / (1 << 16)
}

// i16Fixed is Binary.i16FixedPointToFloat: 0x7fff is 1, else n / 2^15.
func i16Fixed(n int) float32 {
	v := int16(uint16(n))
	if v == math.MaxInt16 {
		return 1
	}
	return float32(v) / (1 << 15)
}

// read reads one message. An unknown type is errProtocol; a short read is
// the reader's error (io.EOF or io.ErrUnexpectedEOF), which the real server
// takes for the client closing the socket.
func (cr *controlReader) read() (control, error) {
	typ, err := cr.u8()
	if err != nil {
		return control{}, err
	}
	if typ > cr.last {
		return control{}, fmt.Errorf("%w: Unknown event type: %d", errProtocol, typ)
	}
	m, err := cr.fields(typ)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF // the socket closed inside a message
	}
	return m, err
}

// fields reads the fields of a message of type typ, in the order of the
// Java parser.
func (cr *controlReader) fields(typ int) (control, error) {
	m := control{typ: typ}
	var err error
	switch typ {
	case typeInjectKeycode:
		if m.action, err = cr.u8(); err != nil {
			return m, err
		}
		if m.keycode, err = cr.i32(); err != nil {
			return m, err
		}
		if m.repeat, err = cr.i32(); err != nil {
			return m, err
		}
		m.metaState, err = cr.i32()
	case typeInjectText:
		m.text, err = cr.str(4)
	case typeInjectTouch:
		if m.action, err = cr.u8(); err != nil {
			return m, err
		}
		if m.pointerID, err = cr.u64(); err != nil {
			return m, err
		}
		if m.pos, err = cr.position(); err != nil {
			return m, err
		}
		var p int
		if p, err = cr.u16(); err != nil {
			return m, err
		}
		m.pressure = u16Fixed(p)
		if m.actionBtn, err = cr.i32(); err != nil {
			return m, err
		}
		m.buttons, err = cr.i32()
	case typeInjectScroll:
		if m.pos, err = cr.position(); err != nil {
			return m, err
		}
		var h, v int
		if h, err = cr.u16(); err != nil {
			return m, err
		}
		if v, err = cr.u16(); err != nil {
			return m, err
		}
		// The wire range is [-16, 16], sent as [-1, 1].
		m.hScroll, m.vScroll = i16Fixed(h)*16, i16Fixed(v)*16
		m.buttons, err = cr.i32()
	case typeBackOrScreenOn:
		m.action, err = cr.u8()
	case typeGetClipboard:
		m.copyKey, err = cr.u8()
	case typeSetClipboard:
		if m.sequence, err = cr.u64(); err != nil {
			return m, err
		}
		var p int
		if p, err = cr.u8(); err != nil {
			return m, err
		}
		m.paste = p != 0
		m.text, err = cr.str(4)
	case typeSetDisplayPower, typeCameraSetTorch:
		var on int
		on, err = cr.u8()
		m.on = on != 0
	case typeUHIDCreate:
		if m.id, err = cr.u16(); err != nil {
			return m, err
		}
		if m.vendorID, err = cr.u16(); err != nil {
			return m, err
		}
		if m.productID, err = cr.u16(); err != nil {
			return m, err
		}
		if m.text, err = cr.str(1); err != nil {
			return m, err
		}
		m.data, err = cr.byteArray(2)
	case typeUHIDInput:
		if m.id, err = cr.u16(); err != nil {
			return m, err
		}
		m.data, err = cr.byteArray(2)
	case typeUHIDDestroy:
		m.id, err = cr.u16()
	case typeStartApp:
		m.text, err = cr.str(1)
	case typeResizeDisplay:
		if m.width, err = cr.u16(); err != nil {
			return m, err
		}
		m.height, err = cr.u16()
	case typeScanFile:
		m.text, err = cr.str(4)
	default:
		// EXPAND_*, COLLAPSE_PANELS, ROTATE_DEVICE,
		// OPEN_HARD_KEYBOARD_SETTINGS, RESET_VIDEO and CAMERA_ZOOM_*
		// carry nothing but their type.
	}
	return m, err
}

// clipboardMessage is the device message carrying the phone's clipboard,
// as DeviceMessageWriter writes it: type, u32 length, UTF-8 text cut to
// deviceClipboardMax bytes on a character boundary.
func clipboardMessage(text string) []byte {
	text = truncateUTF8(text, deviceClipboardMax)
	b := []byte{deviceClipboard}
	b = binary.BigEndian.AppendUint32(b, uint32(len(text)))
	return append(b, text...)
}

// ackClipboardMessage acknowledges the SET_CLIPBOARD of sequence: type,
// u64 sequence.
func ackClipboardMessage(sequence uint64) []byte {
	return binary.BigEndian.AppendUint64([]byte{deviceAckClipboard}, sequence)
}
