package video

import (
	"bufio"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"net"
	"time"
)

// authLabel opens the input of every AUTH MAC (VIDEO.md §4.4).
const authLabel = "pinky video auth"

// handshakeConfig is one side's part in a handshake.
type handshakeConfig struct {
	role    role
	device  string
	secret  []byte
	timeout time.Duration // for the whole handshake
	// minVersion and maxVersion default to Version; tests set others to
	// play a peer from another version.
	minVersion, maxVersion uint16
}

// handshake runs HELLO and AUTH on a new connection (VIDEO.md §4) and
// returns the version both sides speak. A failure wraps ErrAuth,
// ErrVersion or ErrProtocol, and is told to the peer with an ERROR, or is
// the network's error. peerDevice is the device id the peer claimed, for
// the caller's log; "" when it never said.
func handshake(nc net.Conn, br *bufio.Reader, hc handshakeConfig) (version uint16, peerDevice string, err error) {
	if hc.minVersion == 0 {
		hc.minVersion, hc.maxVersion = Version, Version
	}
	if err := nc.SetDeadline(time.Now().Add(hc.timeout)); err != nil {
		return 0, "", err
	}
	defer func() {
		if err == nil {
			err = nc.SetDeadline(time.Time{})
		}
	}()
	fail := func(err error) (uint16, string, error) {
		if !isNetErr(err) { // the peer is there, but wrong: tell it why
			sendError(nc, err)
		}
		return 0, peerDevice, err
	}

	mine := hello{minVersion: hc.minVersion, maxVersion: hc.maxVersion, role: hc.role, device: hc.device}
	rand.Read(mine.nonce[:]) // never fails (crypto/rand panics instead)
	mineMsg := mine.msg()
	if _, err := nc.Write(mineMsg.bytes()); err != nil {
		return 0, "", err
	}

	t, p, err := readMessage(br, setOf("during the handshake (want HELLO)", msgHello, msgError))
	if err != nil {
		return fail(err)
	}
	if t == msgError {
		code, text := parseText(p)
		return 0, "", &peerError{errCode(code), text}
	}
	theirs, err := parseHello(p)
	if err != nil {
		return fail(err)
	}
	peerDevice = theirs.device
	if theirs.role != hc.role.peer() {
		return fail(&roleError{theirs.role})
	}
	version = min(hc.maxVersion, theirs.maxVersion)
	if version < max(hc.minVersion, theirs.minVersion) {
		return fail(fmt.Errorf("%w: the peer speaks %s, this side speaks %s",
			ErrVersion, versions(theirs.minVersion, theirs.maxVersion), versions(hc.minVersion, hc.maxVersion)))
	}
	if theirs.device != hc.device {
		return fail(&deviceError{ours: hc.device, theirs: theirs.device})
	}

	source, sink := mineMsg.head[headerSize:], p
	if hc.role == roleSink {
		source, sink = sink, source
	}
	authMsg := newMsg(msgAuth, macSize, nil)
	authMsg.head = append(authMsg.head, authMAC(hc.secret, hc.role, version, source, sink)...)
	if _, err := nc.Write(authMsg.bytes()); err != nil {
		return 0, peerDevice, err
	}
	t, p, err = readMessage(br, setOf("during the handshake (want AUTH)", msgAuth, msgError))
	if err != nil {
		return fail(err)
	}
	if t == msgError {
		code, text := parseText(p)
		return 0, peerDevice, &peerError{errCode(code), text}
	}
	if !hmac.Equal(p, authMAC(hc.secret, theirs.role, version, source, sink)) {
		return fail(fmt.Errorf("%w: the peer's AUTH does not match this side's pairing secret for device %q", ErrAuth, hc.device))
	}
	return version, peerDevice, nil
}

// authMAC is the AUTH that the side of role r sends: HMAC-SHA256 keyed
// with the secret over the label, r, the version and both HELLO payloads,
// the source's first. Both nonces are in the HELLOs, so no MAC is valid in
// another connection, and r keeps a side's own MAC from passing as its
// peer's.
func authMAC(secret []byte, r role, version uint16, sourceHello, sinkHello []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(authLabel))
	h.Write([]byte{byte(r)})
	h.Write(binary.BigEndian.AppendUint16(nil, version))
	h.Write(sourceHello)
	h.Write(sinkHello)
	return h.Sum(nil)
}

// sendError tells the peer why this side closes, on a best-effort basis:
// the peer may be gone or not reading.
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
