package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/pinky-gateway/pinky/gateway/api"
	"github.com/pinky-gateway/pinky/gateway/driverhost"
	"github.com/pinky-gateway/pinky/gateway/remote"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// phoneHosts is the gateway's side of the phone hosts (pinky host): the
// certificates and pairings of package pki, in the data folder's pki/, and
// the listener of package remote, whose links become drivers of the driver
// host (driverhost.AddRemote). It exists only with Config.HostsListen.
type phoneHosts struct {
	auth *pki.Authority
	// link is the listener, once Run has opened it; OnRevoke closes a
	// revoked host's link through it.
	link atomic.Pointer[remote.Gateway]
}

// PKIDir is the folder of the gateway's certificates in data folder home.
func PKIDir(home string) string { return filepath.Join(home, "pki") }

// CheckHostsAddr checks a --hosts-listen address: HOST:PORT, where the
// port may be 0 (any free one).
func CheckHostsAddr(addr string) error {
	// Any address will do, a public one included: a host must hold a
	// certificate this gateway issued, or a pairing code it gave.
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return fmt.Errorf("%q: want HOST:PORT, e.g. 0.0.0.0:4778 (phone hosts dial it)", addr)
	}
	return nil
}

// openHosts opens the gateway's certificates, creating them the first
// time, for Config.HostsListen.
func (g *Gateway) openHosts() error {
	if err := CheckHostsAddr(g.cfg.HostsListen); err != nil {
		return fmt.Errorf("--hosts-listen %w", err)
	}
	ph := &phoneHosts{}
	auth, err := pki.Open(PKIDir(g.cfg.Dirs.Home), pki.Options{
		Addrs: []string{g.cfg.HostsListen},
		OnRevoke: func(name string) {
			if l := ph.link.Load(); l != nil {
				l.Close(name)
			}
		},
		Log: g.log,
	})
	if err != nil {
		return fmt.Errorf("the phone hosts' certificates: %w", err)
	}
	ph.auth = auth
	g.hosts = ph
	return nil
}

// listenHosts listens for the phone hosts' links until the returned
// function is called.
func (g *Gateway) listenHosts() (func(), error) {
	lis, err := net.Listen("tcp", g.cfg.HostsListen)
	if err != nil {
		return nil, fmt.Errorf("--hosts-listen: %w", err)
	}
	ph := g.hosts
	gw := remote.Listen(lis, ph.auth.PairingServerTLS(), func(h remote.Host) {
		g.host.AddRemote(h.Name, h.Driver, h.Gone)
	}, remote.ListenOptions{Pairing: ph.auth, Log: g.log.With("part", "hosts")})
	ph.link.Store(gw)
	g.log.Info("listening for phone hosts", "addr", gw.Addr().String(), "fingerprint", ph.auth.Fingerprint().String())
	return gw.Stop, nil
}

// errNoHosts is the answer of the hosts' methods when the daemon does not
// listen for hosts.
var errNoHosts = errors.New("this daemon does not listen for phone hosts: start it with --hosts-listen HOST:PORT (pinky daemon --help), then run this again")

// addr is where the gateway listens for hosts, once it does.
func (ph *phoneHosts) addr() string {
	if l := ph.link.Load(); l != nil {
		return l.Addr().String()
	}
	return ""
}

func (g *Gateway) addHost(_ context.Context, n api.HostName) (api.HostPairing, error) {
	if g.hosts == nil {
		return api.HostPairing{}, errNoHosts
	}
	p, err := g.hosts.auth.NewPairing(n.Name)
	if err != nil {
		return api.HostPairing{}, err
	}
	return api.HostPairing{
		Name: p.Name, Code: p.Code(), Fingerprint: p.Fingerprint.String(), Expires: p.Expires, Listen: g.hosts.addr(),
	}, nil
}

func (g *Gateway) removeHost(_ context.Context, n api.HostName) (api.Host, error) {
	if g.hosts == nil {
		return api.Host{}, errNoHosts
	}
	var was api.Host
	for _, h := range g.hostList().Hosts {
		if h.Name == n.Name {
			was = h
		}
	}
	if err := g.hosts.auth.Revoke(n.Name); err != nil {
		if errors.Is(err, pki.ErrUnknownHost) {
			return api.Host{}, fmt.Errorf("no phone host is called %q: pinky hosts list shows them", n.Name)
		}
		return api.Host{}, err
	}
	g.host.RemoveRemote(n.Name)
	return was, nil
}

func (g *Gateway) listHosts(context.Context, api.NoParams) (api.Hosts, error) {
	if g.hosts == nil {
		return api.Hosts{}, errNoHosts
	}
	return g.hostList(), nil
}

// hostList merges the paired hosts with their links' state.
func (g *Gateway) hostList() api.Hosts {
	out := api.Hosts{Listen: g.hosts.addr(), Fingerprint: g.hosts.auth.Fingerprint().String(), Hosts: []api.Host{}}
	links := map[string]driverhost.DriverStatus{}
	for _, d := range g.host.Drivers() {
		if d.Host != "" {
			links[d.Host] = d
		}
	}
	all := g.hosts.auth.Hosts()
	paired := map[string]bool{}
	for _, h := range all {
		if h.Pending {
			continue
		}
		paired[h.Name] = true
		e := api.Host{Name: h.Name, State: "offline", Fingerprint: h.Fingerprint.String(), Expires: h.Expires}
		if d, ok := links[h.Name]; ok {
			e.Version, e.Devices, e.LastError = d.Version, d.Devices, d.LastError
			switch d.State {
			case driverhost.StateLinked, driverhost.StateStarting:
				e.State, e.Since, e.LastError = "online", d.StartedAt, ""
			default:
				e.Since = d.UnlinkedAt
			}
		}
		out.Hosts = append(out.Hosts, e)
	}
	// A pending code for a name paired already is an offer to pair it
	// again: the paired host is what shows. Of several codes for one name,
	// the one that expires last does (Hosts lists it first).
	for _, h := range all {
		if h.Pending && !paired[h.Name] {
			paired[h.Name] = true
			out.Hosts = append(out.Hosts, api.Host{Name: h.Name, State: "pending", Expires: h.Expires})
		}
	}
	slices.SortFunc(out.Hosts, func(a, b api.Host) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// statusHosts is the hosts for the daemon's status; nil when it does not
// listen for them.
func (g *Gateway) statusHosts() *api.Hosts {
	if g.hosts == nil {
		return nil
	}
	h := g.hostList()
	return &h
}
