package timing

import (
	"context"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"", "fast", true}, {"fast", "fast", true}, {" Phone ", "phone", true}, {"slow", "", false},
	} {
		p, err := Parse(tt.in)
		if (err == nil) != tt.ok || p.Name != tt.want {
			t.Errorf("Parse(%q) = %q, %v; want %q, ok %v", tt.in, p.Name, err, tt.want, tt.ok)
		}
	}
}

// TestDrawStaysInRange: every draw falls in the range, and draws differ
// (a phone's timing varies).
func TestDrawStaysInRange(t *testing.T) {
	r := Phone.Dump
	seen := map[time.Duration]bool{}
	for range 200 {
		d := r.Draw()
		if d < r.Min || d > r.Max {
			t.Fatalf("Draw() = %v; want within %v–%v", d, r.Min, r.Max)
		}
		seen[d] = true
	}
	if len(seen) < 100 {
		t.Errorf("200 draws gave %d durations; want them spread", len(seen))
	}
	if d := (Range{}).Draw(); d != 0 {
		t.Errorf("the zero range draws %v; want 0", d)
	}
}

// TestWaitEndsWithItsContext: a wait gives up when its context ends.
func TestWaitEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Range{time.Hour, time.Hour}).Wait(ctx); err != context.Canceled {
		t.Errorf("Wait on an ended context = %v; want context.Canceled", err)
	}
	if err := Fast.Source.Wait(ctx); err != nil {
		t.Errorf("the fast profile's wait = %v; want nil at once", err)
	}
}
