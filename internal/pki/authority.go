package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/internal/atomicfile"
)

// Files of the gateway's folder.
const (
	caCertFile     = "ca.crt"
	caKeyFile      = "ca.key"
	serverCertFile = "server.crt"
	serverKeyFile  = "server.key"
	stateFile      = "hosts.json"
)

// TokenLifetime is how long a pairing token may be redeemed after
// NewPairing gave it.
const TokenLifetime = 5 * time.Minute

// tokenBytes is the token's randomness: 160 bits.
const tokenBytes = 20

// forgetAfter is how long a used or expired token is remembered, so that
// presenting it again says "used" or "expired" rather than "unknown".
const forgetAfter = 24 * time.Hour

// Errors of pairing and of checking a host's certificate. Each refusal has
// its own, so that a person is told which of them happened.
var (
	ErrTokenUnknown = errors.New("pairing token unknown")
	ErrTokenExpired = errors.New("pairing token expired")
	ErrTokenUsed    = errors.New("pairing token already used")
	ErrBadName      = errors.New("host name must be 1 to 63 letters, digits, dots, dashes or underscores, starting with a letter or digit")
	ErrBadRequest   = errors.New("certificate request invalid")
	ErrUnknownHost  = errors.New("host unknown")
	ErrRevoked      = errors.New("host certificate revoked")
)

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Options are what Open needs besides the folder. The zero value is ready
// to use.
type Options struct {
	// Addrs are the addresses the gateway listens on for hosts
	// ("HOST:PORT" or "HOST"); the server certificate names them. Hosts
	// verify the gateway by its fingerprint, not by these names, so they
	// only help other clients.
	Addrs []string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// OnRevoke, when set, is called with a host's name after its
	// certificate is revoked, by Revoke or by pairing the name again, so
	// that a link still open with the old certificate can be closed. It is
	// called without the Authority's lock held.
	OnRevoke func(name string)
	// Log receives a line per pairing and revocation (never a token); nil
	// means slog.Default().
	Log *slog.Logger
}

// Authority is the gateway's side: its CA, its server certificate, the
// hosts it paired and the pairings it offers. Its methods may be called
// from several goroutines. One process owns a folder at a time.
type Authority struct {
	dir      string
	now      func() time.Time
	onRevoke func(string)
	log      *slog.Logger

	ca     *x509.Certificate
	caKey  crypto.Signer
	pool   *x509.CertPool
	server tls.Certificate
	fp     Fingerprint

	mu sync.Mutex
	st state // guarded by mu; replaced whole by commit
}

// state is hosts.json.
type state struct {
	Hosts    map[string]hostRecord    `json:"hosts"`    // by host name
	Revoked  map[string]revokedRecord `json:"revoked"`  // by certificate serial (hex)
	Pairings map[string]pairingRecord `json:"pairings"` // by SHA-256 of the token (hex)
}

type hostRecord struct {
	Serial      string      `json:"serial"`
	Fingerprint Fingerprint `json:"fingerprint"`
	Issued      time.Time   `json:"issued"`
	Expires     time.Time   `json:"expires"`
}

type revokedRecord struct {
	Name    string    `json:"name"`
	Revoked time.Time `json:"revoked"`
	Expires time.Time `json:"expires"` // the certificate's; forgotten after
}

type pairingRecord struct {
	Name    string     `json:"name"`
	Expires time.Time  `json:"expires"`
	Used    *time.Time `json:"used,omitempty"`
}

