package scrcpy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Codec ids of the stream header: 4 ASCII bytes, big-endian.
const (
	codecDisabled = 0 // the server could not capture this stream
	codecError    = 1 // the server's configuration failed
	codecH264     = 0x68323634
	codecH265     = 0x68323635
	codecAV1      = 0x00617631
)

// DeviceNameLength is the size of the device meta: the NUL-padded name.
const DeviceNameLength = 64

// maxPacket bounds one video packet, against a desynchronised stream.
const maxPacket = 1 << 26

// Packet header flags. 3.x: bit 63 config, bit 62 key frame. 4.x: bit 63
// session (a size record, not media), bit 62 config, bit 61 key frame. A 3.x
// parser misreads every 4.x packet, and the other way round.
const (
	flag3Config   = 1 << 63
	flag3KeyFrame = 1 << 62
	flag4Session  = 1 << 63
	flag4Config   = 1 << 62
	flag4KeyFrame = 1 << 61
)

// ErrNoServer means the first connection closed before the dummy byte: with
// adb forward, connecting succeeds even when no server listens yet. Dial retries it.
var ErrNoServer = errors.New("scrcpy server not listening")

// Client is one scrcpy session: the video socket (read with ReadPacket or
// Stream) and the control socket (the Send family). Control methods may be
// called concurrently with each other and with the video reader; ReadPacket
// and Stream must not be called concurrently with each other.
type Client struct {
	v         Version
	o         Options
	name      string
	codec     sdk.Codec
	videoConn net.Conn
	video     *bufio.Reader
	control   net.Conn

	wmu  sync.Mutex // one control message at a time
	sent uint64     // control messages written, under wmu

	mu        sync.Mutex // guards everything below
	w, h      int
	seq       uint64
	clip      []chan string            // waiting Clipboard calls
	acks      map[uint64]chan struct{} // waiting SetClipboard calls
	readErr   error                    // why the device message reader stopped
	readDone  chan struct{}
	lastClip  string
	haveClip  bool
	closeOnce sync.Once
}

// Connect starts a session on connections of a forward tunnel, with the
// options of DefaultOptions. The first non-nil connection carries the dummy
// byte and the device name; connect the control socket only after the video
// socket (Dial does both in order). Either may be nil when its stream is off.
func Connect(version string, videoConn, controlConn net.Conn) (*Client, error) {
	o := DefaultOptions()
	o.Video, o.Control = videoConn != nil, controlConn != nil
	return ConnectWith(version, o, videoConn, controlConn)
}

