package video

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Limits of the sink.
const (
	// Each subscriber queues at most this much; a subscriber that falls
	// further behind misses frames until the next key frame.
	subscriberPackets = 64 // two seconds at 30 fps
	subscriberBytes   = 16 << 20
	// keyFrameEvery spaces the KEYFRAMEs sent for subscribers (a new one,
	// or one that fell behind) while a requested key frame has not come.
	keyFrameEvery = 500 * time.Millisecond
	// stillTimeout bounds a Still when ctx has no earlier deadline.
	stillTimeout = 10 * time.Second
	// maxStills is how many Stills may wait for the phone at once.
	maxStills = 4
)

// ReceiverConfig configures the sink of one phone's broadcast.
type ReceiverConfig struct {
	// DeviceID is the phone's id; the broadcast must claim the same.
	DeviceID string
	// Secret is the phone's pairing secret (SecretSize bytes).
	Secret []byte
	// Listen is the "host:port" to accept the phone's connection on; ""
	// means do not listen.
	Listen string
	// Dial is the phone's "host:port" to connect to; "" means do not dial.
	// Exactly one of Listen and Dial is set.
	Dial string
	// Logger receives the receiver's logs; nil discards them.
	Logger *slog.Logger
	// Ping is how often to PING the phone, and Dead how long the phone may
	// stay silent before the connection counts as dead; 0 means
	// DefaultPing and DefaultDead.
	Ping, Dead time.Duration
	// OnLive, when not nil, is called with true when a broadcast starts
	// (Live becomes true) and false when it stops. Calls are serialized,
	// made without holding the receiver's locks, and report only changes; a
	// drop that is over before a call is made may not be reported.
	OnLive func(live bool)
}

// Receiver is the sink of one phone's broadcast. It keeps one connection
// to the phone, made by listening or by dialing, fans the video out to its
// subscribers and asks the phone for stills. Its methods may be called
// concurrently; Run is called once.
type Receiver struct {
	cfg      ReceiverConfig
	log      *slog.Logger
	ln       net.Listener
	stats    counters
	stills   chan struct{} // a slot per Still waiting for the phone
	liveWake chan struct{} // cap 1: Live may have changed
	closed   chan struct{} // closed by Close, and when Run returns
	running  atomic.Bool
	once     sync.Once

	// mu guards the fields below and, after it in lock order, each
	// subscriber's queue.
	mu       sync.Mutex
	cur      *sinkSession // the connection being served; nil when none
	subs     map[*subscriber]struct{}
	keyAsked time.Time // the last automatic KEYFRAME; zero once a key frame came
}

// sinkSession is a connection being served. config, nextID and stills are
// guarded by the Receiver's mu; config is written only by the session's
// reader.
type sinkSession struct {
	c      *conn
	config *config // the latest CONFIG; nil before the first
	keyDue bool    // a CONFIG came, and no key frame since (only the reader uses it)
	nextID uint32
	stills map[uint32]chan still
	done   chan struct{} // closed when the connection has ended
}

// subscriber is one Subscribe call's queue.
type subscriber struct {
	mu   sync.Mutex
	q    *packetQueue
	wake chan struct{} // cap 1
}

func (s *subscriber) offer(p sdk.VideoPacket) (int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dropped, begun := s.q.offer(p)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return dropped, begun
}

func (s *subscriber) pop() (sdk.VideoPacket, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.q.pop()
}

// NewReceiver checks cfg and, when it listens, binds the listener now, so
// that Listen may name port 0 and Addr tells the port.
func NewReceiver(cfg ReceiverConfig) (*Receiver, error) {
	if err := checkCommon(cfg.DeviceID, cfg.Secret, cfg.Listen, cfg.Dial, &cfg.Ping, &cfg.Dead); err != nil {
		return nil, err
	}
	r := &Receiver{
		cfg: cfg, log: cfg.Logger,
		stills: make(chan struct{}, maxStills), liveWake: make(chan struct{}, 1), closed: make(chan struct{}),
		subs: map[*subscriber]struct{}{},
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("video: device %q: %w", cfg.DeviceID, err)
		}
		r.ln = ln
	}
	return r, nil
}

