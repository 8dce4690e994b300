package daemon

import (
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// TestCapsChanged: a phone's change of what it lacks is news for the log
// (device.caps), its first sight and a change of anything else are not.
func TestCapsChanged(t *testing.T) {
	lacksVideo := &sdk.DeviceCaps{Missing: []sdk.MissingCap{{Cap: sdk.CapVideo, Reason: "no broadcast"}}}
	lacksTwo := &sdk.DeviceCaps{Missing: []sdk.MissingCap{{Cap: sdk.CapVideo}, {Cap: sdk.CapApps}}}
	phone := func(id string, caps *sdk.DeviceCaps) driverhost.Device {
		return driverhost.Device{Device: sdk.Device{ID: id, Caps: caps}, Driver: "sim"}
	}
	lacks := map[string]string{}
	steps := []struct {
		name    string
		d       driverhost.Device
		now     string
		changed bool
	}{
		{"first sight, lacking video", phone("p1", lacksVideo), "video", false},
		{"the same again", phone("p1", lacksVideo), "video", false},
		{"video came", phone("p1", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapVideo}}), "", true},
		{"no caps at all is nothing lacked", phone("p1", nil), "", false},
		{"two lacked", phone("p1", lacksTwo), "video,apps", true},
		{"another phone's first sight", phone("p2", nil), "", false},
		{"a duplicate is not the phone", driverhost.Device{Device: sdk.Device{ID: "p1"}, Duplicate: true}, "", false},
		{"the phone again, unchanged", phone("p1", lacksTwo), "video,apps", false},
	}
	for _, s := range steps {
		now, changed := capsChanged(lacks, s.d)
		if changed != s.changed || (changed && now != s.now) {
			t.Errorf("%s: got %q, %v; want %q, %v", s.name, now, changed, s.now, s.changed)
		}
	}
}
