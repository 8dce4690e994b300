package video

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// The source's socket queue: about half a second of video. A phone's
// extension has little memory to spare; VIDEO.md §7 asks the same of it.
const (
	sourcePackets = 16
	sourceBytes   = 4 << 20
)

// SourceConfig configures the sending side of a broadcast.
type SourceConfig struct {
	// DeviceID is the phone's id in Pinky; the sink must expect the same.
	DeviceID string
	// Secret is the phone's pairing secret (SecretSize bytes).
	Secret []byte
	// Dial is the driver's "host:port"; or
	Dial string
	// Listen is the "host:port" to accept the driver's connection on.
	// Exactly one of Dial and Listen is set.
	Listen string
	// Logger receives the source's logs; nil discards them.
	Logger *slog.Logger
	// Ping and Dead are as in ReceiverConfig.
	Ping, Dead time.Duration
	// Stream produces packets for one connection until ctx ends: a config
	// first, then frames, the first of them a key frame, and a new config
	// followed by a key frame whenever the picture's size changes. It is
	// called again for each new connection. send drops frames the socket
	// cannot take (returning nil) and fails once the connection has closed;
	// Stream then returns. Returning nil before ctx ends ends the broadcast
	// (the sink is sent STOP), and so does returning any error but ctx's
	// and the one send returns for a closed connection: Run then returns it
	// (send's errors for invalid packets are such errors).
	Stream func(ctx context.Context, send func(sdk.VideoPacket) error) error
	// KeyFrame, when not nil, asks Stream for a key frame soon. It must not
	// block.
	KeyFrame func()
	// Still, when not nil, returns a JPEG of the latest frame, at most
	// maxSide pixels on its longer side (0: full size) and of quality
	// 1–100 (0: a default). Returning an error that wraps ErrNoFrame tells
	// the sink there is no frame yet.
	Still func(ctx context.Context, maxSide, quality int) ([]byte, error)
}

// Source sends a broadcast to the driver: Go's reference implementation of
// the phone's side, used by Pinky's virtual iPhone and the tests.
type Source struct {
	cfg     SourceConfig
	log     *slog.Logger
	ln      net.Listener
	stats   counters
	running atomic.Bool

	mu      sync.Mutex
	cancel  context.CancelCauseFunc // ends Run; nil before Run
	stopped *stopCause              // set by Stop
}

// NewSource checks cfg and, when it listens, binds the listener now.
func NewSource(cfg SourceConfig) (*Source, error) {
	if err := checkCommon(cfg.DeviceID, cfg.Secret, cfg.Listen, cfg.Dial, &cfg.Ping, &cfg.Dead); err != nil {
		return nil, err
	}
	if cfg.Stream == nil {
		return nil, fmt.Errorf("video: device %q: no Stream", cfg.DeviceID)
	}
	s := &Source{cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Listen != "" {
		ln, err := net.Listen("tcp", cfg.Listen)
		if err != nil {
			return nil, fmt.Errorf("video: device %q: %w", cfg.DeviceID, err)
		}
		s.ln = ln
	}
	return s, nil
}

// Addr returns the listening address, or nil when the source dials.
func (s *Source) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Stats returns the source's counters.
func (s *Source) Stats() Stats { return s.stats.snapshot() }

// Run connects to the sink (dialing with backoff, or accepting) and streams,
// again after every drop, until ctx ends or Stop is called (it returns nil
// then) or the broadcast ends: nil when Stream returned nil, Stream's error
// when it failed. When it dials, a sink that rejects the handshake ends it
// too, with an error that wraps ErrAuth or ErrVersion (or ErrProtocol for a
// sink that is no sink): retrying cannot help, and the person must be told.
// It may be called once; the listener is closed when it returns.
func (s *Source) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("video: Source.Run called twice")
	}
	if s.ln != nil {
		defer s.ln.Close()
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.mu.Lock()
	s.cancel = cancel
	stopped := s.stopped != nil
	s.mu.Unlock()
	if stopped {
		return nil
	}
	l := &link{
		role: roleSource, device: s.cfg.DeviceID, secret: s.cfg.Secret, dial: s.cfg.Dial, ln: s.ln,
		ping: s.cfg.Ping, dead: s.cfg.Dead, log: s.log, stats: &s.stats,
		media: func() *packetQueue { return newPacketQueue(sourcePackets, sourceBytes) },
		serve: s.serve,
		fatal: func(err error) (bool, error) {
			var sc *stopCause
			if errors.As(err, &sc) {
				return true, sc.err
			}
			return false, nil
		},
		giveUp: func(err error) bool {
			var pe *peerError
			var re *roleError
			return errors.Is(err, ErrAuth) || errors.Is(err, ErrVersion) || errors.As(err, &re) ||
				errors.As(err, &pe) && pe.code == codeRole
		},
	}
	return l.run(ctx)
}