// checkCommon checks what a ReceiverConfig and a SourceConfig share, and
// fills in the default timing.
func checkCommon(device string, secret []byte, listen, dial string, ping, dead *time.Duration) error {
	if err := checkDeviceID(device); err != nil {
		return fmt.Errorf("video: %w", err)
	}
	if len(secret) != SecretSize {
		return fmt.Errorf("video: device %q: pairing secret of %d bytes; want %d", device, len(secret), SecretSize)
	}
	if (listen == "") == (dial == "") {
		return fmt.Errorf("video: device %q: set exactly one of Listen and Dial", device)
	}
	if dial != "" {
		if _, _, err := net.SplitHostPort(dial); err != nil {
			return fmt.Errorf("video: device %q: dial address: %w", device, err)
		}
	}
	if *ping == 0 {
		*ping = DefaultPing
	}
	if *dead == 0 {
		*dead = DefaultDead
	}
	if *ping < 0 || *dead <= *ping {
		return fmt.Errorf("video: device %q: ping %v and dead %v: want 0 < ping < dead", device, *ping, *dead)
	}
	return nil
}

// Addr returns the listening address, or nil when the receiver dials.
func (r *Receiver) Addr() net.Addr {
	if r.ln == nil {
		return nil
	}
	return r.ln.Addr()
}

// Run serves the phone's broadcast until ctx ends, then returns nil:
// it accepts or dials, reconnecting (with backoff when dialing) whenever
// the connection drops, whatever the reason. It may be called once; when
// it returns, the listener is closed and Subscribe returns ErrClosed.
func (r *Receiver) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("video: Receiver.Run called twice")
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() { // Close ends Run
		select {
		case <-r.closed:
		case <-ctx.Done():
		}
		cancel()
	}()
	notifyStop, notified := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(notified)
		r.notify(notifyStop)
	}()
	// When the link returns, every connection has ended: the notifier's
	// last report is OnLive(false), if it had reported true.
	defer func() {
		close(notifyStop)
		<-notified
		cancel()
		r.Close()
	}()

	l := &link{
		role: roleSink, device: r.cfg.DeviceID, secret: r.cfg.Secret, dial: r.cfg.Dial, ln: r.ln,
		ping: r.cfg.Ping, dead: r.cfg.Dead, log: r.log, stats: &r.stats,
		serve: r.serve,
		fatal: func(error) (bool, error) { return false, nil },
	}
	return l.run(ctx)
}

// Close stops Run, or releases the listener of a Receiver that never ran.
func (r *Receiver) Close() error {
	r.once.Do(func() {
		close(r.closed)
		if r.ln != nil {
			r.ln.Close()
		}
	})
	return nil
}

// notify reports Live's changes to OnLive until stop is closed, and then
// reports false if it last reported true.
func (r *Receiver) notify(stop <-chan struct{}) {
	last := false
	report := func() {
		if live := r.Live(); live != last {
			last = live
			if r.cfg.OnLive != nil {
				r.cfg.OnLive(live)
			}
		}
	}
	for {
		select {
		case <-r.liveWake:
			report()
		case <-stop:
			report() // no connection is left: Live is false
			return
		}
	}
}

func (r *Receiver) liveChanged() {
	select {
	case r.liveWake <- struct{}{}:
	default:
	}
}

// Live reports whether a broadcast runs: a source is connected,
// authenticated, and has sent its CONFIG.
func (r *Receiver) Live() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur != nil && r.cur.config != nil
}

// Format describes the picture of the running broadcast.
type Format struct {
	Codec         sdk.Codec
	Width, Height int
	// Rotation is how many degrees clockwise a viewer turns the decoded
	// picture to show it upright: 0, 90, 180 or 270. Sources should send
	// upright pictures, so it is usually 0.
	Rotation int
}

// Format returns the running broadcast's picture format, and false when
// none runs.
func (r *Receiver) Format() (Format, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur == nil || r.cur.config == nil {
		return Format{}, false
	}
	c := r.cur.config
	return Format{Codec: sdk.CodecH264, Width: c.width, Height: c.height, Rotation: 90 * int(c.rotation)}, true
}

// Stats returns the receiver's counters.
func (r *Receiver) Stats() Stats { return r.stats.snapshot() }

