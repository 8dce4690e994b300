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
	hubs   map[string]*Hub
	closed bool
}

// NewScreens returns an empty registry that finds streams with find and
// asks each for req (its size, codec, frame rate; DeviceID is set per phone).
func NewScreens(find StreamerFunc, req sdk.VideoRequest, opts Options) *Screens {
	return &Screens{find: find, req: req, opts: opts, hubs: map[string]*Hub{}}
}

// Join adds a member to the stream of device's main screen.
func (s *Screens) Join(ctx context.Context, device string) (*Member, error) {
	h, err := s.hub(device)
	if err != nil {
		return nil, err
	}
	return h.Join(ctx)
}

// Hub returns the hub of device's main screen, making it when needed.
func (s *Screens) hub(device string) (*Hub, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if h := s.hubs[device]; h != nil {
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
	req.DeviceID = device
	h := ForStreamer(st, req, s.opts)
	s.hubs[device] = h
	return h, nil
}

// End ends the stream of device for all its members (the phone went
// offline or was removed) and forgets its hub: a later Join finds the
// phone's driver again.
func (s *Screens) End(device string, err error) {
	s.mu.Lock()
	h := s.hubs[device]
	delete(s.hubs, device)
	s.mu.Unlock()
	if h != nil {
		h.Stop(err)
	}
}

// Close ends every stream; later joins fail with ErrClosed.
func (s *Screens) Close() {
	s.mu.Lock()
	hubs := s.hubs
	s.hubs, s.closed = map[string]*Hub{}, true
	s.mu.Unlock()
	for _, h := range hubs {
		h.Stop(ErrClosed)
	}
}
