package pki

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// handshake is what the server saw of one connection.
type handshake struct {
	err  error
	name string
	ok   bool // HostName's second result
}

// serveTLS accepts TLS connections on a loopback port with cfg, reports
// each handshake, and writes one byte to a client it accepted.
func serveTLS(t *testing.T, cfg *tls.Config) (addr string, seen <-chan handshake) {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan handshake, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tc := c.(*tls.Conn)
			err = tc.Handshake()
			hs := handshake{err: err}
			if err == nil {
				hs.name, hs.ok = HostName(tc.ConnectionState())
				_, _ = tc.Write([]byte{1})
			}
			tc.Close()
			ch <- hs
		}
	}()
	return ln.Addr().String(), ch
}

// dial connects with cfg and reads the server's byte: in TLS 1.3 the
// server's verdict on the client's certificate arrives after the client's
// handshake has returned, with the first read.
func dial(addr string, cfg *tls.Config) error {
	c, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = io.ReadFull(c, make([]byte, 1))
	return err
}

func next(t *testing.T, seen <-chan handshake) handshake {
	t.Helper()
	select {
	case hs := <-seen:
		return hs
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("the server saw no handshake")
		return handshake{}
	}
}

func withServerName(c *tls.Config, name string) *tls.Config {
	c = c.Clone()
	c.ServerName = name
	return c
}

func TestHandshake(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	other := openAuthority(t, t.TempDir(), nil)
	closet := pair(t, a, "closet")
	revoked := pair(t, a, "old")
	if err := a.Revoke("old"); err != nil {
		t.Fatal(err)
	}
	replaced := pair(t, a, "mac")
	pair(t, a, "mac")
	elsewhere := pair(t, other, "closet") // pinned other's fingerprint

	// A certificate of the other gateway's CA presented by a host that
	// pinned this gateway.
	foreignCert := elsewhere.ClientTLS().Certificates
	foreign := closet.ClientTLS()
	foreign.Certificates = foreignCert

	noCert := PairingTLS(a.Fingerprint())

	var unknownCA x509.UnknownAuthorityError
	tests := []struct {
		name       string
		server     *tls.Config
		client     *tls.Config
		wantName   string
		clientErr  func(error) bool // nil: the client must succeed
		serverErr  func(error) bool // nil: the server must succeed
		serverSeen bool             // whether the server sees a handshake to judge
	}{
		{name: "paired host", server: a.ServerTLS(), client: closet.ClientTLS(), wantName: "closet", serverSeen: true},
		{name: "paired host dialling another name", server: a.ServerTLS(),
			client: withServerName(closet.ClientTLS(), "gateway.example.org"), wantName: "closet", serverSeen: true},
		{name: "revoked host", server: a.ServerTLS(), client: revoked.ClientTLS(), serverSeen: true,
			clientErr: isErr, serverErr: func(err error) bool { return errors.Is(err, ErrRevoked) }},
		{name: "host paired again, old certificate", server: a.ServerTLS(), client: replaced.ClientTLS(), serverSeen: true,
			clientErr: isErr, serverErr: func(err error) bool { return errors.Is(err, ErrRevoked) }},
		{name: "certificate of another CA", server: a.ServerTLS(), client: foreign, serverSeen: true,
			clientErr: isErr, serverErr: func(err error) bool { return errors.As(err, &unknownCA) }},
		{name: "no certificate", server: a.ServerTLS(), client: noCert, serverSeen: true,
			clientErr: isErr, serverErr: isErr},
		{name: "host pinned another gateway", server: a.ServerTLS(), client: elsewhere.ClientTLS(), serverSeen: true,
			clientErr: func(err error) bool { return errors.Is(err, ErrPinMismatch) }, serverErr: isErr},
		{name: "pairing without a certificate", server: a.PairingServerTLS(), client: noCert, serverSeen: true},
		{name: "pairing listener, paired host", server: a.PairingServerTLS(), client: closet.ClientTLS(), wantName: "closet", serverSeen: true},
		{name: "pairing listener, revoked host", server: a.PairingServerTLS(), client: revoked.ClientTLS(), serverSeen: true,
			clientErr: isErr, serverErr: func(err error) bool { return errors.Is(err, ErrRevoked) }},
		{name: "pairing with another pin", server: a.PairingServerTLS(), client: PairingTLS(other.Fingerprint()), serverSeen: true,
			clientErr: func(err error) bool { return errors.Is(err, ErrPinMismatch) }, serverErr: isErr},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, seen := serveTLS(t, tt.server)
			err := dial(addr, tt.client)
			if tt.clientErr == nil && err != nil {
				t.Fatalf("client: %v; want success", err)
			}
			if tt.clientErr != nil && !tt.clientErr(err) {
				t.Fatalf("client: %v; want refused", err)
			}
			hs := next(t, seen)
			if tt.serverErr == nil {
				if hs.err != nil {
					t.Fatalf("server: %v; want success", hs.err)
				}
				if hs.name != tt.wantName || hs.ok != (tt.wantName != "") {
					t.Fatalf("HostName = %q, %v; want %q", hs.name, hs.ok, tt.wantName)
				}
				return
			}
			if !tt.serverErr(hs.err) {
				t.Fatalf("server: %v; want refused", hs.err)
			}
		})
	}
}

