package sdk

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// wakeOnly is an in-process driver with one optional capability.
type wakeOnly struct {
	Driver
	woke int
}

func (w *wakeOnly) Info(context.Context) (Info, error) { return Info{Name: "w"}, nil }

func (w *wakeOnly) Wake(context.Context, string) error { w.woke++; return nil }

func TestComplete(t *testing.T) {
	d := &wakeOnly{}
	f := Complete(d)
	ctx := context.Background()
	info, err := f.Info(ctx)
	if err != nil || !slices.Equal(info.Capabilities, []Capability{CapWake}) {
		t.Errorf("Info: %v, %v; want the capabilities d implements, [wake]", info.Capabilities, err)
	}
	if err := f.Wake(ctx, "x"); err != nil || d.woke != 1 {
		t.Errorf("Wake: %v, %d calls; want it forwarded", err, d.woke)
	}
	if err := f.Unlock(ctx, "x", "1"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Unlock: %v; want ErrUnsupported", err)
	}
	if _, err := f.ListApps(ctx, "x"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("ListApps: %v; want ErrUnsupported", err)
	}
	if f2 := Complete(f); f2 != f {
		t.Error("Complete of a Full is not itself")
	}
}
