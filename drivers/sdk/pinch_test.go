package sdk

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestAdapterPinchLimits(t *testing.T) {
	f := newFake()
	c, _ := dial(t, NewServer(f))
	ctx := context.Background()
	p := Point{X: 5, Y: 6}
	tests := []struct {
		name  string
		a     Action
		valid bool
	}{
		{"zoom in", Action{Kind: ActPinch, Point: p, Scale: 2000}, true},
		{"zoom out", Action{Kind: ActPinch, Point: p, Scale: 500, Duration: time.Second}, true},
		{"smallest scale", Action{Kind: ActPinch, Point: p, Scale: MinPinchScale}, true},
		{"largest scale", Action{Kind: ActPinch, Point: p, Scale: MaxPinchScale, Duration: 10 * time.Second}, true},
		{"no scale", Action{Kind: ActPinch, Point: p}, false},
		{"scale 1000 zooms nothing", Action{Kind: ActPinch, Point: p, Scale: 1000}, false},
		{"scale below the limit", Action{Kind: ActPinch, Point: p, Scale: MinPinchScale - 1}, false},
		{"scale above the limit", Action{Kind: ActPinch, Point: p, Scale: MaxPinchScale + 1}, false},
		{"negative scale", Action{Kind: ActPinch, Point: p, Scale: -2000}, false},
		{"negative duration", Action{Kind: ActPinch, Point: p, Scale: 2000, Duration: -time.Millisecond}, false},
		{"duration too long", Action{Kind: ActPinch, Point: p, Scale: 2000, Duration: 10001 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Act(ctx, "d1", tt.a)
			switch {
			case tt.valid && err != nil:
				t.Errorf("got %v; want it accepted", err)
			case tt.valid && f.last() != tt.a:
				t.Errorf("driver got %+v; want %+v", f.last(), tt.a)
			case !tt.valid && !errors.Is(err, ErrInvalidArgument):
				t.Errorf("got %v; want ErrInvalidArgument", err)
			}
		})
	}
}

// noPinch declares that it cannot pinch although it is the full fake.
type noPinch struct{ *fake }

func (noPinch) Pinches() bool { return false }

// pinchOnly is a minimal driver that declares pinch.
type pinchOnly struct{ minimal }

func (pinchOnly) Pinches() bool { return true }

func TestPinchNeedsTheCapability(t *testing.T) {
	a := Action{Kind: ActPinch, Point: Point{X: 5, Y: 6}, Scale: 2000}
	ctx := context.Background()
	drivers := map[string]Driver{"minimal": minimal{f: newFake()}, "declines": noPinch{newFake()}}
	for name, d := range drivers {
		t.Run(name+" over gRPC", func(t *testing.T) {
			c, _ := dial(t, NewServer(d))
			info, err := c.Info(ctx)
			if err != nil || info.Has(CapPinch) {
				t.Fatalf("Info: %v, %v; want no pinch capability", info.Capabilities, err)
			}
			if _, err := c.Act(ctx, "d1", a); !errors.Is(err, ErrUnsupported) {
				t.Errorf("got %v; want ErrUnsupported", err)
			}
		})
	}
	// In process, Complete refuses it for a driver that is not already a Full
	// (a Full, such as the Client, answers for itself).
	if _, err := Complete(minimal{f: newFake()}).Act(ctx, "d1", a); !errors.Is(err, ErrUnsupported) {
		t.Errorf("in process: got %v; want ErrUnsupported", err)
	}
	f := newFake()
	if _, err := Complete(pinchOnly{minimal{f: f}}).Act(ctx, "d1", a); err != nil || f.last() != a {
		t.Errorf("a driver that pinches: got %v, recorded %v; want it forwarded", err, f.last())
	}
}
