package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// Host is one host's link as the gateway sees it.
type Host struct {
	// Name is the host's name, from its certificate.
	Name string
	// Driver calls the driver the host serves, over the link: an
	// *sdk.Client, which the conformance suite takes as it is. Once the
	// link is gone its calls fail with sdk.ErrDriverGone.
	Driver *sdk.Client
	// Gone is closed when the link is gone: dropped, replaced by a newer
	// link of the same name, or closed by Gateway.Close.
	Gone <-chan struct{}
}

// ListenOptions tunes Listen; the zero value is ready to use.
type ListenOptions struct {
	// HandshakeTimeout bounds a connection's TLS handshake; zero means 10 s.
	HandshakeTimeout time.Duration
	// Pairing, when set, spends the pairing tokens of hosts that come
	// without a client certificate (pki's *Authority): such a connection
	// is served the pairing call alone. Give Listen pki's PairingServerTLS
	// with it. When nil, a connection without a certificate is refused.
	Pairing Redeemer
	// PairTimeout bounds the life of a connection without a certificate;
	// zero means 1 min.
	PairTimeout time.Duration
	// Log receives a line per link opened, refused and gone (never a key);
	// nil means slog.Default().
	Log *slog.Logger
}

// Gateway accepts hosts' links. Its methods may be called from several
// goroutines.
type Gateway struct {
	lis     net.Listener
	tlsConf *tls.Config
	onHost  func(Host)
	opts    ListenOptions
	wg      sync.WaitGroup

	// stopping ends when Stop is called; it ends the pairing connections.
	stopping context.Context
	stop     context.CancelFunc

	// handing is held from a link's registration to the end of its onHost
	// call, so that hosts are handed out one at a time and a replaced
	// link is never handed out after the link that replaced it. Lock
	// order: handing, then mu.
	handing sync.Mutex

	mu     sync.Mutex
	links  map[string]*link
	closed bool
}

// link is one host's connection and the gRPC client on it.
type link struct {
	conn net.Conn
	cc   *grpc.ClientConn
	gone chan struct{}
}

// close closes the link; the goroutine that watches it forgets it.
func (l *link) close() {
	l.cc.Close()
	l.conn.Close()
}

// Listen accepts hosts' links on lis, in the background, until Stop.
// tlsConf is the gateway's configuration: pki's Authority.ServerTLS, or
// PairingServerTLS when opts.Pairing is set. The handshake refuses a host
// of another CA, a revoked host and one never paired; a connection without
// a certificate, which only PairingServerTLS lets through, is served
// PairingService alone when opts.Pairing is set, and refused otherwise.
// onHost is called with each host whose link is open, one call at a
// time, and should return soon (register the host, start its work
// elsewhere); a second link of the same name replaces the first, whose
// Gone closes before onHost sees the second.
func Listen(lis net.Listener, tlsConf *tls.Config, onHost func(Host), opts ListenOptions) *Gateway {
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = 10 * time.Second
	}
	if opts.PairTimeout <= 0 {
		opts.PairTimeout = time.Minute
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	g := &Gateway{lis: lis, tlsConf: tlsConf, onHost: onHost, opts: opts, links: map[string]*link{}}
	g.stopping, g.stop = context.WithCancel(context.Background())
	g.wg.Add(1)
	go g.accept()
	return g
}

// Addr returns the address the gateway listens on.
func (g *Gateway) Addr() net.Addr { return g.lis.Addr() }

func (g *Gateway) accept() {
	defer g.wg.Done()
	var wait time.Duration
	for {
		c, err := g.lis.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// A passing fault (too many open files): wait a little, as
			// net/http does, rather than spin or stop listening.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			g.opts.Log.Warn("accepting a host's link", "err", err, "retry_in", wait)
			time.Sleep(wait)
			continue
		}
		wait = 0
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			g.open(c)
		}()
	}
}

