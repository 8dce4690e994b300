package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// Files of a host's folder.
const (
	hostCertFile = "host.crt"
	hostKeyFile  = "host.key"
	pinFile      = "gateway.fingerprint"
)

// Errors of the host's side.
var (
	ErrNotPaired   = errors.New("not paired with a gateway")
	ErrPinMismatch = errors.New("gateway fingerprint differs from the pinned one")
)

// Request is a host's half of pairing: a fresh private key, which stays on
// the host, and a certificate request signed by it for the gateway.
type Request struct {
	key *ecdsa.PrivateKey
	// CSR is the DER-encoded certificate request to send with the token.
	CSR []byte
}

// NewRequest creates a key and a certificate request for it. The gateway
// names the certificate after the pairing, so the request names nothing.
func NewRequest() (*Request, error) {
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{
		Subject: pkix.Name{Organization: []string{"Pinky host"}},
	}, key)
	if err != nil {
		return nil, err
	}
	return &Request{key: key, CSR: der}, nil
}

// Finish checks what the gateway issued against the request and the pin,
// and stores the host's identity in dir (created 0700): the certificate,
// the key and the pinned fingerprint, each readable by its owner only. The
// pin is the fingerprint the person was shown (or the one PairingTLS
// checked); the CA that signed the certificate must have it.
func (r *Request) Finish(dir string, pin Fingerprint, is Issued) (*Host, error) {
	if pin.IsZero() {
		return nil, fmt.Errorf("pairing: no gateway fingerprint to pin")
	}
	if got := FingerprintOf(is.CA); !got.Equal(pin) {
		return nil, fmt.Errorf("pairing: gateway CA %s, pinned %s: %w", got, pin, ErrPinMismatch)
	}
	ca, err := x509.ParseCertificate(is.CA)
	if err != nil {
		return nil, fmt.Errorf("pairing: gateway CA: %w", err)
	}
	cert, err := x509.ParseCertificate(is.Certificate)
	if err != nil {
		return nil, fmt.Errorf("pairing: host certificate: %w", err)
	}
	if !publicKeysEqual(cert.PublicKey, r.key.Public()) {
		return nil, fmt.Errorf("pairing: the certificate is not for this host's key")
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	if _, err := cert.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("pairing: host certificate: %w", err)
	}
	if err := makeDir(dir); err != nil {
		return nil, err
	}
	// The pin last: its presence is what says the host is paired.
	if err := writeKey(join(dir, hostKeyFile), r.key); err != nil {
		return nil, err
	}
	if err := writeCert(join(dir, hostCertFile), cert); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(join(dir, pinFile), []byte(pin.String()+"\n")); err != nil {
		return nil, err
	}
	return newHost(cert, r.key, pin), nil
}

// Host is a paired host's identity: its name, its certificate and key,
// and the gateway's pinned fingerprint.
type Host struct {
	Name string
	Pin  Fingerprint
	cert tls.Certificate
	now  func() time.Time
}

func newHost(cert *x509.Certificate, key crypto.Signer, pin Fingerprint) *Host {
	return &Host{
		Name: cert.Subject.CommonName,
		Pin:  pin,
		cert: tls.Certificate{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert},
		now:  time.Now,
	}
}

// LoadHost reads the identity Finish stored in dir. A folder without one
// is ErrNotPaired.
func LoadHost(dir string) (*Host, error) {
	data, err := os.ReadFile(join(dir, pinFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNotPaired)
	}
	if err != nil {
		return nil, err
	}
	pin, err := ParseFingerprint(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", join(dir, pinFile), err)
	}
	cert, err := readCert(join(dir, hostCertFile))
	if err != nil {
		return nil, err
	}
	key, err := readKey(join(dir, hostKeyFile))
	if err != nil {
		return nil, err
	}
	if !publicKeysEqual(cert.PublicKey, key.Public()) {
		return nil, fmt.Errorf("%s does not hold the key of %s", join(dir, hostKeyFile), join(dir, hostCertFile))
	}
	return newHost(cert, key, pin), nil
}

// Certificate returns the host's certificate.
func (h *Host) Certificate() *x509.Certificate { return h.cert.Leaf }

// ClientTLS returns the configuration a host links to the gateway with:
// TLS 1.3, the host's certificate, and the gateway verified by the pinned
// fingerprint alone, not by the system's roots nor by the name or address
// dialled, so a gateway reached at another address is still recognised.
// Give it to gRPC with credentials.NewTLS.
func (h *Host) ClientTLS() *tls.Config {
	c := pinnedTLS(h.Pin, h.now)
	c.Certificates = []tls.Certificate{h.cert}
	return c
}

// PairingTLS returns the configuration a host pairs with: the gateway
// verified by pin as ClientTLS does, and no certificate of its own yet. The
// token is sent only to a gateway that holds the pinned CA's key.
func PairingTLS(pin Fingerprint) *tls.Config { return pinnedTLS(pin, time.Now) }

func pinnedTLS(pin Fingerprint, now func() time.Time) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The standard verification would check the system's roots and the
		// dialled name; VerifyPeerCertificate does the pinned check in its
		// place, and the handshake still proves the server holds the key
		// of the certificate it sent.
		InsecureSkipVerify:    true,
		VerifyPeerCertificate: verifyPinned(pin, now),
	}
}

// verifyPinned accepts a server whose certificate chain holds the CA with
// the pinned fingerprint, and whose leaf that CA signed for server use.
func verifyPinned(pin Fingerprint, now func() time.Time) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if pin.IsZero() {
			return fmt.Errorf("no gateway fingerprint pinned: %w", ErrPinMismatch)
		}
		if len(raw) < 2 {
			return fmt.Errorf("gateway sent %d certificates, want its own and its CA: %w", len(raw), ErrPinMismatch)
		}
		var ca *x509.Certificate
		for _, r := range raw[1:] {
			if FingerprintOf(r).Equal(pin) {
				c, err := x509.ParseCertificate(r)
				if err != nil {
					return err
				}
				ca = c
				break
			}
		}
		if ca == nil {
			return fmt.Errorf("gateway CA %s, pinned %s: %w", FingerprintOf(raw[len(raw)-1]), pin, ErrPinMismatch)
		}
		leaf, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return err
		}
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		_, err = leaf.Verify(x509.VerifyOptions{
			Roots:       pool,
			CurrentTime: now(),
			KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		})
		return err
	}
}
