package scrcpyd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"

	"github.com/pinky-gateway/pinky/drivers/android/scrcpy"
	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Codec ids of the stream header.
const (
	codecDisabled = 0
	codecH264     = 0x68323634
)

// Gesture thresholds: a finger that moves less than slop taps (or long-presses
// when held for longPress); one that moves further swipes.
const (
	longPress   = 500 * time.Millisecond
	slopDivisor = 40 // slop is the screen's width / slopDivisor
)

// session is one server run: its sockets and the phone they drive.
type session struct {
	o        options
	log      *logger
	drv      sdk.Driver
	streamer sdk.Streamer
	device   string
	display  int // the display the session shows and drives
	sizer    sizer

	video, audio, control net.Conn
	wmu                   sync.Mutex // one device message at a time on control

	reset chan struct{} // RESET_VIDEO: restart the encoder

	// Clipboard autosync: the phone's changes, queued by the watcher for
	// the goroutine that sends them. settingClip is set while the session's
	// own SET_CLIPBOARD sets the clipboard (Controller.isSettingClipboard).
	settingClip atomic.Bool
	clipMu      sync.Mutex
	clipQueue   []string
	clipSignal  chan struct{} // buffered 1

	mu       sync.Mutex // guards the fields below
	vw, vh   int        // the current video size: touch events must name it
	clip     string     // the clipboard of a phone without its own
	hasClip  bool
	pointers map[uint64]*gesture
}

// gesture is a finger on the screen, in video coordinates. A finger that
// goes down while one other is down pairs with it: the two make a pinch,
// performed when the first of them lifts (the other's lift is then spent).
type gesture struct {
	from, at sdk.Point
	down     time.Time
	partner  *gesture
	spent    bool
}

// accept takes the connections in scrcpy's order (video, audio, control),
// writes the dummy byte on the first, then closes lis as the real server
// closes its LocalServerSocket.
func (s *session) accept(ctx context.Context, lis net.Listener) error {
	stop := context.AfterFunc(ctx, func() { lis.Close() })
	defer stop()
	defer lis.Close()
	dummy := s.o.sendDummyByte
	for _, c := range []struct {
		on   bool
		conn *net.Conn
	}{{s.o.video, &s.video}, {s.o.audio, &s.audio}, {s.o.control, &s.control}} {
		if !c.on {
			continue
		}
		conn, err := lis.Accept()
		if err != nil {
			s.closeAll()
			return fmt.Errorf("scrcpy server: accept: %w", err)
		}
		*c.conn = conn
		if dummy {
			dummy = false
			if _, err := conn.Write([]byte{0}); err != nil {
				s.closeAll()
				return fmt.Errorf("scrcpy server: dummy byte: %w", err)
			}
		}
	}
	return nil
}

func (s *session) first() net.Conn {
	for _, c := range []net.Conn{s.video, s.audio, s.control} {
		if c != nil {
			return c
		}
	}
	return nil
}

func (s *session) closeAll() {
	for _, c := range []net.Conn{s.video, s.audio, s.control} {
		if c != nil {
			c.Close()
		}
	}
}

