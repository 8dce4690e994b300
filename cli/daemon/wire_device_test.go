package daemon

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
)

// TestAPIDeviceMissing: a phone on the wire carries what it lacks, as its
// Caps say, and nothing when it says nothing; apart, what it lacks without
// a word because its driver does not offer it (or its Caps leave it out
// of both lists), once the driver's capabilities are known.
func TestAPIDeviceMissing(t *testing.T) {
	noScrcpy := sdk.MissingCap{Cap: sdk.CapVideo, Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"}
	old := sdk.MissingCap{Cap: sdk.CapDisplays, Reason: "Android 12"}
	all := sdk.AllCapabilities
	noNotes := slices.DeleteFunc(slices.Clone(all), func(c sdk.Capability) bool { return c == sdk.CapNotifications })
	tests := []struct {
		name       string
		caps       *sdk.DeviceCaps
		offered    []sdk.Capability // the driver's; nil: not known
		want       []api.MissingCap
		notOffered []string
	}{
		{"no caps", nil, nil, nil, nil},
		{"lacks nothing", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapVideo}}, nil, nil, nil},
		{"lacks two", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapInput}, Missing: []sdk.MissingCap{noScrcpy, old}}, nil, []api.MissingCap{
			{Capability: "video", Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"},
			{Capability: "displays", Reason: "Android 12"},
		}, nil},
		{"a driver that offers everything, no caps", nil, all, nil, nil},
		{"a driver that offers everything, the phone serves all", &sdk.DeviceCaps{Served: all}, all, nil, nil},
		{"a driver without notifications", nil, noNotes, nil, []string{"notifications"}},
		{"a driver with nothing optional", nil, []sdk.Capability{}, nil, []string{
			"input", "video", "frame_capture", "wake", "unlock", "lock_events", "wait_idle", "apps", "files", "displays", "notifications", "pinch"}},
		{"missing and not offered apart", &sdk.DeviceCaps{Served: []sdk.Capability{sdk.CapInput, sdk.CapApps}, Missing: []sdk.MissingCap{noScrcpy}},
			[]sdk.Capability{sdk.CapInput, sdk.CapVideo, sdk.CapApps, sdk.CapFiles},
			[]api.MissingCap{{Capability: "video", Reason: "no scrcpy server found", Fix: "install scrcpy 3.x"}},
			[]string{"frame_capture", "wake", "unlock", "lock_events", "wait_idle", "files", "displays", "notifications", "pinch"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := driverhost.Device{Device: sdk.Device{ID: "p1", Platform: sdk.PlatformAndroid, State: sdk.StateOnline, Caps: tt.caps}, Driver: "android", Online: true, Offered: tt.offered}
			got := APIDevices([]driverhost.Device{d})
			want := []api.Device{{ID: "p1", Driver: "android", Online: true, Platform: "android", State: "online", Missing: tt.want, NotOffered: tt.notOffered}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("device on the wire (-want +got):\n%s", diff)
			}
		})
	}
	if got := APIDevices(nil); got == nil || len(got) != 0 {
		t.Errorf("no devices: got %#v; want an empty list ([] on the wire)", got)
	}
}
