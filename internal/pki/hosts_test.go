package pki

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// pairInto pairs a host called name with a and stores its identity where
// IdentityDir puts it in dir.
func pairInto(t *testing.T, a *Authority, name, dir string) *Host {
	t.Helper()
	p, err := a.NewPairing(name)
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
	into, err := IdentityDir(dir, p.Fingerprint)
	if err != nil {
		t.Fatal(err)
	}
	h, err := req.Finish(into, p.Fingerprint, is)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestIdentitiesPerGateway: the first gateway's identity is in the host's
// folder itself, as with one gateway; a second gateway's beside it; pairing
// again with a gateway replaces its own identity only.
func TestIdentitiesPerGateway(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil)
	b := openAuthority(t, t.TempDir(), nil)
	dir := join(t.TempDir(), "host")
	if _, err := LoadHosts(dir); !errors.Is(err, ErrNotPaired) {
		t.Fatalf("LoadHosts of no folder = %v; want ErrNotPaired", err)
	}
	ha := pairInto(t, a, "closet", dir)
	hb := pairInto(t, b, "closet-b", dir)
	if got, _ := LoadHost(dir); got == nil || !got.Pin.Equal(a.Fingerprint()) {
		t.Fatalf("the folder's own identity is %v; want the first gateway's", got)
	}
	ids, err := LoadHosts(dir)
	if err != nil || len(ids) != 2 {
		t.Fatalf("LoadHosts = %+v, %v; want two identities", ids, err)
	}
	if ids[0].Dir != dir || ids[0].Host.Name != "closet" || ids[1].Host.Name != "closet-b" || !strings.HasPrefix(ids[1].Dir, join(dir, gatewayDirPrefix)) {
		t.Fatalf("identities %s in %s, %s in %s", ids[0].Host.Name, ids[0].Dir, ids[1].Host.Name, ids[1].Dir)
	}
	// Pairing again with b replaces b's identity, not a's.
	hb2 := pairInto(t, b, "closet-b", dir)
	ids, _ = LoadHosts(dir)
	if len(ids) != 2 || ids[1].Host.Certificate().Equal(hb.Certificate()) || !ids[1].Host.Certificate().Equal(hb2.Certificate()) || !ids[0].Host.Certificate().Equal(ha.Certificate()) {
		t.Fatalf("after pairing again with b: %+v", ids)
	}
	// A damaged identity is listed with its error, the others still load.
	if err := os.WriteFile(join(ids[1].Dir, hostKeyFile), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	ids, err = LoadHosts(dir)
	if err != nil || len(ids) != 2 || ids[0].Err != nil || ids[1].Err == nil {
		t.Fatalf("with b's key damaged: %+v, %v; want a loaded and b's error", ids, err)
	}
}

// TestClientTLSForPicksTheGatewaysOwn: a host with identities for two
// gateways links to each with the certificate that gateway issued, and a
// third gateway is refused by the pins before any certificate is sent.
func TestClientTLSForPicksTheGatewaysOwn(t *testing.T) {
	a := openAuthority(t, t.TempDir(), nil, "127.0.0.1")
	b := openAuthority(t, t.TempDir(), nil, "127.0.0.1")
	c := openAuthority(t, t.TempDir(), nil, "127.0.0.1")
	dir := t.TempDir()
	pairInto(t, a, "closet-a", dir)
	pairInto(t, b, "closet-b", dir)
	ids, err := LoadHosts(dir)
	if err != nil {
		t.Fatal(err)
	}
	hosts := []*Host{ids[0].Host, ids[1].Host}
	for _, tc := range []struct {
		auth *Authority
		name string
	}{{a, "closet-a"}, {b, "closet-b"}, {a, "closet-a"}} {
		cfg := ClientTLSFor(hosts)
		addr, seen := serveTLS(t, tc.auth.ServerTLS())
		if err := dial(addr, cfg); err != nil {
			t.Fatalf("dialling the gateway of %s: %v", tc.name, err)
		}
		if hs := next(t, seen); hs.err != nil || hs.name != tc.name || !hs.ok {
			t.Fatalf("the gateway saw %+v; want the host %s", hs, tc.name)
		}
	}
	addr, seen := serveTLS(t, c.ServerTLS())
	err = dial(addr, ClientTLSFor(hosts))
	if !errors.Is(err, ErrPinMismatch) || !strings.Contains(err.Error(), a.Fingerprint().String()) || !strings.Contains(err.Error(), b.Fingerprint().String()) {
		t.Fatalf("dialling a third gateway: %v; want a pin mismatch naming both pins", err)
	}
	if hs := next(t, seen); hs.err == nil {
		t.Fatal("the third gateway accepted the host")
	}
}