// run serves the accepted connections until one side ends.
func (s *session) run(ctx context.Context, dev sdk.Device) error {
	first := s.first()
	if first == nil {
		return nil // nothing to serve: the real server exits at once too
	}
	if s.o.sendDeviceMeta {
		var meta [scrcpy.DeviceNameLength]byte
		copy(meta[:], truncateUTF8(dev.Model, scrcpy.DeviceNameLength-1))
		if _, err := first.Write(meta[:]); err != nil {
			return nil // the client left
		}
	}
	// The real server wakes the phone for its main display; a virtual
	// display's sessions are lit whatever the phone's own screen does.
	if s.o.powerOn && s.display == 0 {
		if scr, err := s.drv.Screen(ctx, s.device, 0); err == nil && !scr.ScreenOn {
			s.act(ctx, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake})
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errc := make(chan error, 3)
	if s.audio != nil {
		s.log.log(levelWarn, "Audio disabled: the virtual phone has no audio capture")
		if s.o.sendStreamMeta {
			s.audio.Write(binary.BigEndian.AppendUint32(nil, codecDisabled))
		}
		wg.Go(func() { io.Copy(io.Discard, s.audio); cancel() })
	}
	if s.video != nil {
		wg.Go(func() { errc <- s.streamVideo(ctx); cancel() })
	}
	if s.control != nil {
		if s.o.clipboardAutosync {
			// The real Controller listens to the clipboard from when it is
			// made, after the connection: what was copied before is not sent.
			if stop := s.watchClipboard(ctx); stop != nil {
				defer stop()
				wg.Go(func() { s.syncClipboard(ctx) })
			}
		}
		wg.Go(func() { errc <- s.controlLoop(ctx); cancel() })
	}
	<-ctx.Done()
	s.closeAll() // unblocks the readers and writers
	wg.Wait()
	close(errc)
	var errs []error
	for err := range errc {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// truncateUTF8 cuts s to at most n bytes on a character boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n]
}

// iFrameInterval is the real encoder's key frame interval
// (DEFAULT_I_FRAME_INTERVAL in SurfaceEncoder.java).
const iFrameInterval = 10 * time.Second

// keyEveryStreamer is a phone whose stream takes a key frame interval; another
// gets its own driver's interval.
type keyEveryStreamer interface {
	StreamVideoKeyEvery(ctx context.Context, req sdk.VideoRequest, keyEvery time.Duration, send func(sdk.VideoPacket) error) error
}

// fitStreamer is a phone whose stream also takes the video's size as a
// function of the display's (the sim's), so that the video has the real
// server's size; another gets its driver's size for req.MaxSide.
type fitStreamer interface {
	StreamVideoFit(ctx context.Context, req sdk.VideoRequest, keyEvery time.Duration, fit func(w, h int) (int, int), send func(sdk.VideoPacket) error) error
}

// streamVideo writes the phone's video with the framing of the version:
//
//	3.x: codec id, width, height once; then packets with bit 63 = config, bit 62 = key frame.
//	4.x: codec id once; a session packet (bit 31 of the first u32 set, width,
//	     height) each time the encoder starts and when the size changes;
//	     packets with bit 62 = config, bit 61 = key frame.
//
// RESET_VIDEO restarts the encoder as SurfaceEncoder does: the stream
// starts again (4.x: a session packet), with a config packet and a key
// frame; timestamps go on from where they were.
// busyWait is how long a new server waits for a display an old stream
// still holds.
const busyWait = 5 * time.Second

func (s *session) streamVideo(ctx context.Context) error {
	v4 := s.o.version.Major >= 4
	be := binary.BigEndian
	req := sdk.VideoRequest{DeviceID: s.device, DisplayID: s.display, Codec: sdk.CodecH264, MaxSide: s.o.maxSize, MaxFPS: s.o.maxFPS, BitRate: s.o.bitRate}
	stream := s.streamer.StreamVideo
	switch k := s.streamer.(type) {
	case fitStreamer:
		// The real server's size for the display's current size, asked for
		// each frame: a rotation resizes the video as a capture reset does.
		fit := func(w, h int) (int, int) { return encodable(s.sizer.video(w, h)) }
		stream = func(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
			return k.StreamVideoFit(ctx, req, iFrameInterval, fit, send)
		}
	case keyEveryStreamer:
		stream = func(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
			return k.StreamVideoKeyEvery(ctx, req, iFrameInterval, send)
		}
	}
	// A real phone lets a new server capture a display at once; the sim
	// holds a display for one stream, and the stream of a server that just
	// died (the driver starts another at once) may not have let go yet on
	// a busy machine: wait for it a while, as for the old process to end.
	once := stream
	stream = func(ctx context.Context, req sdk.VideoRequest, send func(sdk.VideoPacket) error) error {
		deadline := time.Now().Add(busyWait)
		for {
			err := once(ctx, req, send)
			if !errors.Is(err, sdk.ErrBusy) || time.Now().After(deadline) {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	began := time.Now()
	headerSent := false
	var buf []byte
	for run := 0; ; run++ {
		var offset time.Duration
		if run > 0 {
			offset = time.Since(began).Truncate(time.Microsecond)
		}
		fresh := true
		send := func(p sdk.VideoPacket) error {
			buf = buf[:0]
			s.mu.Lock()
			resized := fresh || p.Width != s.vw || p.Height != s.vh
			s.vw, s.vh = p.Width, p.Height
			s.mu.Unlock()
			fresh = false
			if !headerSent && s.o.sendStreamMeta {
				buf = be.AppendUint32(buf, codecH264)
				if !v4 {
					buf = be.AppendUint32(buf, uint32(p.Width))
					buf = be.AppendUint32(buf, uint32(p.Height))
				}
			}
			headerSent = true
			if v4 && resized && s.o.sendStreamMeta {
				buf = be.AppendUint32(buf, 1<<31)
				buf = be.AppendUint32(buf, uint32(p.Width))
				buf = be.AppendUint32(buf, uint32(p.Height))
			}
			if s.o.sendFrameMeta {
				var h uint64
				pts := uint64((offset + p.PTS) / time.Microsecond)
				switch {
				case p.Config && v4:
					h = 1 << 62
				case p.Config:
					h = 1 << 63
				case v4:
					h = pts & (1<<61 - 1)
					if p.KeyFrame {
						h |= 1 << 61
					}
				default:
					h = pts & (1<<62 - 1)
					if p.KeyFrame {
						h |= 1 << 62
					}
				}
				buf = be.AppendUint64(buf, h)
				buf = be.AppendUint32(buf, uint32(len(p.Data)))
			}
			buf = append(buf, p.Data...)
			_, err := s.video.Write(buf)
			return err
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- stream(runCtx, req, send) }()
		var err error
		reset := false
		select {
		case err = <-done:
		case <-s.reset:
			cancel()
			err, reset = <-done, true
		}
		cancel()
		if reset && ctx.Err() == nil && (err == nil || errors.Is(err, context.Canceled)) {
			continue
		}
		if err == nil || ctx.Err() != nil || isClosed(err) {
			return nil
		}
		s.log.log(levelError, "Encoding error: %v", err)
		return fmt.Errorf("scrcpy server: video: %w", err)
	}
}

// isClosed reports whether err says the client went away.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "broken pipe") || strings.Contains(err.Error(), "connection reset")
}

// controlLoop applies control messages until the socket closes, as
// Controller.handleEvent does. When it returns, the session ends: the real
// controller's end is fatal to the whole server. A message of a type the
// version does not know is a protocol error, which 4.x logs with its stack
// trace and 3.x does not log.
func (s *session) controlLoop(ctx context.Context) error {
	r := newControlReader(bufio.NewReader(s.control), s.o.version)
	defer s.log.log(levelDebug, "Controller stopped")
	for {
		m, err := r.read()
		if err != nil {
			if errors.Is(err, errProtocol) && s.o.version.Major >= 4 {
				msg := strings.TrimPrefix(err.Error(), errProtocol.Error()+": ")
				s.log.log(levelError, "Control protocol error")
				s.log.trace("com.genymobile.scrcpy.control.ControlProtocolException: %s\n\tat com.genymobile.scrcpy.control.ControlMessageReader.read(ControlMessageReader.java:68)\n\tat com.genymobile.scrcpy.control.ControlChannel.recv(ControlChannel.java:18)\n\tat com.genymobile.scrcpy.control.Controller.handleEvent(Controller.java:324)\n", msg)
			}
			return nil
		}
		if err := s.apply(ctx, m); err != nil {
			if errors.Is(err, errCrashed) {
				return err
			}
			return nil // the client left while we answered
		}
	}
}

// errCrashed is the control thread dying of an exception the real server
// does not catch, which ends the server.
var errCrashed = errors.New("scrcpy server: the control thread died")

// crash logs an uncaught exception as Server's default handler does and
// returns errCrashed.
func (s *session) crash(exception string) error {
	s.log.log(levelError, "Exception on thread Thread[control-recv,5,main]")
	s.log.trace("%s\n\tat com.genymobile.scrcpy.control.Controller.handleEvent(Controller.java:440)\n\tat com.genymobile.scrcpy.control.Controller.control(Controller.java:246)\n", exception)
	return fmt.Errorf("%w: %s", errCrashed, exception)
}

// apply performs one control message. A failure to answer the client, or
// errCrashed, is returned: injection failures are logged, as Android drops
// them.
func (s *session) apply(ctx context.Context, m control) error {
	switch m.typ {
	case typeInjectKeycode:
		if m.action != keyActionUp {
			return nil // the virtual phone presses a key on its release
		}
		code, meta := uint32(m.keycode), uint32(m.metaState)
		if k, ok := scrcpy.KeyOf(code); ok {
			s.act(ctx, sdk.Action{Kind: sdk.ActKey, Key: k})
		} else if meta&scrcpy.MetaCtrlOn != 0 {
			s.shortcut(ctx, code)
		} else if c := scrcpy.KeycodeChar(code, meta); c != "" {
			s.act(ctx, sdk.Action{Kind: sdk.ActType, Text: c})
		} else {
			s.log.log(levelDebug, "Keycode %d has no effect on the virtual phone", m.keycode)
		}
	case typeInjectText:
		if t := s.typeable(m.text); t != "" {
			s.act(ctx, sdk.Action{Kind: sdk.ActType, Text: t})
		}
	case typeInjectTouch:
		s.touch(ctx, m)
	case typeInjectScroll:
		s.scroll(ctx, m)
	case typeBackOrScreenOn:
		scr, err := s.drv.Screen(ctx, s.device, s.display)
		switch {
		case err == nil && !scr.ScreenOn:
			if m.action == keyActionDown {
				s.act(ctx, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake})
			}
		case m.action == keyActionUp:
			s.act(ctx, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack})
		}
	case typeExpandNotificationPanel, typeExpandSettingsPanel:
		// The shade is the phone's own screen's, whichever display the
		// session shows.
		if scr, err := s.drv.Screen(ctx, s.device, 0); err == nil {
			w, h := scr.Width, scr.Height
			s.actOn(ctx, 0, sdk.Action{Kind: sdk.ActSwipe, Point: sdk.Point{X: w / 2, Y: 1}, To: sdk.Point{X: w / 2, Y: h / 2}})
		}
	case typeCollapsePanels:
		if scr, err := s.drv.Screen(ctx, s.device, 0); err == nil && hasPanel(scr) {
			s.actOn(ctx, 0, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyBack})
		}
	case typeGetClipboard:
		return s.getClipboard(ctx, m.copyKey)
	case typeSetClipboard:
		return s.setClipboard(ctx, m.text, m.paste, m.sequence)
	case typeSetDisplayPower:
		// The phone's own screen's power, as the real server sets it.
		if m.on {
			s.actOn(ctx, 0, sdk.Action{Kind: sdk.ActKey, Key: sdk.KeyWake})
		} else {
			s.log.log(levelInfo, "Display power off is not simulated: the virtual screen stays on")
		}
	case typeRotateDevice:
		s.rotateDevice(ctx)
	case typeUHIDCreate, typeUHIDInput, typeUHIDDestroy:
		// The real server makes a UHID keyboard, mouse or gamepad; the
		// virtual phone has none, so their events go nowhere.
		if m.typ == typeUHIDCreate {
			s.log.log(levelWarn, "UHID device %d (%s) is not simulated: its input has no effect", m.id, m.text)
		}
	case typeOpenHardKeyboardSettings:
		// android.settings.HARD_KEYBOARD_SETTINGS is a page of Settings.
		s.act(ctx, sdk.Action{Kind: sdk.ActLaunch, AppID: "com.android.settings"})
	case typeStartApp:
		s.startApp(ctx, m.text)
	case typeResetVideo:
		if s.video != nil {
			s.log.log(levelInfo, "Video capture reset")
			select {
			case s.reset <- struct{}{}:
			default: // a reset is already pending
			}
		}
	case typeCameraSetTorch, typeCameraZoomIn, typeCameraZoomOut:
		// Camera messages on a display session reach the end of
		// handleEvent, which throws.
		return s.crash(fmt.Sprintf("java.lang.AssertionError: Unexpected message type: %d", m.typ))
	case typeResizeDisplay:
		if !s.o.newDisplaySet {
			// The real server casts its capture to NewDisplayCapture.
			return s.crash("java.lang.ClassCastException: com.genymobile.scrcpy.video.ScreenCapture cannot be cast to com.genymobile.scrcpy.video.NewDisplayCapture")
		}
		s.log.log(levelWarn, "Display resize to %dx%d is not supported by the virtual phone", m.width, m.height)
	case typeScanFile:
		// A media scan broadcast: the virtual phone has no media store.
		s.log.log(levelDebug, "Media scan of %s has no effect on the virtual phone", m.text)
	}
	return nil
}

// startApp launches an app on the session's display, as Controller.startApp
// does: "+" force-stops it first, "?" finds it by label; what it does or
// why it cannot is logged with the real server's words. (The real server
// does it on a thread of its own; here the control loop waits, which keeps
// the order of the messages.)
func (s *session) startApp(ctx context.Context, name string) {
	force := strings.HasPrefix(name, "+")
	name = strings.TrimPrefix(name, "+")
	byLabel := strings.HasPrefix(name, "?")
	name = strings.TrimPrefix(name, "?")
	var apps []sdk.App
	if l, ok := s.drv.(sdk.AppLister); ok {
		var err error
		if apps, err = l.ListApps(ctx, s.device); err != nil {
			s.log.log(levelWarn, "Could not list apps: %v", err)
			return
		}
	}
	var found []sdk.App
	for _, a := range apps {
		if (!byLabel && a.ID == name) || (byLabel && strings.EqualFold(a.Label, name)) {
			found = append(found, a)
		}
	}
	switch {
	case len(found) == 0 && byLabel:
		s.log.log(levelWarn, "No app found for name \"%s\"", name)
		return
	case len(found) == 0:
		s.log.log(levelWarn, "No app found for package \"%s\"", name)
		return
	case len(found) > 1:
		s.log.log(levelWarn, "No unique app found for name \"%s\"", name)
		return
	}
	app := found[0]
	s.log.log(levelInfo, "Starting app \"%s\" [%s] on display %d...", app.Label, app.ID, s.display)
	if force {
		s.act(ctx, sdk.Action{Kind: sdk.ActStop, AppID: app.ID})
	}
	s.act(ctx, sdk.Action{Kind: sdk.ActLaunch, AppID: app.ID})
}

// hasPanel reports whether the notification shade is open.
func hasPanel(scr *sdk.Screen) bool {
	for _, e := range scr.Elements {
		if strings.HasSuffix(e.ResourceID, "notification_panel") {
			return true
		}
	}
	return false
}

// selecter selects the focused field's whole text, as the sim's driver
// offers (Driver.SelectAll).
type selecter interface {
	SelectAll(ctx context.Context, deviceID string, displayID int) error
}

// shortcut applies a key pressed with Ctrl, as a text field's
// TextView.onKeyShortcut does: Ctrl+A selects all of the focused field's
// text. A key with Ctrl types no character (KeyEvent.getUnicodeChar is 0
// with META_CTRL_ON), so the other shortcuts have no effect here.
func (s *session) shortcut(ctx context.Context, code uint32) {
	sel, ok := s.drv.(selecter)
	if code != scrcpy.KeycodeA || !ok {
		s.log.log(levelDebug, "Keycode %d with Ctrl has no effect on the virtual phone", code)
		return
	}
	if err := sel.SelectAll(ctx, s.device, s.display); err != nil && ctx.Err() == nil {
		s.log.log(levelDebug, "Could not select all: %v", err)
	}
}

// phoneClipboard is the phone's own clipboard, which the sim's driver
// offers; a driver without one gets a clipboard per session.
type phoneClipboard interface {
	Clipboard(ctx context.Context, deviceID string) (string, error)
	SetClipboard(ctx context.Context, deviceID, text string) error
}

// clipboard returns the phone's clipboard text and whether it has one
// (Device.getClipboardText is null for an empty clipboard).
func (s *session) clipboard(ctx context.Context) (string, bool) {
	if pc, ok := s.drv.(phoneClipboard); ok {
		text, err := pc.Clipboard(ctx, s.device)
		if err != nil {
			s.log.log(levelDebug, "Could not read the clipboard: %v", err)
			return "", false
		}
		return text, text != ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clip, s.hasClip
}

// getClipboard answers GET_CLIPBOARD as Controller.getClipboard does: it
// presses COPY or CUT first when asked, then sends the clipboard only
// without clipboard autosync (with it, the real server sends a clipboard
// when it changes, and not twice) and only when there is one.
func (s *session) getClipboard(ctx context.Context, copyKey int) error {
	if copyKey == copyKeyCopy || copyKey == copyKeyCut {
		// Nothing is ever selected on the virtual phone: the key
		// copies nothing, as on a phone with no selection.
		s.log.log(levelDebug, "Keycode %s has no effect on the virtual phone", map[int]string{copyKeyCopy: "COPY", copyKeyCut: "CUT"}[copyKey])
	}
	if s.o.clipboardAutosync {
		return nil
	}
	text, ok := s.clipboard(ctx)
	if !ok {
		return nil
	}
	return s.send(clipboardMessage(text))
}

// clipboardWatcher is a phone that tells of its clipboard's changes (the
// sim's), as Android's ClipboardManager calls its primary clip listeners.
// changed runs on the goroutine that set the clipboard and must not block.
type clipboardWatcher interface {
	WatchClipboard(ctx context.Context, deviceID string, changed func(text string)) (stop func(), err error)
}

// watchClipboard starts listening to the phone's clipboard, as the real
// Controller does with clipboard_autosync: every change but the session's
// own SET_CLIPBOARD is queued for syncClipboard. It returns the function
// that stops listening, or nil when the phone cannot tell of its changes
// (a clipboard of the session's own changes only by SET_CLIPBOARD).
func (s *session) watchClipboard(ctx context.Context) (stop func()) {
	w, ok := s.drv.(clipboardWatcher)
	if !ok {
		return nil
	}
	s.clipSignal = make(chan struct{}, 1)
	stop, err := w.WatchClipboard(ctx, s.device, func(text string) {
		if s.settingClip.Load() {
			return // the notification of the change this session is making
		}
		if text == "" {
			return // Device.getClipboardText is null: nothing to send
		}
		s.clipMu.Lock()
		s.clipQueue = append(s.clipQueue, text)
		s.clipMu.Unlock()
		select {
		case s.clipSignal <- struct{}{}:
		default:
		}
	})
	if err != nil {
		s.log.log(levelWarn, "No clipboard manager, copy-paste between device and computer will not work")
		return nil
	}
	return stop
}

// syncClipboard sends a CLIPBOARD device message for each change queued by
// watchClipboard, in order, until ctx ends or the client leaves.
func (s *session) syncClipboard(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.clipSignal:
		}
		s.clipMu.Lock()
		queue := s.clipQueue
		s.clipQueue = nil
		s.clipMu.Unlock()
		for _, text := range queue {
			if err := s.send(clipboardMessage(text)); err != nil {
				return
			}
		}
	}
}

