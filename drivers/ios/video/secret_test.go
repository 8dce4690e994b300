package video

import (
	"bytes"
	"strings"
	"testing"
)

func TestSecretRoundTrip(t *testing.T) {
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != SecretSize || bytes.Equal(secret, other) {
		t.Fatalf("NewSecret: %d bytes, repeated %t; want %d fresh bytes", len(secret), bytes.Equal(secret, other), SecretSize)
	}
	text := FormatSecret(secret)
	groups := strings.Split(text, "-")
	if len(text) != 64 || len(groups) != 13 || len(groups[0]) != 4 {
		t.Errorf("FormatSecret: got %q; want 13 dash-separated groups of 4, 64 characters", text)
	}
	for _, in := range []string{text, strings.ToLower(text), strings.ReplaceAll(text, "-", " "), " " + strings.ReplaceAll(text, "-", "") + "\n"} {
		got, err := ParseSecret(in)
		if err != nil || !bytes.Equal(got, secret) {
			t.Errorf("ParseSecret(%q): got %x, %v; want %x", in, got, err, secret)
		}
	}
}

func TestFormatSecretGolden(t *testing.T) {
	secret := make([]byte, SecretSize)
	for i := range secret {
		secret[i] = byte(i)
	}
	const want = "AAAQ-EAYE-AUDA-OCAJ-BIFQ-YDIO-B4IB-CEQT-CQKR-MFYY-DENB-WHA5-DYPQ"
	if got := FormatSecret(secret); got != want {
		t.Errorf("FormatSecret: got %q; want %q", got, want)
	}
}

func TestParseSecretErrors(t *testing.T) {
	full := FormatSecret(bytes.Repeat([]byte{1}, SecretSize))
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "0 bytes"},
		{"short", full[:len(full)-5], "bytes; want 32"},
		{"long", full + "-AAAA", "bytes; want 32"},
		{"not base32", strings.Replace(full, full[:1], "1", 1), "not base32"},
		{"hex", strings.Repeat("0f", SecretSize), "not base32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseSecret(tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseSecret(%q): got %v; want an error saying %q", tt.in, err, tt.want)
			}
		})
	}
}
