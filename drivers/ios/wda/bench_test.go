package wda

import (
	"context"
	"testing"
)

// BenchmarkTap measures a Tap against the fake WDA over loopback: the
// client's own cost per call (JSON, HTTP, session lookup), not the phone's.
func BenchmarkTap(b *testing.B) {
	c := newFake(b).client()
	ctx := context.Background()
	if err := c.Tap(ctx, 1, 1); err != nil { // create the session outside the loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Tap(ctx, 100, 200); err != nil {
			b.Fatal(err)
		}
	}
}