// setClipboard applies SET_CLIPBOARD as Controller.setClipboard does: it
// sets the clipboard unless it holds the text already
// (Device.setClipboardText, so that a paste does not notify twice), with
// autosync not sending that change back; pastes it when asked (the PASTE
// key types the clipboard into the focused field); and acknowledges a
// sequence other than 0.
func (s *session) setClipboard(ctx context.Context, text string, paste bool, sequence uint64) error {
	ok := true
	if pc, has := s.drv.(phoneClipboard); has {
		current, err := pc.Clipboard(ctx, s.device)
		switch {
		case err == nil && current == text && text != "":
			ok = false // already set: the real server does not set it again
		default:
			s.settingClip.Store(true)
			err := pc.SetClipboard(ctx, s.device, text)
			s.settingClip.Store(false)
			if err != nil {
				s.log.log(levelDebug, "Could not set the clipboard: %v", err)
				ok = false
			}
		}
	} else {
		s.mu.Lock()
		if s.hasClip && s.clip == text && text != "" {
			ok = false
		}
		s.clip, s.hasClip = text, true
		s.mu.Unlock()
	}
	if ok {
		s.log.log(levelInfo, "Device clipboard set")
	}
	if paste && text != "" {
		s.act(ctx, sdk.Action{Kind: sdk.ActType, Text: text})
	}
	if sequence != 0 {
		return s.send(ackClipboardMessage(sequence))
	}
	return nil
}

