package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/pinky-gateway/pinky/internal/pki"
	"github.com/pinky-gateway/pinky/internal/testkit/simtest"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
	hostv1 "github.com/pinky-gateway/pinky/proto/pinky/host/v1"
)

// clock is a pki clock that a test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func offer(t *testing.T, a *pki.Authority, name string) pki.Pairing {
	t.Helper()
	p, err := a.NewPairing(name)
	if err != nil {
		t.Fatalf("NewPairing(%q): %v", name, err)
	}
	return p
}

func pairCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	t.Cleanup(cancel)
	return ctx
}

// TestPairThenLink: a host pairs over the network with the code `pinky
// hosts add` printed, links with what it stored, and the gateway reads its
// virtual phone; the same code again is refused as used.
func TestPairThenLink(t *testing.T) {
	a := openAuthority(t, nil)
	g := startPairingGateway(t, a)
	p := offer(t, a, "closet")
	dir := filepath.Join(t.TempDir(), "host")

	h, err := Pair(pairCtx(t), g.Addr().String(), p.Code(), dir)
	if err != nil {
		t.Fatalf("Pair: %v", err)
	}
	if h.Name != "closet" || h.Pin != a.Fingerprint() {
		t.Fatalf("Pair = %s pinned %s; want closet pinned %s", h.Name, h.Pin, a.Fingerprint())
	}
	stored, err := pki.LoadHost(dir)
	if err != nil {
		t.Fatalf("LoadHost after Pair: %v", err)
	}
	serveHost(t, g.Addr().String(), stored, simtest.New(t))
	linked := g.next(t)
	if linked.Name != "closet" {
		t.Fatalf("Name = %q; want closet", linked.Name)
	}
	if got, want := deviceIDs(t, linked.Driver), []string{simtest.Android, simtest.IOS}; !slices.Equal(got, want) {
		t.Fatalf("devices = %v; want %v", got, want)
	}
	ctx := pairCtx(t)
	if err := linked.Driver.Unlock(ctx, simtest.Android, simtest.PIN); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	home, err := linked.Driver.Screen(ctx, simtest.Android, 0)
	if err != nil {
		t.Fatalf("Screen: %v", err)
	}
	if _, ok := simtest.Find(home, "Messages"); !ok {
		t.Fatalf("the home screen of %s holds no %q", home.App.ID, "Messages")
	}

	_, err = Pair(pairCtx(t), g.Addr().String(), p.Code(), filepath.Join(t.TempDir(), "again"))
	if !errors.Is(err, pki.ErrTokenUsed) || !strings.Contains(err.Error(), "used already") {
		t.Fatalf("Pair with the same code again = %v; want %v saying it was used already", err, pki.ErrTokenUsed)
	}
}

// TestPairRefused: a code the gateway refuses leaves the host unpaired,
// with an error that names the fault and says what to do.
func TestPairRefused(t *testing.T) {
	tests := []struct {
		name  string
		code  func(t *testing.T, a *pki.Authority, c *clock) string
		want  error
		words string
	}{
		{"unknown", func(t *testing.T, a *pki.Authority, _ *clock) string {
			offer(t, a, "closet") // a real offer, not the one presented
			return pki.Pairing{Token: "aaaabbbbccccddddeeeeffffgggghhhh", Fingerprint: a.Fingerprint()}.Code()
		}, pki.ErrTokenUnknown, "check that it was copied"},
		{"expired", func(t *testing.T, a *pki.Authority, c *clock) string {
			p := offer(t, a, "closet")
			c.add(pki.TokenLifetime + time.Second)
			return p.Code()
		}, pki.ErrTokenExpired, "pinky hosts add NAME"},
		{"used", func(t *testing.T, a *pki.Authority, _ *clock) string {
			p := offer(t, a, "closet")
			req, err := pki.NewRequest()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := a.Redeem(p.Token.Reveal(), req.CSR); err != nil {
				t.Fatal(err)
			}
			return p.Code()
		}, pki.ErrTokenUsed, "used already"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: time.Now()}
			a, err := pki.Open(t.TempDir(), pki.Options{Addrs: []string{"127.0.0.1"}, Now: c.now, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			g := startPairingGateway(t, a)
			code := tt.code(t, a, c)
			dir := filepath.Join(t.TempDir(), "host")
			_, err = Pair(pairCtx(t), g.Addr().String(), code, dir)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.words) {
				t.Fatalf("Pair = %v; want %v saying %q", err, tt.want, tt.words)
			}
			for _, other := range []error{pki.ErrTokenUnknown, pki.ErrTokenExpired, pki.ErrTokenUsed} {
				if other != tt.want && errors.Is(err, other) {
					t.Errorf("Pair = %v; is also %v", err, other)
				}
			}
			if _, err := pki.LoadHost(dir); !errors.Is(err, pki.ErrNotPaired) {
				t.Errorf("LoadHost after a refused pairing = %v; want ErrNotPaired", err)
			}
		})
	}
}

// recorder is a Redeemer that keeps the tokens it was given.
type recorder struct {
	r      Redeemer
	mu     sync.Mutex
	tokens []string
}

func (r *recorder) Redeem(token string, csr []byte) (pki.Issued, error) {
	r.mu.Lock()
	r.tokens = append(r.tokens, token)
	r.mu.Unlock()
	return r.r.Redeem(token, csr)
}

