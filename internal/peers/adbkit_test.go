package peers

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/dump"
)

// adbkitResult is what testdata/node/adbkit.cjs prints.
type adbkitResult struct {
	Devices []struct{ ID, Type string }
	Props   struct{ Model, Device, SDK string }
	// Features counts the entries of pm list features.
	Features    int
	Packages    []string
	Installed   bool
	Dump        string
	DumpFile    string
	PulledDump  string
	Cat, Pulled string
	Stat        int
	Readdir     []string
	AfterHome   string
	AfterStart  string
	AfterTap    string
}

// TestAdbkit: @devicefarmer/adbkit, through the adb server, lists the
// phone, reads its properties, features and packages, dumps its UI to the
// terminal and to a file it pulls, takes a PNG,
// pushes, stats, lists and pulls a file, and presses home, starts an app
// and taps, each as it does on a real phone.
func TestAdbkit(t *testing.T) {
	needNode(t)
	r := newRig(t)
	// Where the conversation with Ben is in Messages, for the script's tap.
	r.shell(t, "am start -n com.google.android.apps.messaging/.MainActivity")
	conv := described(r.screen(t), "Ben Okafor")
	if conv == nil {
		t.Fatal("Messages shows no conversation with Ben Okafor")
	}
	x, y := center(conv)
	r.shell(t, "input keyevent KEYCODE_HOME")

	dir := t.TempDir()
	out := r.node(t, []string{fmt.Sprintf("TAP=input tap %d %d", x, y)}, "adbkit.cjs", fmt.Sprint(r.port), r.serial, dir)
	var got adbkitResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("adbkit.cjs printed %q: %v", out, err)
	}

	if !slices.ContainsFunc(got.Devices, func(d struct{ ID, Type string }) bool { return d.ID == r.serial && d.Type == "device" }) {
		t.Errorf("listDevices: got %+v; want %s as a device", got.Devices, r.serial)
	}
	if got.Props.Model != "Pixel 8" || got.Props.Device != "shiba" || got.Props.SDK != "35" {
		t.Errorf("getProperties: got %+v; want a Pixel 8's (model Pixel 8, device shiba, SDK 35)", got.Props)
	}
	if got.Features == 0 {
		t.Error("getFeatures: got none; want a phone's features (pm list features)")
	}
	if !slices.Contains(got.Packages, "com.google.android.apps.messaging") || !got.Installed {
		t.Errorf("getPackages, isInstalled: got %v, %t; want Messages installed", got.Packages, got.Installed)
	}
	for name, doc := range map[string]string{"shell uiautomator dump /dev/tty": got.Dump, "pull of the dumped file": got.PulledDump} {
		s, err := dump.ParseUIAutomator(strings.NewReader(doc))
		if err != nil || len(s.Elements) == 0 {
			t.Errorf("%s: got %q (%v); want a UI dump", name, doc, err)
		}
	}
	if want := "UI hierchary dumped to: /sdcard/window_dump.xml"; !strings.Contains(got.DumpFile, want) {
		t.Errorf("uiautomator dump FILE: got %q; want %q", got.DumpFile, want)
	}
	f, err := os.Open(filepath.Join(dir, "screencap.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if img, err := png.Decode(f); err != nil {
		t.Errorf("screencap: not a PNG: %v", err)
	} else if b := img.Bounds(); b.Dx() != 1080 || b.Dy() != 2400 {
		t.Errorf("screencap: got %dx%d; want 1080x2400", b.Dx(), b.Dy())
	}
	const pushed = "hello from adbkit\n"
	if got.Cat != pushed || got.Pulled != pushed || got.Stat != len(pushed) || !slices.Contains(got.Readdir, "adbkit.txt") {
		t.Errorf("push, then cat, pull, stat, readdir: got %q, %q, %d, %v; want the pushed %q", got.Cat, got.Pulled, got.Stat, got.Readdir, pushed)
	}
	if !strings.Contains(got.AfterHome, "com.google.android.apps.nexuslauncher/") {
		t.Errorf("input keyevent KEYCODE_HOME: focus %q; want the launcher", got.AfterHome)
	}
	if !strings.Contains(got.AfterStart, "com.google.android.apps.messaging/") {
		t.Errorf("startActivity: focus %q; want Messages", got.AfterStart)
	}
	s, err := dump.ParseUIAutomator(strings.NewReader(got.AfterTap))
	if err != nil {
		t.Fatal(err)
	}
	if e := element(s, "contact_name"); e == nil || e.Text != "Ben Okafor" {
		t.Errorf("input tap on Ben's conversation: contact %+v; want Ben Okafor's thread", e)
	}
	if s := r.screen(t); s.App.ID != "com.google.android.apps.messaging" {
		t.Errorf("after the script: app %q in front; want Messages", s.App.ID)
	}
}
