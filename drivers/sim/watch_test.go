package sim

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
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
	deadline := time.Now().Add(2 * time.Second)
	for {
		mu.Lock()
		done := len(got[0]) == 4 && len(got[1]) == 4 && len(got[2]) == 4
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
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
}