// Subscribe calls send with the current CONFIG and then frames starting at
// a key frame (requesting one), until ctx ends (it returns nil) or send
// fails (it returns send's error). While no broadcast runs it waits for
// one; it survives reconnects, going on with the new connection's CONFIG
// and key frame. A subscriber that falls behind misses frames up to the
// next key frame, which is requested for it. It returns ErrClosed once the
// receiver has stopped. Packets share their data between subscribers: send
// must not modify it.
func (r *Receiver) Subscribe(ctx context.Context, send func(sdk.VideoPacket) error) error {
	sub := &subscriber{q: newPacketQueue(subscriberPackets, subscriberBytes), wake: make(chan struct{}, 1)}
	r.mu.Lock()
	select {
	case <-r.closed:
		r.mu.Unlock()
		return ErrClosed
	default:
	}
	r.subs[sub] = struct{}{}
	ask := false
	if s := r.cur; s != nil && s.config != nil {
		sub.offer(configPacket(s.config))
		ask = true
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.subs, sub)
		r.mu.Unlock()
	}()
	if ask {
		r.askKeyFrame(false)
	}
	for ctx.Err() == nil {
		if p, ok := sub.pop(); ok {
			if err := send(p); err != nil {
				return err
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-r.closed:
			return ErrClosed
		case <-sub.wake:
		}
	}
	return nil
}

// RequestKeyFrame asks the broadcast for a key frame soon. It is
// ErrNoBroadcast when none runs.
func (r *Receiver) RequestKeyFrame() error { return r.askKeyFrame(true) }

// askKeyFrame sends a KEYFRAME. Unless forced, it sends none while an
// earlier one, younger than keyFrameEvery, still waits for its key frame.
func (r *Receiver) askKeyFrame(force bool) error {
	r.mu.Lock()
	s := r.cur
	if s == nil || s.config == nil {
		r.mu.Unlock()
		return ErrNoBroadcast
	}
	if !force && !r.keyAsked.IsZero() && time.Since(r.keyAsked) < keyFrameEvery {
		r.mu.Unlock()
		return nil
	}
	r.keyAsked = time.Now()
	r.mu.Unlock()
	if err := s.c.send(newMsg(msgKeyFrame, 0, nil)); err != nil {
		return fmt.Errorf("video: key frame request: %w: %w", ErrNoBroadcast, err)
	}
	r.stats.keyFrameRequests.Add(1)
	return nil
}

// Still asks the broadcast for a JPEG of its latest frame, at most maxSide
// pixels on its longer side (0: full size) and of JPEG quality 1–100 (0:
// the phone's default). It is ErrNoBroadcast when none runs or the
// connection drops before the answer, and wraps ErrStill when the phone
// cannot make one (ErrNoFrame too when it has no frame yet). Unless ctx ends
// earlier it waits 10 s for the phone.
func (r *Receiver) Still(ctx context.Context, maxSide, quality int) ([]byte, error) {
	switch {
	case maxSide < 0:
		return nil, sdk.Invalid("still max side %d: want 0 or more", maxSide)
	case quality < 0 || quality > 100:
		return nil, sdk.Invalid("still quality %d: want 0 to 100", quality)
	case maxSide >= MaxSide:
		maxSide = 0 // no picture is larger
	}
	ctx, cancel := context.WithTimeout(ctx, stillTimeout)
	defer cancel()
	select {
	case r.stills <- struct{}{}:
		defer func() { <-r.stills }()
	case <-ctx.Done():
		return nil, fmt.Errorf("video: still: waiting for earlier stills: %w", ctx.Err())
	}

	r.mu.Lock()
	s := r.cur
	if s == nil || s.config == nil {
		r.mu.Unlock()
		return nil, ErrNoBroadcast
	}
	s.nextID++
	id := s.nextID
	reply := make(chan still, 1)
	s.stills[id] = reply
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(s.stills, id)
		r.mu.Unlock()
	}()

	if err := s.c.send(stillRequest{id: id, maxSide: maxSide, quality: quality}.msg()); err != nil {
		return nil, fmt.Errorf("video: still: %w", ErrNoBroadcast)
	}
	select {
	case st := <-reply:
		return stillResult(st)
	case <-s.done:
		return nil, fmt.Errorf("video: still: the connection closed first: %w", ErrNoBroadcast)
	case <-ctx.Done():
		return nil, fmt.Errorf("video: still: no answer from the phone: %w", ctx.Err())
	}
}