func isErr(err error) bool { return err != nil }

// TestRevokeRefusesAtOnce revokes a host between two handshakes on the same
// listener and configuration.
func TestRevokeRefusesAtOnce(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	h := pair(t, a, "closet")
	addr, seen := serveTLS(t, a.ServerTLS())
	if err := dial(addr, h.ClientTLS()); err != nil {
		t.Fatalf("before Revoke: %v", err)
	}
	if hs := next(t, seen); hs.err != nil {
		t.Fatalf("before Revoke, server: %v", hs.err)
	}
	if err := a.Revoke("closet"); err != nil {
		t.Fatal(err)
	}
	if err := dial(addr, h.ClientTLS()); err == nil {
		t.Fatal("after Revoke the client connected; want refused")
	}
	if hs := next(t, seen); !errors.Is(hs.err, ErrRevoked) {
		t.Fatalf("after Revoke, server: %v; want ErrRevoked", hs.err)
	}
}

// TestGRPCHealth runs a gRPC health service over ServerTLS and asks it
// through a host's ClientTLS, as the host link will.
func TestGRPCHealth(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil, "127.0.0.1")
	other := openAuthority(t, t.TempDir(), nil)
	h := pair(t, a, "closet")
	gone := pair(t, a, "gone")
	elsewhere := pair(t, other, "closet")

	callers := make(chan string, 8)
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(a.ServerTLS())),
		grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
			p, _ := peer.FromContext(ctx)
			ti, _ := p.AuthInfo.(credentials.TLSInfo)
			name, _ := HostName(ti.State)
			callers <- name
			return next(ctx, req)
		}),
	)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	check := func(t *testing.T, cfg *tls.Config, target string) error {
		t.Helper()
		cc, err := grpc.NewClient("passthrough:///"+target, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health status %v; want SERVING", resp.GetStatus())
		}
		return err
	}
	// The address dialled by another name than the certificate's: the pin
	// is what counts.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	byName := net.JoinHostPort("localhost", port)

	t.Run("paired host", func(t *testing.T) {
		if err := check(t, h.ClientTLS(), byName); err != nil {
			t.Fatalf("Check: %v", err)
		}
		if got := <-callers; got != "closet" {
			t.Fatalf("the server saw host %q; want closet", got)
		}
	})
	t.Run("revoked host", func(t *testing.T) {
		if err := check(t, gone.ClientTLS(), ln.Addr().String()); err != nil {
			t.Fatalf("Check before Revoke: %v", err)
		}
		<-callers
		if err := a.Revoke("gone"); err != nil {
			t.Fatal(err)
		}
		if err := check(t, gone.ClientTLS(), ln.Addr().String()); status.Code(err) != codes.Unavailable {
			t.Fatalf("Check after Revoke = %v; want Unavailable", err)
		}
	})
	t.Run("host pinned another gateway", func(t *testing.T) {
		err := check(t, elsewhere.ClientTLS(), ln.Addr().String())
		if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), ErrPinMismatch.Error()) {
			t.Fatalf("Check = %v; want Unavailable for %q", err, ErrPinMismatch)
		}
	})
	select {
	case name := <-callers:
		t.Fatalf("the server served %q, whom it should have refused", name)
	default:
	}
}
