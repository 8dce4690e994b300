package daemon

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/api"
)

// inputKeys are the keys the console may press, by the names it sends.
var inputKeys = map[string]sdk.Key{
	"home": sdk.KeyHome, "back": sdk.KeyBack, "enter": sdk.KeyEnter, "delete": sdk.KeyDelete,
	"recents": sdk.KeyRecents, "app_switch": sdk.KeyRecents, "tab": sdk.KeyTab, "escape": sdk.KeyBack,
	"volume_up": sdk.KeyVolumeUp, "volume_down": sdk.KeyVolumeDown, "power": sdk.KeyPower,
}

// inputAction turns the console's input into a driver action, or says what
// is wrong with it.
func inputAction(in api.InputParams) (sdk.Action, error) {
	at := sdk.Point{X: in.X, Y: in.Y}
	if in.DurationMS < 0 || in.DurationMS > 10_000 {
		return sdk.Action{}, fmt.Errorf("duration_ms must be 0 to 10000, not %d", in.DurationMS)
	}
	d := time.Duration(in.DurationMS) * time.Millisecond
	switch in.Kind {
	case "tap":
		return sdk.Action{Kind: sdk.ActTap, Point: at}, nil
	case "long_press":
		return sdk.Action{Kind: sdk.ActLongPress, Point: at, Duration: d}, nil
	case "swipe":
		return sdk.Action{Kind: sdk.ActSwipe, Point: at, To: sdk.Point{X: in.X2, Y: in.Y2}, Duration: d}, nil
	case "type":
		if in.Text == "" {
			return sdk.Action{}, fmt.Errorf("type needs text")
		}
		return sdk.Action{Kind: sdk.ActType, Text: in.Text}, nil
	case "key":
		k, ok := inputKeys[in.Key]
		if !ok {
			return sdk.Action{}, fmt.Errorf("unknown key %q", in.Key)
		}
		return sdk.Action{Kind: sdk.ActKey, Key: k}, nil
	}
	return sdk.Action{}, fmt.Errorf("unknown input kind %q: tap, long_press, swipe, type or key", in.Kind)
}

// input is the person's input on a phone they took over: the console's
// mouse and keyboard.
func (g *Gateway) input(ctx context.Context, in api.InputParams) (api.Empty, error) {
	a, err := inputAction(in)
	if err != nil {
		return api.Empty{}, err
	}
	// The person's input goes only to a phone they hold, so that it never
	// races an agent's action.
	if !g.agents.WithPerson(in.Device) {
		return api.Empty{}, fmt.Errorf("take %s over first: input goes only to a phone you hold", in.Device)
	}
	drv, _, err := g.host.DriverForDevice(in.Device)
	if err != nil {
		return api.Empty{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if in.Width > 0 && in.Height > 0 && a.Kind != sdk.ActType && a.Kind != sdk.ActKey {
		screen, err := g.sizes.get(ctx, drv, in.Device, in.Width > in.Height)
		if err != nil {
			return api.Empty{}, err
		}
		a.Point, a.To = scale(a.Point, in.Width, in.Height, screen), scale(a.To, in.Width, in.Height, screen)
	}
	if _, err := drv.Act(ctx, in.Device, a); err != nil {
		return api.Empty{}, err
	}
	// What the person types is theirs: not logged, not recorded.
	g.log.Debug("the person's input", "device", in.Device, "kind", in.Kind)
	return api.Empty{}, nil
}

// getSettings is the person's settings.
func (g *Gateway) getSettings(context.Context, api.NoParams) (api.Settings, error) {
	return apiSettings(g.settings.Get()), nil
}

// setSettings changes the settings the request names; the others keep
// their values.
func (g *Gateway) setSettings(_ context.Context, c api.SettingsChange) (api.Settings, error) {
	s := g.settings.Get()
	if c.Recording != nil {
		s.Recording = *c.Recording
	}
	if c.RetentionDays != nil {
		s.RetentionDays = *c.RetentionDays
	}
	if c.ReadOnly != nil {
		s.ReadOnly = *c.ReadOnly
	}
	s, err := g.settings.Set(s)
	if err != nil {
		return api.Settings{}, err
	}
	g.log.Info("the person changed the settings", "recording", s.Recording, "retention_days", s.RetentionDays, "read_only", s.ReadOnly)
	return apiSettings(s), nil
}

// scale maps p, in a picture of w by h, onto a screen of size to.
func scale(p sdk.Point, w, h int, to sdk.Point) sdk.Point {
	return sdk.Point{X: p.X * to.X / w, Y: p.Y * to.Y / h}
}

// screenSizes remembers each phone's screen size, for the console's input
// on a mirror whose video may be smaller than the screen. A phone turned
// (the picture's orientation differs from the size kept) is read again.
type screenSizes struct {
	mu    sync.Mutex
	sizes map[string]sdk.Point
}

func (s *screenSizes) get(ctx context.Context, drv sdk.Driver, device string, landscape bool) (sdk.Point, error) {
	s.mu.Lock()
	size, ok := s.sizes[device]
	s.mu.Unlock()
	if ok && (size.X > size.Y) == landscape {
		return size, nil
	}
	sc, err := drv.Screen(ctx, device, 0)
	if err != nil {
		return sdk.Point{}, err
	}
	if sc.Width <= 0 || sc.Height <= 0 {
		return sdk.Point{}, fmt.Errorf("the driver of %s gave no screen size", device)
	}
	size = sdk.Point{X: sc.Width, Y: sc.Height}
	s.mu.Lock()
	if s.sizes == nil {
		s.sizes = map[string]sdk.Point{}
	}
	s.sizes[device] = size
	s.mu.Unlock()
	return size, nil
}

// forget drops a phone's size (it went offline; it may come back another).
func (s *screenSizes) forget(device string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.sizes, device)
}
