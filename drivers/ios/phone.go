package ios

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/ios/video"
	"github.com/pinky-gateway/pinky/drivers/ios/wda"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// probeTimeout bounds one probe of a phone's WDA.
const probeTimeout = 3 * time.Second

// phone is what the driver keeps of one iPhone.
type phone struct {
	cfg config.Phone
	wda *wda.Client
	rx  *video.Receiver // nil without a broadcast configured
	end context.CancelFunc
	all []sdk.Capability // the driver's capabilities (caps.go)

	mu sync.Mutex
	// dev is the phone as last probed, without its Caps: device adds
	// them from the list entry and live.
	dev       sdk.Device
	live      bool              // the broadcast is connected (OnLive)
	scale     float64           // points → pixels, from /wda/screen; 0 until read
	size      [2]float64        // the screen in points
	names     map[string]string // bundle id → name, of apps seen in front
	streaming bool              // a StreamVideo runs
	shown     [2]int            // the last screen read, in pixels (its orientation)
	told      bool              // the person was told WDA is not answering
	// woken says the driver lit the lock screen since the phone locked:
	// WDA tells locked from unlocked, not a lit lock screen from a dark one.
	woken  bool
	inputs inputState // the mirror's finger, between down and up
	// depth is the session's snapshotMaxDepth; 0 until the driver changes
	// it from baseDepth (settings.go).
	depth int
}

// newPhone makes the phone of pc and starts its video receiver.
func (d *Driver) newPhone(pc config.Phone) (*phone, error) {
	var opts []wda.Option
	opts = append(opts, wda.WithLogger(d.log.With("device", pc.ID)))
	opts = append(opts, d.wdaOptions()...)
	if d.cfg.Timeout > 0 {
		opts = append(opts, wda.WithTimeout(d.cfg.Timeout))
	}
	if d.cfg.SlowTimeout > 0 {
		opts = append(opts, wda.WithSlowTimeout(d.cfg.SlowTimeout))
	}
	c, err := wda.New(pc.WDA, opts...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(d.ctx)
	p := &phone{cfg: pc, wda: c, end: cancel, all: d.caps, names: map[string]string{},
		dev: sdk.Device{
			ID: pc.ID, Name: pc.Name, Manufacturer: "Apple", Platform: sdk.PlatformIOS,
			Connection: sdk.ConnWiFi, State: sdk.StateOffline, StateDetail: "not probed yet",
		}}
	if v := pc.Video; v != nil {
		secret, err := video.ParseSecret(v.Secret)
		if err != nil {
			cancel()
			return nil, err
		}
		log := d.log.With("device", pc.ID)
		rx, err := video.NewReceiver(video.ReceiverConfig{
			DeviceID: pc.ID, Secret: secret, Listen: v.Listen, Dial: v.Dial, Logger: log,
			OnLive: func(live bool) {
				// check= lines are what pinky doctor reads (SPEC.md §1.9).
				if live {
					log.Info("the phone's broadcast started: video and fast screenshots", "check", "broadcast "+pc.ID)
				} else {
					log.Warn("no broadcast: screenshots come from WebDriverAgent, slower, and there is no video", "check", "broadcast "+pc.ID,
						"fix", "start the broadcast on the phone: Control Center, long-press screen recording, pick Pinky")
				}
				// Frame capture comes and goes with the broadcast.
				if p.setLive(live) {
					d.phoneChanged(p)
				}
			},
		})
		if err != nil {
			cancel()
			return nil, err
		}
		p.rx = rx
		go func() {
			if err := rx.Run(ctx); err != nil {
				log.Error("video receiver stopped", "err", err)
			}
		}()
	}
	return p, nil
}

// same reports whether pc is what p was made from.
func (p *phone) same(pc config.Phone) bool { return reflect.DeepEqual(p.cfg, pc) }

// release ends the phone's video receiver and frees its listening address
// at once.
func (p *phone) release() {
	p.end()
	if p.rx != nil {
		p.rx.Close()
	}
}

// stop releases the phone and ends its WDA session.
func (p *phone) stop() {
	p.release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	p.wda.Close(ctx) // best effort: the phone may be gone
}

// device is the phone as WatchDevices reports it, with what it serves now.
func (p *phone) device() sdk.Device {
	p.mu.Lock()
	defer p.mu.Unlock()
	dev := p.dev
	dev.Caps = p.capsLocked()
	return dev
}

// probe asks WDA how the phone is and reports whether that changed.
func (p *phone) probe(ctx context.Context, log *slog.Logger) bool {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	p.mu.Lock()
	next := p.dev // without Caps, which the broadcast changes meanwhile
	p.mu.Unlock()
	st, err := p.wda.Status(ctx)
	if ctx.Err() != nil && err != nil && !isTimeout(ctx) {
		return false // the driver is closing
	}
	if err != nil || !st.Ready {
		next.State, next.LockState, next.ScreenOn = sdk.StateOffline, sdk.LockUnknown, false
		next.StateDetail = "WebDriverAgent is not answering at " + p.cfg.WDA + ": start it on the phone and keep the phone on this network"
		if err == nil {
			next.StateDetail = "WebDriverAgent at " + p.cfg.WDA + " is not ready yet: " + st.Message
		}
		p.mu.Lock()
		if !p.told {
			p.told = true
			msg := "not ready"
			if err != nil {
				msg = err.Error()
			}
			log.Warn("WebDriverAgent not answering: start it on the phone (xcodebuild test-without-building, or `ios runwda` from go-ios), keep the phone on the same Wi-Fi, and check the address in `pinky ios list`",
				"device", p.cfg.ID, "wda", p.cfg.WDA, "err", msg, "check", "wda "+p.cfg.ID,
				"fix", "start WebDriverAgent on the phone (xcodebuild test-without-building, or `ios runwda` from go-ios), keep it on the same Wi-Fi, and check its address with `pinky ios list`")
		}
		p.mu.Unlock()
	} else {
		next.State, next.StateDetail = sdk.StateOnline, ""
		next.OSVersion = st.OS.Version
		if next.Model == "" || next.Name == "" {
			if info, err := p.wda.DeviceInfo(ctx); err == nil {
				next.Model = info.Model
				if next.Name == "" {
					next.Name = info.Name
				}
			}
		}
		if locked, err := p.wda.Locked(ctx); err == nil {
			p.mu.Lock()
			next.LockState, next.ScreenOn = sdk.LockUnlocked, true
			if locked {
				if p.dev.LockState == sdk.LockUnlocked {
					p.woken = false // it locked itself: its screen went dark
				}
				next.LockState, next.ScreenOn = sdk.LockLocked, p.woken
			}
			p.mu.Unlock()
		}
		p.mu.Lock()
		if p.told {
			log.Info("WebDriverAgent answers again", "device", p.cfg.ID, "check", "wda "+p.cfg.ID)
		}
		p.told = false
		p.mu.Unlock()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	changed := next != p.dev
	p.dev = next
	return changed
}

// setWoken records that the lock screen was lit (or went dark).
func (p *phone) setWoken(on bool) {
	p.mu.Lock()
	p.woken = on
	p.mu.Unlock()
}

func isTimeout(ctx context.Context) bool { return ctx.Err() == context.DeadlineExceeded }
