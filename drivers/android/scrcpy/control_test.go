package scrcpy

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustVersion(t testing.TB, s string) Version {
	t.Helper()
	v, err := ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMarshalGolden checks each control message against the byte layouts of
// scrcpy's control_msg.c and ControlMessageReader.java (reference 1.4).
func TestMarshalGolden(t *testing.T) {
	tests := []struct {
		name    string
		version string
		msg     Message
		want    string
	}{
		{"inject keycode", "3.3.4", InjectKeycode{Action: KeyActionUp, Keycode: KeycodeEnter, Repeat: 5, MetaState: MetaShiftOn | 0x40},
			"00 01 00000042 00000005 00000041"},
		{"inject text", "4.1", InjectText{Text: "hello"}, "01 00000005 68656c6c6f"},
		{"inject touch (reference golden)", "4.1", InjectTouch{Action: MotionDown, PointerID: 0x1234567887654321, X: 100, Y: 200,
			Width: 1080, Height: 1920, Pressure: 1, ActionButton: ButtonPrimary, Buttons: ButtonPrimary},
			"02 00 1234567887654321 00000064 000000c8 0438 0780 ffff 00000001 00000001"},
		{"inject touch up, half pressure", "3.3.4", InjectTouch{Action: MotionUp, PointerID: PointerGenericFinger, X: -1, Y: 7,
			Width: 720, Height: 1280, Pressure: 0.5},
			"02 01 fffffffffffffffe ffffffff 00000007 02d0 0500 8000 00000000 00000000"},
		{"inject scroll 3.3.1+ (÷16)", "3.3.4", InjectScroll{X: 260, Y: 1026, Width: 1080, Height: 1920, HScroll: 16, VScroll: -16, Buttons: 1},
			"03 00000104 00000402 0438 0780 7fff 8000 00000001"},
		{"inject scroll 3.3.1+ one step", "4.1", InjectScroll{X: 260, Y: 1026, Width: 1080, Height: 1920, HScroll: 1, VScroll: -1},
			"03 00000104 00000402 0438 0780 0800 f800 00000000"},
		{"inject scroll before 3.3.1", "3.3", InjectScroll{X: 260, Y: 1026, Width: 1080, Height: 1920, HScroll: 1, VScroll: -1, Buttons: 1},
			"03 00000104 00000402 0438 0780 7fff 8000 00000001"},
		{"back or screen on", "4.1", BackOrScreenOn{Action: KeyActionUp}, "04 01"},
		{"expand notification panel", "4.1", ExpandNotificationPanel{}, "05"},
		{"expand settings panel", "4.1", ExpandSettingsPanel{}, "06"},
		{"collapse panels", "4.1", CollapsePanels{}, "07"},
		{"get clipboard", "4.1", GetClipboard{CopyKey: CopyKeyCopy}, "08 01"},
		{"set clipboard", "3.3.4", SetClipboard{Sequence: 0x5555555555555555, Paste: true, Text: "hello, world!"},
			"09 5555555555555555 01 0000000d 68656c6c6f2c20776f726c6421"},
		{"set display power", "4.1", SetDisplayPower{On: true}, "0a 01"},
		{"rotate device", "4.1", RotateDevice{}, "0b"},
		{"reset video", "3.3.4", ResetVideo{}, "11"},
		{"start app", "3.3.4", StartApp{Name: "+com.example"}, "10 0c 2b636f6d2e6578616d706c65"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := mustVersion(t, tt.version)
			got, err := Marshal(tt.msg, v)
			if err != nil {
				t.Fatal(err)
			}
			if want := unhex(t, tt.want); !bytes.Equal(got, want) {
				t.Fatalf("Marshal(%+v) = % x; want % x", tt.msg, got, want)
			}
			// The server side reads back what was sent.
			back, err := ReadMessage(bytes.NewReader(got), v)
			if err != nil {
				t.Fatalf("ReadMessage: %v", err)
			}
			again, err := Marshal(back, v)
			if err != nil || !bytes.Equal(again, got) {
				t.Fatalf("Marshal(ReadMessage(% x)) = % x, %v; want the same bytes", got, again, err)
			}
		})
	}
}

func TestReadMessageRoundTrip(t *testing.T) {
	v := mustVersion(t, "4.1")
	msgs := []Message{
		InjectKeycode{Action: KeyActionDown, Keycode: KeycodeHome, Repeat: 1, MetaState: MetaCtrlOn},
		InjectText{Text: "héllo ✓"},
		InjectTouch{Action: MotionMove, PointerID: 3, X: 10, Y: 20, Width: 100, Height: 200, Pressure: 0.5, Buttons: ButtonSecondary},
		InjectScroll{X: 1, Y: 2, Width: 3, Height: 4, HScroll: 0.5, VScroll: -2},
		SetClipboard{Sequence: 9, Text: "ü"},
		SetDisplayPower{},
		GetClipboard{},
	}
	var stream []byte
	for _, m := range msgs {
		b, err := Marshal(m, v)
		if err != nil {
			t.Fatal(err)
		}
		stream = append(stream, b...)
	}
	r := bytes.NewReader(stream)
	for _, want := range msgs {
		got, err := ReadMessage(r, v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ReadMessage mismatch (-want +got):\n%s", diff)
		}
	}
}

func TestMarshalLimits(t *testing.T) {
	v := mustVersion(t, "4.1")
	if _, err := Marshal(InjectText{Text: strings.Repeat("a", MaxInjectText+1)}, v); err == nil {
		t.Errorf("Marshal(inject text of %d bytes): got nil error; want one", MaxInjectText+1)
	}
	if _, err := Marshal(InjectText{Text: strings.Repeat("a", MaxInjectText)}, v); err != nil {
		t.Errorf("Marshal(inject text of %d bytes): %v", MaxInjectText, err)
	}
}

func TestReadMessageErrors(t *testing.T) {
	v := mustVersion(t, "3.3.4")
	if _, err := ReadMessage(bytes.NewReader([]byte{99}), v); !errors.Is(err, ErrProtocol) {
		t.Errorf("unknown type: got %v; want ErrProtocol", err)
	}
	if _, err := ReadMessage(bytes.NewReader(unhex(t, "01 00 00 00 05 68")), v); err == nil {
		t.Error("truncated text: got nil error; want one")
	}
	if _, err := ReadMessage(bytes.NewReader(unhex(t, "01 7fffffff")), v); !errors.Is(err, ErrProtocol) {
		t.Errorf("huge text: got %v; want ErrProtocol", err)
	}
}

func TestDeviceMessagesGolden(t *testing.T) {
	tests := []struct {
		name string
		msg  DeviceMessage
		want string
	}{
		{"clipboard", DeviceClipboard{Text: "hello"}, "00 00000005 68656c6c6f"},
		{"ack clipboard", AckClipboard{Sequence: 0x0102030405060708}, "01 0102030405060708"},
		{"uhid output", UHIDOutput{ID: 42, Data: []byte{1, 2}}, "02 002a 0002 01 02"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MarshalDevice(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			want := unhex(t, tt.want)
			if !bytes.Equal(got, want) {
				t.Fatalf("MarshalDevice = % x; want % x", got, want)
			}
			back, err := ReadDeviceMessage(bytes.NewReader(want))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.msg, back); diff != "" {
				t.Errorf("ReadDeviceMessage mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := ReadDeviceMessage(bytes.NewReader([]byte{7})); !errors.Is(err, ErrProtocol) {
		t.Errorf("unknown device message: got %v; want ErrProtocol", err)
	}
}
