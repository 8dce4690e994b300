package recording

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/recording/fmp4"
)

// Defaults and bounds.
const (
	DefaultHoldFor   = 3 * time.Second
	DefaultHoldBytes = 32 << 20
	closeReadTimeout = 2 * time.Second  // the last read, at Close
	selfReadTimeout  = 10 * time.Second // a read of the recorder's own
	minBackoff       = 200 * time.Millisecond
	maxBackoff       = 5 * time.Second
)

// Verdict is what a read of the screen says: may what it showed be recorded.
type Verdict struct {
	OK  bool
	Why string // when not OK: why not (a blocked app, a locked screen…), for the log
}

// Packets is a stream of video packets; *stream.Member is one.
type Packets interface {
	Next(ctx context.Context) (sdk.VideoPacket, error)
	Close()
}

// KeyFrameRequester is what Packets may also do: ask the phone for a key
// frame. The recorder asks when it receives a frame it cannot write because
// the key frame it depends on was dropped, so that writing resumes soon
// rather than at the phone's next periodic key frame. *stream.Member does.
type KeyFrameRequester interface {
	RequestKeyFrame()
}

// Config configures a recording.
type Config struct {
	// Path is the file, e.g. $PINKY_HOME/recordings/<task>.mp4. Its folder
	// is created 0700 and the file 0600; the file must not exist yet.
	Path string
	// Join joins the phone's stream hub. REQUIRED.
	Join func(ctx context.Context) (Packets, error)
	// Read is the recorder's own read of the screen, made when packets have
	// waited HoldFor with no read, and at Close. Without it such packets
	// are dropped.
	Read func(ctx context.Context) (Verdict, error)
	// HoldFor is how long packets wait for a read; default 3 s.
	HoldFor time.Duration
	// HoldBytes caps the memory of held packets; past it they are dropped.
	// Default 32 MiB.
	HoldBytes int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// OnUpdate is called after each fragment is written and at Close, from
	// the recorder's goroutines and possibly while the recorder holds its
	// lock: it must be quick and must not call Vouch, Drop or Close (Info
	// is fine).
	OnUpdate func(Info)
	Logger   *slog.Logger
}

// Info describes a recording.
type Info struct {
	Path          string
	Codec         string // "h264", "h265"; "" before anything is written
	Width, Height int    // the current picture size
	// Start is the wall time of media time 0: the arrival of the first
	// written packet. A history step that began at wall time T is at video
	// offset T - Start.
	Start     time.Time
	Duration  time.Duration // media time written
	Bytes     int64         // the file's size; 0: nothing written (after Close, no file)
	Fragments int
}

// held is a packet waiting for a read to vouch for it.
type held struct {
	p   sdk.VideoPacket
	at  time.Time        // arrival
	cfg *sdk.VideoPacket // the config packet in force when it came
}

// Recorder records one phone screen for one agent task. Its methods are
// safe for concurrent use.
type Recorder struct {
	cfg    Config
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup
	poke   chan struct{} // wakes holdLoop: packets are held again
	file   *os.File

	// Lock order: mu, then infoMu; mu, then the writer's lock. Code the
	// writer calls back (horizon, onFragment) takes neither mu nor, with the
	// writer's lock held, anything but infoMu and atomics.
	mu        sync.Mutex
	held      []held
	heldBytes int
	needKey   bool             // after a drop (and at first): write nothing until a key frame
	config    *sdk.VideoPacket // the stream's latest config packet
	wroteCfg  *sdk.VideoPacket // the config packet last given to the writer
	err       error            // the first write error
	closed    bool

	heldSince atomic.Pointer[time.Time] // held[0].at; nil when nothing is held

	infoMu sync.Mutex
	w      *fmp4.Writer // nil until the first write
	start  time.Time

	updMu sync.Mutex
	final bool // the final OnUpdate was made

	closeOnce sync.Once
	closeInfo Info
	closeErr  error
}

// Start creates the file and starts recording: it joins the stream, holds
// the packets until reads vouch for them, and writes those it may. ctx
// bounds the recording's goroutines; Close must be called in any case.
func Start(ctx context.Context, cfg Config) (*Recorder, error) {
	if cfg.Path == "" || cfg.Join == nil {
		return nil, errors.New("recording: Path and Join are required")
	}
	if cfg.HoldFor <= 0 {
		cfg.HoldFor = DefaultHoldFor
	}
	if cfg.HoldBytes <= 0 {
		cfg.HoldBytes = DefaultHoldBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	f, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Recorder{cfg: cfg, log: log.With("recording", cfg.Path), cancel: cancel, poke: make(chan struct{}, 1), file: f, needKey: true}
	r.wg.Add(2)
	go r.run(ctx)
	go r.holdLoop(ctx)
	return r, nil
}

// Vouch reports a read of the screen that began at at: when v.OK the held
// packets that arrived before at are written, else they are dropped (and
// writing resumes at a key frame). Reads are taken in the order of the
// calls.
func (r *Recorder) Vouch(at time.Time, v Verdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	n := 0
	for n < len(r.held) && r.held[n].at.Before(at) {
		n++
	}
	r.decide(n, v)
}

// Drop drops every held packet; writing resumes at a key frame. Call it at
// both edges of a span whose screen must not be stored: take over and hand
// back, lock and unlock, offline (the packets of the span are dropped by
// the second call, or by a read that is not OK).
func (r *Recorder) Drop(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.drop(len(r.held), why)
	}
}

