package video

import (
	"bufio"
	"bytes"
	"crypto/ecdh"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/chacha20poly1305"
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
	s   secured
	err error
	br  *bufio.Reader // what follows the handshake
}

// runHandshakes runs both sides' handshakes on a, b and returns their results.
func runHandshakes(a, b net.Conn, ha, hb handshakeConfig) (handshakeResult, handshakeResult) {
	ra, rb := handshakeResult{br: bufio.NewReader(a)}, handshakeResult{br: bufio.NewReader(b)}
	var wg sync.WaitGroup
	wg.Go(func() { ra.s, ra.err = handshake(a, ra.br, ha) })
	wg.Go(func() { rb.s, rb.err = handshake(b, rb.br, hb) })
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
		{"same secret", src, sink, 2, nil, nil},
		{"wrong secret", src, with(sink, func(h *handshakeConfig) { h.secret = other }), 0, ErrAuth, []string{"pairing secret"}},
		{"wrong device", src, with(sink, func(h *handshakeConfig) { h.device = "another" }), 0, ErrAuth, []string{"device"}},
		{"two sources", src, with(src, func(h *handshakeConfig) {}), 0, ErrProtocol, []string{"source"}},
		{"an old clear source", with(src, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 1, 1 }), sink, 0, ErrVersion,
			[]string{"version 1", "version 2"}},
		{"an old clear sink", src, with(sink, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 1, 1 }), 0, ErrVersion,
			[]string{"version 1", "version 2"}},
		{"a later version only", with(src, func(h *handshakeConfig) { h.minVersion, h.maxVersion = 3, 3 }), sink, 0, ErrVersion,
			[]string{"version 3", "version 2"}},
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
					if side.r.err != nil || side.r.s.version != tt.wantVersion {
						t.Errorf("%s: got version %d, %v; want version %d", side.name, side.r.s.version, side.r.err, tt.wantVersion)
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
			if tt.want != nil {
				return
			}
			// The keys agree, each way, and a record is not readable in the
			// direction it was not sealed for.
			for _, dir := range []struct {
				name     string
				from, to handshakeResult
				nc       net.Conn
			}{{"source to sink", rs, rk, a}, {"sink to source", rk, rs, b}} {
				msg := textMsg(msgStop, 1, "keys of "+dir.name).bytes()
				if err := newRecordWriter(dir.nc, dir.from.s.send, 0).write(msg); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(msg))
				if _, err := io.ReadFull(newRecordReader(dir.to.br, dir.to.s.recv), got); err != nil || !bytes.Equal(got, msg) {
					t.Errorf("%s: read %q, %v; want %q", dir.name, got, err, msg)
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
// to a new peer of the other side, which must refuse it before it sends a
// byte of video: the peer's fresh nonce is in the Noise prologue.
func TestHandshakeReplay(t *testing.T) {
	for _, tt := range []struct {
		replayed role
		want     []msgType // what the victim sends
	}{
		{roleSource, []msgType{msgHello, msgError}},
		{roleSink, []msgType{msgHello, msgHandshake, msgError}},
	} {
		t.Run("replayed "+tt.replayed.String(), func(t *testing.T) {
			a, b := tcpPair(t)
			rec := &recorder{Conn: a}
			hr := handshakeConfig{role: tt.replayed, device: testDevice, secret: testSecret, timeout: waitFor}
			hv := handshakeConfig{role: tt.replayed.peer(), device: testDevice, secret: testSecret, timeout: waitFor}
			r1, r2 := runHandshakes(rec, b, hr, hv)
			if r1.err != nil || r2.err != nil {
				t.Fatalf("recording: %v, %v", r1.err, r2.err)
			}

			c, d := tcpPair(t)
			c.Write(rec.out.Bytes()) // HELLO and HANDSHAKE, as recorded
			_, err := handshake(d, bufio.NewReader(d), hv)
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
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the victim's messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHandshakeAltered puts an attacker between the two sides who rewrites
// one HELLO on its way: both sides must refuse the connection, whatever
// the HELLO now says, since both HELLOs are in the Noise prologue.
func TestHandshakeAltered(t *testing.T) {
	wide := func(h *handshakeConfig) { h.minVersion, h.maxVersion = 2, 3 }
	tests := []struct {
		name   string
		wide   bool // both sides speak versions 2 and 3
		dir    role // whose HELLO is altered
		mutate func(p []byte)
		want   error
	}{
		// Both speak 2 and 3; the attacker makes the sink believe the source
		// speaks only 2, so that they would settle on 2 rather than 3.
		{"source's range lowered", true, roleSource, func(p []byte) { p[7] = 2 }, ErrAuth},
		{"sink's range lowered", true, roleSink, func(p []byte) { p[7] = 2 }, ErrAuth},
		// Version 1 added to the range: the sides still agree on 2, but
		// on a HELLO that was not sent.
		{"version 1 offered", false, roleSource, func(p []byte) { p[5] = 1 }, ErrAuth},
		{"nonce replaced", false, roleSink, func(p []byte) { p[20] ^= 1 }, ErrAuth},
		// To version 1 only: refused as an old peer, in clear, before any
		// key exists.
		{"version 1 only", false, roleSource, func(p []byte) { p[5], p[7] = 1, 1 }, ErrVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcEnd, mitmA := tcpPair(t)
			mitmB, sinkEnd := tcpPair(t)
			// The attacker relays every message; it alters the first (the
			// HELLO) of the direction it targets.
			relay := func(from, to net.Conn, alter bool) {
				br := bufio.NewReader(from)
				for first := true; ; first = false {
					var h [headerSize]byte
					if _, err := io.ReadFull(br, h[:]); err != nil {
						to.Close()
						return
					}
					p := make([]byte, binary.BigEndian.Uint32(h[:4])-1)
					if _, err := io.ReadFull(br, p); err != nil {
						to.Close()
						return
					}
					if first && alter {
						tt.mutate(p)
					}
					to.Write(append(h[:], p...))
				}
			}
			go relay(mitmA, mitmB, tt.dir == roleSource)
			go relay(mitmB, mitmA, tt.dir == roleSink)
			src := handshakeConfig{role: roleSource, device: testDevice, secret: testSecret, timeout: waitFor}
			sink := handshakeConfig{role: roleSink, device: testDevice, secret: testSecret, timeout: waitFor}
			if tt.wide {
				wide(&src)
				wide(&sink)
			}
			rs, rk := runHandshakes(srcEnd, sinkEnd, src, sink)
			for _, side := range []struct {
				name string
				r    handshakeResult
			}{{"source", rs}, {"sink", rk}} {
				if side.r.s.send != nil || side.r.s.recv != nil {
					t.Errorf("%s: got keys; want none", side.name)
				}
				if !errors.Is(side.r.err, tt.want) && !isNetErr(side.r.err) {
					t.Errorf("%s: got %v; want %v", side.name, side.r.err, tt.want)
				}
			}
			if !errors.Is(rs.err, tt.want) && !errors.Is(rk.err, tt.want) {
				t.Errorf("got %v and %v; want %v on one side at least", rs.err, rk.err, tt.want)
			}
		})
	}
}

// fixedRandom is the randomness of a fixed vector: the bytes start, start+1, …
type fixedRandom struct{ next byte }

func (f *fixedRandom) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = f.next
		f.next++
	}
	return len(p), nil
}

// TestNoiseVector pins VIDEO.md's worked example of the handshake and of
// the first record, for implementations in other languages: each side's
// randomness is fixed (its HELLO nonce, then its ephemeral private key).
func TestNoiseVector(t *testing.T) {
	secret := make([]byte, SecretSize)
	for i := range secret {
		secret[i] = byte(i)
	}
	a, b := tcpPair(t)
	recA, recB := &recorder{Conn: a}, &recorder{Conn: b}
	src := handshakeConfig{role: roleSource, device: "ana", secret: secret, timeout: waitFor, random: &fixedRandom{0x00}}
	sink := handshakeConfig{role: roleSink, device: "ana", secret: secret, timeout: waitFor, random: &fixedRandom{0x80}}
	rs, rk := runHandshakes(recA, recB, src, sink)
	if rs.err != nil || rk.err != nil {
		t.Fatal(rs.err, rk.err)
	}
	cfg := config{codec: codecH264, width: 720, height: 1560, params: testParams}.msg().bytes()
	if err := newRecordWriter(recA, rs.s.send, 0).write(cfg); err != nil {
		t.Fatal(err)
	}
	if err := newRecordWriter(recB, rk.s.send, 0).write(newMsg(msgKeyFrame, 0, nil).bytes()); err != nil {
		t.Fatal(err)
	}
	srcOut, sinkOut := recA.out.Bytes(), recB.out.Bytes()
	const helloLen = 5 + 42 + 3
	want := []struct{ name, got, want string }{
		{"source HELLO", hex.EncodeToString(srcOut[:helloLen]),
			"0000002e01504e4b560002000201000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f03616e61"},
		{"sink HELLO", hex.EncodeToString(sinkOut[:helloLen]),
			"0000002e01504e4b560002000202808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f03616e61"},
		{"source HANDSHAKE", hex.EncodeToString(srcOut[helloLen : helloLen+53]),
			"000000310c358072d6365880d1aeea329adf9121383851ed21a28e3b75e965d0d2cd166254f2f0e6a0f2149ae49fd45c177baaea8c"},
		{"sink HANDSHAKE", hex.EncodeToString(sinkOut[helloLen : helloLen+53]),
			"000000310c605a725d2a4adfeeb1a29e17edd621c1b7593ee8cdbc44ac6c4ab6e2f805d23c5b8fb84b7b692b2143fc2fd54d1f0965"},
		{"source's first record (the CONFIG of §5.3)", hex.EncodeToString(srcOut[helloLen+53:]),
			"002b5fb3d8ec74059f5627808a2c3da4f74e521473ca0fecb2a2fe9e0807614559660a1dc9f731e1ecadf83052"},
		{"sink's first record (a KEYFRAME)", hex.EncodeToString(sinkOut[helloLen+53:]),
			"00154c19b9fc6875875e4bd1a0346a7b7a4acd081862a4"},
	}
	for _, w := range want {
		if w.got != w.want {
			t.Errorf("%s:\n got %s\nwant %s", w.name, w.got, w.want)
		}
	}

	// The same bytes, computed from the Noise specification (revision 34)
	// and VIDEO.md alone, without the Noise library: what a Swift
	// implementation on CryptoKit does.
	spec := specNNpsk0(t, secret, srcOut[5:helloLen], sinkOut[5:helloLen], srcOut[helloLen+5+32:helloLen+53], cfg)
	for _, w := range []struct{ name, got, want string }{
		{"source HANDSHAKE", hex.EncodeToString(srcOut[helloLen+5 : helloLen+53]), spec.msg1},
		{"sink HANDSHAKE", hex.EncodeToString(sinkOut[helloLen+5 : helloLen+53]), spec.msg2},
		{"source's first record", hex.EncodeToString(srcOut[helloLen+53:]), spec.record},
	} {
		if w.got != w.want {
			t.Errorf("%s from the specification:\n got %s\nwant %s", w.name, w.got, w.want)
		}
	}
}

type specVector struct{ msg1, msg2, record string }

// specNNpsk0 computes VIDEO.md's example from the Noise specification:
// the source's ephemeral private key is 20 21 … 3f, the sink's a0 a1 … bf
// (each follows its nonce in the fixed randomness). tag1 is unused but
// checked: the source's tag of message 1.
func specNNpsk0(t *testing.T, psk, sourceHello, sinkHello, tag1, plaintext []byte) specVector {
	t.Helper()
	seq := func(from byte) []byte {
		b := make([]byte, 32)
		for i := range b {
			b[i] = from + byte(i)
		}
		return b
	}
	hmacSum := func(key []byte, data ...[]byte) []byte {
		m := hmac.New(sha256.New, key)
		for _, d := range data {
			m.Write(d)
		}
		return m.Sum(nil)
	}
	// HKDF as Noise defines it (section 4.3).
	hkdf := func(ck, ikm []byte) (a, b, c []byte) {
		tk := hmacSum(ck, ikm)
		a = hmacSum(tk, []byte{1})
		b = hmacSum(tk, a, []byte{2})
		c = hmacSum(tk, b, []byte{3})
		return a, b, c
	}
	seal := func(k []byte, n uint64, ad, pt []byte) []byte {
		aead, err := chacha20poly1305.New(k)
		if err != nil {
			t.Fatal(err)
		}
		var nonce [12]byte
		binary.LittleEndian.PutUint64(nonce[4:], n)
		return aead.Seal(nil, nonce[:], pt, ad)
	}
	key := func(priv []byte) *ecdh.PrivateKey {
		k, err := ecdh.X25519().NewPrivateKey(priv)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	sum := sha256.Sum256([]byte(noiseName)) // longer than 32 bytes: hashed
	h, ck := sum[:], sum[:]
	var k []byte
	mixHash := func(data []byte) { s := sha256.Sum256(append(append([]byte{}, h...), data...)); h = s[:] }
	mixKey := func(ikm []byte) { ck, k, _ = hkdf(ck, ikm) }

	mixHash(prologue(2, sourceHello, sinkHello))
	// -> psk, e
	var th []byte
	ck, th, k = hkdf(ck, psk)
	mixHash(th)
	es, ek := key(seq(0x20)), key(seq(0xa0))
	mixHash(es.PublicKey().Bytes())
	mixKey(es.PublicKey().Bytes())
	c1 := seal(k, 0, h, nil)
	mixHash(c1)
	if !bytes.Equal(c1, tag1) {
		t.Errorf("message 1's tag from the specification: got %x; want %x", c1, tag1)
	}
	// <- e, ee
	mixHash(ek.PublicKey().Bytes())
	mixKey(ek.PublicKey().Bytes())
	dh, err := es.ECDH(ek.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	mixKey(dh)
	c2 := seal(k, 0, h, nil)
	// Split: the first key seals the source's records.
	k1, _, _ := hkdf(ck, nil)
	rec := seal(k1, 0, nil, plaintext)
	return specVector{
		msg1:   hex.EncodeToString(append(es.PublicKey().Bytes(), c1...)),
		msg2:   hex.EncodeToString(append(ek.PublicKey().Bytes(), c2...)),
		record: hex.EncodeToString(append(binary.BigEndian.AppendUint16(nil, uint16(len(rec))), rec...)),
	}
}

// v1AuthMAC is the AUTH of version 1 (HMAC-SHA256 keyed with the secret
// over a label, the sender's role, the version and both HELLOs): what an
// old, clear broadcast app sends. The tests play such an app with it.
func v1AuthMAC(secret []byte, r role, version uint16, sourceHello, sinkHello []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte("pinky video auth"))
	h.Write([]byte{byte(r)})
	h.Write(binary.BigEndian.AppendUint16(nil, version))
	h.Write(sourceHello)
	h.Write(sinkHello)
	return h.Sum(nil)
}

// TestV1AuthMAC checks the tests' old app against version 1's worked
// example, so that a refusal of it is a refusal of a real version-1 peer.
func TestV1AuthMAC(t *testing.T) {
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
		if got := hex.EncodeToString(v1AuthMAC(secret, tt.role, 1, src, sink)); got != tt.want {
			t.Errorf("%s MAC: got %s; want %s", tt.role, got, tt.want)
		}
	}
}
