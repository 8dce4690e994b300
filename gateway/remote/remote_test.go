package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/drivertest"
	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/pki"
	"github.com/pinky-gateway/pinky/internal/testkit"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

func deviceIDs(t *testing.T, d sdk.Driver) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	devs, err := sdk.ListDevices(ctx, d)
	if err != nil {
		t.Fatalf("ListDevices: %v", err)
	}
	var ids []string
	for _, d := range devs {
		ids = append(ids, d.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestLinkServesDriver: through the link the gateway lists the host's
// phones, unlocks one, reads its screen, taps, and streams its video.
func TestLinkServesDriver(t *testing.T) {
	a := openAuthority(t, nil)
	g := startGateway(t, a)
	serveHost(t, g.Addr().String(), pair(t, a, "closet"), simtest.New(t))
	h := g.next(t)
	if h.Name != "closet" {
		t.Fatalf("Name = %q; want %q", h.Name, "closet")
	}
	if got, want := deviceIDs(t, h.Driver), []string{simtest.Android, simtest.IOS}; !slices.Equal(got, want) {
		t.Fatalf("devices = %v; want %v", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := h.Driver.Unlock(ctx, simtest.Android, simtest.PIN); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	home, err := h.Driver.Screen(ctx, simtest.Android, 0)
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	if _, err := h.Driver.Act(ctx, simtest.Android, sdk.Action{Kind: sdk.ActTap, Point: simtest.Center(t, home, "Messages")}); err != nil {
		t.Fatalf("Act(tap Messages): %v", err)
	}
	inbox, err := h.Driver.Screen(ctx, simtest.Android, 0)
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	if _, ok := simtest.Find(inbox, "Ben Okafor"); !ok {
		t.Fatalf("after tapping Messages the screen of %s holds no %q", inbox.App.ID, "Ben Okafor")
	}

	var packets []sdk.VideoPacket
	errEnough := errors.New("enough")
	err = h.Driver.StreamVideo(ctx, sdk.VideoRequest{DeviceID: simtest.Android, MaxSide: 320}, func(p sdk.VideoPacket) error {
		packets = append(packets, p)
		if len(packets) == 2 { // the config, then a key frame: an idle screen sends no more for a while
			return errEnough
		}
		return nil
	})
	if !errors.Is(err, errEnough) {
		t.Fatalf("StreamVideo: %v; want the stop of send", err)
	}
	if !packets[0].Config {
		t.Errorf("first packet: Config = false; want the stream's config first")
	}
	if p := packets[1]; p.Config || !p.KeyFrame || len(p.Data) == 0 {
		t.Errorf("second packet: Config = %v, KeyFrame = %v, %d bytes; want a key frame", p.Config, p.KeyFrame, len(p.Data))
	}
}

// TestConformanceThroughLink runs the driver contract's suite on the
// virtual phones as the gateway sees them through the link.
func TestConformanceThroughLink(t *testing.T) {
	a := openAuthority(t, nil)
	g := startGateway(t, a)
	serveHost(t, g.Addr().String(), pair(t, a, "closet"), simtest.New(t))
	h := g.next(t)
	drivertest.Run(t, drivertest.Config{Driver: h.Driver, Options: drivertest.Options{PIN: simtest.PIN, SyncTimeout: 5 * time.Second, Slack: testkit.Slack()}})
}

// TestLinkCut: the host's side of the link closes in the middle of a video
// stream. The stream fails, the Host's Gone closes and its calls fail as a
// driver gone; the host dials again and the gateway gets a new Host with
// the same phones.
func TestLinkCut(t *testing.T) {
	a := openAuthority(t, nil)
	g := startGateway(t, a)
	p := startProxy(t, g.Addr().String())
	logs := serveHost(t, p.addr(), pair(t, a, "closet"), simtest.New(t))
	h := g.next(t)

	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	streaming := make(chan struct{})
	streamErr := make(chan error, 1)
	go func() {
		first := true
		streamErr <- h.Driver.StreamVideo(ctx, sdk.VideoRequest{DeviceID: simtest.Android, MaxSide: 320}, func(sdk.VideoPacket) error {
			if first {
				first = false
				close(streaming)
			}
			return nil
		})
	}()
	waitClosed(t, streaming, "the video stream")
	p.cut()

	select {
	case err := <-streamErr:
		if err == nil {
			t.Fatal("StreamVideo returned nil after the link was cut; want an error")
		}
	case <-time.After(guard):
		t.Fatal("StreamVideo did not return after the link was cut")
	}
	waitClosed(t, h.Gone, "Gone")
	if _, err := h.Driver.Screen(ctx, simtest.Android, 0); !errors.Is(err, sdk.ErrDriverGone) {
		t.Fatalf("Screen after the cut: %v; want ErrDriverGone", err)
	}
	logs.wait(t, "link down")

	again := g.next(t)
	if again.Name != h.Name {
		t.Fatalf("Name = %q; want %q", again.Name, h.Name)
	}
	if got, want := deviceIDs(t, again.Driver), []string{simtest.Android, simtest.IOS}; !slices.Equal(got, want) {
		t.Fatalf("devices after reconnecting = %v; want %v", got, want)
	}
}

// TestRefused: a host whose certificate the gateway's CA did not sign, or
// was revoked, is refused at the handshake and never handed out, and the
// gateway keeps serving the hosts it knows.
func TestRefused(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, a *pki.Authority) *tls.Config
		want  string
	}{
		{"revoked", func(t *testing.T, a *pki.Authority) *tls.Config {
			h := pair(t, a, "revoked-host")
			if err := a.Revoke("revoked-host"); err != nil {
				t.Fatal(err)
			}
			return h.ClientTLS()
		}, "revoked"},
		{"another CA", func(t *testing.T, a *pki.Authority) *tls.Config {
			other := openAuthority(t, nil)
			foreign := pair(t, other, "foreign-host")
			cfg := foreign.ClientTLS()
			// Pin this gateway, so that the host goes on to show its
			// certificate and the gateway is the one to refuse.
			cfg.VerifyPeerCertificate = pair(t, a, "pin-donor").ClientTLS().VerifyPeerCertificate
			return cfg
		}, "certificate"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := openAuthority(t, nil)
			g := startGateway(t, a)
			host := tt.setup(t, a)
			logs := newLines()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Serve(ctx, g.Addr().String(), host, simtest.New(t), ServeOptions{MinBackoff: time.Second, Log: slog.New(logs)})
			}()
			line := g.logs.wait(t, "host refused")
			t.Logf("gateway: %s", line)
			cancel()
			<-done
			if !strings.Contains(line, tt.want) {
				t.Errorf("gateway's log: %q; want the refusal to say %q", line, tt.want)
			}
			// The refusal is the last thing the gateway does with that
			// connection: a Host handed out for it would be here by now.
			select {
			case h := <-g.hosts:
				t.Fatalf("gateway handed out %q; want it refused", h.Name)
			default:
			}

			good := pair(t, a, "closet")
			serveHost(t, g.Addr().String(), good, simtest.New(t))
			if h := g.next(t); h.Name != "closet" {
				t.Fatalf("Name = %q; want %q", h.Name, "closet")
			}
		})
	}
}