// send writes one device message on the control socket.
func (s *session) send(b []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.control.Write(b)
	return err
}

// act performs a on the session's display, logging a failure.
func (s *session) act(ctx context.Context, a sdk.Action) {
	s.actOn(ctx, s.display, a)
}

// actOn performs a on a display of the phone, logging a failure.
func (s *session) actOn(ctx context.Context, display int, a sdk.Action) {
	a.DisplayID = display
	if _, err := s.drv.Act(ctx, s.device, a); err != nil && ctx.Err() == nil {
		s.log.log(levelDebug, "Could not inject %s: %v", a.Kind, err)
	}
}

// screenSize is the session's display's size in its current orientation.
func (s *session) screenSize(ctx context.Context) (int, int, bool) {
	scr, err := s.drv.Screen(ctx, s.device, s.display)
	if err != nil || scr.Width <= 0 || scr.Height <= 0 {
		return 0, 0, false
	}
	return scr.Width, scr.Height, true
}

// position checks an event's frame against the video size, as PositionMapper
// does: an event made for another size (before a rotation) is dropped.
func (s *session) position(p position) (sdk.Point, bool) {
	x, y, w, h := p.x, p.y, p.width, p.height
	s.mu.Lock()
	vw, vh := s.vw, s.vh
	s.mu.Unlock()
	if int(w) != vw || int(h) != vh {
		s.log.log(levelVerbose, "Ignore positional event generated for size %dx%d (current size is %dx%d)", w, h, vw, vh)
		return sdk.Point{}, false
	}
	return sdk.Point{X: int(x), Y: int(y)}, true
}