// Open loads the gateway's identity from dir, creating the folder (0700),
// the CA and the server certificate the first time. A server certificate
// that does not name every one of opts.Addrs, or has less than 30 days
// left, is issued again by the same CA, so the fingerprint hosts pinned
// stays valid.
func Open(dir string, opts Options) (*Authority, error) {
	a := &Authority{dir: dir, now: opts.Now, onRevoke: opts.OnRevoke, log: opts.Log}
	if a.now == nil {
		a.now = time.Now
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if err := makeDir(dir); err != nil {
		return nil, err
	}
	if err := a.loadCA(); err != nil {
		return nil, err
	}
	if err := a.loadServer(hostNames(opts.Addrs)); err != nil {
		return nil, err
	}
	if err := a.loadState(); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *Authority) loadCA() error {
	certPath, keyPath := join(a.dir, caCertFile), join(a.dir, caKeyFile)
	haveCert, err := exists(certPath)
	if err != nil {
		return err
	}
	haveKey, err := exists(keyPath)
	if err != nil {
		return err
	}
	switch {
	case !haveCert && !haveKey:
		ca, key, err := newCA(a.now())
		if err != nil {
			return err
		}
		// The key first: a CA certificate without its key is an error
		// Open reports, a key without a certificate is one it also reports,
		// and neither is left behind unless a write fails.
		if err := writeKey(keyPath, key); err != nil {
			return err
		}
		if err := writeCert(certPath, ca); err != nil {
			return err
		}
		a.ca, a.caKey = ca, key
	case haveCert && haveKey:
		if a.ca, err = readCert(certPath); err != nil {
			return err
		}
		if a.caKey, err = readKey(keyPath); err != nil {
			return err
		}
		if !publicKeysEqual(a.ca.PublicKey, a.caKey.Public()) {
			return fmt.Errorf("%s does not hold the key of %s", keyPath, certPath)
		}
	default:
		return fmt.Errorf("%s: one of %s and %s is missing", a.dir, caCertFile, caKeyFile)
	}
	a.pool = x509.NewCertPool()
	a.pool.AddCert(a.ca)
	a.fp = FingerprintOf(a.ca.Raw)
	return nil
}

func (a *Authority) loadServer(names []string) error {
	certPath, keyPath := join(a.dir, serverCertFile), join(a.dir, serverKeyFile)
	if cert, err := readCert(certPath); err == nil {
		key, kerr := readKey(keyPath)
		now := a.now()
		if kerr == nil && publicKeysEqual(cert.PublicKey, key.Public()) &&
			cert.CheckSignatureFrom(a.ca) == nil && covers(cert, names) &&
			now.After(cert.NotBefore) && now.Add(serverRenew).Before(cert.NotAfter) {
			a.server = tls.Certificate{Certificate: [][]byte{cert.Raw, a.ca.Raw}, PrivateKey: key, Leaf: cert}
			return nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		a.log.Warn("pki: server certificate unreadable, issuing another", "err", err)
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	cert, err := sign(a.ca, a.caKey, serverTemplate(names, a.now()), key.Public())
	if err != nil {
		return err
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	if err := writeCert(certPath, cert); err != nil {
		return err
	}
	a.server = tls.Certificate{Certificate: [][]byte{cert.Raw, a.ca.Raw}, PrivateKey: key, Leaf: cert}
	return nil
}

func (a *Authority) loadState() error {
	data, err := os.ReadFile(join(a.dir, stateFile))
	if errors.Is(err, fs.ErrNotExist) {
		a.st = state{}.init()
		return nil
	}
	if err != nil {
		return err
	}
	var st state
	if err := json.Unmarshal(data, &st); err != nil {
		return fmt.Errorf("%s: %w", join(a.dir, stateFile), err)
	}
	a.st = st.init()
	return nil
}

func (s state) init() state {
	if s.Hosts == nil {
		s.Hosts = map[string]hostRecord{}
	}
	if s.Revoked == nil {
		s.Revoked = map[string]revokedRecord{}
	}
	if s.Pairings == nil {
		s.Pairings = map[string]pairingRecord{}
	}
	return s
}

func (s state) clone() state {
	return state{Hosts: maps.Clone(s.Hosts), Revoked: maps.Clone(s.Revoked), Pairings: maps.Clone(s.Pairings)}.init()
}

// commit applies change to a copy of the state, forgets what is old,
// stores the copy and only then makes it the state, so that a failed write
// changes nothing. The caller holds a.mu.
func (a *Authority) commit(change func(st *state) error) error {
	st := a.st.clone()
	if err := change(&st); err != nil {
		return err
	}
	now := a.now()
	for h, p := range st.Pairings {
		if (p.Used != nil && now.Sub(*p.Used) > forgetAfter) || now.Sub(p.Expires) > forgetAfter {
			delete(st.Pairings, h)
		}
	}
	for s, r := range st.Revoked {
		if now.After(r.Expires) {
			delete(st.Revoked, s)
		}
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(join(a.dir, stateFile), append(data, '\n')); err != nil {
		return err
	}
	a.st = st
	return nil
}

// Fingerprint returns the fingerprint of the gateway's CA certificate,
// which hosts pin.
func (a *Authority) Fingerprint() Fingerprint { return a.fp }

// CA returns the gateway's CA certificate.
func (a *Authority) CA() *x509.Certificate { return a.ca }

// Token is a pairing token. It prints as "[redacted]" through fmt, slog
// and encoding/json, so that it is not logged by accident; Reveal gives the
// token itself, and a wire type that must carry it holds Reveal's string.
type Token string

// Reveal returns the token, to show it to the person once.
func (t Token) Reveal() string { return string(t) }

// String returns "[redacted]".
func (Token) String() string { return "[redacted]" }

// GoString returns "[redacted]".
func (Token) GoString() string { return "[redacted]" }

// LogValue returns "[redacted]".
func (Token) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// MarshalText returns "[redacted]".
func (Token) MarshalText() ([]byte, error) { return []byte("[redacted]"), nil }

// Pairing is an offer to pair one host: what `pinky hosts add NAME` shows.
type Pairing struct {
	Name        string
	Token       Token
	Fingerprint Fingerprint
	Expires     time.Time
}

// Code returns the token and the fingerprint in one string, for a host
// to pair with and check the gateway it reaches in one step (see
// ParseCode): the token, a dot, and the fingerprint's 64 hex digits.
func (p Pairing) Code() string {
	return string(p.Token) + "." + hex.EncodeToString(p.Fingerprint[:])
}

// ParseCode splits what Pairing.Code returned into the token and the
// fingerprint.
func ParseCode(code string) (Token, Fingerprint, error) {
	tok, fpText, ok := strings.Cut(strings.TrimSpace(code), ".")
	if !ok || tok == "" {
		return "", Fingerprint{}, fmt.Errorf("pairing code: want TOKEN.FINGERPRINT")
	}
	fp, err := ParseFingerprint(fpText)
	if err != nil {
		return "", Fingerprint{}, fmt.Errorf("pairing code: %w", err)
	}
	return Token(tok), fp, nil
}

var tokenEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func tokenHash(t string) string {
	h := sha256.Sum256([]byte(t))
	return hex.EncodeToString(h[:])
}

// NewPairing offers to pair the host called name: it returns a random
// token, good once within TokenLifetime, and the gateway's fingerprint.
// Only the token's SHA-256 is kept. Name may already be paired: redeeming
// the token then replaces that host's certificate.
func (a *Authority) NewPairing(name string) (Pairing, error) {
	if !nameRE.MatchString(name) {
		return Pairing{}, fmt.Errorf("%q: %w", name, ErrBadName)
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return Pairing{}, err
	}
	tok := strings.ToLower(tokenEncoding.EncodeToString(b))
	exp := a.now().Add(TokenLifetime)
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.commit(func(st *state) error {
		st.Pairings[tokenHash(tok)] = pairingRecord{Name: name, Expires: exp}
		return nil
	})
	if err != nil {
		return Pairing{}, err
	}
	a.log.Info("pki: pairing offered", "host", name, "expires", exp)
	return Pairing{Name: name, Token: Token(tok), Fingerprint: a.fp, Expires: exp}, nil
}

// Issued is what a host receives for its token: its certificate and the
// CA that signed it, both DER-encoded.
type Issued struct {
	Name        string
	Certificate []byte
	CA          []byte
}

// Redeem spends a pairing token: it checks the certificate request (DER,
// signed by the host's own key, which never leaves the host) and returns a
// client certificate for the pairing's host name, whatever name the
// request asks for. A host already paired under that name has its old
// certificate revoked. A token not given by NewPairing is ErrTokenUnknown,
// one already redeemed ErrTokenUsed, one past its lifetime ErrTokenExpired.
func (a *Authority) Redeem(token string, csrDER []byte) (Issued, error) {
	csr, err := x509.ParseCertificateRequest(csrDER)
	if err != nil {
		return Issued{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if err := csr.CheckSignature(); err != nil {
		return Issued{}, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	h := tokenHash(strings.ToLower(strings.TrimSpace(token)))

	a.mu.Lock()
	var (
		cert     *x509.Certificate
		name     string
		replaced bool
	)
	err = a.commit(func(st *state) error {
		p, ok := st.Pairings[h]
		switch {
		case !ok:
			return ErrTokenUnknown
		case p.Used != nil:
			return ErrTokenUsed
		case !a.now().Before(p.Expires):
			return ErrTokenExpired
		}
		now := a.now()
		p.Used = &now
		st.Pairings[h] = p
		name = p.Name
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{Organization: []string{"Pinky host"}, CommonName: name},
			NotBefore:   now.Add(-backdate),
			NotAfter:    now.Add(hostLifetime),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		c, err := sign(a.ca, a.caKey, tmpl, csr.PublicKey)
		if err != nil {
			return err
		}
		if old, ok := st.Hosts[name]; ok {
			st.Revoked[old.Serial] = revokedRecord{Name: name, Revoked: now, Expires: old.Expires}
			replaced = true
		}
		st.Hosts[name] = hostRecord{Serial: serialText(c), Fingerprint: FingerprintOf(c.Raw), Issued: now, Expires: c.NotAfter}
		cert = c
		return nil
	})
	a.mu.Unlock()
	if err != nil {
		return Issued{}, err
	}
	a.log.Info("pki: host paired", "host", name, "replaced", replaced)
	if replaced && a.onRevoke != nil {
		a.onRevoke(name)
	}
	return Issued{Name: name, Certificate: cert.Raw, CA: a.ca.Raw}, nil
}

// Revoke ends the host called name: its certificate is refused from the
// next handshake on, and pairings offered for it and not yet redeemed are
// withdrawn. A name neither paired nor offered is ErrUnknownHost.
func (a *Authority) Revoke(name string) error {
	a.mu.Lock()
	var had bool
	err := a.commit(func(st *state) error {
		found := false
		for h, p := range st.Pairings {
			if p.Name == name && p.Used == nil {
				delete(st.Pairings, h)
				found = true
			}
		}
		if old, ok := st.Hosts[name]; ok {
			st.Revoked[old.Serial] = revokedRecord{Name: name, Revoked: a.now(), Expires: old.Expires}
			delete(st.Hosts, name)
			found, had = true, true
		}
		if !found {
			return fmt.Errorf("%q: %w", name, ErrUnknownHost)
		}
		return nil
	})
	a.mu.Unlock()
	if err != nil {
		return err
	}
	a.log.Info("pki: host revoked", "host", name)
	if had && a.onRevoke != nil {
		a.onRevoke(name)
	}
	return nil
}

// HostInfo describes a paired host, or one offered a pairing it has not
// redeemed yet (Pending, with the token's expiry in Expires).
type HostInfo struct {
	Name        string
	Pending     bool
	Fingerprint Fingerprint // of the host's certificate; zero while pending
	Issued      time.Time
	Expires     time.Time
}

// Hosts lists the paired hosts and the pending pairings, by name.
func (a *Authority) Hosts() []HostInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	var out []HostInfo
	for name, h := range a.st.Hosts {
		out = append(out, HostInfo{Name: name, Fingerprint: h.Fingerprint, Issued: h.Issued, Expires: h.Expires})
	}
	for _, p := range a.st.Pairings {
		if p.Used == nil && now.Before(p.Expires) {
			out = append(out, HostInfo{Name: p.Name, Pending: true, Expires: p.Expires})
		}
	}
	slices.SortFunc(out, func(x, y HostInfo) int {
		if c := strings.Compare(x.Name, y.Name); c != 0 {
			return c
		}
		return y.Expires.Compare(x.Expires)
	})
	return out
}

// Verify checks a host's certificate: signed by the gateway's CA for
// client use, within its validity, and the current certificate of a
// paired host. It returns the host's name. A certificate revoked (by
// Revoke, or replaced by pairing again) is ErrRevoked; one the CA signed
// but that no paired host holds is ErrUnknownHost.
func (a *Authority) Verify(leaf *x509.Certificate) (string, error) {
	_, err := leaf.Verify(x509.VerifyOptions{
		Roots:       a.pool,
		CurrentTime: a.now(),
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	if err != nil {
		return "", err
	}
	name, serial := leaf.Subject.CommonName, serialText(leaf)
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.st.Revoked[serial]; ok {
		return "", fmt.Errorf("host %q: %w", r.Name, ErrRevoked)
	}
	if h, ok := a.st.Hosts[name]; !ok || h.Serial != serial {
		return "", fmt.Errorf("host %q: %w", name, ErrUnknownHost)
	}
	return name, nil
}

// ServerTLS returns the configuration of the listener hosts link to: TLS
// 1.3, the server certificate with the CA after it, and a client
// certificate required and checked by Verify in every handshake, so that a
// revoked host is refused from the moment Revoke returns. Give it to gRPC
// with credentials.NewTLS.
func (a *Authority) ServerTLS() *tls.Config {
	c := a.baseServerTLS()
	c.ClientAuth = tls.RequireAndVerifyClientCert
	return c
}

// PairingServerTLS is ServerTLS for a listener that also serves hosts
// still pairing: a client may come without a certificate (HostName then
// says so, and only the pairing call should be served to it), and one that
// presents a certificate is checked as ServerTLS checks it.
func (a *Authority) PairingServerTLS() *tls.Config {
	c := a.baseServerTLS()
	c.ClientAuth = tls.VerifyClientCertIfGiven
	return c
}

func (a *Authority) baseServerTLS() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{a.server},
		ClientCAs:    a.pool,
		Time:         a.now,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return nil // only PairingServerTLS lets this through
			}
			_, err := a.Verify(cs.PeerCertificates[0])
			return err
		},
	}
}

// HostName returns the name of the host at the other end of a connection
// that ServerTLS or PairingServerTLS accepted, and false when it presented
// no certificate. With gRPC, the state is in the credentials.TLSInfo of
// peer.FromContext.
func HostName(cs tls.ConnectionState) (string, bool) {
	if len(cs.VerifiedChains) == 0 || len(cs.PeerCertificates) == 0 {
		return "", false
	}
	return cs.PeerCertificates[0].Subject.CommonName, true
}

// publicKeysEqual reports whether two public keys are the same.
func publicKeysEqual(x, y crypto.PublicKey) bool {
	e, ok := x.(interface{ Equal(crypto.PublicKey) bool })
	return ok && e.Equal(y)
}
