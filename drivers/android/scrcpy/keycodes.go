package scrcpy

import "github.com/pinky-gateway/pinky/drivers/sdk"

// Android keycodes (android.view.KeyEvent.KEYCODE_*) used by Pinky.
const (
	KeycodeHome       uint32 = 3
	KeycodeBack       uint32 = 4
	KeycodeDpadUp     uint32 = 19
	KeycodeDpadDown   uint32 = 20
	KeycodeDpadLeft   uint32 = 21
	KeycodeDpadRight  uint32 = 22
	KeycodeDpadCenter uint32 = 23
	KeycodeVolumeUp   uint32 = 24
	KeycodeVolumeDown uint32 = 25
	KeycodePower      uint32 = 26
	KeycodeTab        uint32 = 61
	KeycodeEnter      uint32 = 66
	KeycodeDel        uint32 = 67
	KeycodeMenu       uint32 = 82
	KeycodeSearch     uint32 = 84
	KeycodeEscape     uint32 = 111
	KeycodeForwardDel uint32 = 112
	KeycodeVolumeMute uint32 = 164
	KeycodeAppSwitch  uint32 = 187
	KeycodeSleep      uint32 = 223
	KeycodeWakeup     uint32 = 224
	KeycodePaste      uint32 = 279
	MetaShiftOn       uint32 = 0x01
	MetaCtrlOn        uint32 = 0x1000
	keycode0          uint32 = 7
	KeycodeA          uint32 = 29
	keycodeA                 = KeycodeA
	keycodeSpace      uint32 = 62
	keycodeLastLetter        = keycodeA + 25
	keycodeLastDigit         = keycode0 + 9
)

var keycodes = map[sdk.Key]uint32{
	sdk.KeyBack: KeycodeBack, sdk.KeyHome: KeycodeHome, sdk.KeyRecents: KeycodeAppSwitch,
	sdk.KeyEnter: KeycodeEnter, sdk.KeyDelete: KeycodeDel, sdk.KeyForwardDelete: KeycodeForwardDel,
	sdk.KeyTab: KeycodeTab, sdk.KeyEscape: KeycodeEscape, sdk.KeyVolumeUp: KeycodeVolumeUp,
	sdk.KeyVolumeDown: KeycodeVolumeDown, sdk.KeyVolumeMute: KeycodeVolumeMute, sdk.KeyPower: KeycodePower,
	sdk.KeyWake: KeycodeWakeup, sdk.KeySleep: KeycodeSleep, sdk.KeyMenu: KeycodeMenu, sdk.KeySearch: KeycodeSearch,
	sdk.KeyDpadUp: KeycodeDpadUp, sdk.KeyDpadDown: KeycodeDpadDown, sdk.KeyDpadLeft: KeycodeDpadLeft,
	sdk.KeyDpadRight: KeycodeDpadRight, sdk.KeyDpadCenter: KeycodeDpadCenter,
}

var keysByCode = func() map[uint32]sdk.Key {
	m := make(map[uint32]sdk.Key, len(keycodes))
	for k, c := range keycodes {
		m[c] = k
	}
	return m
}()

// Keycode returns the Android keycode of a named key.
func Keycode(k sdk.Key) (uint32, bool) {
	c, ok := keycodes[k]
	return c, ok
}

// KeyOf returns the named key of an Android keycode.
func KeyOf(code uint32) (sdk.Key, bool) {
	k, ok := keysByCode[code]
	return k, ok
}

// KeycodeChar returns the character an Android letter, digit or space key
// types with metastate meta ("" for other keys).
func KeycodeChar(code, meta uint32) string {
	switch {
	case code >= keycodeA && code <= keycodeLastLetter:
		c := 'a' + rune(code-keycodeA)
		if meta&MetaShiftOn != 0 {
			c -= 'a' - 'A'
		}
		return string(c)
	case code >= keycode0 && code <= keycodeLastDigit:
		return string('0' + rune(code-keycode0))
	case code == keycodeSpace:
		return " "
	}
	return ""
}
