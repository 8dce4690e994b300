package stream_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/stream"
)

// fakeStreamer streams each device through a fakeDriver of its own.
type fakeStreamer struct {
	mu      sync.Mutex
	devices map[string]*fakeDriver
}

func (f *fakeStreamer) driver(device string) *fakeDriver {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.devices[device] == nil {
		f.devices[device] = newFake()
	}
	return f.devices[device]
}

func (f *fakeStreamer) StreamVideo(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
	if req.MaxSide != 1280 {
		return fmt.Errorf("the stream asked for max side %d, not the registry's 1280", req.MaxSide)
	}
	id := req.DeviceID
	if req.DisplayID != 0 {
		id = fmt.Sprintf("%s#%d", req.DeviceID, req.DisplayID)
	}
	return f.driver(id).open(ctx, send)
}

func (f *fakeStreamer) RequestKeyFrame(ctx context.Context, device string, _ int) error {
	return f.driver(device).keyFrame(ctx)
}

func TestScreens(t *testing.T) {
	fs := &fakeStreamer{devices: map[string]*fakeDriver{}}
	finds := map[string]int{}
	sc := stream.NewScreens(func(device string) (sdk.Streamer, error) {
		finds[device]++
		switch device {
		case "gone":
			return nil, sdk.ErrDeviceNotFound
		case "novideo":
			return nil, nil
		}
		return fs, nil
	}, sdk.VideoRequest{MaxSide: 1280}, stream.Options{})
	defer sc.Close()

	if _, err := sc.Join(t.Context(), "gone"); !errors.Is(err, sdk.ErrDeviceNotFound) {
		t.Errorf("join of an unknown device: %v, want ErrDeviceNotFound", err)
	}
	if _, err := sc.Join(t.Context(), "novideo"); !errors.Is(err, stream.ErrNoVideo) {
		t.Errorf("join of a device without video: %v, want ErrNoVideo", err)
	}

	// Two members of one phone share one driver stream; another phone has its own.
	a1, err := sc.Join(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	a2, err := sc.Join(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sc.Join(t.Context(), "b")
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := fs.driver("a").stream(t), fs.driver("b").stream(t)
	sa.sendAll(t, packets(3, 3))
	sb.sendAll(t, packets(2, 2))
	if got := read(t, a1, 4); got[3].KeyFrame {
		t.Errorf("a1's 4th packet is a key frame; want the stream's second frame")
	}
	read(t, a2, 4)
	read(t, b, 3)
	if n := fs.driver("a").opens.Load(); n != 1 {
		t.Errorf("phone a's stream opened %d times for two members, want 1", n)
	}
	if finds["a"] != 1 {
		t.Errorf("phone a's driver looked up %d times, want 1 (the hub is kept)", finds["a"])
	}

	// The phone went offline: its members end with the reason; b goes on.
	sc.End("a", sdk.ErrDeviceOffline)
	for _, m := range []*stream.Member{a1, a2} {
		if _, err := m.Next(t.Context()); !errors.Is(err, sdk.ErrDeviceOffline) {
			t.Errorf("member of an ended phone: %v, want ErrDeviceOffline", err)
		}
	}
	<-sa.done
	sb.sendAll(t, packets(1, 1)[1:])
	read(t, b, 1)

	// Back online: a new join finds the driver again and opens a new stream.
	a3, err := sc.Join(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	fs.driver("a").stream(t).sendAll(t, packets(1, 1))
	read(t, a3, 2)
	if finds["a"] != 2 {
		t.Errorf("phone a's driver looked up %d times after End, want 2", finds["a"])
	}

	sc.Close()
	if _, err := b.Next(t.Context()); !errors.Is(err, stream.ErrClosed) {
		t.Errorf("member after Close: %v, want ErrClosed", err)
	}
	if _, err := sc.Join(t.Context(), "b"); !errors.Is(err, stream.ErrClosed) {
		t.Errorf("join after Close: %v, want ErrClosed", err)
	}
}

// TestScreensDisplays: each display of a phone has its own stream; ending
// one display leaves the others, ending the phone ends them all.
func TestScreensDisplays(t *testing.T) {
	fs := &fakeStreamer{devices: map[string]*fakeDriver{}}
	sc := stream.NewScreens(func(string) (sdk.Streamer, error) { return fs, nil }, sdk.VideoRequest{MaxSide: 1280}, stream.Options{})
	defer sc.Close()
	own, err := sc.Join(t.Context(), "a")
	if err != nil {
		t.Fatal(err)
	}
	bg, err := sc.JoinDisplay(t.Context(), "a", 2)
	if err != nil {
		t.Fatal(err)
	}
	fs.driver("a").stream(t).sendAll(t, packets(1, 1))
	fs.driver("a#2").stream(t).sendAll(t, packets(2, 2))
	read(t, own, 2)
	read(t, bg, 3)
	sc.EndDisplay("a", 2, stream.ErrStreamEnded)
	if _, err := bg.Next(t.Context()); !errors.Is(err, stream.ErrStreamEnded) {
		t.Errorf("the removed display's member: %v, want ErrStreamEnded", err)
	}
	bg2, err := sc.JoinDisplay(t.Context(), "a", 3)
	if err != nil {
		t.Fatal(err)
	}
	fs.driver("a#3").stream(t)
	sc.End("a", sdk.ErrDeviceOffline)
	for _, m := range []*stream.Member{own, bg2} {
		if _, err := m.Next(t.Context()); !errors.Is(err, sdk.ErrDeviceOffline) {
			t.Errorf("a member of an offline phone: %v, want ErrDeviceOffline", err)
		}
	}
}
