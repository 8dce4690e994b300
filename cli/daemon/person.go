package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/events"
)

// The person's controls on the local API (registerAPI lists them): the
// leases, taking a phone over and handing it back, stopping an agent, and
// unlocking a phone with its PIN.

// listLeases is the agents' leases on the phones.
func (g *Gateway) listLeases(context.Context, api.NoParams) ([]api.Lease, error) {
	return apiLeases(g.agents.Leases()), nil
}

// known refuses a phone no driver lists: a typo must not be taken over,
// handed back or announced to the console as if it were a phone.
func (g *Gateway) known(device string) error {
	if _, _, err := g.host.DriverForDevice(device); err != nil {
		return fmt.Errorf("%s: not found: no driver lists this phone; pinky devices lists them", device)
	}
	return nil
}

// takeOver gives a phone to the person: agents' actions on it wait.
func (g *Gateway) takeOver(_ context.Context, d api.DeviceParams) (api.Empty, error) {
	if err := g.known(d.Device); err != nil {
		return api.Empty{}, err
	}
	if err := g.agents.TakeOver(d.Device); err != nil {
		return api.Empty{}, err
	}
	g.log.Warn("the person took over a phone", "device", d.Device)
	g.events.Publish(events.Event{Kind: events.PersonTakeover, Device: d.Device})
	return api.Empty{}, nil
}

// handBack gives a phone the person took over back to its agent.
func (g *Gateway) handBack(_ context.Context, d api.DeviceParams) (api.Empty, error) {
	if err := g.known(d.Device); err != nil {
		return api.Empty{}, err
	}
	if err := g.agents.HandBack(d.Device); err != nil {
		return api.Empty{}, err
	}
	g.events.Publish(events.Event{Kind: events.PersonHandback, Device: d.Device})
	return api.Empty{}, nil
}

// stopLeases ends an agent's lease on a phone, or every lease.
func (g *Gateway) stopLeases(_ context.Context, s api.StopParams) (api.StopResult, error) {
	switch {
	case s.All:
		return api.StopResult{Stopped: g.agents.StopAll()}, nil
	case s.Device == "":
		return api.StopResult{}, errors.New("name a device, or all")
	}
	if err := g.agents.Stop(s.Device); err != nil {
		return api.StopResult{}, err
	}
	g.log.Warn("the person stopped an agent", "device", s.Device)
	return api.StopResult{Stopped: 1}, nil
}

// unlock unlocks a phone with the PIN the person typed.
func (g *Gateway) unlock(ctx context.Context, u api.UnlockParams) (api.Empty, error) {
	drv, _, err := g.host.DriverForDevice(u.Device)
	if err != nil {
		return api.Empty{}, err
	}
	if !g.host.Serves(u.Device, sdk.CapUnlock) {
		return api.Empty{}, fmt.Errorf("the driver of %s cannot unlock it", u.Device)
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
			return api.Empty{}, fmt.Errorf("wrong PIN for %s", u.Device)
		}
		return api.Empty{}, err
	}
	g.log.Info("the person unlocked a phone", "device", u.Device)
	return api.Empty{}, nil
}
