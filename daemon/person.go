package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/events"
)

// personRoutes registers the person's controls: stopping an agent, and
// unlocking a phone with its PIN.
func (g *Gateway) personRoutes() {
	g.api.Handle(api.MethodTakeOver, func(_ context.Context, p json.RawMessage) (any, error) {
		var d api.DeviceParams
		if err := api.Params(p, &d); err != nil {
			return nil, err
		}
		if err := g.agents.TakeOver(d.Device); err != nil {
			return nil, err
		}
		g.log.Warn("the person took over a phone", "device", d.Device)
		g.events.Publish(events.Event{Kind: events.PersonTakeover, Device: d.Device})
		return nil, nil
	})
	g.api.Handle(api.MethodStopLease, func(_ context.Context, p json.RawMessage) (any, error) {
		var s api.StopParams
		if err := api.Params(p, &s); err != nil {
			return nil, err
		}
		switch {
		case s.All:
			return api.StopResult{Stopped: g.agents.StopAll()}, nil
		case s.Device == "":
			return nil, errors.New("name a device, or all")
		}
		if err := g.agents.Stop(s.Device); err != nil {
			return nil, err
		}
		g.log.Warn("the person stopped an agent", "device", s.Device)
		return api.StopResult{Stopped: 1}, nil
	})
	g.api.Handle(api.MethodUnlock, func(ctx context.Context, p json.RawMessage) (any, error) {
		var u api.UnlockParams
		if err := api.Params(p, &u); err != nil {
			return nil, err
		}
		drv, _, err := g.host.DriverForDevice(u.Device)
		if err != nil {
			return nil, err
		}
		if !g.host.Serves(u.Device, sdk.CapUnlock) {
			return nil, fmt.Errorf("the driver of %s cannot unlock it", u.Device)
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		// The PIN goes to the driver and nowhere else: not to the log, not
		// to the history.
		// The PIN pad is never recorded: what the recording holds now, and
		// what the screen shows until the next read, is dropped.
		g.recorders.ScreenHidden(u.Device, "unlocking")
		defer g.recorders.ScreenHidden(u.Device, "unlocked")
		if err := drv.Unlock(ctx, u.Device, u.PIN); err != nil {
			if errors.Is(err, sdk.ErrWrongPIN) {
				return nil, fmt.Errorf("wrong PIN for %s", u.Device)
			}
			return nil, err
		}
		g.log.Info("the person unlocked a phone", "device", u.Device)
		return nil, nil
	})
}
