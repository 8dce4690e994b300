package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// TestAPIDeviceMissing: a phone on the wire carries what it lacks, as its
// Caps say, and nothing when it says nothing.
func TestAPIDeviceMissing(t *testing.T) {
	noScrcpy := sdk.MissingCap{Cap: sdk.CapVideo, Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"}
	old := sdk.MissingCap{Cap: sdk.CapDisplays, Reason: "Android 12"}
	tests := []struct {
		name string
		caps *sdk.DeviceCaps
		want []api.MissingCap
	}{
		{"no caps", nil, nil},
		{"lacks nothing", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapVideo}}, nil},
		{"lacks two", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapInput}, Missing: []sdk.MissingCap{noScrcpy, old}}, []api.MissingCap{
			{Capability: "video", Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"},
			{Capability: "displays", Reason: "Android 12"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := driverhost.Device{Device: sdk.Device{ID: "p1", Platform: sdk.PlatformAndroid, State: sdk.StateOnline, Caps: tt.caps}, Driver: "android", Online: true}
			got := APIDevices([]driverhost.Device{d})
			want := []api.Device{{ID: "p1", Driver: "android", Online: true, Platform: "android", State: "online", Missing: tt.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("device on the wire (-want +got):\n%s", diff)
			}
		})
	}
	if got := APIDevices(nil); got == nil || len(got) != 0 {
		t.Errorf("no devices: got %#v; want an empty list ([] on the wire)", got)
	}
}
