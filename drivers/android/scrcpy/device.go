package scrcpy

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Device message types (server → client, on the control socket).
const (
	DeviceTypeClipboard    = 0
	DeviceTypeAckClipboard = 1
	DeviceTypeUHIDOutput   = 2
)

// DeviceMessage is a message from the server on the control socket.
type DeviceMessage interface {
	deviceType() byte
}

// DeviceClipboard carries the phone's clipboard: the answer to GetClipboard,
// or with clipboard autosync, any change on the phone.
type DeviceClipboard struct{ Text string }

// AckClipboard confirms the SetClipboard with the same Sequence.
type AckClipboard struct{ Sequence uint64 }

// UHIDOutput is output for a virtual HID device (keyboard LEDs).
type UHIDOutput struct {
	ID   uint16
	Data []byte
}

func (DeviceClipboard) deviceType() byte { return DeviceTypeClipboard }
func (AckClipboard) deviceType() byte    { return DeviceTypeAckClipboard }
func (UHIDOutput) deviceType() byte      { return DeviceTypeUHIDOutput }

// MarshalDevice encodes a device message, as the server writes it.
func MarshalDevice(m DeviceMessage) ([]byte, error) {
	b := []byte{m.deviceType()}
	switch m := m.(type) {
	case DeviceClipboard:
		if len(m.Text) > MaxMessage-5 {
			return nil, fmt.Errorf("clipboard: %d bytes, the limit is %d", len(m.Text), MaxMessage-5)
		}
		b = appendString32(b, m.Text)
	case AckClipboard:
		b = binary.BigEndian.AppendUint64(b, m.Sequence)
	case UHIDOutput:
		if len(m.Data) > 0xffff {
			return nil, fmt.Errorf("uhid output: %d bytes, the limit is 65535", len(m.Data))
		}
		b = binary.BigEndian.AppendUint16(b, m.ID)
		b = binary.BigEndian.AppendUint16(b, uint16(len(m.Data)))
		b = append(b, m.Data...)
	default:
		return nil, fmt.Errorf("device message %T: not supported", m)
	}
	return b, nil
}

// ReadDeviceMessage reads one device message. An unknown type is ErrProtocol:
// there is no length prefix to skip it.
func ReadDeviceMessage(r io.Reader) (DeviceMessage, error) {
	var t [1]byte
	if _, err := io.ReadFull(r, t[:]); err != nil {
		return nil, err
	}
	switch t[0] {
	case DeviceTypeClipboard:
		s, err := readString32(r, MaxMessage-5)
		return DeviceClipboard{Text: s}, err
	case DeviceTypeAckClipboard:
		var b [8]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, unexpected(err)
		}
		return AckClipboard{Sequence: binary.BigEndian.Uint64(b[:])}, nil
	case DeviceTypeUHIDOutput:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, unexpected(err)
		}
		data := make([]byte, binary.BigEndian.Uint16(b[2:]))
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, unexpected(err)
		}
		return UHIDOutput{ID: binary.BigEndian.Uint16(b[:]), Data: data}, nil
	}
	return nil, fmt.Errorf("device message type %d: unknown: %w", t[0], ErrProtocol)
}
