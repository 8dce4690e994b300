package stream

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Defaults for Options left zero.
const (
	DefaultMaxQueuePackets  = 2048
	DefaultMaxQueueBytes    = 64 << 20
	DefaultKeyFrameInterval = time.Second
)

var (
	// ErrClosed is a member's error after its Close.
	ErrClosed = errors.New("stream: member closed")
	// ErrStreamEnded is the members' error when the driver's stream ended
	// without an error while they were still watching.
	ErrStreamEnded = errors.New("stream: driver ended the stream")
	// errDetached is what send returns to a stream the hub no longer uses.
	errDetached = errors.New("stream: stream closed by the hub")
)

// OpenFunc runs the driver's stream: it calls send with each packet until
// ctx ends (return nil then) or send fails (return its error), like
// sdk.Streamer.StreamVideo.
type OpenFunc func(ctx context.Context, send func(sdk.VideoPacket) error) error

// KeyFrameFunc asks the running stream for a key frame soon, like
// sdk.Streamer.RequestKeyFrame.
type KeyFrameFunc func(ctx context.Context) error

// Options tune a Hub. Zero fields take the defaults.
type Options struct {
	// MaxQueuePackets and MaxQueueBytes bound a member's queue: past
	// either, the member skips to the next key frame. They also bound the
	// hub's GOP cache: a longer GOP is not cached, and a late joiner waits
	// for the next key frame.
	MaxQueuePackets int
	MaxQueueBytes   int
	// KeyFrameInterval is the least time between two key frame requests.
	KeyFrameInterval time.Duration
}

func (o Options) withDefaults() Options {
	if o.MaxQueuePackets <= 0 {
		o.MaxQueuePackets = DefaultMaxQueuePackets
	}
	if o.MaxQueueBytes <= 0 {
		o.MaxQueueBytes = DefaultMaxQueueBytes
	}
	if o.KeyFrameInterval <= 0 {
		o.KeyFrameInterval = DefaultKeyFrameInterval
	}
	return o
}

// Hub shares one screen's stream among its members. Its methods may be
// called concurrently.
type Hub struct {
	open     OpenFunc
	keyFrame KeyFrameFunc
	opts     Options

	mu          sync.Mutex
	members     map[*Member]struct{}
	sess        *session // the running stream; nil when there is none
	last        chan struct{}
	lastKeyReq  time.Time // when the last key frame request was made
	keyInFlight bool
}

// session is one run of the driver's stream.
type session struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{} // closed once open has returned and requests are over
	wg     sync.WaitGroup

	config  *sdk.VideoPacket // the last config packet
	gop     []sdk.VideoPacket
	gopSize int
	gopOK   bool // gop starts at a key frame and is complete since
	sent    bool // a packet has been sent
}

// NewHub returns a hub that opens streams with open and asks for key frames
// with keyFrame.
func NewHub(open OpenFunc, keyFrame KeyFrameFunc, opts Options) *Hub {
	return &Hub{
		open:     open,
		keyFrame: keyFrame,
		opts:     opts.withDefaults(),
		members:  make(map[*Member]struct{}),
	}
}

// ForStreamer returns a hub for the screen req names, streamed by s.
func ForStreamer(s sdk.Streamer, req sdk.VideoRequest, opts Options) *Hub {
	return NewHub(
		func(ctx context.Context, send func(sdk.VideoPacket) error) error {
			return s.StreamVideo(ctx, req, send)
		},
		func(ctx context.Context) error {
			return s.RequestKeyFrame(ctx, req.DeviceID, req.DisplayID)
		},
		opts)
}

