package video

import (
	"bufio"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/flynn/noise"
)

// handshakeConfig is one side's part in a handshake.
type handshakeConfig struct {
	role    role
	device  string
	secret  []byte
	timeout time.Duration // for the whole handshake
	// minVersion and maxVersion default to Version; tests set others to
	// play a peer from another version.
	minVersion, maxVersion uint16
	// random makes the HELLO nonce and the Noise ephemeral key; nil is
	// crypto/rand. Only the tests' fixed vectors set it.
	random io.Reader
}

// secured is what a handshake gives: the agreed version and the two
// directions' ciphers, and what the peer claimed to be (for logs, also on
// failure).
type secured struct {
	version    uint16
	peerDevice string
	send, recv *noise.CipherState
}

// handshake runs HELLO and the Noise handshake on a new connection
// (VIDEO.md §4) and returns the version both sides speak and the keys of
// the records that follow. A failure wraps ErrAuth, ErrVersion or
// ErrProtocol, and is told to the peer with an ERROR, or is the network's
// error.
func handshake(nc net.Conn, br *bufio.Reader, hc handshakeConfig) (s secured, err error) {
	if hc.minVersion == 0 {
		hc.minVersion, hc.maxVersion = Version, Version
	}
	if hc.random == nil {
		hc.random = rand.Reader
	}
	if err := nc.SetDeadline(time.Now().Add(hc.timeout)); err != nil {
		return s, err
	}
	defer func() {
		if err == nil {
			err = nc.SetDeadline(time.Time{})
		}
	}()
	fail := func(err error) (secured, error) {
		if !isNetErr(err) { // the peer is there, but wrong: tell it why
			sendError(nc, err)
		}
		return secured{peerDevice: s.peerDevice}, err
	}
	// read returns the next message, which must be want or an ERROR (the
	// peer's reason to stop, returned as the error).
	read := func(want msgType, state string) ([]byte, error) {
		t, p, err := readMessage(br, setOf(state, want, msgError))
		if err != nil {
			return nil, err
		}
		if t == msgError {
			code, text := parseText(p)
			return nil, &peerError{errCode(code), text}
		}
		return p, nil
	}

	mine := hello{minVersion: hc.minVersion, maxVersion: hc.maxVersion, role: hc.role, device: hc.device}
	if _, err := io.ReadFull(hc.random, mine.nonce[:]); err != nil {
		return s, err
	}
	mineMsg := mine.msg()
	if _, err := nc.Write(mineMsg.bytes()); err != nil {
		return s, err
	}
	p, err := read(msgHello, "during the handshake (want HELLO)")
	if err != nil {
		return fail(err)
	}
	theirs, err := parseHello(p)
	if err != nil {
		return fail(err)
	}
	s.peerDevice = theirs.device
	if theirs.role != hc.role.peer() {
		return fail(&roleError{theirs.role})
	}
	s.version = min(hc.maxVersion, theirs.maxVersion)
	if s.version < max(hc.minVersion, theirs.minVersion) {
		hint := ""
		if theirs.maxVersion < 2 {
			update := "the broadcast app on the phone"
			if theirs.role == roleSink {
				update = "Pinky on the computer"
			}
			hint = " (version 1 sends the screen unencrypted and is refused: update " + update + ")"
		}
		return fail(fmt.Errorf("%w: the peer speaks %s, this side speaks %s%s",
			ErrVersion, versions(theirs.minVersion, theirs.maxVersion), versions(hc.minVersion, hc.maxVersion), hint))
	}
	if theirs.device != hc.device {
		return fail(&deviceError{ours: hc.device, theirs: theirs.device})
	}

	source, sink := mineMsg.head[headerSize:], p
	if hc.role == roleSink {
		source, sink = sink, source
	}
	hs, err := newNoise(hc.role, hc.secret, prologue(s.version, source, sink), hc.random)
	if err != nil {
		return fail(fmt.Errorf("video: noise: %v", err))
	}
	authErr := fmt.Errorf("%w: the peer's HANDSHAKE does not match this side's pairing secret for device %q (or it was replayed or altered on the way)", ErrAuth, hc.device)
	const want = "during the handshake (want HANDSHAKE)"
	if hc.role == roleSource {
		// -> psk, e
		m, _, _, err := hs.WriteMessage(nil, nil)
		if err != nil {
			return fail(fmt.Errorf("video: noise: %v", err))
		}
		if _, err := nc.Write(handshakeMsg(m).bytes()); err != nil {
			return s, err
		}
		// <- e, ee
		p, err := read(msgHandshake, want)
		if err != nil {
			return fail(err)
		}
		_, send, recv, err := hs.ReadMessage(nil, p)
		if err != nil {
			return fail(authErr)
		}
		s.send, s.recv = send, recv
		return s, nil
	}
	// -> psk, e
	p, err = read(msgHandshake, want)
	if err != nil {
		return fail(err)
	}
	if _, _, _, err := hs.ReadMessage(nil, p); err != nil {
		return fail(authErr)
	}
	// <- e, ee
	m, recv, send, err := hs.WriteMessage(nil, nil)
	if err != nil {
		return fail(fmt.Errorf("video: noise: %v", err))
	}
	if _, err := nc.Write(handshakeMsg(m).bytes()); err != nil {
		return s, err
	}
	s.send, s.recv = send, recv
	return s, nil
}

// handshakeMsg is a HANDSHAKE carrying one Noise handshake message.
func handshakeMsg(noiseMsg []byte) outMsg {
	m := newMsg(msgHandshake, len(noiseMsg), nil)
	m.head = append(m.head, noiseMsg...)
	return m
}

// sendError tells the peer why this side closes, on a best-effort basis:
// the peer may be gone or not reading. During the handshake nothing is
// encrypted yet, so the ERROR goes in clear.
func sendError(nc net.Conn, err error) {
	text := err.Error()
	if codeOf(err) == codeAuth {
		text = "authentication failed: the pairing secrets differ" // nothing more for an unknown peer
	}
	nc.SetWriteDeadline(time.Now().Add(closeGrace))
	nc.Write(textMsg(msgError, uint8(codeOf(err)), text).bytes())
}

func versions(lo, hi uint16) string {
	if lo == hi {
		return fmt.Sprintf("version %d", lo)
	}
	return fmt.Sprintf("versions %d to %d", lo, hi)
}
