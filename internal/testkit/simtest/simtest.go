// Package simtest starts Pinky's virtual phones for a test in one call: New
// gives the default world's driver, closed when the test ends, and Phone
// drives one of its phones (read, act, tap an element by name). It is apart
// from package testkit so that tests which need no phone do not build the
// virtual phones. The virtual phone driver's own tests cannot import it
// (it imports that driver) and keep their helpers.
package simtest

import (
	"context"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/drivers/sim"
)

// The default world's phones and their PIN.
const (
	Android = "sim-android-1"
	IOS     = "sim-ios-1"
	PIN     = "1234"
)

// Option changes what New starts.
type Option func(*config)

type config struct {
	edits    []func(*sim.World)
	unlocked []string
	driver   []sim.Option
}

// Edit changes the default world before its phones start.
func Edit(edit func(*sim.World)) Option {
	return func(c *config) { c.edits = append(c.edits, edit) }
}

// Unlocked unlocks the phones with PIN once they have started.
func Unlocked(devices ...string) Option {
	return func(c *config) { c.unlocked = append(c.unlocked, devices...) }
}

// Driver passes options to sim.New (faults, a logger).
func Driver(opts ...sim.Option) Option {
	return func(c *config) { c.driver = append(c.driver, opts...) }
}

// New starts the default world's virtual phones (an Android phone and an
// iPhone, both locked) and closes them when the test ends.
func New(t testing.TB, opts ...Option) *sim.Driver {
	t.Helper()
	var c config
	for _, o := range opts {
		o(&c)
	}
	w, err := sim.DefaultWorld()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.edits {
		e(w)
	}
	d := sim.New(w, c.driver...)
	t.Cleanup(func() { d.Close() })
	for _, id := range c.unlocked {
		if err := d.Unlock(context.Background(), id, PIN); err != nil {
			t.Fatalf("unlock %s: %v", id, err)
		}
	}
	return d
}

// Phone is one virtual phone driven by a test: each method fails the test
// when the driver returns an error.
type Phone struct {
	T      testing.TB
	Driver *sim.Driver
	ID     string
}

// NewPhone starts the default world as New does and returns its phone id.
func NewPhone(t testing.TB, id string, opts ...Option) *Phone {
	t.Helper()
	return &Phone{T: t, Driver: New(t, opts...), ID: id}
}

// Screen reads the phone's screen.
func (p *Phone) Screen() *sdk.Screen {
	p.T.Helper()
	s, err := p.Driver.Screen(context.Background(), p.ID, 0)
	if err != nil {
		p.T.Fatalf("Screen(%s): %v", p.ID, err)
	}
	return s
}

// Act performs a and returns the driver's result.
func (p *Phone) Act(a sdk.Action) sdk.ActResult {
	p.T.Helper()
	r, err := p.Driver.Act(context.Background(), p.ID, a)
	if err != nil {
		p.T.Fatalf("Act(%+v): %v", a, err)
	}
	return r
}

// Unlock unlocks the phone with PIN.
func (p *Phone) Unlock() {
	p.T.Helper()
	if err := p.Driver.Unlock(context.Background(), p.ID, PIN); err != nil {
		p.T.Fatalf("unlock %s: %v", p.ID, err)
	}
}

// Launch brings an app to the front.
func (p *Phone) Launch(app string) { p.T.Helper(); p.Act(sdk.Action{Kind: sdk.ActLaunch, AppID: app}) }

// Type types text into the focused field.
func (p *Phone) Type(text string) { p.T.Helper(); p.Act(sdk.Action{Kind: sdk.ActType, Text: text}) }

// Key presses a key.
func (p *Phone) Key(k sdk.Key) { p.T.Helper(); p.Act(sdk.Action{Kind: sdk.ActKey, Key: k}) }

// Tap taps the centre of the first element Find finds, and fails the test
// when there is none.
func (p *Phone) Tap(what string) {
	p.T.Helper()
	p.Act(sdk.Action{Kind: sdk.ActTap, Point: Center(p.T, p.Screen(), what)})
}

// Center returns the centre of the element Find finds in s, and fails the
// test when there is none. s may come from any driver.
func Center(t testing.TB, s *sdk.Screen, what string) sdk.Point {
	t.Helper()
	e, ok := Find(s, what)
	if !ok {
		t.Fatalf("%q: not on the screen of %s", what, s.App.ID)
	}
	return e.Bounds.Center()
}

// Find returns the first element of s whose text, content description or
// resource id is what, or whose resource id is an Android one that ends in
// ":id/" and what.
func Find(s *sdk.Screen, what string) (sdk.Element, bool) {
	for _, e := range s.Elements {
		if e.Text == what || e.ContentDescription == what || e.ResourceID == what || strings.HasSuffix(e.ResourceID, ":id/"+what) {
			return e, true
		}
	}
	return sdk.Element{}, false
}
