package driverhost

import (
	"slices"
	"testing"
)

// TestDriverEnv: every driver gets the data folder as PINKY_HOME (the iOS
// driver reads its phone list there), before its own entries, which win.
func TestDriverEnv(t *testing.T) {
	h := New(Config{Home: "/data/pinky", Env: map[string][]string{"ios": {"PINKY_HOME=/elsewhere", "X=1"}}})
	if got, want := h.env("sim"), []string{"PINKY_HOME=/data/pinky"}; !slices.Equal(got, want) {
		t.Errorf("sim: got %q; want %q", got, want)
	}
	if got, want := h.env("ios"), []string{"PINKY_HOME=/data/pinky", "PINKY_HOME=/elsewhere", "X=1"}; !slices.Equal(got, want) {
		t.Errorf("ios: got %q; want %q (the driver's own entry last, so it wins)", got, want)
	}
	if got := New(Config{}).env("sim"); len(got) != 0 {
		t.Errorf("no home: got %q; want nothing", got)
	}
}