// TestPairManInTheMiddle: a second gateway, with another CA, answers at
// the address the host was given. The host refuses it before the token is
// sent, and the real gateway's token is still good afterwards.
func TestPairManInTheMiddle(t *testing.T) {
	a := openAuthority(t, nil)
	genuine := startPairingGateway(t, a)
	p := offer(t, a, "closet")
	other := openAuthority(t, nil)
	evil := &recorder{r: other}
	middle := startGatewayWith(t, other.PairingServerTLS(), ListenOptions{Pairing: evil})

	dir := filepath.Join(t.TempDir(), "host")
	if _, err := Pair(pairCtx(t), middle.Addr().String(), p.Code(), dir); !errors.Is(err, pki.ErrPinMismatch) {
		t.Fatalf("Pair with the man in the middle = %v; want ErrPinMismatch", err)
	}
	middle.logs.wait(t, "host refused") // the middle saw the handshake fail
	evil.mu.Lock()
	got := len(evil.tokens)
	evil.mu.Unlock()
	if got != 0 {
		t.Fatalf("the man in the middle received %d tokens; want none", got)
	}
	if _, err := pki.LoadHost(dir); !errors.Is(err, pki.ErrNotPaired) {
		t.Fatalf("LoadHost after the refusal = %v; want ErrNotPaired", err)
	}
	if _, err := Pair(pairCtx(t), genuine.Addr().String(), p.Code(), dir); err != nil {
		t.Fatalf("Pair with the real gateway afterwards: %v; want the token still good", err)
	}
}

// dialPairing opens a gRPC client on a certificate-less connection to addr,
// checked against pin as Pair checks it.
func dialPairing(t *testing.T, addr string, pin pki.Fingerprint) *grpc.ClientConn {
	t.Helper()
	c, err := (&tls.Dialer{Config: pki.PairingTLS(pin)}).DialContext(pairCtx(t), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithContextDialer(dialOnce(c)), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// TestPairingConnectionServesOnlyPair: a connection without a certificate
// reaches PairingService and nothing else; without Pairing in the options
// it is refused; and Stop ends a pairing connection still open.
func TestPairingConnectionServesOnlyPair(t *testing.T) {
	a := openAuthority(t, nil)
	g := startPairingGateway(t, a)
	cc := dialPairing(t, g.Addr().String(), a.Fingerprint())
	ctx := pairCtx(t)

	_, err := pb.NewDriverServiceClient(cc).GetInfo(ctx, &pb.GetInfoRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Fatalf("GetInfo without a certificate = %v; want Unimplemented", err)
	}
	_, err = hostv1.NewPairingServiceClient(cc).Pair(ctx, &hostv1.PairRequest{Token: "nope", Csr: []byte{1}})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Pair with a request that does not parse = %v; want InvalidArgument", err)
	}
	select {
	case h := <-g.hosts:
		t.Fatalf("the gateway handed out %q for a connection without a certificate", h.Name)
	default:
	}

	stopped := make(chan struct{})
	go func() { g.Stop(); close(stopped) }()
	waitClosed(t, stopped, "Stop with a pairing connection open")

	t.Run("no pairing", func(t *testing.T) {
		g := startGatewayWith(t, a.PairingServerTLS(), ListenOptions{})
		cc := dialPairing(t, g.Addr().String(), a.Fingerprint())
		_, err := hostv1.NewPairingServiceClient(cc).Pair(pairCtx(t), &hostv1.PairRequest{Token: "nope", Csr: []byte{1}})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("Pair on a gateway without pairing = %v; want Unavailable", err)
		}
		g.logs.wait(t, "host refused", "no client certificate")
	})
}

// TestPairingStatus: each of Redeem's errors crosses the wire as its own
// code and comes back as the same pki error.
func TestPairingStatus(t *testing.T) {
	tests := []struct {
		err  error
		code codes.Code
		back error
	}{
		{pki.ErrTokenUnknown, codes.NotFound, pki.ErrTokenUnknown},
		{pki.ErrTokenUsed, codes.AlreadyExists, pki.ErrTokenUsed},
		{pki.ErrTokenExpired, codes.FailedPrecondition, pki.ErrTokenExpired},
		{errors.Join(pki.ErrBadRequest, errors.New("asn1")), codes.InvalidArgument, pki.ErrBadRequest},
		{errors.New("disk full"), codes.Internal, nil},
	}
	for _, tt := range tests {
		t.Run(tt.err.Error(), func(t *testing.T) {
			st := pairingStatus(tt.err)
			if got := status.Code(st); got != tt.code {
				t.Fatalf("code %v; want %v", got, tt.code)
			}
			if strings.Contains(status.Convert(st).Message(), "disk") {
				t.Errorf("message %q tells the peer the gateway's fault", status.Convert(st).Message())
			}
			back := pairingError(st)
			if tt.back != nil && !errors.Is(back, tt.back) {
				t.Errorf("back = %v; want %v", back, tt.back)
			}
			if tt.back == nil && status.Code(back) != tt.code {
				t.Errorf("back = %v; want the status as it came", back)
			}
		})
	}
	if pairingStatus(nil) != nil {
		t.Error("pairingStatus(nil) != nil")
	}
}
