package stream

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// ErrNoVideo means the phone's driver cannot stream its screen.
var ErrNoVideo = errors.New("the phone's driver does not stream video")

// StreamerFunc finds the driver that streams a device's screen: the
// driver's handle, which stays valid while the driver restarts.
type StreamerFunc func(device string) (sdk.Streamer, error)

// Screens keeps one Hub per phone screen, made on the first Join. The daemon
// has one; the mirrors and the recorders join through it, so a phone gives
// one stream however many watch it.
type Screens struct {
	find StreamerFunc
	req  sdk.VideoRequest // what every stream asks the driver for, but the device
	opts Options

	mu     sync.Mutex
	hubs   map[screenKey]*Hub
	closed bool
}

// screenKey names one screen: a phone's own (display 0) or a background
// display of it.
type screenKey struct {
	device  string
	display int
}

// NewScreens returns an empty registry that finds streams with find and
// asks each for req (its size, codec, frame rate; DeviceID is set per phone).
func NewScreens(find StreamerFunc, req sdk.VideoRequest, opts Options) *Screens {
	return &Screens{find: find, req: req, opts: opts, hubs: map[screenKey]*Hub{}}
}

// Join adds a member to the stream of device's own screen.
func (s *Screens) Join(ctx context.Context, device string) (*Member, error) {
	return s.JoinDisplay(ctx, device, 0)
}

// JoinDisplay adds a member to the stream of one display of device: 0 is
// its own screen, others are background displays.
func (s *Screens) JoinDisplay(ctx context.Context, device string, display int) (*Member, error) {
	h, err := s.hub(screenKey{device, display})
	if err != nil {
		return nil, err
	}
	return h.Join(ctx)
}

// hub returns the hub of a screen, making it when needed.
func (s *Screens) hub(k screenKey) (*Hub, error) {
	device := k.device
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if h := s.hubs[k]; h != nil {
		return h, nil
	}
	st, err := s.find(device)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, fmt.Errorf("%s: %w", device, ErrNoVideo)
	}
	req := s.req
	req.DeviceID, req.DisplayID = device, k.display
	h := ForStreamer(st, req, s.opts)
	s.hubs[k] = h
	return h, nil
}

// End ends the streams of every display of device for all their members
// (the phone went offline or was removed) and forgets their hubs: a later
// Join finds the phone's driver again.
func (s *Screens) End(device string, err error) {
	s.mu.Lock()
	var ended []*Hub
	for k, h := range s.hubs {
		if k.device == device {
			ended = append(ended, h)
			delete(s.hubs, k)
		}
	}
	s.mu.Unlock()
	for _, h := range ended {
		h.Stop(err)
	}
}

// EndDisplay ends the stream of one display (a background display was
// removed) for all its members.
func (s *Screens) EndDisplay(device string, display int, err error) {
	s.mu.Lock()
	h := s.hubs[screenKey{device, display}]
	delete(s.hubs, screenKey{device, display})
	s.mu.Unlock()
	if h != nil {
		h.Stop(err)
	}
}

// Close ends every stream; later joins fail with ErrClosed.
func (s *Screens) Close() {
	s.mu.Lock()
	hubs := s.hubs
	s.hubs, s.closed = map[screenKey]*Hub{}, true
	s.mu.Unlock()
	for _, h := range hubs {
		h.Stop(ErrClosed)
	}
}
