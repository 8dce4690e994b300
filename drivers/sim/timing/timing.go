// Package timing holds the virtual phones' timing profiles: how long the
// faces (the adb and WebDriverAgent servers that stand for real phones) take
// to answer. The default profile answers at once, for fast tests; the
// phone profile (PINKY_SIM_TIMING=phone) takes as long as a real phone
// does, so that benchmarks and the drivers' settle logic meet real costs:
// a `uiautomator dump` of 1–2 s, an `input` command of 0.3–1 s (a JVM per
// call), a `screencap` of 0.2–0.5 s, WebDriverAgent's /source of 0.5–2 s
// and its taps of 1–1.5 s. scrcpy's control socket stays in milliseconds,
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