// ConnectWith is Connect for a server started with ServerArgs(version, o).
// It reads the dummy byte, the device name and the video header, so that the
// video size is known when it returns.
func ConnectWith(version string, o Options, videoConn, controlConn net.Conn) (*Client, error) {
	c, err := newClient(version, o, videoConn, controlConn)
	if err != nil {
		return nil, err
	}
	if o.SendDummyByte && o.TunnelForward {
		if err := readDummy(c.first()); err != nil {
			return nil, err
		}
	}
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

// Dial starts a session over a forward tunnel: dial opens one connection to
// the server's socket (SocketName(o.SCID)). Like scrcpy's client, it retries
// the first connection until the server answers with its dummy byte (100
// times, 100 ms apart), then opens the others in order.
func Dial(ctx context.Context, version string, o Options, dial func(context.Context) (net.Conn, error)) (*Client, error) {
	if !o.TunnelForward {
		return nil, errors.New("scrcpy dial: needs a forward tunnel (tunnel_forward=true)")
	}
	if _, err := ParseVersion(version); err != nil {
		return nil, err
	}
	var first net.Conn
	for attempt := 0; ; attempt++ {
		conn, err := dial(ctx)
		if err == nil {
			if !o.SendDummyByte {
				first = conn
				break
			}
			stop := context.AfterFunc(ctx, func() { conn.SetReadDeadline(time.Now()) })
			err = readDummy(conn)
			stop()
			if err == nil {
				first = conn
				break
			}
			conn.Close()
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("scrcpy dial: %w", ctx.Err())
		}
		if attempt >= 99 {
			return nil, fmt.Errorf("scrcpy dial: %w", err)
		}
		select {
		case <-time.After(100 * time.Millisecond):
		case <-ctx.Done():
			return nil, fmt.Errorf("scrcpy dial: %w", ctx.Err())
		}
	}
	var video, control net.Conn
	if o.Video {
		video = first
	} else {
		control = first
	}
	if o.Video && o.Control {
		var err error
		if control, err = dial(ctx); err != nil {
			first.Close()
			return nil, fmt.Errorf("scrcpy dial control socket: %w", err)
		}
	}
	c, err := newClient(version, o, video, control)
	if err != nil {
		first.Close()
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if err := c.start(); err != nil {
		return nil, err
	}
	return c, nil
}

func newClient(version string, o Options, video, control net.Conn) (*Client, error) {
	v, err := ParseVersion(version)
	if err != nil {
		return nil, err
	}
	switch {
	case o.Audio:
		return nil, errors.New("scrcpy: audio is not supported (audio=false)")
	case o.Video != (video != nil) || o.Control != (control != nil):
		return nil, errors.New("scrcpy: the connections given do not match the video and control options")
	case video == nil && control == nil:
		return nil, errors.New("scrcpy: no connection")
	case o.Video && (!o.SendFrameMeta || !o.SendStreamMeta):
		return nil, errors.New("scrcpy: video needs the stream and frame headers (send_frame_meta, " + v.streamMeta() + ")")
	}
	c := &Client{v: v, o: o, videoConn: video, control: control, acks: map[uint64]chan struct{}{}, readDone: make(chan struct{})}
	if video != nil {
		c.video = bufio.NewReaderSize(video, 64<<10)
	}
	return c, nil
}

func (c *Client) first() net.Conn {
	if c.videoConn != nil {
		return c.videoConn
	}
	return c.control
}

// readDummy reads the byte the server writes on the first socket of a
// forward tunnel.
func readDummy(conn net.Conn) error {
	var b [1]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fmt.Errorf("scrcpy: reading the dummy byte: %v: %w", err, ErrNoServer)
	}
	if b[0] != 0 {
		return fmt.Errorf("scrcpy: dummy byte is %#02x, want 0: %w", b[0], ErrProtocol)
	}
	return nil
}

// start reads the device meta and the video header, then starts the device
// message reader. On failure it closes the connections.
func (c *Client) start() (err error) {
	defer func() {
		if err != nil {
			c.Close()
		}
	}()
	if c.o.SendDeviceMeta {
		var name [DeviceNameLength]byte
		var r io.Reader = c.control
		if c.video != nil {
			r = c.video
		}
		if _, err := io.ReadFull(r, name[:]); err != nil {
			return fmt.Errorf("scrcpy: reading the device name: %w", unexpected(err))
		}
		name[DeviceNameLength-1] = 0
		n, _, _ := bytes.Cut(name[:], []byte{0})
		c.name = string(n)
	}
	if c.video != nil {
		if err := c.readVideoHeader(); err != nil {
			return err
		}
	}
	if c.control != nil {
		go c.readDeviceMessages()
	} else {
		close(c.readDone)
	}
	return nil
}

// readVideoHeader reads the codec id, then in 3.x the size, in 4.x the first
// session packet.
func (c *Client) readVideoHeader() error {
	var b [12]byte
	if _, err := io.ReadFull(c.video, b[:4]); err != nil {
		return fmt.Errorf("scrcpy: reading the video header: %w", unexpected(err))
	}
	switch id := binary.BigEndian.Uint32(b[:4]); id {
	case codecH264:
		c.codec = sdk.CodecH264
	case codecH265:
		c.codec = sdk.CodecH265
	case codecDisabled:
		return errors.New("scrcpy: the server disabled video (capture not possible)")
	case codecError:
		return errors.New("scrcpy: the server failed to configure video (see its log)")
	case codecAV1:
		return errors.New("scrcpy: video codec av1 is not supported")
	default:
		return fmt.Errorf("scrcpy: video codec id %#08x: unknown: %w", id, ErrProtocol)
	}
	if c.v.Major == 3 {
		if _, err := io.ReadFull(c.video, b[4:]); err != nil {
			return fmt.Errorf("scrcpy: reading the video size: %w", unexpected(err))
		}
		c.setSize(int(binary.BigEndian.Uint32(b[4:])), int(binary.BigEndian.Uint32(b[8:])))
		return nil
	}
	// 4.x: a session packet comes before the first media packet.
	peek, err := c.video.Peek(1)
	if err != nil {
		return fmt.Errorf("scrcpy: reading the first video session: %w", unexpected(err))
	}
	if peek[0]&0x80 == 0 {
		return fmt.Errorf("scrcpy: video starts with a media packet, want a session packet: %w", ErrProtocol)
	}
	_, err = c.readSession()
	return err
}

// readSession reads a 4.x session packet: flags, width, height.
func (c *Client) readSession() (bool, error) {
	var b [12]byte
	if _, err := io.ReadFull(c.video, b[:]); err != nil {
		return false, unexpected(err)
	}
	w, h := int(binary.BigEndian.Uint32(b[4:])), int(binary.BigEndian.Uint32(b[8:]))
	if w <= 0 || h <= 0 || w > 0xffff || h > 0xffff {
		return false, fmt.Errorf("scrcpy: session size %dx%d: %w", w, h, ErrProtocol)
	}
	changed := c.setSize(w, h)
	return changed, nil
}

func (c *Client) setSize(w, h int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	changed := c.w != w || c.h != h
	c.w, c.h = w, h
	return changed
}

// Version is the server's version.
func (c *Client) Version() Version { return c.v }

// DeviceName is the name the server sent (the phone's model), "" without device meta.
func (c *Client) DeviceName() string { return c.name }

// Codec is the video codec.
func (c *Client) Codec() sdk.Codec { return c.codec }

// VideoSize is the current video size: the frame of touch coordinates.
func (c *Client) VideoSize() (w, h int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w, c.h
}

// ReadPacket reads the next video packet. A config packet (SPS/PPS) has
// Config set and PTS 0; Width and Height are the video size of the packet,
// which changes after a new session (4.x) or a config with a new SPS (3.x).
func (c *Client) ReadPacket() (sdk.VideoPacket, error) {
	if c.video == nil {
		return sdk.VideoPacket{}, errors.New("scrcpy: video is off")
	}
	var b [12]byte
	for {
		if _, err := io.ReadFull(c.video, b[:1]); err != nil {
			return sdk.VideoPacket{}, err
		}
		if c.v.Major >= 4 && b[0]&0x80 != 0 {
			if err := c.video.UnreadByte(); err != nil {
				return sdk.VideoPacket{}, err
			}
			if _, err := c.readSession(); err != nil {
				return sdk.VideoPacket{}, err
			}
			continue
		}
		if _, err := io.ReadFull(c.video, b[1:]); err != nil {
			return sdk.VideoPacket{}, unexpected(err)
		}
		break
	}
	ptsFlags := binary.BigEndian.Uint64(b[:8])
	size := binary.BigEndian.Uint32(b[8:])
	if size == 0 || size > maxPacket {
		return sdk.VideoPacket{}, fmt.Errorf("scrcpy: video packet of %d bytes: %w", size, ErrProtocol)
	}
	p := sdk.VideoPacket{Codec: c.codec, Data: make([]byte, size)}
	if _, err := io.ReadFull(c.video, p.Data); err != nil {
		return sdk.VideoPacket{}, unexpected(err)
	}
	var pts uint64
	if c.v.Major >= 4 {
		p.Config, p.KeyFrame = ptsFlags&flag4Config != 0, ptsFlags&flag4KeyFrame != 0
		pts = ptsFlags & (flag4KeyFrame - 1)
	} else {
		p.Config, p.KeyFrame = ptsFlags&flag3Config != 0, ptsFlags&flag3KeyFrame != 0
		pts = ptsFlags & (flag3KeyFrame - 1)
		if p.Config && c.codec == sdk.CodecH264 {
			// 3.x sends no size after the header: the SPS has it.
			if w, h, err := h264Size(p.Data); err == nil {
				c.setSize(w, h)
			}
		}
	}
	if !p.Config {
		p.PTS = time.Duration(pts) * time.Microsecond
	}
	p.Width, p.Height = c.VideoSize()
	return p, nil
}

// Stream calls send with each video packet until ctx ends (nil), the stream
// ends (io.EOF) or send fails (its error).
func (c *Client) Stream(ctx context.Context, send func(sdk.VideoPacket) error) error {
	if c.videoConn == nil {
		return errors.New("scrcpy: video is off")
	}
	stop := context.AfterFunc(ctx, func() { c.videoConn.SetReadDeadline(time.Now()) })
	defer stop()
	for {
		p, err := c.ReadPacket()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := send(p); err != nil {
			return err
		}
	}
}

// Close closes the connections; the server then exits.
func (c *Client) Close() error {
	var errs []error
	c.closeOnce.Do(func() {
		for _, conn := range []net.Conn{c.videoConn, c.control} {
			if conn != nil {
				errs = append(errs, conn.Close())
			}
		}
	})
	return errors.Join(errs...)
}

// Send writes one control message.
func (c *Client) Send(m Message) error {
	return c.send(m)
}

// send writes control messages in one write, so that they reach the
// server together or not at all as far as this side can tell.
func (c *Client) send(ms ...Message) error {
	if c.control == nil {
		return errors.New("scrcpy: control is off")
	}
	var b []byte
	for _, m := range ms {
		mb, err := Marshal(m, c.v)
		if err != nil {
			return err
		}
		b = append(b, mb...)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.control.Write(b); err != nil {
		return fmt.Errorf("scrcpy control: %w", err)
	}
	c.sent += uint64(len(ms))
	return nil
}

// Sent is how many control messages were written so far. A write that
// succeeded may still be lost if the server died: the socket only tells on
// a later write.
func (c *Client) Sent() uint64 {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.sent
}

// Done is closed when the control socket's reader stopped: the server
// closed it (it exited, or the phone went away) or Close was called.
func (c *Client) Done() <-chan struct{} { return c.readDone }

// Touch sends one touch event for pointer id at (x, y) of the current video
// frame, with full pressure except on up.
func (c *Client) Touch(action MotionAction, id uint64, x, y int) error {
	m, err := c.touch(action, id, x, y)
	if err != nil {
		return err
	}
	return c.send(m)
}

func (c *Client) touch(action MotionAction, id uint64, x, y int) (Message, error) {
	w, h := c.VideoSize()
	if w == 0 || h == 0 {
		return nil, errors.New("scrcpy touch: the video size is unknown")
	}
	pressure := float32(1)
	if action == MotionUp {
		pressure = 0
	}
	return InjectTouch{Action: action, PointerID: id, X: int32(x), Y: int32(y), Width: uint16(w), Height: uint16(h), Pressure: pressure}, nil
}

// Tap touches (x, y) and lifts at once, in one write.
func (c *Client) Tap(x, y int) error {
	down, err := c.touch(MotionDown, PointerGenericFinger, x, y)
	if err != nil {
		return err
	}
	up, _ := c.touch(MotionUp, PointerGenericFinger, x, y)
	return c.send(down, up)
}

// swipeRate is how often Swipe moves the finger (~60 Hz).
const swipeRate = time.Second / 60

// Swipe drags a finger from one point to another over d, moving it at about
// 60 Hz along the straight line. When ctx ends it lifts the finger where it is.
func (c *Client) Swipe(ctx context.Context, from, to sdk.Point, d time.Duration) error {
	if err := c.Touch(MotionDown, PointerGenericFinger, from.X, from.Y); err != nil {
		return err
	}
	steps := max(1, int(d/swipeRate))
	at := from
	t := time.NewTicker(d / time.Duration(steps))
	defer t.Stop()
	for i := 1; i <= steps; i++ {
		select {
		case <-ctx.Done():
			_ = c.Touch(MotionUp, PointerGenericFinger, at.X, at.Y)
			return ctx.Err()
		case <-c.readDone:
			return c.deviceErr()
		case <-t.C:
		}
		at = sdk.Point{X: from.X + (to.X-from.X)*i/steps, Y: from.Y + (to.Y-from.Y)*i/steps}
		if err := c.Touch(MotionMove, PointerGenericFinger, at.X, at.Y); err != nil {
			return err
		}
	}
	return c.Touch(MotionUp, PointerGenericFinger, to.X, to.Y)
}

// PinchPointers are the pointer ids of Pinch's two fingers: the ones
// scrcpy's own client uses for its pinch, which its server injects as two
// fingers of one touch screen.
var PinchPointers = [2]uint64{PointerGenericFinger, PointerVirtualFinger}

// Pinch puts two fingers down at from[0] and from[1], moves both along
// straight lines to to[0] and to[1] over d at about 60 Hz, and lifts them:
// the server turns the second DOWN and the first UP into Android's
// ACTION_POINTER_DOWN and ACTION_POINTER_UP. When ctx ends it lifts both
// fingers where they are. Points are in video-frame pixels.
func (c *Client) Pinch(ctx context.Context, from, to [2]sdk.Point, d time.Duration) error {
	at := from
	lift := func() error {
		for i := 1; i >= 0; i-- {
			if err := c.Touch(MotionUp, PinchPointers[i], at[i].X, at[i].Y); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range 2 {
		if err := c.Touch(MotionDown, PinchPointers[i], from[i].X, from[i].Y); err != nil {
			return err
		}
	}
	steps := max(1, int(d/swipeRate))
	t := time.NewTicker(max(d/time.Duration(steps), time.Millisecond))
	defer t.Stop()
	for n := 1; n <= steps; n++ {
		select {
		case <-ctx.Done():
			_ = lift()
			return ctx.Err()
		case <-c.readDone:
			return c.deviceErr()
		case <-t.C:
		}
		for i := range 2 {
			at[i] = sdk.Point{X: from[i].X + (to[i].X-from[i].X)*n/steps, Y: from[i].Y + (to[i].Y-from[i].Y)*n/steps}
			if err := c.Touch(MotionMove, PinchPointers[i], at[i].X, at[i].Y); err != nil {
				return err
			}
		}
	}
	return lift()
}

// DefaultLongPress is LongPress's hold when d is 0: longer than Android's
// long-press timeout (400 ms by default).
const DefaultLongPress = 600 * time.Millisecond

// LongPress holds a finger on (x, y) for d (0: DefaultLongPress).
func (c *Client) LongPress(ctx context.Context, x, y int, d time.Duration) error {
	if d == 0 {
		d = DefaultLongPress
	}
	if err := c.Touch(MotionDown, PointerGenericFinger, x, y); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		_ = c.Touch(MotionCancel, PointerGenericFinger, x, y)
		return ctx.Err()
	case <-c.readDone:
		return c.deviceErr()
	case <-time.After(d):
	}
	return c.Touch(MotionUp, PointerGenericFinger, x, y)
}

// Key presses and releases an Android key, in one write.
func (c *Client) Key(code uint32) error {
	return c.send(InjectKeycode{Action: KeyActionDown, Keycode: code}, InjectKeycode{Action: KeyActionUp, Keycode: code})
}

// Text types s, split into INJECT_TEXT messages of at most MaxInjectText
// bytes at character boundaries. The server types it through the key
// character map, which has no keys for most non-ASCII text: paste such text
// with PasteText.
func (c *Client) Text(s string) error {
	for len(s) > 0 {
		n := min(len(s), MaxInjectText)
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n--
		}
		if err := c.Send(InjectText{Text: s[:n]}); err != nil {
			return err
		}
		s = s[n:]
	}
	return nil
}

// Scroll turns the mouse wheel at (x, y) of the current video frame.
func (c *Client) Scroll(x, y int, hscroll, vscroll float32) error {
	w, h := c.VideoSize()
	if w == 0 || h == 0 {
		return errors.New("scrcpy scroll: the video size is unknown")
	}
	return c.Send(InjectScroll{X: int32(x), Y: int32(y), Width: uint16(w), Height: uint16(h), HScroll: hscroll, VScroll: vscroll})
}

// ResetVideo asks for a new config packet and key frame (3.0+).
func (c *Client) ResetVideo() error { return c.Send(ResetVideo{}) }

// readDeviceMessages reads the control socket until it fails, handing
// clipboards and acks to the calls waiting for them.
func (c *Client) readDeviceMessages() {
	r := bufio.NewReader(c.control)
	var err error
	for {
		var m DeviceMessage
		if m, err = ReadDeviceMessage(r); err != nil {
			break
		}
		c.mu.Lock()
		switch m := m.(type) {
		case DeviceClipboard:
			c.lastClip, c.haveClip = m.Text, true
			for _, ch := range c.clip {
				ch <- m.Text
			}
			c.clip = nil
		case AckClipboard:
			if ch := c.acks[m.Sequence]; ch != nil {
				close(ch)
				delete(c.acks, m.Sequence)
			}
		}
		c.mu.Unlock()
	}
	c.mu.Lock()
	c.readErr = err
	c.mu.Unlock()
	close(c.readDone)
}

// deviceErr is why the device message reader stopped.
func (c *Client) deviceErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readErr == nil || c.readErr == io.EOF {
		return errors.New("scrcpy: the control socket closed")
	}
	return fmt.Errorf("scrcpy control: %w", c.readErr)
}

// LastClipboard is the clipboard the phone sent last (with autosync, its
// current clipboard), and whether it sent one.
func (c *Client) LastClipboard() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastClip, c.haveClip
}

