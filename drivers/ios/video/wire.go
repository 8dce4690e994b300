package video

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/h26x"
)

// Protocol constants; VIDEO.md §3 and §4 define them.
const (
	// Version is the protocol version this package speaks: version 2,
	// encrypted. It refuses version 1, which sent the screen in clear.
	Version = 2
	// DefaultPort is the TCP port a listening side uses when the person
	// names none.
	DefaultPort = 7420
	// MaxMessage is the largest message: the length field's limit, type
	// byte included.
	MaxMessage = 8 << 20
	// MaxDeviceID is the longest device id, in bytes of UTF-8.
	MaxDeviceID = 128
	// MaxText is the longest text of a STOP, ERROR or failed STILL, in bytes.
	MaxText = 1024
	// MaxSide is the largest picture width or height.
	MaxSide = 8192
)

// headerSize is the length field (4 bytes) and the type (1 byte).
const headerSize = 5

// msgType is a message's type byte.
type msgType uint8

// Message types (VIDEO.md §5).
const (
	msgHello        msgType = 1
	msgAuthV1       msgType = 2 // version 1's AUTH; never valid in version 2
	msgConfig       msgType = 3
	msgFrame        msgType = 4
	msgKeyFrame     msgType = 5
	msgStillRequest msgType = 6
	msgStill        msgType = 7
	msgPing         msgType = 8
	msgPong         msgType = 9
	msgStop         msgType = 10
	msgError        msgType = 11
	msgHandshake    msgType = 12
	msgLast                 = msgHandshake
)

var msgNames = [...]string{
	msgHello: "HELLO", msgAuthV1: "AUTH", msgConfig: "CONFIG", msgFrame: "FRAME",
	msgKeyFrame: "KEYFRAME", msgStillRequest: "STILL_REQUEST", msgStill: "STILL",
	msgPing: "PING", msgPong: "PONG", msgStop: "STOP", msgError: "ERROR", msgHandshake: "HANDSHAKE",
}

func (t msgType) String() string {
	if t >= 1 && t <= msgLast {
		return msgNames[t]
	}
	return fmt.Sprintf("type 0x%02x", uint8(t))
}

// known reports whether t is a message of this version.
func (t msgType) known() bool { return t >= 1 && t <= msgLast && t != msgAuthV1 }

// Payload sizes. A message outside its type's bounds is a protocol error,
// found from the header before anything is allocated.
const (
	helloFixed   = 42               // magic, versions, role, nonce, id length
	maxHello     = 1024             // later versions may append fields
	configFixed  = 6                // codec, rotation, width, height
	maxConfig    = 64 << 10         // parameter sets are a few dozen bytes
	frameFixed   = 9                // PTS, flags
	stillReqSize = 7                // id, max side, quality
	stillFixed   = 5                // id, status
	pingSize     = 8                // opaque, echoed by PONG
	textFixed    = 1                // STOP's reason, ERROR's code
	maxPayload   = MaxMessage - 1   // the type byte counts
	maxPTS       = int64(1<<53 - 1) // microseconds; fits a time.Duration
)

var payloadBounds = [...]struct{ min, max int }{
	msgHello:        {helloFixed + 1, maxHello},
	msgConfig:       {configFixed + 1, maxConfig},
	msgFrame:        {frameFixed + 1, maxPayload},
	msgKeyFrame:     {0, 0},
	msgStillRequest: {stillReqSize, stillReqSize},
	msgStill:        {stillFixed, maxPayload},
	msgPing:         {pingSize, pingSize},
	msgPong:         {pingSize, pingSize},
	msgStop:         {textFixed, textFixed + MaxText},
	msgError:        {textFixed, textFixed + MaxText},
	msgHandshake:    {noiseMsgSize, noiseMsgSize},
}

// msgSet is the messages acceptable in some state, named for error messages.
type msgSet struct {
	bits  uint16
	state string // e.g. "during the handshake"
}

func setOf(state string, ts ...msgType) msgSet {
	s := msgSet{state: state}
	for _, t := range ts {
		s.bits |= 1 << t
	}
	return s
}

func (s msgSet) has(t msgType) bool { return t.known() && s.bits&(1<<t) != 0 }

// anyMessage accepts every type; the fuzz test reads with it.
var anyMessage = setOf("", msgHello, msgConfig, msgFrame, msgKeyFrame, msgStillRequest,
	msgStill, msgPing, msgPong, msgStop, msgError, msgHandshake)