// toScreen maps a point of the video frame to the phone's screen.
func toScreen(p sdk.Point, vw, vh, sw, sh int) sdk.Point {
	x := min(max(p.X*sw/vw, 0), sw-1)
	y := min(max(p.Y*sh/vh, 0), sh-1)
	return sdk.Point{X: x, Y: y}
}

// touch follows each finger; when it lifts, the whole gesture becomes one
// action: a tap, a long press, or a swipe, or with two fingers a pinch.
func (s *session) touch(ctx context.Context, m control) {
	pt, ok := s.position(m.pos)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.pointers == nil {
		s.pointers = map[uint64]*gesture{}
	}
	g := s.pointers[m.pointerID]
	var pair [2]gesture // for a pinch: this finger and its partner, copied under mu
	switch m.action {
	case motionDown:
		n := &gesture{from: pt, at: pt, down: time.Now()}
		if others := s.downFingers(); len(others) == 1 {
			n.partner, others[0].partner = others[0], n
		}
		s.pointers[m.pointerID] = n
		g = nil
	case motionMove:
		if g != nil {
			g.at = pt
		}
		g = nil
	case motionUp:
		delete(s.pointers, m.pointerID)
		switch {
		case g == nil:
		case g.spent:
			g = nil
		case g.partner != nil:
			g.at = pt
			g.partner.spent = true
			pair = [2]gesture{*g, *g.partner}
		default:
			g.at = pt
		}
	default: // motionCancel and the rest: the gesture is dropped
		if g != nil && g.partner != nil {
			g.partner.spent = true
		}
		delete(s.pointers, m.pointerID)
		g = nil
	}
	s.mu.Unlock()
	if g == nil {
		return
	}
	sw, sh, ok := s.screenSize(ctx)
	if !ok {
		return
	}
	if g.partner != nil {
		s.pinch(ctx, pair, int(m.pos.width), int(m.pos.height), sw, sh)
		return
	}
	from := toScreen(g.from, int(m.pos.width), int(m.pos.height), sw, sh)
	to := toScreen(g.at, int(m.pos.width), int(m.pos.height), sw, sh)
	held := time.Since(g.down)
	slop := max(sw/slopDivisor, 1)
	dx, dy := to.X-from.X, to.Y-from.Y
	switch {
	case dx*dx+dy*dy > slop*slop:
		s.act(ctx, sdk.Action{Kind: sdk.ActSwipe, Point: from, To: to, Duration: held})
	case held >= longPress:
		s.act(ctx, sdk.Action{Kind: sdk.ActLongPress, Point: from, Duration: held})
	default:
		s.act(ctx, sdk.Action{Kind: sdk.ActTap, Point: from})
	}
}