// Clipboard asks for the phone's clipboard. A phone with an empty clipboard
// does not answer: give ctx a deadline.
func (c *Client) Clipboard(ctx context.Context) (string, error) {
	ch := make(chan string, 1)
	c.mu.Lock()
	c.clip = append(c.clip, ch)
	c.mu.Unlock()
	if err := c.Send(GetClipboard{}); err != nil {
		return "", err
	}
	select {
	case s := <-ch:
		return s, nil
	case <-c.readDone:
		return "", c.deviceErr()
	case <-ctx.Done():
		c.mu.Lock()
		for i, w := range c.clip {
			if w == ch {
				c.clip = append(c.clip[:i], c.clip[i+1:]...)
				break
			}
		}
		c.mu.Unlock()
		return "", fmt.Errorf("scrcpy get clipboard: %w", ctx.Err())
	}
}

// SetClipboard sets the phone's clipboard and, with paste, pastes it into
// the focused field; it returns once the phone has acknowledged it.
func (c *Client) SetClipboard(ctx context.Context, text string, paste bool) error {
	ch := make(chan struct{})
	c.mu.Lock()
	c.seq++
	seq := c.seq
	c.acks[seq] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.acks, seq)
		c.mu.Unlock()
	}()
	if err := c.Send(SetClipboard{Sequence: seq, Paste: paste, Text: text}); err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-c.readDone:
		return c.deviceErr()
	case <-ctx.Done():
		return fmt.Errorf("scrcpy set clipboard: %w", ctx.Err())
	}
}

// Timing of PasteText.
const (
	pasteReadOld = 500 * time.Millisecond // an empty clipboard never answers
	pasteSettle  = 200 * time.Millisecond // the app reads the clipboard after the paste key
)

// PasteText types text through the clipboard (for text INJECT_TEXT cannot
// type): it saves the clipboard, sets it to text with paste, then restores
// it (an empty clipboard is restored as "").
func (c *Client) PasteText(ctx context.Context, text string) error {
	rctx, cancel := context.WithTimeout(ctx, pasteReadOld)
	old, err := c.Clipboard(rctx)
	cancel()
	if err != nil && ctx.Err() != nil {
		return err
	}
	if err := c.SetClipboard(ctx, text, true); err != nil {
		return err
	}
	select {
	case <-time.After(pasteSettle):
	case <-ctx.Done():
		return ctx.Err()
	}
	return c.SetClipboard(ctx, old, false)
}