// Info describes the recording so far.
func (r *Recorder) Info() Info {
	r.infoMu.Lock()
	w, start := r.w, r.start
	r.infoMu.Unlock()
	info := Info{Path: r.cfg.Path, Start: start}
	if w != nil {
		st := w.Stats()
		info.Codec, info.Width, info.Height = string(st.Codec), st.Width, st.Height
		info.Duration, info.Bytes, info.Fragments = st.Duration, st.Bytes, st.Fragments
	}
	return info
}

// Close ends the recording: a last read (at most 2 s) decides about the
// held packets, the last fragment is written, and the file stays a valid
// fragmented MP4. When nothing was ever written the file is removed and
// Info.Bytes is 0. Close may be called more than once.
func (r *Recorder) Close() (Info, error) {
	r.closeOnce.Do(func() { r.closeInfo, r.closeErr = r.close() })
	return r.closeInfo, r.closeErr
}

func (r *Recorder) close() (Info, error) {
	r.cancel()
	r.wg.Wait() // no packet comes in from here on
	r.mu.Lock()
	n := len(r.held)
	r.mu.Unlock()
	if n > 0 {
		v := r.read(context.Background(), closeReadTimeout)
		r.mu.Lock()
		r.decide(len(r.held), v)
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.closed = true
	werr := r.err
	r.mu.Unlock()
	r.infoMu.Lock()
	w := r.w
	r.infoMu.Unlock()
	var errs []error
	if w != nil {
		if err := w.Close(); err != nil && werr == nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, werr, r.file.Sync(), r.file.Close())
	info := r.Info()
	if info.Bytes == 0 {
		if err := os.Remove(r.cfg.Path); err != nil {
			errs = append(errs, err)
		}
	}
	r.updMu.Lock()
	r.final = true
	if r.cfg.OnUpdate != nil {
		r.cfg.OnUpdate(info)
	}
	r.updMu.Unlock()
	r.log.Info("recording closed", "bytes", info.Bytes, "duration", info.Duration, "fragments", info.Fragments)
	if err := errors.Join(errs...); err != nil {
		return info, fmt.Errorf("recording: %w", err)
	}
	return info, nil
}

// run joins the stream and takes its packets until ctx ends, joining again
// with backoff whenever the stream ends.
func (r *Recorder) run(ctx context.Context) {
	defer r.wg.Done()
	backoff := minBackoff
	for {
		pk, err := r.cfg.Join(ctx)
		if err == nil {
			r.newStream()
			var got bool
			got, err = r.take(ctx, pk)
			pk.Close()
			if got {
				backoff = minBackoff
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The phone went offline or its driver died: what is held may show
		// anything, and the next stream starts with a new key frame anyway.
		r.Drop("stream ended")
		r.log.Info("recording: stream ended; joining again", "err", err, "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// newStream drops what is held: a new stream starts with its own config
// and key frame.
func (r *Recorder) newStream() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.config = nil
	r.drop(len(r.held), "new stream")
}

// take receives pk's packets until it ends; got reports whether any came.
func (r *Recorder) take(ctx context.Context, pk Packets) (got bool, err error) {
	for {
		p, err := pk.Next(ctx)
		if err != nil {
			return got, err
		}
		got = true
		if !r.receive(p) {
			if kf, ok := pk.(KeyFrameRequester); ok {
				kf.RequestKeyFrame()
			}
		}
	}
}

// receive stamps p with its arrival time and holds it. It reports false
// when p could never be written, for want of the key frame before it.
func (r *Recorder) receive(p sdk.VideoPacket) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Config {
		c := p
		r.config = &c
		return true
	}
	if len(p.Data) == 0 {
		return true
	}
	if len(r.held) == 0 && r.needKey && !p.KeyFrame || r.config == nil {
		return false // it could never be written: its reference is gone
	}
	h := held{p: p, at: r.cfg.Now(), cfg: r.config}
	r.held = append(r.held, h)
	r.heldBytes += len(p.Data)
	if r.heldBytes > r.cfg.HoldBytes {
		r.drop(len(r.held), "held packets past the memory cap")
		return true
	}
	if len(r.held) == 1 {
		r.heldSince.Store(&h.at)
		select {
		case r.poke <- struct{}{}:
		default:
		}
	}
	return true
}

// decide writes (v.OK) or drops the first n held packets; r.mu is held.
func (r *Recorder) decide(n int, v Verdict) {
	if n == 0 {
		return
	}
	if !v.OK {
		r.drop(n, v.Why)
		return
	}
	for _, h := range r.held[:n] {
		r.write(h)
	}
	r.forget(n)
}

// drop drops the first n held packets and makes writing resume at a key
// frame; r.mu is held.
func (r *Recorder) drop(n int, why string) {
	if n > 0 {
		r.log.Info("recording: packets dropped", "packets", n, "why", why)
	}
	r.needKey = true
	r.forget(n)
	// What remains must start with a key frame to be written.
	k := 0
	for k < len(r.held) && !r.held[k].p.KeyFrame {
		k++
	}
	r.forget(k)
}

// forget removes the first n held packets; r.mu is held.
func (r *Recorder) forget(n int) {
	for _, h := range r.held[:n] {
		r.heldBytes -= len(h.p.Data)
	}
	clear(r.held[:n])
	r.held = r.held[n:]
	if len(r.held) == 0 {
		r.held = nil
		r.heldSince.Store(nil)
	} else {
		r.heldSince.Store(&r.held[0].at)
	}
}

// write writes one vouched packet, unless it cannot be decoded; r.mu is
// held.
func (r *Recorder) write(h held) {
	if r.err != nil || r.needKey && !h.p.KeyFrame {
		return
	}
	r.infoMu.Lock()
	w := r.w
	r.infoMu.Unlock()
	if w == nil {
		if _, err := fmp4.ParseConfig(h.cfg.Codec, h.cfg.Data); err != nil {
			r.log.Warn("recording: unusable config packet", "err", err)
			return
		}
		w = fmp4.NewWriter(r.file, fmp4.Options{Horizon: r.horizon, OnFragment: r.onFragment})
		r.infoMu.Lock()
		r.w, r.start = w, h.at
		r.infoMu.Unlock()
	}
	if h.cfg != r.wroteCfg {
		if err := w.Write(*h.cfg); err != nil {
			r.writeFailed(err)
			return
		}
		r.wroteCfg = h.cfg
	}
	p := h.p
	p.PTS = h.at.Sub(r.start)
	if err := w.Write(p); err != nil {
		r.writeFailed(err)
		return
	}
	r.needKey = false
}

// writeFailed handles an error of the writer; r.mu is held.
func (r *Recorder) writeFailed(err error) {
	r.needKey = true
	if errors.Is(err, fmp4.ErrConfig) || errors.Is(err, fmp4.ErrCodecChange) || errors.Is(err, fmp4.ErrNeedKeyFrame) {
		r.log.Warn("recording: packet not written", "err", err)
		return
	}
	r.log.Error("recording: write failed; the recording stops", "err", err)
	r.err = err
}

// horizon is the media time no packet written later will precede: the
// arrival of the oldest held packet, or now. The writer calls it.
func (r *Recorder) horizon() time.Duration {
	r.infoMu.Lock()
	start := r.start
	r.infoMu.Unlock()
	if at := r.heldSince.Load(); at != nil {
		return at.Sub(start)
	}
	return r.cfg.Now().Sub(start)
}

// onFragment is called by the writer after each fragment.
func (r *Recorder) onFragment(fmp4.Stats) {
	_ = r.file.Sync() // a fragment written survives a power loss too; an error shows at the next write
	r.updMu.Lock()
	defer r.updMu.Unlock()
	if !r.final && r.cfg.OnUpdate != nil {
		r.cfg.OnUpdate(r.Info())
	}
}

// holdLoop reads the screen itself when packets have waited HoldFor.
func (r *Recorder) holdLoop(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTimer(r.cfg.HoldFor)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.poke:
		case <-t.C:
		}
		for {
			wait := r.cfg.HoldFor
			if at := r.heldSince.Load(); at != nil {
				wait = at.Add(r.cfg.HoldFor).Sub(r.cfg.Now())
			}
			if wait > 0 {
				t.Reset(wait)
				break
			}
			at := r.cfg.Now()
			v := r.read(ctx, selfReadTimeout)
			if ctx.Err() != nil {
				return // closing: Close reads once more
			}
			r.Vouch(at, v)
		}
	}
}

// read makes the recorder's own read; an error or no reader is a verdict of
// not OK: what cannot be checked is not stored.
func (r *Recorder) read(ctx context.Context, timeout time.Duration) Verdict {
	if r.cfg.Read == nil {
		return Verdict{Why: "no reader"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := r.cfg.Read(ctx)
	if err != nil {
		return Verdict{Why: "read failed: " + err.Error()}
	}
	return v
}