// downFingers are the fingers down and not yet spent. s.mu is held.
func (s *session) downFingers() []*gesture {
	var out []*gesture
	for _, g := range s.pointers {
		if !g.spent {
			out = append(out, g)
		}
	}
	return out
}

// pinch performs two fingers' gestures as the sim's pinch: centred between
// where they went down, scaled by how far apart they end over how far apart
// they began. vw, vh is the video size, sw, sh the screen's.
func (s *session) pinch(ctx context.Context, pair [2]gesture, vw, vh, sw, sh int) {
	a0, b0 := toScreen(pair[0].from, vw, vh, sw, sh), toScreen(pair[1].from, vw, vh, sw, sh)
	a1, b1 := toScreen(pair[0].at, vw, vh, sw, sh), toScreen(pair[1].at, vw, vh, sw, sh)
	from := math.Hypot(float64(a0.X-b0.X), float64(a0.Y-b0.Y))
	if from < 1 {
		s.log.log(levelDebug, "two fingers went down on one spot: no pinch")
		return
	}
	scale := int(math.Round(math.Hypot(float64(a1.X-b1.X), float64(a1.Y-b1.Y)) / from * 1000))
	scale = min(max(scale, sdk.MinPinchScale), sdk.MaxPinchScale)
	if scale == 1000 {
		return // the fingers kept their distance
	}
	center := sdk.Point{X: (a0.X + b0.X) / 2, Y: (a0.Y + b0.Y) / 2}
	first := pair[0].down
	if pair[1].down.Before(first) {
		first = pair[1].down
	}
	held := time.Since(first)
	s.act(ctx, sdk.Action{Kind: sdk.ActPinch, Point: center, Scale: scale, Duration: held})
}

