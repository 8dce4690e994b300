package sdk

import (
	"context"
	"errors"
	"testing"
)

// watcher is a Driver whose WatchDevices replays events, then waits for
// its context or fails.
type watcher struct {
	Driver
	events []DeviceEvent
	fail   error
}

func (w watcher) WatchDevices(ctx context.Context, send func(DeviceEvent) error) error {
	for _, e := range w.events {
		if err := send(e); err != nil {
			return err
		}
	}
	if w.fail != nil {
		return w.fail
	}
	<-ctx.Done()
	return nil
}

func TestListDevices(t *testing.T) {
	a, b := Device{ID: "a"}, Device{ID: "b"}
	got, err := ListDevices(context.Background(), watcher{events: []DeviceEvent{
		{Kind: DeviceAdded, Device: a}, {Kind: DeviceAdded, Device: b}, {Kind: DevicesSynced}, {Kind: DeviceRemoved, Device: a},
	}})
	if err != nil || len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Errorf("got %v, %v; want a and b, the devices listed before SYNCED", got, err)
	}
	boom := errors.New("boom")
	if _, err := ListDevices(context.Background(), watcher{fail: boom}); !errors.Is(err, boom) {
		t.Errorf("a failing watch: got %v; want its error", err)
	}
}