// open completes a connection's handshake and hands out its host.
func (g *Gateway) open(c net.Conn) {
	log := g.opts.Log.With("remote", c.RemoteAddr().String())
	tc := tls.Server(c, g.tlsConf)
	ctx, cancel := context.WithTimeout(context.Background(), g.opts.HandshakeTimeout)
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		log.Warn("host refused", "err", err)
		c.Close()
		return
	}
	name, ok := pki.HostName(tc.ConnectionState())
	if !ok && g.opts.Pairing != nil {
		g.servePairing(tc, log)
		return
	}
	if !ok {
		log.Warn("host refused", "err", "no client certificate")
		tc.Close()
		return
	}
	log = log.With("host", name)

	gone := make(chan struct{})
	wc := &watchedConn{Conn: tc, onClose: func() { close(gone) }}
	cc, err := grpc.NewClient("passthrough:///"+name,
		// The connection was accepted, not dialled: the dialer hands gRPC
		// that one connection, and refuses the reconnections gRPC would try
		// once it is gone (the host dials again, and a new Host comes).
		grpc.WithContextDialer(dialOnce(wc)),
		// Insecure only to gRPC: the connection is already TLS with both
		// sides verified by the handshake above, and gRPC must not wrap it
		// a second time.
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(sdk.MaxMessageBytes), grpc.MaxCallSendMsgSize(sdk.MaxMessageBytes)),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: pingEvery, Timeout: pingTimeout, PermitWithoutStream: true}),
		// An idle channel would close its transport, and with it the link
		// that cannot be dialled again.
		grpc.WithIdleTimeout(0),
	)
	if err != nil {
		log.Error("host's link", "err", err)
		tc.Close()
		return
	}
	cc.Connect()
	l := &link{conn: wc, cc: cc, gone: gone}

	g.handing.Lock()
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		g.handing.Unlock()
		l.close()
		return
	}
	old := g.links[name]
	g.links[name] = l
	g.mu.Unlock()
	// A revocation between the handshake and the line above found no link
	// to close; checking the certificate again once the link is known
	// closes that gap (Revoke changes the state before OnRevoke calls Close).
	if v := g.tlsConf.VerifyConnection; v != nil {
		if err := v(tc.ConnectionState()); err != nil {
			g.handing.Unlock()
			log.Warn("host refused", "err", err)
			l.close()
			<-gone
			g.mu.Lock()
			if g.links[name] == l {
				delete(g.links, name)
				if old != nil && !isClosed(old.gone) {
					g.links[name] = old // the older link was not replaced after all
				}
			}
			g.mu.Unlock()
			return
		}
	}
	if old != nil {
		log.Info("host linked again: the older link closes")
		old.close()
		<-old.gone // closed by old.close: the older Host is gone before the newer comes
	}
	log.Info("host linked")
	g.onHost(Host{Name: name, Driver: sdk.NewClient(cc, gone), Gone: gone})
	g.handing.Unlock()

	// The gRPC transport closes the connection when it fails (a read
	// error, a keepalive without answer); the client is then of no use.
	<-gone
	cc.Close()
	g.forget(name, l)
	log.Info("host's link gone")
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// forget removes l from the links unless a newer link took its name.
func (g *Gateway) forget(name string, l *link) {
	g.mu.Lock()
	if g.links[name] == l {
		delete(g.links, name)
	}
	g.mu.Unlock()
}

// Close closes the link of the host name, if it has one, and says whether
// it had. The host will dial again; pki's Authority refuses it once
// revoked, which is what Close is for (give it to pki's Options.OnRevoke).
func (g *Gateway) Close(name string) bool {
	g.mu.Lock()
	l := g.links[name]
	g.mu.Unlock()
	if l == nil {
		return false
	}
	l.close()
	return true
}

// Stop stops listening, closes every link and every pairing connection,
// and waits until the gateway's goroutines have returned, onHost calls
// included.
func (g *Gateway) Stop() {
	g.lis.Close()
	g.stop()
	g.mu.Lock()
	g.closed = true
	links := make([]*link, 0, len(g.links))
	for _, l := range g.links {
		links = append(links, l)
	}
	g.mu.Unlock()
	for _, l := range links {
		l.close()
	}
	g.wg.Wait()
}
