package pki

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// A host linked to several gateways holds one identity per gateway, each
// pinned to that gateway's fingerprint. The folder a host's identity lives
// in (pinky's $PINKY_HOME/host) holds the first one itself, as a host with
// one gateway always had it, and each further one in a subfolder named
// after its gateway's fingerprint.

// gatewayDirPrefix starts the name of a further identity's subfolder.
const gatewayDirPrefix = "gateway-"

// IdentityDir returns the folder in dir that an identity pinned to pin is
// stored in: dir itself when it holds no identity yet or holds one pinned
// to pin (pairing again with the same gateway replaces it), else the
// subfolder of pin.
func IdentityDir(dir string, pin Fingerprint) (string, error) {
	h, err := LoadHost(dir)
	switch {
	case errors.Is(err, ErrNotPaired):
		return dir, nil
	case err != nil:
		// A damaged identity in dir is left for the person to see (pinky
		// doctor names it); the new one goes beside it.
	case h.Pin.Equal(pin):
		return dir, nil
	}
	return join(dir, gatewayDirPrefix+strings.ToLower(hex.EncodeToString(pin[:8]))), nil
}

// Identity is one identity of LoadHosts: the folder it was read from, and
// the host or why it cannot be read.
type Identity struct {
	Dir  string
	Host *Host
	Err  error
}

// LoadHosts reads every identity stored in dir: dir's own first, then its
// gateways' subfolders by name. An identity that cannot be read is listed
// with its error; a host with none is ErrNotPaired.
func LoadHosts(dir string) ([]Identity, error) {
	var out []Identity
	if h, err := LoadHost(dir); !errors.Is(err, ErrNotPaired) {
		out = append(out, Identity{Dir: dir, Host: h, Err: err})
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), gatewayDirPrefix) {
			continue
		}
		sub := join(dir, e.Name())
		if h, err := LoadHost(sub); !errors.Is(err, ErrNotPaired) {
			out = append(out, Identity{Dir: sub, Host: h, Err: err})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotPaired)
	}
	return out, nil
}

// ClientTLSFor returns the configuration a host links with when it holds
// identities for several gateways: the gateway is verified by any of the
// hosts' pins, and the host answers with the certificate of the identity
// whose pin the gateway matched, so each gateway sees only the certificate
// its own CA issued. With one host it is that host's ClientTLS.
//
// The configuration remembers the pin the last handshake matched between
// its verification of the gateway and its choice of certificate, which
// TLS 1.3 makes in that order: give each dialling loop a configuration of
// its own, as remote.Serve dials one link at a time. (Were two handshakes
// to share one, the worst a mix-up does is send a gateway a certificate
// its CA did not issue, which it refuses.)
func ClientTLSFor(hosts []*Host) *tls.Config {
	if len(hosts) == 1 {
		return hosts[0].ClientTLS()
	}
	s := &pinSet{hosts: hosts, now: time.Now}
	return &tls.Config{
		MinVersion:            tls.VersionTLS13,
		InsecureSkipVerify:    true, // see pinnedTLS: the pinned check is in VerifyPeerCertificate
		VerifyPeerCertificate: s.verify,
		GetClientCertificate:  s.certificate,
	}
}

// pinSet verifies a gateway by any of its hosts' pins and answers with the
// matched host's certificate.
type pinSet struct {
	hosts []*Host
	now   func() time.Time
	mu    sync.Mutex
	match *Host // the host whose pin the last verified gateway has
}

func (s *pinSet) verify(raw [][]byte, chains [][]*x509.Certificate) error {
	s.mu.Lock()
	s.match = nil
	s.mu.Unlock()
	var pins []string
	for _, h := range s.hosts {
		if err := verifyPinned(h.Pin, s.now)(raw, chains); err != nil {
			if errors.Is(err, ErrPinMismatch) {
				pins = append(pins, h.Pin.String())
				continue
			}
			return err
		}
		s.mu.Lock()
		s.match = h
		s.mu.Unlock()
		return nil
	}
	got := "none"
	if len(raw) > 0 {
		got = FingerprintOf(raw[len(raw)-1]).String()
	}
	return fmt.Errorf("gateway CA %s, pinned %s: %w", got, strings.Join(pins, ", "), ErrPinMismatch)
}

func (s *pinSet) certificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	s.mu.Lock()
	h := s.match
	s.mu.Unlock()
	if h == nil {
		return nil, errors.New("no identity for this gateway: it was not verified")
	}
	return &h.cert, nil
}
