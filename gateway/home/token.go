package home

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The bearer token: "pinky_" and 32 random bytes in base64url, on one line
// of $PINKY_HOME/token (mode 0600).
const (
	tokenPrefix   = "pinky_"
	minTokenBytes = 32 // a hand-written token must be at least this long
)

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b) //nolint:errcheck // never fails
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// EnsureToken returns the bearer token stored at path, creating one (mode
// 0600) when there is none.
func EnsureToken(path string) (string, error) {
	tok, _, err := ReadToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	tok = newToken()
	tmp, err := writeTokenTemp(path, tok)
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp)
	// A link, unlike a rename, never replaces a token another process has
	// just made: both then use that one.
	if err := os.Link(tmp, path); errors.Is(err, fs.ErrExist) {
		tok, _, err = ReadToken(path)
		return tok, err
	} else if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	return tok, nil
}

// RotateToken replaces the bearer token at path with a new one and returns
// it. A running daemon refuses the old token from its next request on.
func RotateToken(path string) (string, error) {
	tok := newToken()
	tmp, err := writeTokenTemp(path, tok)
	if err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("token: %w", err)
	}
	return tok, nil
}

func writeTokenTemp(path, tok string) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".token-*") // mode 0600
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if err := makePrivate(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", fmt.Errorf("token: %w", err)
	}
	_, err = f.WriteString(tok + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("token: %w", err)
	}
	return f.Name(), nil
}

// ReadToken reads the token at path, and the file's info to notice a
// change. A file others may read is refused: the token may have leaked.
func ReadToken(path string) (string, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if err := checkTokenFile(path, fi); err != nil {
		return "", nil, err
	}
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", nil, fmt.Errorf("token: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < minTokenBytes || strings.ContainsAny(tok, " \t\r\n") {
		return "", nil, fmt.Errorf("token %s holds no usable token: make a new one with `pinky token --rotate`", path)
	}
	return tok, fi, nil
}

// checkTokenFile refuses a token file that anyone but its user may read
// or write, as ssh refuses such a private key: the token may have leaked,
// and the person is told how to make the file private again (its mode,
// its owner) and how to replace the token.
func checkTokenFile(path string, fi os.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("token %s is not a regular file: remove it and run `pinky token --rotate`", path)
	}
	return checkPrivate(path, fi)
}

// SameTokenFile reports whether the token file is still the one loaded:
// the same file, size, modification time, mode and owner. A chmod or a
// chown changes no content, yet must be checked again.
func SameTokenFile(a, b os.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) || a.Mode() != b.Mode() {
		return false
	}
	return sameOwner(a, b)
}
