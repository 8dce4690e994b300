package home

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGatewayID(t *testing.T) {
	d := Dirs{Home: t.TempDir()}
	first, err := d.GatewayID()
	if err != nil || !strings.HasPrefix(first, "gw-") || len(first) != 27 {
		t.Fatalf("GatewayID = %q, %v; want gw- and 24 hex digits", first, err)
	}
	if again, err := d.GatewayID(); again != first || err != nil {
		t.Fatalf("GatewayID again = %q, %v; want %q kept", again, err, first)
	}
	if other, _ := (Dirs{Home: t.TempDir()}).GatewayID(); other == first {
		t.Fatalf("two data folders share the id %q", first)
	}
	path := filepath.Join(d.Home, GatewayIDFile)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("%s: %v, %v; want it private", path, st, err)
	}
	for _, bad := range []string{"", "\n", "a b", strings.Repeat("x", 65), "gw-\x1b[31m"} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if id, err := d.GatewayID(); err == nil || !strings.Contains(err.Error(), "remove it") {
			t.Errorf("GatewayID of %q = %q, %v; want refused with what to do", bad, id, err)
		}
	}
}
