package video

import (
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"strings"
)

// SecretSize is the length of a pairing secret in bytes.
const SecretSize = 32

// secretGroup is how many characters FormatSecret puts between dashes.
const secretGroup = 4

// NewSecret returns a new random pairing secret.
func NewSecret() ([]byte, error) {
	b := make([]byte, SecretSize)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("pairing secret: %w", err)
	}
	return b, nil
}

// FormatSecret writes a secret as a person copies it: unpadded base32 (RFC
// 4648 alphabet, A–Z and 2–7) in groups of four joined by dashes, 64
// characters for a 32-byte secret.
func FormatSecret(secret []byte) string {
	s := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(secret)
	var b strings.Builder
	for i := 0; i < len(s); i += secretGroup {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(s[i:min(i+secretGroup, len(s))])
	}
	return b.String()
}

// ParseSecret reads the text FormatSecret writes. Case, dashes and spaces
// do not matter; anything that is not a 32-byte secret is an error.
func ParseSecret(text string) ([]byte, error) {
	s := strings.Map(func(r rune) rune {
		switch r {
		case '-', ' ', '\t', '\n', '\r':
			return -1
		}
		return r
	}, strings.ToUpper(text))
	b, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("pairing secret: not base32 (A-Z, 2-7): %w", err)
	}
	if len(b) != SecretSize {
		return nil, fmt.Errorf("pairing secret: %d bytes; want %d", len(b), SecretSize)
	}
	return b, nil
}
