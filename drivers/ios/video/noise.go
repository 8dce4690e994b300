package video

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/flynn/noise"
)

// The Noise protocol that protects a connection (VIDEO.md §4.4 and §4.5):
// NN with the pairing secret as a pre-shared key mixed in before the
// first message, Curve25519, ChaCha20-Poly1305 and SHA-256. Its name,
// which the Noise handshake hashes first, is
// Noise_NNpsk0_25519_ChaChaPoly_SHA256.
var cipherSuite = noise.NewCipherSuite(noise.DH25519, noise.CipherChaChaPoly, noise.HashSHA256)

// noiseName is the Noise protocol's full name, for logs and the tests.
const noiseName = "Noise_NNpsk0_25519_ChaChaPoly_SHA256"

// prologueLabel opens the Noise prologue (VIDEO.md §4.4).
const prologueLabel = "pinky video"

// Sizes of the secure layer.
const (
	// noiseMsgSize is a HANDSHAKE message's payload: an ephemeral public
	// key and the tag of an empty encrypted payload.
	noiseMsgSize = 32 + tagSize
	tagSize      = 16 // ChaCha20-Poly1305's tag
	// maxRecord is the most ciphertext a record holds (the Noise limit);
	// minRecord the least (a tag and one byte).
	maxRecord   = noise.MaxMsgLen
	minRecord   = tagSize + 1
	maxPlain    = maxRecord - tagSize
	recordHead  = 2
	recordLimit = recordHead + maxRecord
)

// prologue is what both sides bind into the Noise handshake: the label,
// the agreed version and both HELLO payloads exactly as they crossed the
// network, each behind its length, the source's first. A HELLO altered on
// the way (a version range lowered, a nonce replayed, another device id)
// makes the two sides' prologues differ, and the handshake fails.
func prologue(version uint16, sourceHello, sinkHello []byte) []byte {
	b := make([]byte, 0, len(prologueLabel)+6+len(sourceHello)+len(sinkHello))
	b = append(b, prologueLabel...)
	b = binary.BigEndian.AppendUint16(b, version)
	b = binary.BigEndian.AppendUint16(b, uint16(len(sourceHello)))
	b = append(b, sourceHello...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(sinkHello)))
	b = append(b, sinkHello...)
	return b
}

// newNoise starts one side's Noise handshake: the source initiates, the
// sink responds, whoever dialed.
func newNoise(r role, secret, prologue []byte, random io.Reader) (*noise.HandshakeState, error) {
	return noise.NewHandshakeState(noise.Config{
		CipherSuite: cipherSuite, Pattern: noise.HandshakeNN, Initiator: r == roleSource,
		Prologue: prologue, PresharedKey: secret, PresharedKeyPlacement: 0, Random: random,
	})
}

// errRecordAuth is a record that does not decrypt: altered, replayed,
// reordered, or not from the peer.
var errRecordAuth = fmt.Errorf("%w: a record failed authentication: altered on the way, or not from the peer", ErrProtocol)

// recordReader reads the peer's records (VIDEO.md §3.2) and returns their
// plaintext: the stream of messages. A record that fails authentication
// ends the stream for good; an end of the connection between records is
// io.EOF, inside one a protocol error.
type recordReader struct {
	r   io.Reader
	cs  *noise.CipherState
	buf []byte // one record; the unread plaintext is plain
	pt  []byte
	err error
}

func newRecordReader(r io.Reader, cs *noise.CipherState) *recordReader {
	return &recordReader{r: r, cs: cs, buf: make([]byte, maxRecord)}
}

func (r *recordReader) Read(p []byte) (int, error) {
	for len(r.pt) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		r.err = r.next()
	}
	n := copy(p, r.pt)
	r.pt = r.pt[n:]
	return n, nil
}

// next reads and decrypts one record.
func (r *recordReader) next() error {
	var h [recordHead]byte
	if _, err := io.ReadFull(r.r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return protoErr("connection closed inside a record header")
		}
		return err
	}
	n := int(binary.BigEndian.Uint16(h[:]))
	if n < minRecord {
		return protoErr("record of %d bytes: want %d to %d", n, minRecord, maxRecord)
	}
	ct := r.buf[:n]
	if _, err := io.ReadFull(r.r, ct); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return protoErr("connection closed inside a record (%d bytes)", n)
		}
		return err
	}
	pt, err := r.cs.Decrypt(ct[:0], nil, ct)
	if err != nil {
		return errRecordAuth
	}
	r.pt = pt
	return nil
}

// recordWriter encrypts this side's stream of messages into records. Each
// record's write has its own deadline, so that a slow link stays alive
// while a peer that stops reading is found within dead. It is not safe for
// concurrent use: the connection's writer owns it.
type recordWriter struct {
	nc   net.Conn
	cs   *noise.CipherState
	dead time.Duration // 0: leave the deadline alone
	buf  []byte        // a record's length and ciphertext
}

func newRecordWriter(nc net.Conn, cs *noise.CipherState, dead time.Duration) *recordWriter {
	return &recordWriter{nc: nc, cs: cs, dead: dead, buf: make([]byte, recordLimit)}
}

// write sends the concatenation of parts in as few records as fit.
func (w *recordWriter) write(parts ...[]byte) error {
	n := 0 // plaintext in the record being filled
	for _, p := range parts {
		for len(p) > 0 {
			c := copy(w.buf[recordHead+n:recordHead+maxPlain], p)
			n += c
			p = p[c:]
			if n == maxPlain {
				if err := w.flush(n); err != nil {
					return err
				}
				n = 0
			}
		}
	}
	if n > 0 {
		return w.flush(n)
	}
	return nil
}

// flush seals the n bytes of plaintext in buf, in place, and writes the
// record.
func (w *recordWriter) flush(n int) error {
	plain := w.buf[recordHead : recordHead+n]
	sealed, err := w.cs.Encrypt(plain[:0], nil, plain)
	if err != nil {
		return err // only after 2^64 records
	}
	binary.BigEndian.PutUint16(w.buf, uint16(len(sealed)))
	if w.dead > 0 {
		if err := w.nc.SetWriteDeadline(time.Now().Add(w.dead)); err != nil {
			return err
		}
	}
	_, err = w.nc.Write(w.buf[:recordHead+len(sealed)])
	return err
}