// Stop ends the broadcast: it sends STOP with reason (the person stopped
// it) on the current connection, and Run returns nil. Stop before Run makes
// Run return at once.
func (s *Source) Stop(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped != nil {
		return
	}
	s.stopped = &stopCause{reason: stopUser, text: reason}
	if s.cancel != nil {
		s.cancel(s.stopped)
	}
}

// Messages a source accepts from a sink.
var sourceAccepts = setOf("from a sink", msgKeyFrame, msgStillRequest, msgPing, msgPong, msgError)

// serve runs one connection to the sink: Stream in a goroutine, the
// connection's reader in this one.
func (s *Source) serve(ctx context.Context, c *conn) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.cfg.Stream(ctx, s.sender(c))
		switch {
		case ctx.Err() != nil || errors.Is(err, errConnClosed):
			// The connection ended first; its reader knows why.
		case err == nil:
			cancel(&stopCause{reason: stopEnded, text: "the broadcast's stream ended"})
		default:
			cancel(&stopCause{reason: stopError, text: err.Error(), err: fmt.Errorf("video: stream: %w", err)})
		}
	})
	var making atomic.Bool // a still is being made
	err := c.run(ctx, func() msgSet { return sourceAccepts }, func(t msgType, p []byte) error {
		switch t {
		case msgKeyFrame:
			s.stats.keyFrameRequests.Add(1)
			if s.cfg.KeyFrame != nil {
				s.cfg.KeyFrame()
			}
		case msgStillRequest:
			req, err := parseStillRequest(p)
			if err != nil {
				return err
			}
			switch {
			case s.cfg.Still == nil:
				return c.send(still{id: req.id, status: stillUnsupported, data: []byte("this source makes no stills")}.msg())
			case !making.CompareAndSwap(false, true):
				return c.send(still{id: req.id, status: stillBusy, data: []byte("a still is being made")}.msg())
			}
			wg.Go(func() {
				defer making.Store(false)
				c.send(s.still(ctx, req).msg()) // fails only once the connection has closed
			})
		}
		return nil
	})
	cancel(err)
	wg.Wait()
	return err
}

// still makes the answer to a STILL_REQUEST.
func (s *Source) still(ctx context.Context, req stillRequest) still {
	ctx, cancel := context.WithTimeout(ctx, stillTimeout)
	defer cancel()
	data, err := s.cfg.Still(ctx, req.maxSide, req.quality)
	switch {
	case errors.Is(err, ErrNoFrame):
		return still{id: req.id, status: stillNoFrame, data: []byte(err.Error())}
	case err != nil:
		return still{id: req.id, status: stillFailed, data: []byte(err.Error())}
	case len(data) == 0 || len(data) > maxPayload-stillFixed:
		return still{id: req.id, status: stillFailed, data: fmt.Appendf(nil, "a still of %d bytes", len(data))}
	}
	return still{id: req.id, status: stillOK, data: data}
}

// sender is the send function Stream gets for connection c.
func (s *Source) sender(c *conn) func(sdk.VideoPacket) error {
	return func(p sdk.VideoPacket) error {
		if err := checkPacket(p); err != nil {
			return err
		}
		dropped, begun, err := c.offer(p)
		if err != nil {
			return err
		}
		s.stats.framesDropped.Add(int64(dropped))
		if begun && s.cfg.KeyFrame != nil {
			s.cfg.KeyFrame()
		}
		return nil
	}
}

// checkPacket refuses what the protocol cannot carry.
func checkPacket(p sdk.VideoPacket) error {
	if p.Codec != "" && p.Codec != sdk.CodecH264 {
		return sdk.Invalid("video packet codec %q: the protocol carries h264", p.Codec)
	}
	if p.Config {
		if p.Width < 1 || p.Width > MaxSide || p.Height < 1 || p.Height > MaxSide {
			return sdk.Invalid("video config size %dx%d: want 1 to %d each", p.Width, p.Height, MaxSide)
		}
		if len(p.Data) > maxConfig-configFixed {
			return sdk.Invalid("video config of %d bytes: limit %d", len(p.Data), maxConfig-configFixed)
		}
		if err := checkParams(p.Data); err != nil {
			return sdk.Invalid("video config: %v", err)
		}
		return nil
	}
	if pts := p.PTS.Microseconds(); pts < 0 || pts > maxPTS {
		return sdk.Invalid("video frame PTS %v: want 0 to %d µs", p.PTS, maxPTS)
	}
	if !hasStartCode(p.Data) {
		return sdk.Invalid("video frame: not Annex B (no start code)")
	}
	if len(p.Data) > maxPayload-frameFixed {
		return sdk.Invalid("video frame of %d bytes: limit %d", len(p.Data), maxPayload-frameFixed)
	}
	return nil
}
