package pki

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now()} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func openAuthority(t *testing.T, dir string, c *clock, addrs ...string) *Authority {
	t.Helper()
	opts := Options{Addrs: addrs, Log: quiet}
	if c != nil {
		opts.Now = c.Now
	}
	a, err := Open(dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	return a
}

// pair runs the whole pairing of a host called name with a, storing the
// host's identity in a new folder.
func pair(t *testing.T, a *Authority, name string) *Host {
	t.Helper()
	return pairInto(t, a, name, t.TempDir())
}

func TestFingerprintForms(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	fp := a.Fingerprint()
	s := fp.String()
	if !regexp.MustCompile(`^([0-9A-F]{2}:){31}[0-9A-F]{2}$`).MatchString(s) {
		t.Fatalf("String() = %q; want 32 uppercase hex pairs joined by colons", s)
	}
	if got := FingerprintOf(a.CA().Raw); got != fp {
		t.Fatalf("FingerprintOf(CA) = %s; want %s", got, fp)
	}
	plain := strings.ReplaceAll(s, ":", "")
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"as printed", s, true},
		{"lower case", strings.ToLower(s), true},
		{"no colons", plain, true},
		{"prefix", "SHA256:" + s, true},
		{"openssl", "sha256 Fingerprint=" + s, true},
		{"spaces", strings.ReplaceAll(s, ":", " "), true},
		{"surrounding space", "  " + s + "\n", true},
		{"short", s[:len(s)-3], false},
		{"long", s + ":00", false},
		{"not hex", strings.Replace(s, s[:2], "ZZ", 1), false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFingerprint(tt.in)
			if !tt.ok {
				if !errors.Is(err, ErrBadFingerprint) {
					t.Fatalf("ParseFingerprint(%q) error = %v; want ErrBadFingerprint", tt.in, err)
				}
				return
			}
			if err != nil || got != fp {
				t.Fatalf("ParseFingerprint(%q) = %s, %v; want %s", tt.in, got, err, fp)
			}
		})
	}
}

func TestPairingCode(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	p, err := a.NewPairing("closet")
	if err != nil {
		t.Fatal(err)
	}
	tok, fp, err := ParseCode(p.Code())
	if err != nil || tok != p.Token || fp != a.Fingerprint() {
		t.Fatalf("ParseCode(Code()) = %q, %s, %v; want the token and %s", tok.Reveal(), fp, err, a.Fingerprint())
	}
	for _, bad := range []string{"", p.Token.Reveal(), "." + fp.String(), p.Token.Reveal() + ".abc"} {
		if _, _, err := ParseCode(bad); err == nil {
			t.Errorf("ParseCode(%q) = nil error; want one", bad)
		}
	}
}

