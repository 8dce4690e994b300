package android

import (
	"bytes"

	"github.com/pinky-gateway/pinky/drivers/dump"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// readDump turns `uiautomator dump /dev/tty` output into a screen: the XML
// without uiautomator's last line, parsed by the parser every driver and
// the virtual phones share. The lock state and the app in front come from
// dumpsys (see ParseFocus, ParseLock), not from here.
func readDump(out []byte) (*sdk.Screen, error) {
	x, err := DumpXML(out)
	if err != nil {
		return nil, err
	}
	return dump.ParseUIAutomator(bytes.NewReader(x))
}
