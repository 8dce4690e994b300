package wdad_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim/wdad"
)

func (g *rig) isLocked() bool {
	g.t.Helper()
	var v bool
	g.ok("GET", "/wda/locked", nil, &v)
	return v
}

// entry is what the passcode pad's entry shows.
func entry(s *sdk.Screen) string {
	for _, e := range s.Elements {
		if e.Password {
			return e.Text
		}
	}
	return "(no entry)"
}

func TestPasscodePad(t *testing.T) {
	g := newRig(t, nil, wdad.Config{})
	sid := g.session(nil)
	if !g.isLocked() {
		t.Fatal("the bundled iPhone starts unlocked; want locked")
	}
	e := g.fails("POST", "/wda/unlock", nil, http.StatusInternalServerError, "unknown error")
	if !strings.Contains(e.Message, "Timed out while waiting until the screen gets unlocked") {
		t.Errorf("unlock with a PIN: message %q; want WebDriverAgent's timeout", e.Message)
	}
	if !g.isLocked() {
		t.Fatal("/wda/unlock unlocked a phone with a PIN")
	}

	// The pad, as a driver sees it: Buttons named and labelled by their key.
	x := g.sourceXML(sid)
	s := g.sourceJSON(sid)
	for _, key := range []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "0", "Delete", "Cancel"} {
		e, ok := find(s, key)
		if !ok || e.Class != "XCUIElementTypeButton" || e.ResourceID != key || e.ContentDescription != key {
			t.Errorf("passcode key %q: %+v; want a Button with name and label %q", key, e, key)
		}
		if !strings.Contains(x, `<XCUIElementTypeButton type="XCUIElementTypeButton" name="`+key+`" label="`+key+`"`) {
			t.Errorf("XML source has no Button named %q", key)
		}
	}
	if has(s, "OK") {
		t.Error("the pad shows the sim's OK key; want Cancel in its place")
	}

	// Cancel clears the digits typed.
	g.tapOn(sid, "1")
	if got := entry(g.simScreen(iphone)); got != "•" {
		t.Errorf("entry %q after one digit; want •", got)
	}
	g.tapOn(sid, "Cancel")
	if got := entry(g.simScreen(iphone)); got != "" {
		t.Errorf("entry %q after Cancel; want empty", got)
	}

	// A wrong code is checked at the PIN's length: an error, still locked.
	for _, d := range []string{"9", "9", "9", "9"} {
		g.tapOn(sid, d)
	}
	if !has(g.sourceJSON(sid), "Wrong PIN") || !g.isLocked() {
		t.Fatal("a wrong passcode did not show Wrong PIN and keep the phone locked")
	}

	// The right one unlocks.
	for _, d := range []string{"1", "2", "3", "4"} {
		g.tapOn(sid, d)
	}
	if g.isLocked() {
		t.Fatal("the right passcode did not unlock the phone")
	}
	if s := g.sourceJSON(sid); !has(s, "Mail") || has(s, "Cancel") {
		t.Error("after unlocking the source is not the home screen")
	}
	if got := g.activeApp(); got != "com.apple.springboard" {
		t.Errorf("active app %q after unlocking; want com.apple.springboard", got)
	}

	// Lock again: the screen goes dark; unlock wakes it to the pad.
	g.ok("POST", "/wda/lock", nil, nil)
	if !g.isLocked() || g.simScreen(iphone).ScreenOn {
		t.Fatal("/wda/lock did not turn the screen off and lock")
	}
	g.fails("POST", "/session/"+sid+"/wda/unlock", nil, http.StatusInternalServerError, "unknown error")
	if sc := g.simScreen(iphone); !sc.ScreenOn || sc.LockState != sdk.LockLocked {
		t.Errorf("after unlock with a PIN: screen on %v, %s; want on and locked (the pad up)", sc.ScreenOn, sc.LockState)
	}
	g.fails("POST", "/wda/homescreen", nil, http.StatusInternalServerError, "unknown error")
}

func TestLockWithoutPasscode(t *testing.T) {
	g := newRig(t, testWorld(t), wdad.Config{DeviceID: "wda-theapp"})
	tests := []struct {
		name       string
		method     string
		path       string
		wantLocked bool
	}{
		{"lock", "POST", "/wda/lock", true},
		{"lock again", "POST", "/wda/lock", true},
		{"unlock", "POST", "/wda/unlock", false},
		{"unlock again", "POST", "/wda/unlock", false},
		{"lock then home button wakes", "POST", "/wda/lock", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := g.on(t)
			g.ok(tt.method, tt.path, nil, nil)
			if got := g.isLocked(); got != tt.wantLocked {
				t.Errorf("after %s %s locked = %v; want %v", tt.method, tt.path, got, tt.wantLocked)
			}
		})
	}
	sid := g.session(nil)
	g.ok("POST", "/session/"+sid+"/wda/pressButton", map[string]any{"name": "home"}, nil)
	if g.isLocked() {
		t.Error("the home button did not wake a phone without a PIN")
	}
}