func TestTokenIsLongAndRandom(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	seen := map[string]bool{}
	for range 20 {
		p, err := a.NewPairing("h")
		if err != nil {
			t.Fatal(err)
		}
		tok := p.Token.Reveal()
		if bits := len(tok) * 5; bits < 128 {
			t.Fatalf("token %q carries %d bits; want at least 128", tok, bits)
		}
		if seen[tok] {
			t.Fatalf("token %q given twice", tok)
		}
		seen[tok] = true
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	dir := t.TempDir()
	var logs bytes.Buffer
	a, err := Open(dir, Options{Log: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.NewPairing("closet")
	if err != nil {
		t.Fatal(err)
	}
	req, err := NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Redeem(p.Token.Reveal(), req.CSR); err != nil {
		t.Fatal(err)
	}
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("pairing", "p", p, "token", p.Token)
	state, err := os.ReadFile(join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	tok := p.Token.Reveal()
	for what, text := range map[string]string{
		"%v":         fmt.Sprintf("%v", p),
		"%+v":        fmt.Sprintf("%+v", p),
		"%#v":        fmt.Sprintf("%#v", p),
		"%s token":   fmt.Sprintf("%s", p.Token),
		"%q token":   fmt.Sprintf("%q", p.Token),
		"logs":       logs.String(),
		"hosts.json": string(state),
	} {
		if strings.Contains(text, tok) {
			t.Errorf("%s shows the token: %s", what, text)
		}
	}
	if !strings.Contains(string(state), tokenHash(tok)) {
		t.Errorf("hosts.json does not hold the token's hash:\n%s", state)
	}
}

func TestRedeem(t *testing.T) {
	req, err := NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// prepare runs after NewPairing and returns the token to redeem.
		prepare func(t *testing.T, a *Authority, c *clock, tok string) string
		csr     []byte
		want    error
	}{
		{name: "good", want: nil},
		{name: "good just before expiry", prepare: func(_ *testing.T, _ *Authority, c *clock, tok string) string {
			c.Advance(TokenLifetime - time.Second)
			return tok
		}},
		{name: "good with spaces and capitals", prepare: func(_ *testing.T, _ *Authority, _ *clock, tok string) string {
			return " " + strings.ToUpper(tok) + "\n"
		}},
		{name: "wrong", want: ErrTokenUnknown, prepare: func(_ *testing.T, _ *Authority, _ *clock, tok string) string {
			return tok[:len(tok)-1] + map[bool]string{true: "b", false: "a"}[strings.HasSuffix(tok, "a")]
		}},
		{name: "empty", want: ErrTokenUnknown, prepare: func(*testing.T, *Authority, *clock, string) string { return "" }},
		{name: "expired", want: ErrTokenExpired, prepare: func(_ *testing.T, _ *Authority, c *clock, tok string) string {
			c.Advance(TokenLifetime)
			return tok
		}},
		{name: "expired a day later", want: ErrTokenExpired, prepare: func(_ *testing.T, _ *Authority, c *clock, tok string) string {
			c.Advance(12 * time.Hour)
			return tok
		}},
		{name: "replayed", want: ErrTokenUsed, prepare: func(t *testing.T, a *Authority, _ *clock, tok string) string {
			if _, err := a.Redeem(tok, req.CSR); err != nil {
				t.Fatalf("first Redeem: %v", err)
			}
			return tok
		}},
		{name: "replayed after expiry", want: ErrTokenUsed, prepare: func(t *testing.T, a *Authority, c *clock, tok string) string {
			if _, err := a.Redeem(tok, req.CSR); err != nil {
				t.Fatalf("first Redeem: %v", err)
			}
			c.Advance(time.Hour)
			return tok
		}},
		{name: "withdrawn by Revoke", want: ErrTokenUnknown, prepare: func(t *testing.T, a *Authority, _ *clock, tok string) string {
			if err := a.Revoke("closet"); err != nil {
				t.Fatalf("Revoke: %v", err)
			}
			return tok
		}},
		{name: "survives a restart", prepare: func(t *testing.T, a *Authority, c *clock, tok string) string {
			*a = *openAuthority(t, a.dir, c)
			return tok
		}},
		{name: "not a request", csr: []byte("junk"), want: ErrBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClock()
			a := openAuthority(t, t.TempDir(), c)
			p, err := a.NewPairing("closet")
			if err != nil {
				t.Fatal(err)
			}
			tok := p.Token.Reveal()
			if tt.prepare != nil {
				tok = tt.prepare(t, a, c, tok)
			}
			csr := req.CSR
			if tt.csr != nil {
				csr = tt.csr
			}
			is, err := a.Redeem(tok, csr)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Fatalf("Redeem = %v; want %v", err, tt.want)
			}
			if tt.want != nil {
				return
			}
			cert, err := x509.ParseCertificate(is.Certificate)
			if err != nil {
				t.Fatal(err)
			}
			if cert.Subject.CommonName != "closet" || is.Name != "closet" {
				t.Errorf("certificate for %q (Issued.Name %q); want closet", cert.Subject.CommonName, is.Name)
			}
			if name, err := a.Verify(cert); err != nil || name != "closet" {
				t.Errorf("Verify(issued) = %q, %v; want closet", name, err)
			}
			if got := FingerprintOf(is.CA); got != a.Fingerprint() {
				t.Errorf("Issued.CA fingerprint %s; want %s", got, a.Fingerprint())
			}
		})
	}
}

func TestRedeemOnceUnderRace(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	p, err := a.NewPairing("closet")
	if err != nil {
		t.Fatal(err)
	}
	req, err := NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := a.Redeem(p.Token.Reveal(), req.CSR)
			errs <- err
		}()
	}
	ok := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			ok++
		case !errors.Is(err, ErrTokenUsed):
			t.Errorf("Redeem = %v; want nil or ErrTokenUsed", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d of %d Redeem calls succeeded; want 1", ok, n)
	}
}

func TestNewPairingNames(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	tests := []struct {
		name string
		ok   bool
	}{
		{"closet", true},
		{"mac-mini.lan", true},
		{"Wall_2", true},
		{strings.Repeat("a", 63), true},
		{"", false},
		{strings.Repeat("a", 64), false},
		{"-dash", false},
		{"a b", false},
		{"../x", false},
		{"é", false},
	}
	for _, tt := range tests {
		_, err := a.NewPairing(tt.name)
		if tt.ok != (err == nil) || (!tt.ok && !errors.Is(err, ErrBadName)) {
			t.Errorf("NewPairing(%q) = %v; want ok %v", tt.name, err, tt.ok)
		}
	}
}

