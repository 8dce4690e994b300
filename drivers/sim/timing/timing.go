// Package timing holds the virtual phones' timing profiles: how long the
// faces (the adb and WebDriverAgent servers that stand for real phones) take
// to answer. The default profile answers at once, for fast tests; the
// phone profile (PINKY_SIM_TIMING=phone) takes as long as a real phone
// does, so that benchmarks and the drivers' settle logic meet real costs:
// a `uiautomator dump` of 1–2 s, an `input` command of 0.3–1 s (a JVM per
// call), a `screencap` of 0.2–0.5 s, WebDriverAgent's /source of 0.5–2 s
// and its taps of 1–1.5 s, plus WebDriverAgent's idle waits and the cost of
// the visible attribute as its settings leave them (see Profile). scrcpy's control socket stays in milliseconds,
// as on a phone.
package timing

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"
)

// Env is the environment variable that chooses the profile.
const Env = "PINKY_SIM_TIMING"

// Range is how long one operation takes: a duration drawn evenly from
// Min to Max each time.
type Range struct{ Min, Max time.Duration }

// Profile is the time each face's operation takes. The zero value answers
// at once.
type Profile struct {
	Name string
	// The adb face.
	Dump      Range // uiautomator dump
	Input     Range // input tap, swipe, text, keyevent
	Screencap Range // screencap
	// The WebDriverAgent face.
	Source     Range // GET /source
	Tap        Range // taps, long presses, swipes, drags and W3C actions
	Screenshot Range // GET /screenshot
	// Quiescence is one XCTest wait for the app to be idle when the app is
	// idle already (WebDriverAgent's fb_waitUntilStableWithTimeout: after
	// W3C actions and before an XML source while animationCoolOffTimeout is
	// above 0, and before every event while the session waits for
	// quiescence and waitForIdleTimeout is above 0). An app that animates
	// adds the rest of its animation, up to the timeout. Zero turns the
	// idle waits off altogether, as the fast profile does.
	Quiescence Range
	// Visible is what computing the visible attribute of one element of a
	// page source costs; excluding the attribute saves it.
	Visible time.Duration
}

// Fast answers at once: the default, for tests.
var Fast = Profile{Name: "fast"}

// Phone is a real phone's timing, from peers' measurements and the
// project's own on real devices (issue 16 and 17).
var Phone = Profile{
	Name:       "phone",
	Dump:       Range{time.Second, 2 * time.Second},
	Input:      Range{300 * time.Millisecond, time.Second},
	Screencap:  Range{200 * time.Millisecond, 500 * time.Millisecond},
	Source:     Range{500 * time.Millisecond, 2 * time.Second},
	Tap:        Range{time.Second, 1500 * time.Millisecond},
	Screenshot: Range{200 * time.Millisecond, 600 * time.Millisecond},
	// A peer measured a W3C tap at about 1.2 s with WebDriverAgent's
	// default idle waits and 0.47 s with both at 0 (issue 17): the check
	// itself costs about 0.5 to 0.8 s on an idle app.
	Quiescence: Range{500 * time.Millisecond, 800 * time.Millisecond},
	// The same peer read a widget-heavy home screen in 40.5 s with the
	// visible attribute and 0.27 s without it, at full depth (it gave no
	// element count); 2 ms an element is a cautious figure for an ordinary
	// app's screen, which has far fewer and simpler elements.
	Visible: 2 * time.Millisecond,
}

// Parse reads a profile's name: "" or "fast", or "phone".
func Parse(name string) (Profile, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "fast":
		return Fast, nil
	case "phone":
		return Phone, nil
	}
	return Profile{}, fmt.Errorf("%s=%q: want fast or phone", Env, name)
}

// FromEnv is Parse of $PINKY_SIM_TIMING.
func FromEnv() (Profile, error) { return Parse(os.Getenv(Env)) }

// Draw is one duration from r.
func (r Range) Draw() time.Duration {
	if r.Max <= r.Min {
		return r.Min
	}
	return r.Min + rand.N(r.Max-r.Min+1)
}

// Wait sleeps for one duration drawn from r, or until ctx ends (its error).
func (r Range) Wait(ctx context.Context) error {
	d := r.Draw()
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
