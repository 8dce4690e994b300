package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/screen"
)

// pinch is phone_pinch's action on the element with text, at scale thousandths.
func pinch(text string, scale int) Action {
	a := Action{Tool: ToolPinch, Kind: "pinch", Scale: scale}
	if text != "" {
		a.Target = Target{Text: text}
	}
	return a
}

func TestPinchZoomsThePhoto(t *testing.T) {
	f := newFixture(t, Config{})
	s := f.connected(t)
	ctx := context.Background()
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Shop"}, nil); err != nil {
		t.Fatal(err)
	}
	obs, err := s.Act(ctx, "sim-android-1", pinch("Wireless headphones photo", 2000), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(obs.Text, "Zoom 200%") {
		t.Errorf("after a pinch of 200%%: got\n%s\nwant the photo at Zoom 200%%", obs.Text)
	}
	obs, err = s.Act(ctx, "sim-android-1", pinch("Wireless headphones photo", 500), nil)
	if err != nil || !strings.Contains(obs.Text, "Zoom 100%") {
		t.Errorf("after a pinch of 50%%: got %v\n%v\nwant the photo back at Zoom 100%%", err, obs)
	}
}

func TestPinchRefusedBeforeThePhone(t *testing.T) {
	tests := []struct {
		name  string
		a     Action
		code  Code
		hides bool // the driver does not declare pinch
	}{
		{"scale 100%", pinch("", 1000), CodeInvalidArgument, false},
		{"scale under 10%", pinch("", 90), CodeInvalidArgument, false},
		{"scale over 1000%", pinch("", 10010), CodeInvalidArgument, false},
		{"no such text", pinch("Nowhere to be seen", 2000), CodeNotFound, false},
		{"a driver that cannot pinch", pinch("", 2000), CodeUnsupported, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, Config{})
			if tt.hides {
				f.drv.wrap = func(d sdk.Driver) sdk.Driver { return hidesPinch{d} }
			}
			s := f.connected(t)
			_, err := s.Act(context.Background(), "sim-android-1", tt.a, nil)
			wantCode(t, tt.name, err, tt.code)
		})
	}
}

// hidesPinch is a driver that declares no pinch (nor any other capability).
type hidesPinch struct{ sdk.Driver }

// judged records what the guard was asked about, and allows it.
type judged struct{ checks *[]Check }

func (j judged) Check(c Check) Verdict {
	*j.checks = append(*j.checks, c)
	return Verdict{Decision: Allow}
}

func (judged) Blocked(string) bool { return false }

// TestPinchIsJudgedOnItsCentre: the guard sees a pinch as a touch on the
// element under its centre, as it sees a swipe's start.
func TestPinchIsJudgedOnItsCentre(t *testing.T) {
	var checks []Check
	f := newFixture(t, Config{Guard: judged{&checks}})
	s := f.connected(t)
	ctx := context.Background()
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Shop"}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Act(ctx, "sim-android-1", pinch("Add to cart", 1500), nil); err != nil {
		t.Fatal(err)
	}
	c := checks[len(checks)-1]
	if c.Action.Kind != "pinch" || c.Target == nil || c.Target.Label != "Add to cart" {
		t.Errorf("guard asked about %q on %+v; want the pinch on Add to cart", c.Action.Kind, c.Target)
	}
}

// TestPinchIsJudgedUnderEachFinger: a pinch centred beside a control, with
// a finger on it, has that control judged too (Also), so two fingers
// cannot press a button the centre misses.
func TestPinchIsJudgedUnderEachFinger(t *testing.T) {
	var checks []Check
	f := newFixture(t, Config{Guard: judged{&checks}})
	s := f.connected(t)
	ctx := context.Background()
	if _, err := s.Act(ctx, "sim-android-1", Action{Kind: "launch", App: "Shop"}, nil); err != nil {
		t.Fatal(err)
	}
	sc, err := f.drv.d.Screen(ctx, "sim-android-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	v := screen.NewModel().Read(sc)
	cart, err := v.ByText("Add to cart", 0)
	if err != nil {
		t.Fatal(err)
	}
	// A centre outside the button from which a finger lands on it.
	var at sdk.Point
	found := false
	for y := 0; y < v.Height && !found; y += 8 {
		for x := 0; x < v.Width; x += 8 {
			p := sdk.Point{X: x, Y: y}
			if cart.Bounds.Contains(p) {
				continue
			}
			if n, ok := v.ByPoint(p); !ok || n.Clickable {
				continue // a quiet spot: nothing the centre itself would press
			}
			fs := sdk.Pinch(p, 1050, v.Width, v.Height)
			if cart.Bounds.Contains(fs.Start[0]) || cart.Bounds.Contains(fs.Start[1]) {
				at, found = p, true
				break
			}
		}
	}
	if !found {
		t.Fatal("no centre beside Add to cart puts a finger on it")
	}
	a := Action{Tool: ToolPinch, Kind: "pinch", Scale: 1050, Target: Target{X: at.X, Y: at.Y, HasPoint: true}}
	if _, err := s.Act(ctx, "sim-android-1", a, nil); err != nil {
		t.Fatal(err)
	}
	c := checks[len(checks)-1]
	if c.Target != nil && c.Target.Label == "Add to cart" {
		t.Fatalf("the centre %v is on Add to cart; the test wants it beside", at)
	}
	onCart := false
	for _, n := range c.Also {
		onCart = onCart || n.Label == "Add to cart"
	}
	if !onCart {
		t.Errorf("guard asked about the pinch at %v with Also %+v; want Add to cart, under a finger", at, c.Also)
	}
}