// Join adds a member, opening the driver's stream if none is running. The
// member leaves when it is closed or ctx ends (its Err is then ctx's error).
// The stream's own context keeps ctx's values but not its cancellation.
func (h *Hub) Join(ctx context.Context) (*Member, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := &Member{hub: h, notify: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.sess == nil {
		h.start(ctx) // m gets the stream from its config on
	} else if !h.sess.sent {
		// Nothing sent yet: m too gets the stream from its config on.
	} else if s := h.sess; s.gopOK && s.config != nil {
		m.q = append(m.q, *s.config)
		m.qBytes += len(s.config.Data)
		m.q = append(m.q, s.gop...)
		m.qBytes += s.gopSize
	} else {
		m.waitKey = true
		if s.config != nil {
			h.requestKeyFrame(s)
		}
	}
	h.members[m] = struct{}{}
	m.stop = context.AfterFunc(ctx, func() { m.leave(ctx.Err()) })
	h.mu.Unlock()
	return m, nil
}

// Stop ends every member with err (ErrStreamEnded when nil) and closes the
// driver's stream, e.g. when the gateway learns the phone is gone. Later
// joins open a new stream.
func (h *Hub) Stop(err error) {
	if err == nil {
		err = ErrStreamEnded
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != nil {
		h.sess.cancel()
		h.sess = nil
	}
	for m := range h.members {
		delete(h.members, m)
		m.end(err, false)
	}
}

// Members reports how many members the hub has.
func (h *Hub) Members() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.members)
}

// start opens a new stream; h.mu is held.
func (h *Hub) start(ctx context.Context) {
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &session{ctx: sctx, cancel: cancel, done: make(chan struct{})}
	prev := h.last
	h.sess, h.last = s, s.done
	h.keyInFlight, h.lastKeyReq = false, time.Time{}
	go func() {
		defer close(s.done)
		if prev != nil {
			<-prev // one stream per screen at a time
		}
		err := errDetached
		if sctx.Err() == nil {
			err = h.open(sctx, func(p sdk.VideoPacket) error { return h.send(s, p) })
		}
		h.ended(s, err)
		cancel()
		s.wg.Wait()
	}()
}

// ended handles the end of s's stream.
func (h *Hub) ended(s *session, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != s {
		return // closed by the hub: nobody is watching
	}
	h.sess = nil
	if err == nil || errors.Is(err, errDetached) {
		err = ErrStreamEnded
	}
	for m := range h.members {
		delete(h.members, m)
		m.end(err, false)
	}
}

// send takes one packet from s's driver stream. It never waits for a member.
func (h *Hub) send(s *session, p sdk.VideoPacket) error {
	p.Data = append([]byte(nil), p.Data...) // the driver may reuse its buffer
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sess != s {
		return errDetached
	}
	s.sent = true
	switch {
	case p.Config:
		c := p
		s.config = &c
		s.gop, s.gopSize, s.gopOK = s.gop[:0], 0, false
	case p.KeyFrame:
		clear(s.gop)
		s.gop, s.gopSize, s.gopOK = append(s.gop[:0], p), len(p.Data), true
	case s.gopOK:
		if len(s.gop)+2 > h.opts.MaxQueuePackets || s.gopSize+len(p.Data) > h.opts.MaxQueueBytes {
			clear(s.gop)
			s.gop, s.gopSize, s.gopOK = s.gop[:0], 0, false
		} else {
			s.gop = append(s.gop, p)
			s.gopSize += len(p.Data)
		}
	}
	skipped := false
	for m := range h.members {
		if m.push(p, s.config, &h.opts) {
			skipped = true
		}
	}
	if skipped {
		h.requestKeyFrame(s)
	}
	return nil
}

// requestKeyFrame asks s's driver for a key frame, unless one was asked for
// lately or is being asked for; h.mu is held.
func (h *Hub) requestKeyFrame(s *session) {
	if h.keyFrame == nil || h.keyInFlight || (!h.lastKeyReq.IsZero() && time.Since(h.lastKeyReq) < h.opts.KeyFrameInterval) {
		return
	}
	h.keyInFlight = true
	h.lastKeyReq = time.Now()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = h.keyFrame(s.ctx) // best effort: the next periodic key frame comes anyway
		h.mu.Lock()
		if h.sess == s {
			h.keyInFlight = false
		}
		h.mu.Unlock()
	}()
}

