package scrcpyd

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
)

// The byte layouts below are written from ControlMessageReader.java and
// ControlMessageReaderTest.java of scrcpy 3.3.4, 4.0 and 4.1 (big endian
// throughout), not from the Android driver's client.

func version(t *testing.T, s string) scrcpy.Version {
	t.Helper()
	v, err := scrcpy.ParseVersion(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestControlReader(t *testing.T) {
	tests := []struct {
		name    string
		version string
		in      []byte
		want    control
	}{
		{"inject keycode", "4.1", []byte{
			0,          // type
			1,          // action: ACTION_UP
			0, 0, 0, 3, // keycode: KEYCODE_HOME
			0, 0, 0, 5, // repeat
			0, 0, 0, 0x41, // meta state: META_SHIFT_ON | META_SHIFT_LEFT_ON
		}, control{typ: typeInjectKeycode, action: 1, keycode: 3, repeat: 5, metaState: 0x41}},
		{"inject text", "4.1", []byte{1, 0, 0, 0, 6, 'h', 0xc3, 0xa9, 'l', 'l', 'o'},
			control{typ: typeInjectText, text: "héllo"}},
		{"inject text, invalid UTF-8 replaced", "4.1", []byte{1, 0, 0, 0, 2, 'a', 0xff},
			control{typ: typeInjectText, text: "a\uFFFD"}},
		{"inject touch", "4.1", []byte{
			2,                                              // type
			0,                                              // action: ACTION_DOWN
			0x12, 0x34, 0x56, 0x78, 0x87, 0x65, 0x43, 0x21, // pointer id
			0, 0, 0, 100, // x
			0, 0, 0, 200, // y
			0x04, 0x38, // screen width 1080
			0x07, 0x80, // screen height 1920
			0xff, 0xff, // pressure 1.0
			0, 0, 0, 1, // action button: BUTTON_PRIMARY
			0, 0, 0, 1, // buttons
		}, control{typ: typeInjectTouch, action: 0, pointerID: 0x1234567887654321, pos: position{100, 200, 1080, 1920}, pressure: 1, actionBtn: 1, buttons: 1}},
		{"inject touch, mouse pointer and half pressure", "3.3.4", []byte{
			2, 2,
			0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // POINTER_ID_MOUSE (-1)
			0xff, 0xff, 0xff, 0xfe, // x = -2
			0, 0, 0, 0,
			0, 8, 0, 16,
			0x80, 0x00, // pressure 0.5
			0, 0, 0, 0, 0, 0, 0, 0,
		}, control{typ: typeInjectTouch, action: 2, pointerID: 1<<64 - 1, pos: position{-2, 0, 8, 16}, pressure: 0.5}},
		{"inject scroll", "4.1", []byte{
			3,
			0, 0, 0x01, 0x04, // x 260
			0, 0, 0x02, 0x08, // y 520
			0x04, 0x38, 0x07, 0x80,
			0x7f, 0xff, // hscroll: 1.0 * 16
			0xf8, 0x00, // vscroll: -2048/32768 * 16 = -1
			0, 0, 0, 1,
		}, control{typ: typeInjectScroll, pos: position{260, 520, 1080, 1920}, hScroll: 16, vScroll: -1, buttons: 1}},
		{"back or screen on", "4.1", []byte{4, 1}, control{typ: typeBackOrScreenOn, action: 1}},
		{"expand notification panel", "4.1", []byte{5}, control{typ: typeExpandNotificationPanel}},
		{"expand settings panel", "4.1", []byte{6}, control{typ: typeExpandSettingsPanel}},
		{"collapse panels", "4.1", []byte{7}, control{typ: typeCollapsePanels}},
		{"get clipboard, copy key", "4.1", []byte{8, 1}, control{typ: typeGetClipboard, copyKey: copyKeyCopy}},
		{"set clipboard", "4.1", []byte{
			9,
			0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // sequence
			1,          // paste
			0, 0, 0, 2, // length
			'h', 'i',
		}, control{typ: typeSetClipboard, sequence: 0x0102030405060708, paste: true, text: "hi"}},
		{"set display power", "4.1", []byte{10, 1}, control{typ: typeSetDisplayPower, on: true}},
		{"rotate device", "3.3.4", []byte{11}, control{typ: typeRotateDevice}},
		{"uhid create", "4.1", []byte{
			12,
			0, 42, // id
			0x12, 0x34, // vendor id
			0x56, 0x78, // product id
			3, 'k', 'b', 'd', // name, u8 length
			0, 3, 0x05, 0x01, 0x09, // report descriptor, u16 length
		}, control{typ: typeUHIDCreate, id: 42, vendorID: 0x1234, productID: 0x5678, text: "kbd", data: []byte{5, 1, 9}}},
		{"uhid input", "4.1", []byte{13, 0, 42, 0, 2, 0xaa, 0xbb}, control{typ: typeUHIDInput, id: 42, data: []byte{0xaa, 0xbb}}},
		{"uhid destroy", "4.1", []byte{14, 0, 42}, control{typ: typeUHIDDestroy, id: 42}},
		{"open hard keyboard settings", "4.1", []byte{15}, control{typ: typeOpenHardKeyboardSettings}},
		{"start app, u8 length", "4.1", []byte{16, 5, '+', '?', 'n', 'o', 't'}, control{typ: typeStartApp, text: "+?not"}},
		{"reset video", "3.3.4", []byte{17}, control{typ: typeResetVideo}},
		{"camera set torch", "4.1", []byte{18, 1}, control{typ: typeCameraSetTorch, on: true}},
		{"camera zoom in", "4.0", []byte{19}, control{typ: typeCameraZoomIn}},
		{"camera zoom out", "4.1", []byte{20}, control{typ: typeCameraZoomOut}},
		{"resize display", "4.0", []byte{21, 0x04, 0x38, 0x07, 0x80}, control{typ: typeResizeDisplay, width: 1080, height: 1920}},
		{"scan file", "4.1", []byte{22, 0, 0, 0, 4, '/', 's', 'd', 'x'}, control{typ: typeScanFile, text: "/sdx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A second message follows, as on the socket: the reader
			// must take exactly the first one's bytes.
			in := append(append([]byte(nil), tt.in...), typeCollapsePanels)
			r := newControlReader(bytes.NewReader(in), version(t, tt.version))
			got, err := r.read()
			if err != nil {
				t.Fatalf("read: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(control{}, position{})); diff != "" {
				t.Errorf("read (-want +got):\n%s", diff)
			}
			next, err := r.read()
			if err != nil || next.typ != typeCollapsePanels {
				t.Errorf("next read = type %d, %v; want COLLAPSE_PANELS", next.typ, err)
			}
		})
	}
}

func TestControlReaderErrors(t *testing.T) {
	tests := []struct {
		name     string
		version  string
		in       []byte
		protocol bool // a ControlProtocolException, else a short read
	}{
		{"3.x knows no camera torch", "3.3.4", []byte{18, 1}, true},
		{"4.0 knows no scan file", "4.0", []byte{22, 0, 0, 0, 0}, true},
		{"4.1 knows no type 23", "4.1", []byte{23}, true},
		{"type 255", "4.1", []byte{255}, true},
		{"short keycode", "4.1", []byte{0, 1, 0, 0}, false},
		{"text shorter than its length", "4.1", []byte{1, 0, 0, 0, 5, 'a'}, false},
		{"touch without its buttons", "3.3.4", []byte{2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 8, 0, 8, 0, 0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newControlReader(bytes.NewReader(tt.in), version(t, tt.version)).read()
			if got := errors.Is(err, errProtocol); got != tt.protocol {
				t.Errorf("read error = %v; protocol error %v, want %v", err, got, tt.protocol)
			}
			if !tt.protocol && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error = %v; want io.ErrUnexpectedEOF", err)
			}
		})
	}
	// A socket closed between messages is the client leaving.
	if _, err := newControlReader(bytes.NewReader(nil), version(t, "4.1")).read(); err != io.EOF {
		t.Errorf("read of a closed socket = %v; want io.EOF", err)
	}
}

// TestClientLayouts reads what the Android driver's client writes with the
// reader written from the Java source: a layout bug in the client fails
// here instead of being mirrored by the face.
func TestClientLayouts(t *testing.T) {
	tests := []struct {
		name string
		msg  scrcpy.Message
		want control
	}{
		{"keycode", scrcpy.InjectKeycode{Action: scrcpy.KeyActionUp, Keycode: scrcpy.KeycodeHome, Repeat: 2, MetaState: 1},
			control{typ: typeInjectKeycode, action: keyActionUp, keycode: 3, repeat: 2, metaState: 1}},
		{"text", scrcpy.InjectText{Text: "wörld"}, control{typ: typeInjectText, text: "wörld"}},
		{"touch", scrcpy.InjectTouch{Action: scrcpy.MotionUp, PointerID: 7, X: 10, Y: 20, Width: 720, Height: 1280, Pressure: 1, ActionButton: 1, Buttons: 1},
			control{typ: typeInjectTouch, action: motionUp, pointerID: 7, pos: position{10, 20, 720, 1280}, pressure: 1, actionBtn: 1, buttons: 1}},
		{"scroll", scrcpy.InjectScroll{X: 1, Y: 2, Width: 720, Height: 1280, HScroll: 0, VScroll: -1},
			control{typ: typeInjectScroll, pos: position{1, 2, 720, 1280}, vScroll: -1}},
		{"back or screen on", scrcpy.BackOrScreenOn{Action: scrcpy.KeyActionDown}, control{typ: typeBackOrScreenOn, action: keyActionDown}},
		{"get clipboard", scrcpy.GetClipboard{CopyKey: 2}, control{typ: typeGetClipboard, copyKey: copyKeyCut}},
		{"set clipboard", scrcpy.SetClipboard{Sequence: 9, Paste: true, Text: "x"}, control{typ: typeSetClipboard, sequence: 9, paste: true, text: "x"}},
		{"display power", scrcpy.SetDisplayPower{On: true}, control{typ: typeSetDisplayPower, on: true}},
		{"reset video", scrcpy.ResetVideo{}, control{typ: typeResetVideo}},
		{"start app", scrcpy.StartApp{Name: "?Notes"}, control{typ: typeStartApp, text: "?Notes"}},
	}
	for _, v := range []string{"3.3.4", "4.1"} {
		for _, tt := range tests {
			t.Run(v+"/"+tt.name, func(t *testing.T) {
				b, err := scrcpy.Marshal(tt.msg, version(t, v))
				if err != nil {
					t.Fatal(err)
				}
				got, err := newControlReader(bytes.NewReader(b), version(t, v)).read()
				if err != nil {
					t.Fatalf("read: %v", err)
				}
				if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(control{}, position{})); diff != "" {
					t.Errorf("the client's %T read as the real server reads it (-want +got):\n%s", tt.msg, diff)
				}
			})
		}
	}
}

func TestDeviceMessages(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"clipboard", clipboardMessage("hé"), []byte{0, 0, 0, 0, 3, 'h', 0xc3, 0xa9}},
		{"empty clipboard", clipboardMessage(""), []byte{0, 0, 0, 0, 0}},
		{"ack clipboard", ackClipboardMessage(0x0102030405060708), []byte{1, 1, 2, 3, 4, 5, 6, 7, 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !bytes.Equal(tt.got, tt.want) {
				t.Errorf("got % x; want % x", tt.got, tt.want)
			}
		})
	}
	// A clipboard over the limit is cut on a character boundary.
	long := strings.Repeat("a", deviceClipboardMax-1) + "é"
	b := clipboardMessage(long)
	if n := len(b) - 5; n != deviceClipboardMax-1 {
		t.Errorf("a clipboard of %d bytes sent as %d bytes; want %d", len(long), n, deviceClipboardMax-1)
	}
}
