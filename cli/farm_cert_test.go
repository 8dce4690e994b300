package cli_test

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pinky-gateway/pinky/cli"
	"github.com/pinky-gateway/pinky/cli/daemon"
	"github.com/pinky-gateway/pinky/internal/pki"
)

// TestFarmRefusesForeignCertificate attacks the gateway's check of a phone
// host's client certificate through the real binaries, as someone who can
// edit a host's identity files would: a host paired with a second gateway
// is made to pin the first gateway's fingerprint while it keeps the
// certificate the second gateway's CA issued, so that it passes its own
// check of the first gateway and presents a foreign certificate. The first
// gateway must refuse it in the handshake, and list neither the host nor
// its phones. Then the host's own certificate, expired, is refused by the
// gateway that issued it, and a certificate file that is not one stops
// the host at its start, saying which file.
func TestFarmRefusesForeignCertificate(t *testing.T) {
	first := newFarm(t, "127.0.0.2", "")
	second := newFarm(t, "127.0.0.3", "")

	stray := newEnv(t)
	host := runHost(t, stray, "--gateway", second.addr, "--pair", second.pair(t, "stray"))
	second.online(t, "sim-android-1", "stray")
	stopHost(host)
	ident := cli.HostDir(stray.Home)
	secondPin := readFile(t, filepath.Join(ident, "gateway.fingerprint"))

	// The pin says the first gateway; the certificate is the second's.
	firstCA := readPEM(t, filepath.Join(daemon.PKIDir(first.gw.Home), "ca.crt"))
	writeFile(t, filepath.Join(ident, "gateway.fingerprint"), pki.FingerprintOf(firstCA.Raw).String()+"\n")
	host = runHost(t, stray, "--gateway", first.addr)
	first.gw.EventuallyOr("the first gateway refuses the foreign certificate", func() bool {
		return strings.Contains(first.log.String(), "host refused") && strings.Count(host.log.String(), "link down") >= 2
	}, func() string { return "gateway:\n" + first.log.String() + "\nhost:\n" + host.log.String() })
	if gw := refusals(first.log.String()); !strings.Contains(gw, "unknown authority") {
		t.Errorf("the first gateway's log of the refusal: %q; want it to say the certificate's authority is unknown", gw)
	} else {
		t.Logf("the first gateway says: %s", gw)
	}
	if hl := linkDowns(host.log.String()); !strings.Contains(hl, "refused this host's certificate") || !strings.Contains(hl, "pair again") {
		t.Errorf("the host's log of the refusal: %q; want it to say its certificate was refused, and to pair again", hl)
	} else {
		t.Logf("the host says: %s", hl)
	}
	if strings.Contains(first.log.String(), "host linked") {
		t.Errorf("the first gateway linked the host:\n%s", first.log.String())
	}
	for id, d := range first.devices(t) {
		t.Errorf("the first gateway lists %s (host %q) of a host it never paired", id, d.Host)
	}
	if h := first.hostState(t, "stray"); h.Name != "" {
		t.Errorf("the first gateway's hosts list: %+v; want no stray", h)
	}
	stopHost(host)

	// The host's own pin again, and its own certificate, expired: the
	// gateway that issued it refuses it.
	writeFile(t, filepath.Join(ident, "gateway.fingerprint"), secondPin)
	hostCrt := filepath.Join(ident, "host.crt")
	good := readFile(t, hostCrt)
	writeFile(t, hostCrt, expired(t, readPEM(t, hostCrt), filepath.Join(daemon.PKIDir(second.gw.Home), "ca")))
	second.gw.EventuallyOr("stray offline", func() bool { return !second.devices(t)["sim-android-1"].Online },
		func() string { return second.log.String() })
	before := strings.Count(second.log.String(), "host refused")
	host = runHost(t, stray, "--gateway", second.addr)
	second.gw.EventuallyOr("the second gateway refuses the expired certificate", func() bool {
		return strings.Count(second.log.String(), "host refused") > before && strings.Count(host.log.String(), "link down") >= 2
	}, func() string { return "gateway:\n" + second.log.String() + "\nhost:\n" + host.log.String() })
	if gw := refusals(second.log.String()); !strings.Contains(gw, "expired") {
		t.Errorf("the second gateway's log of the refusal: %q; want it to say the certificate expired", gw)
	}
	if hl := linkDowns(host.log.String()); !strings.Contains(hl, "expired") || !strings.Contains(hl, "pair again") {
		t.Errorf("with an expired certificate, the host says: %q; want expired, and to pair again", hl)
	}
	if d := second.devices(t)["sim-android-1"]; d.Online {
		t.Errorf("sim-android-1 with an expired certificate: %+v; want it offline", d)
	}
	if h := second.hostState(t, "stray"); h.State == "online" {
		t.Errorf("stray with an expired certificate: %+v; want it not online", h)
	}
	stopHost(host)

	// A certificate file that is not one: the host stops at its start and
	// names the file.
	writeFile(t, hostCrt, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
	_, errs, code := stray.Run("host", "--sim", "--gateway", second.addr)
	if code == 0 || !strings.Contains(errs, "host.crt") {
		t.Errorf("pinky host with a garbage certificate: exit %d, %q; want a refusal to start that names host.crt", code, errs)
	}
	t.Logf("with a garbage certificate, the host says: %s", strings.TrimSpace(errs))

	// Its good certificate back: the host links again, so the refusals
	// above were the certificates'.
	writeFile(t, hostCrt, good)
	runHost(t, stray, "--gateway", second.addr)
	second.online(t, "sim-android-1", "stray")
}

// stopHost stops a pinky host with SIGTERM and waits until it has exited.
func stopHost(p *phoneHost) {
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
}

// refusals is the lines of a gateway's log that refuse a host.
func refusals(log string) string { return grepLines(log, "host refused") }

// linkDowns is the lines of a host's log that say its link is down.
func linkDowns(log string) string { return grepLines(log, "link down") }

func grepLines(log, s string) string {
	var out []string
	for line := range strings.Lines(log) {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// readPEM reads the certificate of a PEM file.
func readPEM(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode([]byte(readFile(t, path)))
	if b == nil {
		t.Fatalf("%s: no PEM block", path)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// expired returns, as PEM, cert issued again by the CA at ca (ca.crt and
// ca.key) with the same serial, subject and key, and a validity that
// ended an hour ago.
func expired(t *testing.T, cert *x509.Certificate, ca string) string {
	t.Helper()
	caCert := readPEM(t, ca+".crt")
	b, _ := pem.Decode([]byte(readFile(t, ca+".key")))
	if b == nil {
		t.Fatalf("%s.key: no PEM block", ca)
	}
	key, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: cert.SerialNumber,
		Subject:      cert.Subject,
		NotBefore:    time.Now().Add(-48 * time.Hour),
		NotAfter:     time.Now().Add(-time.Hour),
		KeyUsage:     cert.KeyUsage,
		ExtKeyUsage:  cert.ExtKeyUsage,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, cert.PublicKey, key.(crypto.Signer))
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}
