package video

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

type handshakeResult struct {
	version uint16
	err     error
}

// runHandshakes runs both sides' handshakes on a, b and returns their results.
func runHandshakes(a, b net.Conn, ha, hb handshakeConfig) (handshakeResult, handshakeResult) {
	var ra, rb handshakeResult
	var wg sync.WaitGroup
	wg.Go(func() { ra.version, _, ra.err = handshake(a, bufio.NewReader(a), ha) })
	wg.Go(func() { rb.version, _, rb.err = handshake(b, bufio.NewReader(b), hb) })
	wg.Wait()
	return ra, rb
}

func TestHandshake(t *testing.T) {
	other := bytes.Repeat([]byte{0xa5}, SecretSize)
	src := handshakeConfig{role: roleSource, device: testDevice, secret: testSecret, timeout: waitFor}
	sink := handshakeConfig{role: roleSink, device: testDevice, secret: testSecret, timeout: waitFor}
	with := func(h handshakeConfig, f func(*handshakeConfig)) handshakeConfig { f(&h); return h }
	tests := []struct {
		name        string
		source      handshakeConfig
		sink        handshakeConfig
		wantVersion uint16
		want        error    // on both sides
		wantText    []string // in both sides' errors
	}{
		{"same secret", src, sink, 1, nil, nil},
		{"wrong secret", src, with(sink, func(h *handshakeConfig) { h.secret = other }), 0, ErrAuth, []string{"pairing secret"}},
		{"wrong device", src, with(sink, func(h *handshakeConfig) { h.device = "another" }), 0, ErrAuth, []string{"device"}},
		{"two sources", src, with(src, func(h *handshakeConfig) {}), 0, ErrProtocol, []string{"source"}},
		{"unknown version", with(src, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 2, 2 }), sink, 0, ErrVersion,
			[]string{"version 2", "version 1"}},
		{"versions negotiated", with(src, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 1, 3 }),
			with(sink, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 2, 5 }), 3, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := tcpPair(t)
			rs, rk := runHandshakes(a, b, tt.source, tt.sink)
			for _, side := range []struct {
				name string
				r    handshakeResult
			}{{"source", rs}, {"sink", rk}} {
				if tt.want == nil {
					if side.r.err != nil || side.r.version != tt.wantVersion {
						t.Errorf("%s: got version %d, %v; want version %d", side.name, side.r.version, side.r.err, tt.wantVersion)
					}
					continue
				}
				if !errors.Is(side.r.err, tt.want) {
					t.Errorf("%s: got %v; want %v", side.name, side.r.err, tt.want)
					continue
				}
				for _, s := range tt.wantText {
					if !strings.Contains(side.r.err.Error(), s) {
						t.Errorf("%s: %q does not say %q", side.name, side.r.err, s)
					}
				}
			}
		})
	}
}

// recorder keeps what is written to a connection.
type recorder struct {
	net.Conn
	mu  sync.Mutex
	out bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.out.Write(p)
	r.mu.Unlock()
	return r.Conn.Write(p)
}

// TestHandshakeReplay records one side of a good handshake and replays it
// to a new peer of the other side, which must refuse it.
func TestHandshakeReplay(t *testing.T) {
	for _, replayed := range []role{roleSource, roleSink} {
		t.Run("replayed "+replayed.String(), func(t *testing.T) {
			a, b := tcpPair(t)
			rec := &recorder{Conn: a}
			hr := handshakeConfig{role: replayed, device: testDevice, secret: testSecret, timeout: waitFor}
			hv := handshakeConfig{role: replayed.peer(), device: testDevice, secret: testSecret, timeout: waitFor}
			r1, r2 := runHandshakes(rec, b, hr, hv)
			if r1.err != nil || r2.err != nil {
				t.Fatalf("recording: %v, %v", r1.err, r2.err)
			}

			c, d := tcpPair(t)
			c.Write(rec.out.Bytes()) // HELLO and AUTH, as recorded
			_, _, err := handshake(d, bufio.NewReader(d), hv)
			if !errors.Is(err, ErrAuth) {
				t.Fatalf("replay: got %v; want ErrAuth", err)
			}
			d.Close() // as link.handshake does
			c.SetReadDeadline(time.Now().Add(waitFor))
			br := bufio.NewReader(c)
			var got []msgType
			for {
				typ, _, err := readMessage(br, anyMessage)
				if err != nil {
					break
				}
				got = append(got, typ)
			}
			if diff := cmp.Diff([]msgType{msgHello, msgAuth, msgError}, got); diff != "" {
				t.Errorf("the victim's messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuthMACVector pins the MAC of VIDEO.md's worked example, for
// implementations in other languages.
func TestAuthMACVector(t *testing.T) {
	secret := make([]byte, SecretSize)
	var n1, n2 [32]byte
	for i := range secret {
		secret[i], n1[i], n2[i] = byte(i), byte(i), byte(0x20+i)
	}
	src := hello{minVersion: 1, maxVersion: 1, role: roleSource, nonce: n1, device: "ana"}.msg().head[headerSize:]
	sink := hello{minVersion: 1, maxVersion: 1, role: roleSink, nonce: n2, device: "ana"}.msg().head[headerSize:]
	for _, tt := range []struct {
		role role
		want string
	}{
		{roleSource, "c7d7f1839d4aef3c0d04a9915c449b56cbd5c2acb2ea4dd13452319e548b30ec"},
		{roleSink, "a31c839a80ec8dd201d52376d8d33c27f93c27a3217370c1103e1730cc853257"},
	} {
		if got := hex.EncodeToString(authMAC(secret, tt.role, 1, src, sink)); got != tt.want {
			t.Errorf("%s MAC: got %s; want %s", tt.role, got, tt.want)
		}
	}
}
