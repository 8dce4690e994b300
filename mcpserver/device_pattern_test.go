package mcpserver

import (
	"regexp"
	"testing"
)

// TestDevicePattern: the device argument takes a driver's ids and the ids
// a phone host's devices are listed under when they clash (NAME/ID), and
// nothing else.
func TestDevicePattern(t *testing.T) {
	re := regexp.MustCompile(devicePattern)
	tests := []struct {
		id   string
		want bool
	}{
		{"sim-android-1", true},
		{"emulator-5554", true},
		{"192.168.1.20:5555", true},
		{"00008110-001A2B3C4D5E6F70", true},
		{"mac/sim-android-1", true},
		{"closet.lab_2/sim-1", true},
		{"", false},
		{"/sim-1", false},
		{"mac/", false},
		{"a/b/c", false},
		{"-mac/sim-1", false},
		{"m:c/sim-1", false},
		{"mac/sim 1", false},
		{"../sim-1", false},
	}
	for _, tt := range tests {
		if got := re.MatchString(tt.id); got != tt.want {
			t.Errorf("%q: got %v; want %v", tt.id, got, tt.want)
		}
	}
}
