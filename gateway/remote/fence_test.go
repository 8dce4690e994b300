package remote

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// TestFencesThroughLink: the host refuses a call whose lease fence is
// below the highest it saw for the phone, with sdk.ErrLeaseLost, and lets
// the others through, per phone, across a reconnect and across two
// gateways linked to it.
func TestFencesThroughLink(t *testing.T) {
	a := openAuthority(t, nil)
	g1, g2 := startGateway(t, a), startGateway(t, a)
	p := startProxy(t, g1.Addr().String())
	host := pair(t, a, "closet")
	fences := &Fences{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for _, addr := range []string{p.addr(), g2.Addr().String()} {
		go func() {
			defer func() { done <- struct{}{} }()
			opts := ServeOptions{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Log: slog.New(newLines()), Fences: fences}
			Serve(ctx, addr, host.ClientTLS(), simtest.New(t), opts) //nolint:errcheck // ends with ctx
		}()
	}
	t.Cleanup(func() {
		cancel()
		for range 2 {
			select {
			case <-done:
			case <-time.After(guard):
				t.Error("Serve did not return after its context ended")
			}
		}
	})
	h1, h2 := g1.next(t), g2.next(t)

	call, cctx := context.WithTimeout(context.Background(), guard)
	defer cctx()
	home := sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome}
	act := func(d sdk.Driver, device string, fence int64) error {
		_, err := d.Act(sdk.WithFence(call, device, fence), device, home)
		return err
	}
	type step struct {
		name   string
		d      func() sdk.Driver
		device string
		fence  int64 // 0: none
		lost   bool
	}
	run := func(steps []step) {
		t.Helper()
		for _, st := range steps {
			err := act(st.d(), st.device, st.fence)
			switch {
			case st.lost && !errors.Is(err, sdk.ErrLeaseLost):
				t.Errorf("%s: got %v; want ErrLeaseLost", st.name, err)
			case !st.lost && err != nil:
				t.Errorf("%s: got %v; want it done", st.name, err)
			}
		}
	}
	first := func() sdk.Driver { return h1.Driver }
	second := func() sdk.Driver { return h2.Driver }
	run([]step{
		{"fence 5", first, simtest.Android, 5, false},
		{"fence 4 after 5", first, simtest.Android, 4, true},
		{"fence 5 again", first, simtest.Android, 5, false},
		{"fence 6 after 5", first, simtest.Android, 6, false},
		{"no fence", first, simtest.Android, 0, false},
		{"fence 5 after 6", first, simtest.Android, 5, true},
		{"another phone's fence 1", first, simtest.IOS, 1, false},
		{"fence 5 through the other gateway", second, simtest.Android, 5, true},
		{"fence 7 through the other gateway", second, simtest.Android, 7, false},
		{"fence 6 through the first again", first, simtest.Android, 6, true},
	})
	// A stream is checked when it opens.
	_, err := h1.Driver.Input(sdk.WithFence(call, simtest.Android, 3), func() (sdk.InputEvent, error) {
		return sdk.InputEvent{}, io.EOF
	})
	if !errors.Is(err, sdk.ErrLeaseLost) {
		t.Errorf("input with fence 3 after 7: got %v; want ErrLeaseLost", err)
	}

	p.cut()
	waitClosed(t, h1.Gone, "the first link")
	again := g1.next(t)
	run([]step{
		{"fence 6 after the reconnect", func() sdk.Driver { return again.Driver }, simtest.Android, 6, true},
		{"fence 8 after the reconnect", func() sdk.Driver { return again.Driver }, simtest.Android, 8, false},
	})
}

func TestServeSharesTheProcessFences(t *testing.T) {
	if got := (ServeOptions{}).withDefaults().Fences; got != processFences || got == nil {
		t.Errorf("default fences %p; want the process's %p", got, processFences)
	}
	own := &Fences{}
	if got := (ServeOptions{Fences: own}).withDefaults().Fences; got != own {
		t.Errorf("fences %p; want the ones given, %p", got, own)
	}
}

// TestFencesKeptInFile: fences opened from a file refuse, after a restart
// (a new OpenFences of the same file), the fence the last process had
// already seen beaten; a damaged file is refused with what to do.
func TestFencesKeptInFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fences.json")
	in := func(device string, fence int64) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(sdk.FenceDeviceKey, device, sdk.FenceKey, strconv.FormatInt(fence, 10)))
	}
	f, err := OpenFences(path, slog.New(newLines()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		device string
		fence  int64
	}{{"sim-android-1", 1}, {"sim-android-1", 3}, {"sim-ios-1", 7}} {
		if err := f.check(in(c.device, c.fence)); err != nil {
			t.Fatalf("fence %d of %s: %v", c.fence, c.device, err)
		}
	}
	again, err := OpenFences(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		device string
		fence  int64
		lost   bool
	}{{"sim-android-1", 2, true}, {"sim-ios-1", 6, true}, {"sim-android-1", 3, false}, {"sim-ios-1", 8, false}, {"sim-android-2", 1, false}} {
		err := again.check(in(c.device, c.fence))
		if lost := sdk.Category(err) == sdk.ErrLeaseLost; lost != c.lost {
			t.Errorf("after a restart, fence %d of %s: %v; want lost %v", c.fence, c.device, err, c.lost)
		}
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFences(path, nil); err == nil || !strings.Contains(err.Error(), "remove the file") {
		t.Fatalf("a damaged fences file: %v; want refused with what to do", err)
	}
}
