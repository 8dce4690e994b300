package android

import (
	"errors"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func TestAmError(t *testing.T) {
	tests := []struct {
		name, out, want string
	}{
		{"started", "Starting: Intent { act=android.intent.action.VIEW dat=https://example.com/ }\n", ""},
		{"brought to the front", "Starting: Intent { cmp=com.x/.Main }\nWarning: Activity not started, its current task has been brought to the front\n", ""},
		{"unresolved", "Starting: Intent { act=android.intent.action.VIEW dat=x:y }\nError: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=x:y flg=0x10000000 }\n",
			"Error: Activity not started, unable to resolve Intent { act=android.intent.action.VIEW dat=x:y flg=0x10000000 }"},
		{"missing class", "Starting: Intent { cmp=com.x/.Main }\nError type 3\nError: Activity class {com.x/.Main} does not exist.\n", "Error: Activity class {com.x/.Main} does not exist."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := amError([]byte(tt.out)); got != tt.want {
				t.Errorf("amError: got %q; want %q", got, tt.want)
			}
		})
	}
}

// TestOpenURLReadsAmsError: am exits 0 when it opens nothing, as on a real
// phone; the driver reads what am printed and says no app opens the URL.
func TestOpenURLReadsAmsError(t *testing.T) {
	r := newRig(t)
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	_, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActOpenURL, URL: "nothing-opens:this"})
	if !errors.Is(err, sdk.ErrUnsupported) || !strings.Contains(err.Error(), "unable to resolve") {
		t.Errorf("opening a URL no app takes: %v; want ErrUnsupported with am's message", err)
	}
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActOpenURL, URL: "https://example.com/"}); err != nil {
		t.Errorf("opening https://example.com/: %v", err)
	}
}

// TestShellInputTaps: with no scrcpy server, taps and typing go through
// `adb shell input`, which exits 0 whatever takes the events; the driver
// needs no failure from it to work.
func TestShellInputTaps(t *testing.T) {
	r := newRig(t)
	r.scrcpy = ScrcpyServer{}
	d := r.driver(t)
	ctx := testkit.Context(t)
	if err := d.Unlock(ctx, r.serial, "1234"); err != nil {
		t.Fatal(err)
	}
	// Typing with no focused field: a real phone drops the text and exits 0.
	res, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActType, Text: "hello"})
	if err != nil || res.Detail != "adb shell input" {
		t.Errorf("typing with no field through adb shell input: %+v, %v; want no error", res, err)
	}
	sc, err := d.Screen(ctx, r.serial, 0)
	if err != nil {
		t.Fatal(err)
	}
	settings := simtest.Center(t, sc, "Settings")
	if _, err := d.Act(ctx, r.serial, sdk.Action{Kind: sdk.ActTap, Point: settings}); err != nil {
		t.Fatal(err)
	}
	waitApp(t, r.sim, "com.android.settings")
}