func stillResult(st still) ([]byte, error) {
	switch st.status {
	case stillOK:
		if len(st.data) < 3 || st.data[0] != 0xff || st.data[1] != 0xd8 {
			return nil, fmt.Errorf("%w: the phone's still is no JPEG", ErrStill)
		}
		return st.data, nil
	case stillNoFrame:
		return nil, fmt.Errorf("%w: %w: %s", ErrStill, ErrNoFrame, st.data)
	}
	return nil, fmt.Errorf("%w: %s: %s", ErrStill, st.status, st.data)
}

func configPacket(c *config) sdk.VideoPacket {
	return sdk.VideoPacket{Codec: sdk.CodecH264, Config: true, Width: c.width, Height: c.height, Data: c.params}
}

// Messages a sink accepts from a source.
var (
	sinkBeforeConfig = setOf("from the source before its first CONFIG",
		msgConfig, msgStill, msgPing, msgPong, msgStop, msgError)
	sinkStreaming = setOf("from a source", msgConfig, msgFrame, msgStill, msgPing, msgPong, msgStop, msgError)
)

// serve runs one connection to the phone.
func (r *Receiver) serve(ctx context.Context, c *conn) error {
	s := &sinkSession{c: c, stills: map[uint32]chan still{}, done: make(chan struct{})}
	r.mu.Lock()
	r.cur, r.keyAsked = s, time.Time{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.cur == s {
			r.cur = nil
		}
		r.mu.Unlock()
		close(s.done)
		r.liveChanged()
	}()
	accept := func() msgSet {
		if s.config == nil {
			return sinkBeforeConfig
		}
		return sinkStreaming
	}
	return c.run(ctx, accept, func(t msgType, p []byte) error { return r.handle(s, t, p) })
}

// handle acts on one message from the source.
func (r *Receiver) handle(s *sinkSession, t msgType, p []byte) error {
	switch t {
	case msgConfig:
		cfg, err := parseConfig(p)
		if err != nil {
			return err
		}
		s.keyDue = true
		r.mu.Lock()
		first := s.config == nil
		s.config = &cfg
		r.offerLocked(configPacket(&cfg))
		r.mu.Unlock()
		r.log.Info("video: config", "device", r.cfg.DeviceID, "width", cfg.width, "height", cfg.height, "rotation", 90*int(cfg.rotation))
		if first {
			r.liveChanged()
		}
	case msgFrame:
		f, err := parseFrame(p)
		if err != nil {
			return err
		}
		r.stats.framesIn.Add(1)
		r.stats.bytesIn.Add(int64(len(f.data)))
		r.mu.Lock()
		if f.key {
			r.keyAsked = time.Time{}
		}
		begun := r.offerLocked(sdk.VideoPacket{
			Codec: sdk.CodecH264, KeyFrame: f.key, PTS: time.Duration(f.pts) * time.Microsecond,
			Width: s.config.width, Height: s.config.height, Data: f.data,
		})
		r.mu.Unlock()
		// A source must follow a CONFIG with a key frame; until one comes no
		// subscriber gets a frame, so ask for it rather than wait.
		late := s.keyDue && !f.key
		s.keyDue = s.keyDue && !f.key
		if begun || late {
			r.askKeyFrame(false)
		}
		// Let the subscribers just handed the frame run before the next
		// read: a reader that always finds data keeps its P, and on a
		// machine with few cores would starve them into dropping.
		runtime.Gosched()
	case msgStill:
		st, err := parseStill(p)
		if err != nil {
			return err
		}
		r.mu.Lock()
		reply := s.stills[st.id]
		r.mu.Unlock()
		if reply == nil {
			r.log.Debug("video: a still nobody waits for", "device", r.cfg.DeviceID, "id", st.id)
			return nil
		}
		select {
		case reply <- st:
		default: // a second answer to one request: the first counts
		}
	case msgStop:
		code, text := parseText(p)
		return &peerStop{stopReason(code), text}
	}
	return nil
}

// offerLocked gives p to every subscriber and reports whether one of them
// has begun to drop frames.
func (r *Receiver) offerLocked(p sdk.VideoPacket) bool {
	begun := false
	for sub := range r.subs {
		dropped, b := sub.offer(p)
		r.stats.framesDropped.Add(int64(dropped))
		begun = begun || b
	}
	return begun
}
