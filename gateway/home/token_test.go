//go:build !windows

package home

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, err := EnsureToken(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "pinky_") || len(tok) != len("pinky_")+43 {
		t.Errorf("token %q: want pinky_ and 32 bytes in base64url", tok)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if again, err := EnsureToken(path); err != nil || again != tok {
		t.Errorf("second EnsureToken: got %q, %v; want the same token", again, err)
	}
	rotated, err := RotateToken(path)
	if err != nil || rotated == tok {
		t.Fatalf("RotateToken: got %q, %v; want a new token", rotated, err)
	}
	if now, err := EnsureToken(path); err != nil || now != rotated {
		t.Errorf("after rotation: got %q, %v; want %q", now, err, rotated)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("rotated token mode %v; want 0600", fi.Mode())
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
		t.Errorf("folder holds %d files; want only the token (no temporary files left)", len(ents))
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := EnsureToken(path); err == nil || !strings.Contains(err.Error(), "--rotate") {
		t.Errorf("token readable by others: got %v; want a refusal that says to rotate", err)
	}
	if err := os.WriteFile(path, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if _, err := EnsureToken(path); err == nil {
		t.Error("a short token was accepted")
	}
}

func TestCheckTokenFile(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		mode os.FileMode
		want string // in the refusal; empty: accepted
	}{
		{0o600, ""},
		{0o400, ""},
		{0o644, "permissions 0644 for "},
		{0o640, "permissions 0640 for "},
		{0o606, "permissions 0606 for "},
		{0o660, "permissions 0660 for "},
	} {
		path := filepath.Join(dir, "token-"+tt.mode.String())
		if err := os.WriteFile(path, []byte(newToken()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tt.mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := ReadToken(path)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("mode %v: %v; want accepted", tt.mode, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "chmod 600 "+path)):
			t.Errorf("mode %v: %v; want a refusal saying %q and to chmod 600 it", tt.mode, err, tt.want)
		}
	}
	if os.Getuid() == 0 { // only root gives a file away
		path := filepath.Join(dir, "theirs")
		if err := os.WriteFile(path, []byte(newToken()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(path, 65534, 65534); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadToken(path); err == nil || !strings.Contains(err.Error(), "owned by another user") {
			t.Errorf("a token owned by uid 65534: %v; want it refused", err)
		}
	}
}