// scroll turns a wheel event into a scroll action at its position.
func (s *session) scroll(ctx context.Context, m control) {
	pt, ok := s.position(m.pos)
	if !ok {
		return
	}
	sw, sh, ok := s.screenSize(ctx)
	if !ok {
		return
	}
	a := sdk.Action{Kind: sdk.ActScroll, Point: toScreen(pt, int(m.pos.width), int(m.pos.height), sw, sh), HasPoint: true}
	// Android's wheel: positive VSCROLL shows what is above, positive HSCROLL what is right.
	var amount float32
	switch {
	case m.vScroll > 0:
		a.Direction, amount = sdk.ScrollUp, m.vScroll
	case m.vScroll < 0:
		a.Direction, amount = sdk.ScrollDown, -m.vScroll
	case m.hScroll > 0:
		a.Direction, amount = sdk.ScrollRight, m.hScroll
	case m.hScroll < 0:
		a.Direction, amount = sdk.ScrollLeft, -m.hScroll
	default:
		return
	}
	a.Amount = min(max(int(amount*150), 50), 1000) // one wheel step: 15% of the screen
	s.act(ctx, a)
}

// composable are the accented letters the real server types with a dead key
// and the letter (KeyComposition.java); the virtual keyboard's key map has
// no other character beyond ASCII.
const composable = "ÀÈÌÒÙàèìòùǸǹẀẁỲỳÁÉÍÓÚÝáéíóúýĆćĹĺŃńŔŕŚśŹźǴǵḈḉḰḱḾḿṔṕẂẃÂÊÎÔÛâêîôûĈĉĜĝĤĥĴĵŜŝŴŵŶŷẐẑÃÑÕãñõĨĩŨũẼẽỸỹÄËÏÖÜäëïöüÿŸḦḧẄẅẌẍẗ"

// typeable is what of text the real server's INJECT_TEXT types
// (Controller.injectText): each UTF-16 unit the virtual keyboard's key map
// has keys for (printable ASCII, tab and newline, and the composable
// letters) is typed; for any other it logs "Could not inject char u+XXXX"
// and goes on, so an emoji or a CJK character is dropped, as on a phone.
func (s *session) typeable(text string) string {
	var b strings.Builder
	for _, r := range text {
		if r == '\n' || r == '\t' || (r >= 0x20 && r < 0x7f) || strings.ContainsRune(composable, r) {
			b.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			s.log.log(levelWarn, "Could not inject char u+%04x", u)
		}
	}
	return b.String()
}
