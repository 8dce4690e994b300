package ios

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/ios/config"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit"
)

// TestCapsOfAPhone: what a phone's device says it serves, by its broadcast:
// none configured, configured but not connected, connected.
func TestCapsOfAPhone(t *testing.T) {
	all := sdk.Capabilities(&Driver{})
	for _, c := range []sdk.Capability{sdk.CapVideo, sdk.CapFrameCapture, sdk.CapUnlock, sdk.CapInput} {
		if !slices.Contains(all, c) {
			t.Fatalf("the driver's capabilities %v lack %s", all, c)
		}
	}
	withVideo := config.Phone{ID: "anna", Name: "Ana's iPhone", WDA: "http://192.168.1.20:8100", Video: &config.Video{Listen: ":7420", Secret: "x"}}
	without := withVideo
	without.Video = nil
	tests := []struct {
		name    string
		cfg     config.Phone
		live    bool
		missing map[sdk.Capability]string // capability → reason
	}{
		{"no broadcast configured", without, false, map[sdk.Capability]string{sdk.CapVideo: reasonNoBroadcast, sdk.CapFrameCapture: reasonNoBroadcast}},
		{"a broadcast not connected", withVideo, false, map[sdk.Capability]string{sdk.CapVideo: reasonNotConnected, sdk.CapFrameCapture: reasonNotConnected}},
		{"a broadcast connected", withVideo, true, map[sdk.Capability]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &phone{cfg: tt.cfg, all: all, live: tt.live}
			caps := p.device().Caps
			if caps == nil {
				t.Fatal("no Caps: want them on every phone")
			}
			for _, c := range all {
				reason, lacked := tt.missing[c]
				m, listed := p.device().Missing(c)
				switch {
				case slices.Contains(caps.Served, c) == lacked:
					t.Errorf("%s: served %v; want %v", c, lacked, !lacked)
				case listed != lacked:
					t.Errorf("%s: in Missing %v; want %v", c, listed, lacked)
				case lacked && (m.Reason != reason || m.Fix == ""):
					t.Errorf("%s: missing %+v; want reason %q and a fix", c, m, reason)
				}
				err := p.lacks(c)
				if lacked != (sdk.Category(err) == sdk.ErrUnsupported) || lacked && !strings.Contains(err.Error(), reason) {
					t.Errorf("lacks(%s) = %v; want ErrUnsupported with %q: %v", c, err, reason, lacked)
				}
			}
			if len(caps.Served)+len(caps.Missing) != len(all) {
				t.Errorf("served %v, missing %+v; want every one of %v once", caps.Served, caps.Missing, all)
			}
		})
	}
}

// TestAddBroadcastFix: the fix names the phone's own id, name and WDA
// address in a command a shell takes as it is, and fits on the wire.
func TestAddBroadcastFix(t *testing.T) {
	tests := []struct{ name, wda, want string }{
		{"Ana's iPhone", "http://192.168.1.20:8100",
			`add a broadcast: pinky ios remove anna, then pinky ios add "Ana's iPhone" --id anna --wda http://192.168.1.20:8100 --video-listen :7420, and start the broadcast app on the iPhone`},
		{"Work", "http://10.0.0.2:8100", "pinky ios add Work --id anna --wda http://10.0.0.2:8100 --video-listen :7420"},
		{`Say "$HOME"`, "http://10.0.0.2:8100", `pinky ios add 'Say "$HOME"' --id anna`},
		{"it's $5", "http://10.0.0.2:8100", `pinky ios add 'it'\''s $5' --id anna`},
		{strings.Repeat("long name ", 30), "http://10.0.0.2:8100", "then pinky ios add NAME --id anna --wda URL --video-listen :7420"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := addBroadcastFix("anna", tt.name, tt.wda)
			if !strings.Contains(got, tt.want) || len(got) > sdk.MaxStateDetail {
				t.Errorf("got %q (%d bytes); want it to hold %q, in at most %d bytes", got, len(got), tt.want, sdk.MaxStateDetail)
			}
		})
	}
}

// TestWithoutBroadcast: an iPhone listed without a broadcast says so in
// its device, answers video and frame capture with ErrUnsupported and the
// same reason and fix, and its screenshots come from WebDriverAgent: its
// MJPEG stream, or /screenshot when that is off.
func TestWithoutBroadcast(t *testing.T) {
	for _, mjpeg := range []bool{true, false} {
		t.Run(map[bool]string{true: "mjpeg", false: "screenshot"}[mjpeg], func(t *testing.T) {
			r := newRig(t, rigOpt{})
			if !mjpeg {
				r.phone.MJPEG = "off"
				r.save(t, r.phone)
			}
			d := r.driver(t)
			ctx := context.Background()
			dev := firstListing(t, d)
			m, ok := dev.Missing(sdk.CapVideo)
			if !ok || m.Reason != reasonNoBroadcast || !strings.Contains(m.Fix, "pinky ios add") || !strings.Contains(m.Fix, "--video-listen") {
				t.Errorf("the device's missing video: %+v, %v; want %q and how to add a broadcast", m, ok, reasonNoBroadcast)
			}
			if !dev.Serves(sdk.CapUnlock, d.caps) || dev.Serves(sdk.CapFrameCapture, d.caps) {
				t.Errorf("the device serves %v; want unlock and no frame capture", dev.Caps.Served)
			}
			calls := map[string]error{
				"CaptureFrame": func() error {
					_, err := d.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: phoneID})
					return err
				}(),
				"StreamVideo":     d.StreamVideo(ctx, sdk.VideoRequest{DeviceID: phoneID}, func(sdk.VideoPacket) error { return nil }),
				"RequestKeyFrame": d.RequestKeyFrame(ctx, phoneID, 0),
			}
			for name, err := range calls {
				if sdk.Category(err) != sdk.ErrUnsupported || !strings.Contains(err.Error(), reasonNoBroadcast) || !strings.Contains(err.Error(), m.Fix) {
					t.Errorf("%s: %v; want ErrUnsupported saying %q and %q", name, err, reasonNoBroadcast, m.Fix)
				}
			}
			shot, err := d.Screenshot(ctx, sdk.ScreenshotRequest{DeviceID: phoneID, Format: sdk.FormatJPEG, MaxSide: 600})
			if err != nil {
				t.Fatalf("screenshot without a broadcast: %v", err)
			}
			if max(shot.Width, shot.Height) != 600 || len(shot.Data) == 0 {
				t.Errorf("screenshot %dx%d, %d bytes; want 600 px on its longer side", shot.Width, shot.Height, len(shot.Data))
			}
		})
	}
}