func TestPairAgainReplaces(t *testing.T) {
	var revoked []string
	a, err := Open(t.TempDir(), Options{Log: quiet, OnRevoke: func(n string) { revoked = append(revoked, n) }})
	if err != nil {
		t.Fatal(err)
	}
	old := pair(t, a, "closet")
	other := pair(t, a, "mac")
	if len(revoked) != 0 {
		t.Fatalf("OnRevoke called with %v before any replacement", revoked)
	}
	cur := pair(t, a, "closet")
	if _, err := a.Verify(old.Certificate()); !errors.Is(err, ErrRevoked) {
		t.Errorf("Verify(old closet) = %v; want ErrRevoked", err)
	}
	for _, h := range []*Host{cur, other} {
		if name, err := a.Verify(h.Certificate()); err != nil || name != h.Name {
			t.Errorf("Verify(%s) = %q, %v; want %q", h.Name, name, err, h.Name)
		}
	}
	if fmt.Sprint(revoked) != "[closet]" {
		t.Errorf("OnRevoke called with %v; want [closet]", revoked)
	}
	hosts := a.Hosts()
	if len(hosts) != 2 || hosts[0].Name != "closet" || hosts[1].Name != "mac" ||
		hosts[0].Fingerprint != FingerprintOf(cur.Certificate().Raw) || hosts[0].Pending {
		t.Errorf("Hosts() = %+v; want closet (its new certificate) and mac", hosts)
	}
}

func TestRevoke(t *testing.T) {
	dir := t.TempDir()
	a := openAuthority(t, dir, nil)
	h := pair(t, a, "closet")
	keep := pair(t, a, "mac")
	if err := a.Revoke("closet"); err != nil {
		t.Fatalf("Revoke: %v", err)
	}
	if _, err := a.Verify(h.Certificate()); !errors.Is(err, ErrRevoked) {
		t.Errorf("Verify(revoked) = %v; want ErrRevoked", err)
	}
	if err := a.Revoke("closet"); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("Revoke again = %v; want ErrUnknownHost", err)
	}
	if err := a.Revoke("nobody"); !errors.Is(err, ErrUnknownHost) {
		t.Errorf("Revoke(nobody) = %v; want ErrUnknownHost", err)
	}
	// What was revoked stays revoked after a restart, and the rest stays.
	b := openAuthority(t, dir, nil)
	if _, err := b.Verify(h.Certificate()); !errors.Is(err, ErrRevoked) {
		t.Errorf("after reopening, Verify(revoked) = %v; want ErrRevoked", err)
	}
	if _, err := b.Verify(keep.Certificate()); err != nil {
		t.Errorf("after reopening, Verify(mac) = %v; want nil", err)
	}
	if got := b.Hosts(); len(got) != 1 || got[0].Name != "mac" {
		t.Errorf("Hosts() = %+v; want mac alone", got)
	}
}

func TestPendingPairingListed(t *testing.T) {
	c := newClock()
	a := openAuthority(t, t.TempDir(), c)
	if _, err := a.NewPairing("closet"); err != nil {
		t.Fatal(err)
	}
	if got := a.Hosts(); len(got) != 1 || !got[0].Pending || got[0].Name != "closet" {
		t.Fatalf("Hosts() = %+v; want closet pending", got)
	}
	c.Advance(TokenLifetime)
	if got := a.Hosts(); len(got) != 0 {
		t.Fatalf("Hosts() after expiry = %+v; want none", got)
	}
}

func TestVerifyRefuses(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	other := openAuthority(t, t.TempDir(), nil)
	h := pair(t, a, "closet")
	foreign := pair(t, other, "closet")
	// A certificate the CA signed that no paired host holds: the same name
	// and key, another serial.
	stray, err := sign(a.ca, a.caKey, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "closet"},
		NotBefore:   time.Now().Add(-time.Minute),
		NotAfter:    time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, h.Certificate().PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	var unknownCA x509.UnknownAuthorityError
	var badUsage x509.CertificateInvalidError
	tests := []struct {
		name  string
		cert  *x509.Certificate
		check func(error) bool
	}{
		{"another CA", foreign.Certificate(), func(err error) bool { return errors.As(err, &unknownCA) }},
		{"not a paired certificate", stray, func(err error) bool { return errors.Is(err, ErrUnknownHost) }},
		{"the server's own", a.server.Leaf, func(err error) bool { return errors.As(err, &badUsage) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if name, err := a.Verify(tt.cert); !tt.check(err) {
				t.Fatalf("Verify = %q, %v; want refused", name, err)
			}
		})
	}
}