// protoErr returns a protocol error saying what was wrong.
func protoErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

// readMessage reads one message whose type is in accept and returns its
// payload. It checks the header against the type's bounds before
// allocating, so a peer cannot make it allocate more than the type allows.
// A clean end of the stream between messages is io.EOF; an end inside one
// is a protocol error.
func readMessage(r io.Reader, accept msgSet) (msgType, []byte, error) {
	var h [headerSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, protoErr("connection closed inside a message header")
		}
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[:4])
	t := msgType(h[4])
	switch {
	case n == 0:
		return 0, nil, protoErr("message length 0")
	case n > MaxMessage:
		return 0, nil, protoErr("message length %d: limit %d", n, MaxMessage)
	case t == msgAuthV1:
		return 0, nil, protoErr("unexpected AUTH: version 1's message, not part of version %d", Version)
	case !t.known():
		return 0, nil, protoErr("unknown message %s", t)
	case !accept.has(t):
		return 0, nil, protoErr("unexpected %s %s", t, accept.state)
	}
	size := int(n) - 1
	if b := payloadBounds[t]; size < b.min || size > b.max {
		return 0, nil, protoErr("%s of %d bytes: want %d to %d", t, size, b.min, b.max)
	}
	p := make([]byte, size)
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return 0, nil, protoErr("connection closed inside %s (%d bytes)", t, size)
		}
		return 0, nil, err
	}
	return t, p, nil
}

// outMsg is a message to write: head is the header followed by the
// payload's fixed fields, body the bulk (frame data, JPEG), written without
// copying.
type outMsg struct {
	t    msgType
	head []byte
	body []byte
}

// newMsg starts a message of type t whose payload is fixed bytes of fields
// (appended by the caller to head) and then body.
func newMsg(t msgType, fixed int, body []byte) outMsg {
	head := make([]byte, headerSize, headerSize+fixed)
	binary.BigEndian.PutUint32(head, uint32(1+fixed+len(body)))
	head[4] = byte(t)
	return outMsg{t: t, head: head, body: body}
}

// bytes returns the whole message in one slice (for tests and the handshake).
func (m outMsg) bytes() []byte { return append(m.head[:len(m.head):len(m.head)], m.body...) }

// role is which end of the stream a side is.
type role uint8

// Roles.
const (
	roleSource role = 1
	roleSink   role = 2
)

func (r role) String() string {
	switch r {
	case roleSource:
		return "source"
	case roleSink:
		return "sink"
	}
	return fmt.Sprintf("role %d", uint8(r))
}

func (r role) peer() role { return 3 - r }

// helloMagic opens every HELLO payload.
var helloMagic = [4]byte{'P', 'N', 'K', 'V'}

// hello is a HELLO's payload.
type hello struct {
	minVersion, maxVersion uint16
	role                   role
	nonce                  [32]byte
	device                 string
}

func (h hello) msg() outMsg {
	m := newMsg(msgHello, helloFixed+len(h.device), nil)
	m.head = append(m.head, helloMagic[:]...)
	m.head = binary.BigEndian.AppendUint16(m.head, h.minVersion)
	m.head = binary.BigEndian.AppendUint16(m.head, h.maxVersion)
	m.head = append(m.head, byte(h.role))
	m.head = append(m.head, h.nonce[:]...)
	m.head = append(m.head, byte(len(h.device)))
	m.head = append(m.head, h.device...)
	return m
}

// parseHello reads a HELLO payload. Bytes after the device id are for
// later versions and ignored.
func parseHello(p []byte) (hello, error) {
	var h hello
	if [4]byte(p[:4]) != helloMagic {
		return h, protoErr("HELLO magic %q: want %q", p[:4], helloMagic[:])
	}
	h.minVersion = binary.BigEndian.Uint16(p[4:])
	h.maxVersion = binary.BigEndian.Uint16(p[6:])
	h.role = role(p[8])
	copy(h.nonce[:], p[9:41])
	n := int(p[41])
	switch {
	case h.minVersion == 0 || h.minVersion > h.maxVersion:
		return h, protoErr("HELLO versions %d..%d: want 1 <= min <= max", h.minVersion, h.maxVersion)
	case h.role != roleSource && h.role != roleSink:
		return h, protoErr("HELLO %s: want 1 (source) or 2 (sink)", h.role)
	case n == 0 || n > MaxDeviceID:
		return h, protoErr("HELLO device id of %d bytes: want 1 to %d", n, MaxDeviceID)
	case len(p) < helloFixed+n:
		return h, protoErr("HELLO of %d bytes holds no device id of %d bytes", len(p), n)
	}
	h.device = string(p[helloFixed : helloFixed+n])
	if err := checkDeviceID(h.device); err != nil {
		return h, protoErr("HELLO: %v", err)
	}
	return h, nil
}

