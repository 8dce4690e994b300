package pki

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Fingerprint is the SHA-256 digest of a certificate's DER encoding. The
// gateway's fingerprint is that of its CA certificate, so it stays the same
// when the server certificate is issued again for other addresses.
type Fingerprint [sha256.Size]byte

// FingerprintOf returns the fingerprint of a DER-encoded certificate.
func FingerprintOf(der []byte) Fingerprint { return sha256.Sum256(der) }

// String returns the fingerprint as a person compares it: 32 uppercase hex
// pairs separated by colons, as `openssl x509 -noout -fingerprint -sha256`
// prints it.
func (f Fingerprint) String() string {
	var b strings.Builder
	for i, c := range f {
		if i > 0 {
			b.WriteByte(':')
		}
		fmt.Fprintf(&b, "%02X", c)
	}
	return b.String()
}

// IsZero reports whether f is the zero fingerprint, which no certificate
// has and which pins nothing.
func (f Fingerprint) IsZero() bool { return f == Fingerprint{} }

// Equal reports whether f and g are the same, in constant time.
func (f Fingerprint) Equal(g Fingerprint) bool {
	return subtle.ConstantTimeCompare(f[:], g[:]) == 1
}

// MarshalText returns the form String gives.
func (f Fingerprint) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads any form ParseFingerprint accepts.
func (f *Fingerprint) UnmarshalText(b []byte) error {
	g, err := ParseFingerprint(string(b))
	if err != nil {
		return err
	}
	*f = g
	return nil
}

// ErrBadFingerprint is returned for text that is not a SHA-256 fingerprint.
var ErrBadFingerprint = errors.New("not a SHA-256 fingerprint")

// ParseFingerprint reads a fingerprint as String prints it, and also
// without colons, in lower case, with spaces between the pairs, or with a
// leading "SHA256:" or "sha256 Fingerprint=" as tools print it.
func ParseFingerprint(s string) (Fingerprint, error) {
	t := strings.TrimSpace(s)
	if i := strings.LastIndexByte(t, '='); i >= 0 { // "sha256 Fingerprint=AB:CD…"
		t = t[i+1:]
	}
	if len(t) >= 7 && strings.EqualFold(t[:7], "SHA256:") {
		t = t[7:]
	}
	t = strings.NewReplacer(":", "", " ", "", "-", "").Replace(t)
	var f Fingerprint
	if hex.DecodedLen(len(t)) != len(f) {
		return Fingerprint{}, fmt.Errorf("%q: %w", s, ErrBadFingerprint)
	}
	if _, err := hex.Decode(f[:], []byte(t)); err != nil {
		return Fingerprint{}, fmt.Errorf("%q: %w", s, ErrBadFingerprint)
	}
	return f, nil
}