func TestFinishChecks(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	other := openAuthority(t, t.TempDir(), nil)
	issue := func(t *testing.T) (*Request, Issued) {
		p, err := a.NewPairing("closet")
		if err != nil {
			t.Fatal(err)
		}
		req, err := NewRequest()
		if err != nil {
			t.Fatal(err)
		}
		is, err := a.Redeem(p.Token.Reveal(), req.CSR)
		if err != nil {
			t.Fatal(err)
		}
		return req, is
	}
	t.Run("another pin", func(t *testing.T) {
		req, is := issue(t)
		if _, err := req.Finish(t.TempDir(), other.Fingerprint(), is); !errors.Is(err, ErrPinMismatch) {
			t.Fatalf("Finish = %v; want ErrPinMismatch", err)
		}
	})
	t.Run("no pin", func(t *testing.T) {
		req, is := issue(t)
		if _, err := req.Finish(t.TempDir(), Fingerprint{}, is); err == nil {
			t.Fatal("Finish with no pin = nil; want an error")
		}
	})
	t.Run("certificate for another key", func(t *testing.T) {
		_, is := issue(t)
		req, err := NewRequest()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := req.Finish(dir, a.Fingerprint(), is); err == nil {
			t.Fatal("Finish = nil; want an error")
		}
		if _, err := LoadHost(dir); !errors.Is(err, ErrNotPaired) {
			t.Fatalf("LoadHost after a failed Finish = %v; want ErrNotPaired", err)
		}
	})
}

func TestHostStoredAndLoaded(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	p, err := a.NewPairing("closet")
	if err != nil {
		t.Fatal(err)
	}
	req, err := NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	is, err := a.Redeem(p.Token.Reveal(), req.CSR)
	if err != nil {
		t.Fatal(err)
	}
	dir := join(t.TempDir(), "host")
	if _, err := req.Finish(dir, p.Fingerprint, is); err != nil {
		t.Fatal(err)
	}
	h, err := LoadHost(dir)
	if err != nil {
		t.Fatalf("LoadHost: %v", err)
	}
	if h.Name != "closet" || h.Pin != a.Fingerprint() || !bytes.Equal(h.Certificate().Raw, is.Certificate) {
		t.Errorf("LoadHost = %s pinned %s; want closet pinned %s with the issued certificate", h.Name, h.Pin, a.Fingerprint())
	}
	if _, err := LoadHost(t.TempDir()); !errors.Is(err, ErrNotPaired) {
		t.Errorf("LoadHost(empty folder) = %v; want ErrNotPaired", err)
	}
}

func TestFilesOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix permission bits; the folder's ACL is the data folder's")
	}
	gw := join(t.TempDir(), "pki")
	a := openAuthority(t, gw, nil)
	h := pair(t, a, "closet")
	hostDir := join(t.TempDir(), "host")
	req, err := NewRequest()
	if err != nil {
		t.Fatal(err)
	}
	p, err := a.NewPairing(h.Name)
	if err != nil {
		t.Fatal(err)
	}
	is, err := a.Redeem(p.Token.Reveal(), req.CSR)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := req.Finish(hostDir, p.Fingerprint, is); err != nil {
		t.Fatal(err)
	}
	check := func(path string, want os.FileMode) {
		t.Helper()
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o; want %o", path, got, want)
		}
	}
	check(gw, 0o700)
	check(hostDir, 0o700)
	for _, f := range []string{caCertFile, caKeyFile, serverCertFile, serverKeyFile, stateFile} {
		check(join(gw, f), 0o600)
	}
	for _, f := range []string{hostCertFile, hostKeyFile, pinFile} {
		check(join(hostDir, f), 0o600)
	}
}

func TestOpenAgain(t *testing.T) {
	dir := t.TempDir()
	a := openAuthority(t, dir, nil, "127.0.0.1:7447")
	b := openAuthority(t, dir, nil, "127.0.0.1:7447")
	if b.Fingerprint() != a.Fingerprint() {
		t.Fatalf("fingerprint after reopening %s; want %s", b.Fingerprint(), a.Fingerprint())
	}
	if !bytes.Equal(b.server.Leaf.Raw, a.server.Leaf.Raw) {
		t.Errorf("server certificate issued again though the addresses are the same")
	}
	c := openAuthority(t, dir, nil, "gw.lan:7447", "[::]:7447", "10.0.0.5")
	if c.Fingerprint() != a.Fingerprint() {
		t.Fatalf("fingerprint after new addresses %s; want %s", c.Fingerprint(), a.Fingerprint())
	}
	for _, n := range []string{"gw.lan", "10.0.0.5"} {
		if err := c.server.Leaf.VerifyHostname(n); err != nil {
			t.Errorf("server certificate for the new addresses: %v", err)
		}
	}
	// Near the end of its life, the server certificate is issued again.
	late := &clock{t: c.server.Leaf.NotAfter.Add(-serverRenew / 2)}
	d := openAuthority(t, dir, late, "gw.lan:7447", "10.0.0.5")
	if !d.server.Leaf.NotAfter.After(c.server.Leaf.NotAfter) {
		t.Errorf("server certificate ending %v not renewed", d.server.Leaf.NotAfter)
	}
	// A CA key that is not the certificate's is refused.
	if err := os.Remove(join(dir, caKeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, Options{Log: quiet}); err == nil {
		t.Error("Open with the CA key missing = nil error; want one")
	}
}
