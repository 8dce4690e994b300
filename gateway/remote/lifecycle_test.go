package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
)

// TestRevokeClosesLink: revoking a linked host closes its link at once
// (Close given to OnRevoke), and its dials after that are refused.
func TestRevokeClosesLink(t *testing.T) {
	var g *gateway
	a := openAuthority(t, func(name string) { g.Close(name) })
	g = startGateway(t, a)
	logs := serveHost(t, g.Addr().String(), pair(t, a, "closet"), simtest.New(t))
	h := g.next(t)
	if err := a.Revoke("closet"); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, h.Gone, "Gone")
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if _, err := h.Driver.Info(ctx); !errors.Is(err, sdk.ErrDriverGone) {
		t.Fatalf("Info after the revocation: %v; want ErrDriverGone", err)
	}
	g.logs.wait(t, "host refused", "revoked")
	// The host says what the person can do about it.
	logs.wait(t, "link down", "refused this host's certificate", "pair again")
	select {
	case h := <-g.hosts:
		t.Fatalf("gateway handed out %q after its revocation", h.Name)
	default:
	}
}

// TestSecondLinkReplacesFirst: a second link of a name replaces the first,
// whose Gone has closed by the time the second is handed out.
func TestSecondLinkReplacesFirst(t *testing.T) {
	a := openAuthority(t, nil)
	g := startGateway(t, a)
	host := pair(t, a, "closet")
	d := simtest.New(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	// The first host waits long before dialling again, so that it does not
	// take the name back in the middle of the test.
	go func() {
		defer close(done)
		Serve(ctx, g.Addr().String(), host.ClientTLS(), d, ServeOptions{MinBackoff: time.Hour, Log: quiet}) //nolint:errcheck // ends with ctx
	}()
	first := g.next(t)
	serveHost(t, g.Addr().String(), host, d)
	second := g.next(t)
	select {
	case <-first.Gone:
	default:
		t.Fatal("the first link's Gone is open after the second link was handed out")
	}
	if got, want := deviceIDs(t, second.Driver), []string{simtest.Android, simtest.IOS}; !slices.Equal(got, want) {
		t.Fatalf("devices through the second link = %v; want %v", got, want)
	}
}

// TestHostStartsBeforeGateway: a host started while the gateway is down
// dials until the gateway listens, and links then.
func TestHostStartsBeforeGateway(t *testing.T) {
	a := openAuthority(t, nil)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := free.Addr().String()
	free.Close()
	logs := serveHost(t, addr, pair(t, a, "closet"), simtest.New(t))
	logs.wait(t, "link down", "refused")

	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	hosts := make(chan Host, 1)
	g := Listen(lis, a.ServerTLS(), func(h Host) { hosts <- h }, ListenOptions{Log: quiet})
	t.Cleanup(g.Stop)
	select {
	case h := <-hosts:
		if h.Name != "closet" {
			t.Fatalf("Name = %q; want %q", h.Name, "closet")
		}
	case <-time.After(guard):
		t.Fatal("the host did not link once the gateway listened")
	}
	logs.wait(t, "link up")
}

func TestCloseUnknown(t *testing.T) {
	g := startGateway(t, openAuthority(t, nil))
	if g.Close("nobody") {
		t.Fatal(`Close("nobody") = true; want false`)
	}
}

func TestServeNeedsTLS(t *testing.T) {
	if err := Serve(context.Background(), "127.0.0.1:1", nil, simtest.New(t), ServeOptions{Log: quiet}); err == nil {
		t.Fatal("Serve without a TLS configuration returned nil; want an error")
	}
}

// TestStopEndsLinks: Stop closes every link and returns once onHost and
// the gateway's goroutines have.
func TestStopEndsLinks(t *testing.T) {
	a := openAuthority(t, nil)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hosts := make(chan Host, 1)
	g := Listen(lis, a.ServerTLS(), func(h Host) { hosts <- h }, ListenOptions{Log: slog.New(newLines())})
	serveHost(t, lis.Addr().String(), pair(t, a, "closet"), simtest.New(t))
	var h Host
	select {
	case h = <-hosts:
	case <-time.After(guard):
		t.Fatal("no host linked")
	}
	g.Stop()
	select {
	case <-h.Gone:
	default:
		t.Fatal("Gone is open after Stop returned")
	}
	if _, err := net.Dial("tcp", lis.Addr().String()); err == nil {
		t.Fatal("the gateway still accepts after Stop")
	}
}

// TestRevokedDuringHandshake: a host revoked after its handshake passed
// but before its link was known (so OnRevoke had nothing to close) is
// refused when the link is checked again, and never handed out.
func TestRevokedDuringHandshake(t *testing.T) {
	a := openAuthority(t, nil)
	host := pair(t, a, "closet")
	cfg := a.ServerTLS()
	verify, once := cfg.VerifyConnection, sync.Once{}
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		err := verify(cs)
		once.Do(func() {
			if rerr := a.Revoke("closet"); rerr != nil {
				t.Error(rerr)
			}
		})
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hosts := make(chan Host, 4)
	logs := newLines()
	g := Listen(lis, cfg, func(h Host) { hosts <- h }, ListenOptions{Log: slog.New(logs)})
	t.Cleanup(g.Stop)
	serveHost(t, lis.Addr().String(), host, simtest.New(t))
	logs.wait(t, "host refused", "revoked")
	select {
	case h := <-hosts:
		t.Fatalf("gateway handed out %q, revoked before it was linked", h.Name)
	default:
	}
}