// RequestKeyFrame asks the driver for a key frame soon, for a member that
// dropped packets and can start again only at one (the recorder, after a
// screen it must not keep). Requests are rate-limited per hub
// (Options.KeyFrameInterval), so members may ask freely.
func (m *Member) RequestKeyFrame() {
	h := m.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.sess; s != nil && s.config != nil {
		h.requestKeyFrame(s)
	}
}

// Member is one watcher of a hub's stream, with its own queue.
type Member struct {
	hub  *Hub
	stop func() bool // stops the ctx watch of Join; set and called under hub.mu

	mu      sync.Mutex
	q       []sdk.VideoPacket // queued from q[head] on
	head    int
	qBytes  int
	waitKey bool // skipping to the next key frame
	skips   int
	notify  chan struct{}
	err     error // set once the member has ended
}

// Next returns the next packet. Once the member has ended it returns the
// reason: what was still queued is delivered first, except after Close.
// An error of ctx ends only this call.
func (m *Member) Next(ctx context.Context) (sdk.VideoPacket, error) {
	for {
		m.mu.Lock()
		if m.head < len(m.q) {
			p := m.q[m.head]
			m.q[m.head] = sdk.VideoPacket{}
			m.head++
			m.qBytes -= len(p.Data)
			if m.head == len(m.q) {
				m.q, m.head = m.q[:0], 0
			}
			m.mu.Unlock()
			return p, nil
		}
		err := m.err
		m.mu.Unlock()
		if err != nil {
			return sdk.VideoPacket{}, err
		}
		select {
		case <-m.notify:
		case <-ctx.Done():
			return sdk.VideoPacket{}, ctx.Err()
		}
	}
}

// Err reports why the member ended, nil while it has not.
func (m *Member) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// Skips reports how often the member fell behind and skipped to a key frame.
func (m *Member) Skips() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.skips
}

// Close leaves the hub; the last member to leave closes the driver's stream.
// Next returns ErrClosed from then on. Close may be called more than once.
func (m *Member) Close() {
	m.leave(ErrClosed)
}

// leave removes m from its hub, ending it with err.
func (m *Member) leave(err error) {
	h := m.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.members[m]; !ok {
		if errors.Is(err, ErrClosed) {
			m.end(err, true) // already ended by the stream: drop the rest
		}
		return
	}
	delete(h.members, m)
	m.end(err, errors.Is(err, ErrClosed))
	if len(h.members) == 0 && h.sess != nil {
		h.sess.cancel()
		h.sess = nil
	}
}

// end marks m ended with err, unless it already is; drop empties its queue.
// hub.mu is held.
func (m *Member) end(err error, drop bool) {
	if m.stop != nil {
		m.stop()
	}
	m.mu.Lock()
	if m.err == nil || drop {
		if m.err == nil {
			m.err = err
		}
		if drop {
			m.q, m.head, m.qBytes = nil, 0, 0
		}
	}
	m.mu.Unlock()
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

// push queues p for m, and reports whether m fell behind and now waits for
// a key frame.
func (m *Member) push(p sdk.VideoPacket, config *sdk.VideoPacket, o *Options) (skipped bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return false
	}
	if m.waitKey {
		if !p.KeyFrame {
			return false // the config comes again before the key frame
		}
		m.waitKey = false
		if config != nil {
			m.add(*config)
		}
	}
	m.add(p)
	if len(m.q)-m.head > o.MaxQueuePackets || m.qBytes > o.MaxQueueBytes {
		clear(m.q)
		m.q, m.head, m.qBytes = m.q[:0], 0, 0
		m.skips++
		m.waitKey = true
		skipped = true
	}
	select {
	case m.notify <- struct{}{}:
	default:
	}
	return skipped
}

func (m *Member) add(p sdk.VideoPacket) {
	m.q = append(m.q, p)
	m.qBytes += len(p.Data)
}
