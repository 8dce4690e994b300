package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// How long certificates last. The CA outlives everything it signs; a
// server certificate is issued again by Open when it nears its end; a host's
// certificate lasts long because revocation, not expiry, is what ends a
// host.
const (
	caLifetime     = 20 * 365 * 24 * time.Hour
	serverLifetime = 2 * 365 * 24 * time.Hour
	serverRenew    = 30 * 24 * time.Hour // issue again when less is left
	hostLifetime   = 10 * 365 * 24 * time.Hour
	backdate       = 5 * time.Minute // tolerate clocks a little behind
)

// newKey returns a fresh ECDSA P-256 key, which every TLS 1.3 stack takes.
func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

// newSerial returns a random 128-bit serial number.
func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// serialText is how a serial is stored and compared.
func serialText(c *x509.Certificate) string { return c.SerialNumber.Text(16) }

// newCA creates a self-signed CA certificate named after the gateway.
func newCA(now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := newKey()
	if err != nil {
		return nil, nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{Organization: []string{"Pinky"}, CommonName: "Pinky gateway CA"},
		NotBefore:             now.Add(-backdate),
		NotAfter:              now.Add(caLifetime),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	return cert, key, err
}

// sign issues a leaf certificate for pub, signed by the CA.
func sign(ca *x509.Certificate, caKey crypto.Signer, tmpl *x509.Certificate, pub crypto.PublicKey) (*x509.Certificate, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl.SerialNumber = serial
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.BasicConstraintsValid = true
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, pub, caKey)
	if err != nil {
		return nil, err
	}
	return x509.ParseCertificate(der)
}

// serverTemplate describes a server certificate for the given host names
// and IP addresses.
func serverTemplate(names []string, now time.Time) *x509.Certificate {
	t := &x509.Certificate{
		Subject:     pkix.Name{Organization: []string{"Pinky"}, CommonName: "Pinky gateway"},
		NotBefore:   now.Add(-backdate),
		NotAfter:    now.Add(serverLifetime),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			t.IPAddresses = append(t.IPAddresses, ip)
		} else {
			t.DNSNames = append(t.DNSNames, n)
		}
	}
	return t
}

// covers reports whether c names every one of names.
func covers(c *x509.Certificate, names []string) bool {
	for _, n := range names {
		if c.VerifyHostname(n) != nil {
			return false
		}
	}
	return true
}

// hostNames turns listen addresses ("HOST:PORT", "HOST", "[::1]:7447")
// into the names a server certificate carries. Unspecified addresses
// (0.0.0.0, ::) name no host and are left out; with nothing left, the
// certificate names localhost and the loopback addresses.
func hostNames(addrs []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range addrs {
		h := a
		if host, _, err := net.SplitHostPort(a); err == nil {
			h = host
		}
		if ip := net.ParseIP(h); h == "" || (ip != nil && ip.IsUnspecified()) {
			continue
		}
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	if len(out) == 0 {
		out = []string{"localhost", "127.0.0.1", "::1"}
	}
	return out
}

// writeCert stores a certificate as PEM, readable by its owner only.
func writeCert(path string, c *x509.Certificate) error {
	return atomicfile.Write(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw}))
}

// writeKey stores a private key as PKCS #8 PEM, readable by its owner only.
func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// readCert reads a PEM certificate that writeCert stored.
func readCert(path string) (*x509.Certificate, error) {
	b, err := readPEM(path, "CERTIFICATE")
	if err != nil {
		return nil, err
	}
	c, err := x509.ParseCertificate(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// readKey reads a PEM private key that writeKey stored.
func readKey(path string) (crypto.Signer, error) {
	b, err := readPEM(path, "PRIVATE KEY")
	if err != nil {
		return nil, err
	}
	k, err := x509.ParsePKCS8PrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: key of type %T cannot sign", path, k)
	}
	return s, nil
}

func readPEM(path, typ string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != typ {
		return nil, fmt.Errorf("%s: no PEM block of type %s", path, typ)
	}
	return blk.Bytes, nil
}

// makeDir creates dir, usable by its owner only.
func makeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// exists reports whether path exists; an error other than "not there" is
// returned as is.
func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// join is filepath.Join, kept short.
func join(dir, name string) string { return filepath.Join(dir, name) }
