package sim

import (
	"context"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// watcher is one WatchDevices call's queue; it never blocks publishers.
type watcher struct {
	mu     sync.Mutex
	queue  []sdk.DeviceEvent
	notify chan struct{}
}

func (w *watcher) push(ev sdk.DeviceEvent) {
	w.mu.Lock()
	w.queue = append(w.queue, ev)
	w.mu.Unlock()
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

func (w *watcher) take() []sdk.DeviceEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	q := w.queue
	w.queue = nil
	return q
}

// publish records a device change and hands it to every watcher.
func (d *Driver) publish(ev sdk.DeviceEvent) {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	if ev.Kind == sdk.DeviceRemoved {
		delete(d.devices, ev.Device.ID)
	} else {
		d.devices[ev.Device.ID] = ev.Device
	}
	for w := range d.watch {
		w.push(ev)
	}
}

// WatchDevices sends an Added event per present device, then DevicesSynced,
// then every change, until ctx ends.
func (d *Driver) WatchDevices(ctx context.Context, send func(sdk.DeviceEvent) error) error {
	if err := d.enter(ctx, "watch", "", ""); err != nil {
		return err
	}
	w := &watcher{notify: make(chan struct{}, 1)}
	d.watchMu.Lock()
	for _, p := range d.phones {
		if dev, ok := d.devices[p.spec.ID]; ok {
			w.queue = append(w.queue, sdk.DeviceEvent{Kind: sdk.DeviceAdded, Device: dev})
		}
	}
	w.queue = append(w.queue, sdk.DeviceEvent{Kind: sdk.DevicesSynced})
	d.watch[w] = struct{}{}
	d.watchMu.Unlock()
	defer func() {
		d.watchMu.Lock()
		delete(d.watch, w)
		d.watchMu.Unlock()
	}()
	for {
		for _, ev := range w.take() {
			if err := send(ev); err != nil {
				return err
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-w.notify:
		}
	}
}
