package sim

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

func TestWatchDevices(t *testing.T) {
	d := newDefault(t)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	got := make([][]sdk.DeviceEvent, 3)
	var mu sync.Mutex
	synced := make(chan struct{}, len(got))
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
				mu.Lock()
				got[i] = append(got[i], ev)
				mu.Unlock()
				if ev.Kind == sdk.DevicesSynced {
					synced <- struct{}{}
				}
				return nil
			})
			if err != nil {
				t.Errorf("WatchDevices: got %v; want nil", err)
			}
		}()
	}
	for range got {
		<-synced
	}
	unlock(t, d, android)
	testkit.Poll(2*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got[0]) == 4 && len(got[1]) == 4 && len(got[2]) == 4
	})
	cancel()
	wg.Wait()
	for i, evs := range got {
		kinds := []sdk.DeviceEventKind{}
		for _, ev := range evs {
			kinds = append(kinds, ev.Kind)
		}
		want := []sdk.DeviceEventKind{sdk.DeviceAdded, sdk.DeviceAdded, sdk.DevicesSynced, sdk.DeviceChanged}
		if len(kinds) != len(want) {
			t.Fatalf("watcher %d: got %v; want %v", i, kinds, want)
		}
		for j := range want {
			if kinds[j] != want[j] {
				t.Fatalf("watcher %d: got %v; want %v", i, kinds, want)
			}
		}
		if ev := evs[3]; ev.Device.LockState != sdk.LockUnlocked || ev.Device.ID != android {
			t.Errorf("watcher %d: got %+v; want %s unlocked", i, ev.Device, android)
		}
		if ev := evs[0]; ev.Device.Connection != sdk.ConnVirtual || ev.Device.LockState != sdk.LockLocked {
			t.Errorf("watcher %d: got %+v; want virtual and locked", i, ev.Device)
		}
	}
}

// TestConcurrent drives both phones from many goroutines; run it with -race.
func TestConcurrent(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := []string{android, "sim-ios-1"}[g%2]
			for i := 0; i < 20; i++ {
				d.Unlock(ctx, id, "1234")
				d.Act(ctx, id, sdk.Action{Kind: sdk.ActLaunch, AppID: "messages"})
				d.Act(ctx, id, sdk.Action{Kind: sdk.ActScroll, Direction: sdk.ScrollDown})
				d.Screen(ctx, id, 0)
				if i%5 == 0 {
					d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: id, MaxSide: 300})
				}
				d.Act(ctx, id, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyHome})
			}
		}()
	}
	wg.Wait()
}

func TestFiles(t *testing.T) {
	d := newDefault(t)
	ctx := context.Background()
	n, err := d.PushFile(ctx, android, "docs/a.txt", strings.NewReader("hello"))
	if err != nil || n != 5 {
		t.Fatalf("PushFile: got %d, %v; want 5, nil", n, err)
	}
	list, err := d.ListFiles(ctx, android, "")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, f := range list {
		names[f.Name] = f.Dir
	}
	if dir, ok := names["docs"]; !ok || !dir || len(names) != 2 {
		t.Errorf("ListFiles: got %v; want docs/ and welcome.txt", names)
	}
	var buf strings.Builder
	if err := d.PullFile(ctx, android, "docs/a.txt", &buf); err != nil || buf.String() != "hello" {
		t.Errorf("PullFile: got %q, %v; want hello, nil", buf.String(), err)
	}
	// A push that fails half-way leaves the old file.
	if _, err := d.PushFile(ctx, android, "docs/a.txt", io.MultiReader(strings.NewReader("new"), iotest.ErrReader(errors.New("cut")))); err == nil {
		t.Error("a push whose reader fails succeeded")
	}
	buf.Reset()
	if err := d.PullFile(ctx, android, "docs/a.txt", &buf); err != nil || buf.String() != "hello" {
		t.Errorf("after a failed push: got %q, %v; want the old hello", buf.String(), err)
	}
	if _, err := d.PushFile(ctx, android, "docs", strings.NewReader("x")); !errors.Is(err, sdk.ErrInvalidArgument) {
		t.Errorf("push onto a folder: got %v; want ErrInvalidArgument", err)
	}
	for _, tt := range []struct {
		path      string
		recursive bool
		want      error
	}{
		{"docs", false, sdk.ErrInvalidArgument}, // not empty
		{"", true, sdk.ErrInvalidArgument},
		{"nope.txt", false, sdk.ErrFileNotFound},
		{"docs/a.txt", false, nil},
		{"docs", false, nil}, // empty now
		{"docs", false, sdk.ErrFileNotFound},
	} {
		if err := d.DeleteFile(ctx, android, tt.path, tt.recursive); !errors.Is(err, tt.want) && !(err == nil && tt.want == nil) {
			t.Errorf("DeleteFile(%q, %v): got %v; want %v", tt.path, tt.recursive, err, tt.want)
		}
	}
	d.PushFile(ctx, android, "tree/a/b.txt", strings.NewReader("x"))
	if err := d.DeleteFile(ctx, android, "tree", true); err != nil {
		t.Errorf("recursive delete: %v", err)
	}
	if _, err := d.ListFiles(ctx, android, "tree"); !errors.Is(err, sdk.ErrFileNotFound) {
		t.Errorf("after a recursive delete: got %v; want ErrFileNotFound", err)
	}
}
