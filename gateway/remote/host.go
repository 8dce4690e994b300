package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	pb "github.com/pinky-gateway/pinky/proto/pinky/driver/v1"
)

// The link's keepalive: each side pings after this long without traffic,
// and gives the link up when the answer takes longer than pingTimeout.
const (
	pingEvery   = 30 * time.Second
	pingTimeout = 10 * time.Second
)

// ServeOptions tunes Serve; the zero value is ready to use.
type ServeOptions struct {
	// MinBackoff is the wait before the first new dial after a failure;
	// zero means 1 s. It doubles with each failure in a row.
	MinBackoff time.Duration
	// MaxBackoff caps the wait; zero means 30 s.
	MaxBackoff time.Duration
	// DialTimeout bounds one dial with its TLS handshake; zero means 10 s.
	DialTimeout time.Duration
	// Log receives a line per change of the link's state (never a key);
	// nil means slog.Default().
	Log *slog.Logger
	// Fences checks the lease fences the calls carry; nil means the
	// process's own, shared by every Serve of the process.
	Fences *Fences
}

func (o ServeOptions) withDefaults() ServeOptions {
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = o.MinBackoff
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Fences == nil {
		o.Fences = processFences
	}
	return o
}

// Serve links the host to the gateway at addr and serves d on the link
// until ctx ends, then returns nil. tlsConf is the host's configuration
// (pki's Host.ClientTLS). The host dials out: it opens no port. When a dial
// fails or the link drops, Serve dials again after a wait that doubles from
// MinBackoff up to MaxBackoff, with jitter, and starts again from
// MinBackoff once the gateway has accepted a link.
func Serve(ctx context.Context, addr string, tlsConf *tls.Config, d sdk.Driver, opts ServeOptions) error {
	if tlsConf == nil {
		return errors.New("remote: no TLS configuration")
	}
	opts = opts.withDefaults()
	log := opts.Log.With("gateway", addr)
	svc := sdk.NewServer(d) // one adapter for every link: it holds no per-link state
	wait := opts.MinBackoff
	for {
		accepted, err := serveOnce(ctx, addr, tlsConf, svc, opts, log)
		if ctx.Err() != nil {
			log.Info("link closed: the host stops")
			return nil
		}
		if accepted {
			wait = opts.MinBackoff
		}
		pause := jitter(wait)
		log.Warn("link down", "err", err, "retry_in", pause.Round(time.Millisecond))
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			log.Info("link closed: the host stops")
			return nil
		case <-t.C:
		}
		wait = min(wait*2, opts.MaxBackoff)
	}
}

// jitter returns a wait between half of d and d, so that hosts cut off
// together do not all dial again at the same moment.
func jitter(d time.Duration) time.Duration {
	half := d / 2
	return half + rand.N(d-half+1)
}

// serveOnce dials one link and serves it until it drops or ctx ends. It
// says whether the gateway accepted the link: in TLS 1.3 the gateway's
// verdict on the host's certificate comes after the host's handshake, so a
// link counts as accepted once the gateway has sent its first bytes.
func serveOnce(ctx context.Context, addr string, tlsConf *tls.Config, svc pb.DriverServiceServer, opts ServeOptions, log *slog.Logger) (bool, error) {
	dialCtx, cancel := context.WithTimeout(ctx, opts.DialTimeout)
	dialer := &tls.Dialer{Config: tlsConf}
	c, err := dialer.DialContext(dialCtx, "tcp", addr)
	cancel()
	if err != nil {
		return false, err
	}
	log.Info("link dialled", "local", c.LocalAddr().String())
	rc := &readConn{Conn: c, first: make(chan struct{})}
	lis := listenOn(rc)

	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(sdk.MaxMessageBytes), grpc.MaxSendMsgSize(sdk.MaxMessageBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: pingEvery, Timeout: pingTimeout}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: pingTimeout, PermitWithoutStream: true}),
		// A call that carries the fence of a lease another gateway has
		// taken over never reaches the driver.
		grpc.ChainUnaryInterceptor(opts.Fences.unary), grpc.ChainStreamInterceptor(opts.Fences.stream),
	)
	pb.RegisterDriverServiceServer(srv, svc)
	go func() {
		select {
		case <-rc.first:
			log.Info("link up")
		case <-lis.closed:
		}
	}()
	stop := context.AfterFunc(ctx, srv.Stop)
	defer stop()
	// Serve returns when the listener closes, which it does when the one
	// connection closes; Stop then ends the calls still running on it.
	err = srv.Serve(lis)
	srv.Stop()
	// When ctx ended before Serve took the connection, neither has closed.
	lis.Close()
	c.Close()
	select {
	case <-rc.first:
		if err == nil || errors.Is(err, net.ErrClosed) {
			err = errors.New("the connection closed")
		}
		return true, err
	default:
		if rerr := rc.readErr(); rerr != nil {
			err = refusalError(rerr) // the gateway's refusal, read as a TLS alert
		} else if err == nil || errors.Is(err, net.ErrClosed) {
			err = errors.New("the gateway closed the connection before serving it")
		}
		return false, err
	}
}

// refusalError tells the person what to do when the gateway refused the
// host's certificate (a TLS alert about it: another CA's, expired,
// revoked): dialling again will not help, pairing again does.
func refusalError(err error) error {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || !strings.Contains(oe.Err.Error(), "certificate") {
		return err
	}
	return fmt.Errorf("the gateway refused this host's certificate (%w): it was revoked, has expired, or another gateway issued it; "+
		"pair again: `pinky hosts add NAME` on the gateway, then `pinky host --gateway ADDR --pair CODE` here", err)
}

// readConn closes first when a Read first returns data, and keeps the first
// Read error (a TLS alert names why the gateway refused the host).
type readConn struct {
	net.Conn
	first chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
}

func (c *readConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.once.Do(func() { close(c.first) })
	}
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *readConn) readErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