// TestConformanceWithoutBroadcast runs the conformance suite on an iPhone
// listed without a broadcast: it passes for what the phone declares.
func TestConformanceWithoutBroadcast(t *testing.T) {
	r := newRig(t, rigOpt{})
	d := r.driver(t)
	drivertest.Run(t, drivertest.Config{Driver: d, Options: drivertest.Options{DeviceID: phoneID, PIN: "1234", SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestConformanceBroadcastNotConnected runs the conformance suite on an
// iPhone whose broadcast is configured and has not connected: it lacks
// video and frame capture until it does, and passes for the rest.
func TestConformanceBroadcastNotConnected(t *testing.T) {
	r := newRig(t, rigOpt{video: true, late: true})
	d := r.driver(t)
	drivertest.Run(t, drivertest.Config{Driver: d, Options: drivertest.Options{DeviceID: phoneID, PIN: "1234", SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestCapsFollowBroadcast: a phone whose broadcast is configured serves
// video and frame capture only while the broadcast is connected: a CHANGED
// event says so when it connects and again when the person stops it.
func TestCapsFollowBroadcast(t *testing.T) {
	r := newRig(t, rigOpt{video: true, late: true})
	d := r.driver(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan sdk.DeviceEvent, 64)
	go d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error { events <- ev; return nil })
	frames := func(ev sdk.DeviceEvent) (served, ok bool) {
		if ev.Device.ID != phoneID || ev.Device.Caps == nil {
			return false, false
		}
		return ev.Device.Serves(sdk.CapFrameCapture, d.caps), true
	}
	next := func(what string, want bool) sdk.DeviceEvent {
		t.Helper()
		timeout := time.After(testkit.Scaled(10 * time.Second))
		for {
			select {
			case ev := <-events:
				if got, ok := frames(ev); ok && got == want {
					return ev
				}
			case <-timeout:
				t.Fatalf("no event: %s", what)
			}
		}
	}
	first := next("the phone listed without frame capture", false)
	if first.Kind != sdk.DeviceAdded || first.Device.Serves(sdk.CapVideo, d.caps) {
		t.Errorf("first event %s, served %v; want ADDED, without video", first.Kind, first.Device.Caps.Served)
	}
	for _, c := range []sdk.Capability{sdk.CapVideo, sdk.CapFrameCapture} {
		if m, _ := first.Device.Missing(c); m.Reason != reasonNotConnected || m.Fix != fixNotConnected {
			t.Errorf("missing %s: %+v; want %q, %q", c, m, reasonNotConnected, fixNotConnected)
		}
	}
	if _, err := d.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: phoneID}); sdk.Category(err) != sdk.ErrUnsupported || !strings.Contains(err.Error(), reasonNotConnected) {
		t.Errorf("frame capture before the broadcast: %v; want ErrUnsupported saying %q", err, reasonNotConnected)
	}
	if err := d.RequestKeyFrame(ctx, phoneID, 0); sdk.Category(err) != sdk.ErrUnsupported {
		t.Errorf("a key frame asked before the broadcast: %v; want ErrUnsupported (no video yet)", err)
	}
	r.start()
	if ev := next("CHANGED: frame capture once the broadcast connects", true); ev.Kind != sdk.DeviceChanged || !ev.Device.Serves(sdk.CapVideo, d.caps) {
		t.Errorf("event %s, served %v; want CHANGED, with video", ev.Kind, ev.Device.Caps.Served)
	}
	if _, err := d.CaptureFrame(ctx, sdk.ScreenshotRequest{DeviceID: phoneID, MaxSide: 300}); err != nil {
		t.Errorf("frame capture with the broadcast connected: %v", err)
	}
	r.src.Stop("the person stopped the broadcast")
	if ev := next("CHANGED: no frame capture once the broadcast drops", false); ev.Kind != sdk.DeviceChanged || ev.Device.Serves(sdk.CapVideo, d.caps) {
		t.Errorf("event %s, served %v; want CHANGED, without video", ev.Kind, ev.Device.Caps.Served)
	}
}

// firstListing is the phone as WatchDevices first lists it.
func firstListing(t *testing.T, d *Driver) sdk.Device {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dev sdk.Device
	d.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
		if ev.Kind == sdk.DeviceAdded && ev.Device.ID == phoneID {
			dev = ev.Device
		}
		if ev.Kind == sdk.DevicesSynced {
			cancel()
		}
		return nil
	})
	if dev.Caps == nil {
		t.Fatalf("the phone's first listing has no Caps: %+v", dev)
	}
	return dev
}