// checkDeviceID accepts 1 to MaxDeviceID bytes of UTF-8 without control
// characters.
func checkDeviceID(id string) error {
	switch {
	case id == "" || len(id) > MaxDeviceID:
		return fmt.Errorf("device id of %d bytes: want 1 to %d", len(id), MaxDeviceID)
	case !utf8.ValidString(id):
		return fmt.Errorf("device id %q: not UTF-8", id)
	case strings.ContainsFunc(id, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("device id %q: control characters", id)
	}
	return nil
}

// Codecs on the wire.
const codecH264 = 1

// config is a CONFIG's payload.
type config struct {
	codec         uint8
	rotation      uint8 // quarter turns clockwise to show the picture upright
	width, height int
	params        []byte // SPS and PPS, Annex B
}

func (c config) msg() outMsg {
	m := newMsg(msgConfig, configFixed, c.params)
	m.head = append(m.head, c.codec, c.rotation)
	m.head = binary.BigEndian.AppendUint16(m.head, uint16(c.width))
	m.head = binary.BigEndian.AppendUint16(m.head, uint16(c.height))
	return m
}

func parseConfig(p []byte) (config, error) {
	c := config{
		codec:    p[0],
		rotation: p[1],
		width:    int(binary.BigEndian.Uint16(p[2:])),
		height:   int(binary.BigEndian.Uint16(p[4:])),
		params:   p[configFixed:],
	}
	switch {
	case c.codec != codecH264:
		return c, protoErr("CONFIG codec %d: want 1 (H.264)", c.codec)
	case c.rotation > 3:
		return c, protoErr("CONFIG rotation %d: want 0 to 3", c.rotation)
	case c.width < 1 || c.width > MaxSide || c.height < 1 || c.height > MaxSide:
		return c, protoErr("CONFIG size %dx%d: want 1 to %d each", c.width, c.height, MaxSide)
	}
	if err := checkParams(c.params); err != nil {
		return c, err
	}
	return c, nil
}

// checkParams accepts Annex B data that starts with a start code and holds
// an SPS (NAL type 7) and a PPS (NAL type 8).
func checkParams(b []byte) error {
	if !hasStartCode(b) {
		return protoErr("CONFIG parameter sets do not start with a start code")
	}
	var sps, pps bool
	for _, u := range h26x.NALUnits(b) {
		switch u[0] & 0x1f {
		case 7:
			sps = true
		case 8:
			pps = true
		}
	}
	if !sps || !pps {
		return protoErr("CONFIG parameter sets: SPS %t, PPS %t; want both", sps, pps)
	}
	return nil
}

// hasStartCode reports whether b opens with 00 00 01 or 00 00 00 01.
func hasStartCode(b []byte) bool {
	return len(b) >= 3 && b[0] == 0 && b[1] == 0 && (b[2] == 1 || len(b) >= 4 && b[2] == 0 && b[3] == 1)
}

// frameKey is the FRAME flag of a key frame; other bits are reserved.
const frameKey = 1

// frame is a FRAME's payload.
type frame struct {
	pts  int64 // microseconds
	key  bool
	data []byte // one access unit, Annex B
}

func (f frame) msg() outMsg {
	m := newMsg(msgFrame, frameFixed, f.data)
	m.head = binary.BigEndian.AppendUint64(m.head, uint64(f.pts))
	var flags byte
	if f.key {
		flags |= frameKey
	}
	m.head = append(m.head, flags)
	return m
}

func parseFrame(p []byte) (frame, error) {
	f := frame{
		pts:  int64(binary.BigEndian.Uint64(p)),
		key:  p[8]&frameKey != 0,
		data: p[frameFixed:],
	}
	if f.pts < 0 || f.pts > maxPTS {
		return f, protoErr("FRAME PTS %d µs: want 0 to %d", f.pts, maxPTS)
	}
	if !hasStartCode(f.data) {
		return f, protoErr("FRAME data does not start with a start code")
	}
	return f, nil
}

// stillRequest is a STILL_REQUEST's payload.
type stillRequest struct {
	id      uint32
	maxSide int // 0: full size
	quality int // 0: the source's default
}

func (s stillRequest) msg() outMsg {
	m := newMsg(msgStillRequest, stillReqSize, nil)
	m.head = binary.BigEndian.AppendUint32(m.head, s.id)
	m.head = binary.BigEndian.AppendUint16(m.head, uint16(s.maxSide))
	m.head = append(m.head, byte(s.quality))
	return m
}

func parseStillRequest(p []byte) (stillRequest, error) {
	s := stillRequest{
		id:      binary.BigEndian.Uint32(p),
		maxSide: int(binary.BigEndian.Uint16(p[4:])),
		quality: int(p[6]),
	}
	if s.quality > 100 {
		return s, protoErr("STILL_REQUEST quality %d: want 0 to 100", s.quality)
	}
	return s, nil
}

// stillStatus is a STILL's status byte.
type stillStatus uint8

// STILL statuses.
const (
	stillOK          stillStatus = 0
	stillNoFrame     stillStatus = 1
	stillBusy        stillStatus = 2
	stillFailed      stillStatus = 3
	stillUnsupported stillStatus = 4
)

func (s stillStatus) String() string {
	switch s {
	case stillOK:
		return "OK"
	case stillNoFrame:
		return "NO_FRAME"
	case stillBusy:
		return "BUSY"
	case stillFailed:
		return "FAILED"
	case stillUnsupported:
		return "UNSUPPORTED"
	}
	return fmt.Sprintf("status %d", uint8(s))
}

// still is a STILL's payload: JPEG bytes when status is OK, else text.
type still struct {
	id     uint32
	status stillStatus
	data   []byte
}

func (s still) msg() outMsg {
	if s.status != stillOK {
		s.data = []byte(clip(string(s.data)))
	}
	m := newMsg(msgStill, stillFixed, s.data)
	m.head = binary.BigEndian.AppendUint32(m.head, s.id)
	m.head = append(m.head, byte(s.status))
	return m
}

func parseStill(p []byte) (still, error) {
	s := still{id: binary.BigEndian.Uint32(p), status: stillStatus(p[4]), data: p[stillFixed:]}
	switch {
	case s.status > stillUnsupported:
		return s, protoErr("STILL %s: want 0 to 4", s.status)
	case s.status == stillOK && len(s.data) == 0:
		return s, protoErr("STILL OK without JPEG data")
	case s.status != stillOK && len(s.data) > MaxText:
		return s, protoErr("STILL %s text of %d bytes: limit %d", s.status, len(s.data), MaxText)
	}
	return s, nil
}

// pingMsg is a PING or PONG carrying 8 opaque bytes.
func pingMsg(t msgType, data [pingSize]byte) outMsg {
	m := newMsg(t, pingSize, nil)
	m.head = append(m.head, data[:]...)
	return m
}

// stopReason is a STOP's reason code.
type stopReason uint8

// STOP reasons.
const (
	stopUnspecified stopReason = 0
	stopUser        stopReason = 1 // the person stopped the broadcast
	stopEnded       stopReason = 2 // the broadcast ended by itself
	stopError       stopReason = 3 // the source failed
	stopMemory      stopReason = 4 // the source ran out of memory
)

func (r stopReason) String() string {
	switch r {
	case stopUnspecified:
		return "UNSPECIFIED"
	case stopUser:
		return "USER"
	case stopEnded:
		return "ENDED"
	case stopError:
		return "ERROR"
	case stopMemory:
		return "MEMORY"
	}
	return fmt.Sprintf("reason %d", uint8(r))
}

// textMsg is a STOP or ERROR: a code byte and UTF-8 text.
func textMsg(t msgType, code uint8, text string) outMsg {
	text = clip(text)
	m := newMsg(t, textFixed, []byte(text))
	m.head = append(m.head, code)
	return m
}

// parseText reads a STOP or ERROR. Invalid UTF-8 is replaced, not refused:
// the text only goes to logs.
func parseText(p []byte) (uint8, string) {
	return p[0], strings.ToValidUTF8(string(p[textFixed:]), "\uFFFD")
}

// clip shortens text to MaxText bytes without splitting a character.
func clip(text string) string {
	if len(text) <= MaxText {
		return text
	}
	cut := MaxText
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}
