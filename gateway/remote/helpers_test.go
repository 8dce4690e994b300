package remote

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// guard bounds a wait that only a hang would reach: it is not a measure.
const guard = time.Minute

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// openAuthority opens a gateway's certificates in a temporary folder.
func openAuthority(t *testing.T, onRevoke func(string)) *pki.Authority {
	t.Helper()
	a, err := pki.Open(t.TempDir(), pki.Options{Addrs: []string{"127.0.0.1"}, Log: quiet, OnRevoke: onRevoke})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// pair pairs a host named name with a, as `pinky host --pair` would.
func pair(t *testing.T, a *pki.Authority, name string) *pki.Host {
	t.Helper()
	p, err := a.NewPairing(name)
	if err != nil {
		t.Fatalf("NewPairing(%q): %v", name, err)
	}
	req, err := pki.NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	is, err := a.Redeem(p.Token.Reveal(), req.CSR)
	if err != nil {
		t.Fatalf("Redeem: %v", err)
	}
	h, err := req.Finish(t.TempDir(), p.Fingerprint, is)
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	return h
}

// gateway is a Gateway on a loopback port with what it handed out and logged.
type gateway struct {
	*Gateway
	hosts <-chan Host
	logs  *lines
}

func startGateway(t *testing.T, a *pki.Authority) *gateway {
	t.Helper()
	return startGatewayWith(t, a.ServerTLS(), ListenOptions{})
}

// startPairingGateway is startGateway with pairing served to hosts that
// come without a certificate, as the daemon's listener does.
func startPairingGateway(t *testing.T, a *pki.Authority) *gateway {
	t.Helper()
	return startGatewayWith(t, a.PairingServerTLS(), ListenOptions{Pairing: a})
}

func startGatewayWith(t *testing.T, tlsConf *tls.Config, opts ListenOptions) *gateway {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hosts := make(chan Host, 16)
	logs := newLines()
	opts.Log = slog.New(logs)
	g := Listen(lis, tlsConf, func(h Host) { hosts <- h }, opts)
	t.Cleanup(g.Stop)
	return &gateway{Gateway: g, hosts: hosts, logs: logs}
}

// next returns the next host the gateway hands out.
func (g *gateway) next(t *testing.T) Host {
	t.Helper()
	select {
	case h := <-g.hosts:
		return h
	case <-time.After(guard):
		t.Fatal("no host linked")
		return Host{}
	}
}

// serveHost runs Serve for d in the background with short backoffs, and
// stops it when the test ends.
func serveHost(t *testing.T, addr string, h *pki.Host, d sdk.Driver) *lines {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := newLines()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, addr, h.ClientTLS(), d, ServeOptions{MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond, Log: slog.New(logs)})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(guard):
			t.Error("Serve did not return after its context ended")
		}
	})
	return logs
}

// waitClosed fails the test when ch does not close.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(guard):
		t.Fatalf("%s did not close", what)
	}
}

// lines is a slog handler that keeps each record as one line of text
// (message and attributes) and lets a test wait for a line.
type lines struct {
	mu    sync.Mutex
	all   []string
	added chan struct{}
	attrs []slog.Attr
	root  *lines
}

func newLines() *lines {
	l := &lines{added: make(chan struct{})}
	l.root = l
	return l
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }

func (l *lines) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	write := func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	}
	for _, a := range l.attrs {
		write(a)
	}
	r.Attrs(write)
	root := l.root
	root.mu.Lock()
	root.all = append(root.all, b.String())
	close(root.added)
	root.added = make(chan struct{})
	root.mu.Unlock()
	return nil
}

func (l *lines) WithAttrs(as []slog.Attr) slog.Handler {
	return &lines{attrs: append(append([]slog.Attr(nil), l.attrs...), as...), root: l.root}
}

func (l *lines) WithGroup(string) slog.Handler { return l }

// wait returns the first line that holds every one of parts, waiting for it.
func (l *lines) wait(t *testing.T, parts ...string) string {
	t.Helper()
	deadline := time.After(guard)
	seen := 0
	for {
		l.mu.Lock()
		all, added := l.all, l.added
		l.mu.Unlock()
		for ; seen < len(all); seen++ {
			if containsAll(all[seen], parts) {
				return all[seen]
			}
		}
		select {
		case <-added:
		case <-deadline:
			t.Fatalf("no log line with %q; got:\n%s", parts, strings.Join(all, "\n"))
			return ""
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// proxy forwards TCP connections to addr, and cut closes those open, as a
// host whose side of the link closes.
type proxy struct {
	lis   net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, addr string) *proxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{lis: lis}
	t.Cleanup(func() { lis.Close(); p.cut() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close(); c.Close() }() //nolint:errcheck // a cut ends the copy
			go func() { io.Copy(c, up); up.Close(); c.Close() }() //nolint:errcheck // a cut ends the copy
		}
	}()
	return p
}

func (p *proxy) addr() string { return p.lis.Addr().String() }

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}
