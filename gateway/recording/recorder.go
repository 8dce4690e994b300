package recording

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
	"github.com/pinky-gateway/pinky/gateway/recording/fmp4"
)

// Defaults and bounds.
const (
	DefaultReadAfter = 250 * time.Millisecond
	DefaultLag       = 300 * time.Millisecond
	DefaultHoldBytes = 32 << 20
	closeReadTimeout = 2 * time.Second  // the last read, at Close
	selfReadTimeout  = 10 * time.Second // a read of the recorder's own
	keyFrameRetry    = time.Second      // asking again for a key frame that did not come
	privateReadAfter = time.Second      // ReadAfter, at least, while the screen is private
	minWait          = 10 * time.Millisecond
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
// frame. The recorder asks when writing may resume after a private span,
// and when it receives a frame it cannot write because the key frame it
// depends on was dropped, so that writing resumes soon rather than at the
// phone's next periodic key frame. *stream.Member does.
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
	// Read is the recorder's own read of the screen, made ReadAfter after a
	// packet that no read has seen, and at Close. Without it such packets
	// are dropped.
	Read func(ctx context.Context) (Verdict, error)
	// ReadAfter is how long a packet that no read has seen waits for one
	// before the recorder reads the screen itself; default 250 ms.
	ReadAfter time.Duration
	// Lag is how far the video may run behind the screen: packets that
	// arrive within Lag after the read that ended a private span are
	// dropped, since they may still show it. Default 300 ms.
	Lag time.Duration
	// HoldBytes caps the memory of held packets; past it they are dropped.
	// Default 32 MiB.
	HoldBytes int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// JoinBackoff is the first wait before joining again after the stream
	// ended or a join failed; it doubles up to 5 s (or JoinBackoff, if
	// longer) while joins fail. Default 200 ms. Rejoin ends a wait.
	JoinBackoff time.Duration
	// OnUpdate is called after each fragment is written and at Close, from
	// the recorder's goroutines, never with the recorder's lock held: it
	// must be quick and must not call Close (Info is fine).
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
	wg     sync.WaitGroup // run and readLoop
	writer sync.WaitGroup // writeLoop
	poke   chan struct{}  // wakes readLoop: a packet no read has seen, a key frame to ask for
	wake   chan struct{}  // wakes writeLoop: packets to write
	rejoin chan struct{}  // wakes run from its backoff: the stream can be joined now
	file   *os.File

	// Lock order: mu, then infoMu; the writer's lock, then infoMu. No file
	// is written with mu held, so that packets are stamped on arrival even
	// while a fragment is synced to disk.
	mu        sync.Mutex
	held      []held
	heldBytes int
	needKey   bool             // after a drop (and at first): hold nothing until a key frame
	config    *sdk.VideoPacket // the stream's latest config packet
	keys      KeyFrameRequester
	// private: a read found the screen private (or Drop was called) at
	// privateAt, and no read begun since has found it public: packets are
	// dropped as they come. until: packets that arrive before it are
	// dropped too, the video's lag after a private span.
	private   bool
	privateAt time.Time
	until     time.Time
	unseen    time.Time // the arrival of the first packet no read has seen; zero: none
	last      time.Time // the arrival of the latest packet
	queuedTo  time.Time // the arrival of the latest packet queued for writing
	keyAt     time.Time // when to ask for a key frame; zero: no need
	reading   bool      // the recorder's own read is under way…
	readingAt time.Time // …since then;
	deferred  []time.Time
	nextRead  time.Time // the recorder's own reads are at most half the time: not before then
	out       []held    // vouched packets, for writeLoop
	outDone   bool      // nothing more comes to out
	closed    bool
	stats     struct {
		reads    int           // the recorder's own reads
		readTime time.Duration // their time
		dropped  int           // packets not written
		hidden   int           // private spans
	}

	heldSince atomic.Pointer[time.Time] // held[0].at; nil when nothing is held
	failed    atomic.Bool               // the writer failed for good

	// writeLoop's, and Close's once writeLoop has ended.
	wroteCfg *sdk.VideoPacket // the config packet last given to the writer
	wNeedKey bool             // the writer refused a packet: write nothing until a key frame
	err      error            // the first write error

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
	if cfg.ReadAfter <= 0 {
		cfg.ReadAfter = DefaultReadAfter
	}
	if cfg.Lag <= 0 {
		cfg.Lag = DefaultLag
	}
	if cfg.HoldBytes <= 0 {
		cfg.HoldBytes = DefaultHoldBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.JoinBackoff <= 0 {
		cfg.JoinBackoff = minBackoff
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
	r := &Recorder{
		cfg: cfg, log: log.With("recording", cfg.Path), cancel: cancel, file: f,
		poke: make(chan struct{}, 1), wake: make(chan struct{}, 1), rejoin: make(chan struct{}, 1),
		needKey: true, wNeedKey: true,
		// What the screen showed before the recording began is unknown (the
		// stream's cache may hold seconds of it): as after a private read,
		// nothing is kept until a read begun from now on finds it public.
		private: true, privateAt: cfg.Now(),
	}
	r.wg.Add(2)
	r.writer.Add(1)
	go r.run(ctx)
	go r.readLoop(ctx)
	go r.writeLoop()
	return r, nil
}

// Vouch reports a read of the screen that began at at. When v.OK and the
// screen was public at the read before it too, the held packets that
// arrived before at are written; when not v.OK, every held packet is
// dropped, and so is every packet from then until Lag after a later read
// finds the screen public (writing resumes at a key frame). Reads are
// taken in the order of their beginnings where the recorder can know it
// (its own reads); a public read that began while the recorder's own was
// under way waits for it.
func (r *Recorder) Vouch(at time.Time, v Verdict) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	if v.OK && r.reading && at.After(r.readingAt) {
		r.deferred = append(r.deferred, at)
		return
	}
	r.judge(at, v)
}

// Drop counts as a read that found the screen private now: every held
// packet is dropped, and nothing is kept until a read begun after the call
// finds the screen public (and Lag has passed). Call it when the screen
// shows what no read will vouch for: take over and hand back, lock and
// unlock, offline.
func (r *Recorder) Drop(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.hide(r.cfg.Now(), why)
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
	r.wg.Wait() // no packet comes in from here on, and no read of the recorder's own runs
	r.mu.Lock()
	r.flushDeferred()
	n := len(r.held)
	r.mu.Unlock()
	if n > 0 {
		v := r.read(context.Background(), closeReadTimeout)
		r.mu.Lock()
		// The read began after every packet came (none comes any more),
		// even when the clock says the same time.
		r.judge(later(r.cfg.Now(), r.last), v)
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.closed, r.outDone = true, true
	stats := r.stats
	r.mu.Unlock()
	r.signal(r.wake)
	r.writer.Wait()
	r.infoMu.Lock()
	w := r.w
	r.infoMu.Unlock()
	var errs []error
	if w != nil {
		if err := w.Close(); err != nil && r.err == nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, r.err, r.file.Sync(), r.file.Close())
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
	r.log.Info("recording closed", "bytes", info.Bytes, "duration", info.Duration, "fragments", info.Fragments,
		"private_spans", stats.hidden, "packets_dropped", stats.dropped, "own_reads", stats.reads, "own_read_time", stats.readTime.Round(time.Millisecond))
	if err := errors.Join(errs...); err != nil {
		return info, fmt.Errorf("recording: %w", err)
	}
	return info, nil
}

// run joins the stream and takes its packets until ctx ends, joining again
// with backoff whenever the stream ends.
func (r *Recorder) run(ctx context.Context) {
	defer r.wg.Done()
	first, most := r.cfg.JoinBackoff, max(r.cfg.JoinBackoff, maxBackoff)
	backoff := first
	for {
		pk, err := r.cfg.Join(ctx)
		if err == nil {
			r.newStream(pk)
			var got bool
			got, err = r.take(ctx, pk)
			r.mu.Lock()
			r.keys = nil
			r.mu.Unlock()
			pk.Close()
			if got {
				backoff = first
			}
		}
		if ctx.Err() != nil {
			return
		}
		// The phone went offline or its driver died: what it shows when it
		// is back is unknown until a read.
		r.Drop("stream ended")
		r.log.Info("recording: stream ended; joining again", "err", err, "in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.rejoin:
			t.Stop()
			backoff = first
			continue
		case <-t.C:
		}
		backoff = min(2*backoff, most)
	}
}

// Rejoin tells the recorder that the stream can be joined now (the phone
// is back, or serves video again): a recorder waiting to join again stops
// waiting. A recorder whose stream runs keeps it.
func (r *Recorder) Rejoin() {
	select {
	case r.rejoin <- struct{}{}:
	default:
	}
}

// newStream drops what is held (a new stream starts with its own config
// and key frame) and keeps pk's way of asking for key frames.
func (r *Recorder) newStream(pk Packets) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.config = nil
	r.keys, _ = pk.(KeyFrameRequester)
	r.drop(len(r.held), "new stream")
}

// take receives pk's packets until it ends; got reports whether any came.
// Each packet is stamped with its arrival here, before anything can make
// it wait.
func (r *Recorder) take(ctx context.Context, pk Packets) (got bool, err error) {
	for {
		p, err := pk.Next(ctx)
		if err != nil {
			return got, err
		}
		at := r.cfg.Now()
		got = true
		if r.receive(p, at) {
			r.askKeyFrame()
		}
	}
}

// receive holds p, which arrived at at, or drops it. It reports whether to
// ask for a key frame now: p could never be written, for want of the key
// frame before it.
func (r *Recorder) receive(p sdk.VideoPacket, at time.Time) (ask bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p.Config {
		c := p
		r.config = &c
		return false
	}
	if len(p.Data) == 0 || r.closed {
		return false
	}
	r.last = at
	if r.unseen.IsZero() {
		r.unseen = at
		r.signal(r.poke)
	}
	switch {
	case r.private || at.Before(r.until):
		r.needKey = true
		r.stats.dropped++
		return false // asking is for when the span is over (keyAt)
	case r.config == nil || len(r.held) == 0 && r.needKey && !p.KeyFrame:
		r.stats.dropped++
		r.keyAt = at.Add(keyFrameRetry)
		r.signal(r.poke)
		return true // it could never be written: its reference is gone
	}
	h := held{p: p, at: at, cfg: r.config}
	r.held = append(r.held, h)
	r.heldBytes += len(p.Data)
	if r.heldBytes > r.cfg.HoldBytes {
		r.drop(len(r.held), "held packets past the memory cap")
		return true
	}
	if len(r.held) == 1 {
		r.heldSince.Store(&h.at)
	}
	return false
}

// judge takes a read that began at at; r.mu is held.
func (r *Recorder) judge(at time.Time, v Verdict) {
	// The read saw every packet that came before it began.
	if r.last.Before(at) {
		r.unseen = time.Time{}
	} else if r.unseen.Before(at) {
		r.unseen = at // some came later; when exactly is not kept
	}
	switch {
	case !v.OK:
		r.hide(at, v.Why)
	case r.private:
		if !at.After(r.privateAt) {
			return // it began before the screen was last found private
		}
		// The screen is public again, but the video runs behind it.
		r.private = false
		r.until = r.cfg.Now().Add(r.cfg.Lag)
		r.drop(len(r.held), "the video of a private screen may still come")
		r.keyAt = r.until
		r.signal(r.poke)
	default:
		n := 0
		for n < len(r.held) && r.held[n].at.Before(at) {
			n++
		}
		r.queue(n)
	}
}

// hide starts a private span at at; r.mu is held.
func (r *Recorder) hide(at time.Time, why string) {
	if !r.private {
		r.stats.hidden++
		r.log.Info("recording: private screen; not recording", "why", why)
	}
	if at.Before(r.queuedTo) {
		// A read that began before packets already written reported a
		// private screen after them (two reads overlapped): those packets
		// cannot be taken back.
		r.log.Warn("recording: a read reported a private screen after later packets were written", "why", why)
	}
	r.drop(len(r.held), why)
	r.private = true
	if at.After(r.privateAt) {
		r.privateAt = at
	}
	r.keyAt = time.Time{}
}

// queue hands the first n held packets to writeLoop; r.mu is held.
func (r *Recorder) queue(n int) {
	if n == 0 {
		return
	}
	for _, h := range r.held[:n] {
		if r.failed.Load() || r.needKey && !h.p.KeyFrame {
			r.stats.dropped++
			continue
		}
		r.out = append(r.out, h)
		r.needKey = false
		r.queuedTo = h.at
	}
	r.forget(n)
	r.signal(r.wake)
}

// drop drops the first n held packets and makes writing resume at a key
// frame; r.mu is held.
func (r *Recorder) drop(n int, why string) {
	if n > 0 {
		r.log.Debug("recording: packets dropped", "packets", n, "why", why)
		r.stats.dropped += n
	}
	r.needKey = true
	r.forget(n)
	// What remains must start with a key frame to be written.
	k := 0
	for k < len(r.held) && !r.held[k].p.KeyFrame {
		k++
	}
	r.stats.dropped += k
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

// flushDeferred takes the public reads that waited for the recorder's own;
// r.mu is held.
func (r *Recorder) flushDeferred() {
	slices.SortFunc(r.deferred, func(a, b time.Time) int { return a.Compare(b) })
	for _, at := range r.deferred {
		r.judge(at, Verdict{OK: true})
	}
	r.deferred = nil
}

// later returns a, or just after b when a is not after it.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b.Add(time.Nanosecond)
}

// signal wakes a loop without waiting.
func (r *Recorder) signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// askKeyFrame asks the stream for a key frame, when it can.
func (r *Recorder) askKeyFrame() {
	r.mu.Lock()
	k := r.keys
	r.mu.Unlock()
	if k != nil {
		k.RequestKeyFrame()
	}
}

// readLoop reads the screen itself ReadAfter after a packet no read has
// seen, and asks for key frames when writing may resume.
func (r *Recorder) readLoop(ctx context.Context) {
	defer r.wg.Done()
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		wait, read, key := r.next()
		if key {
			r.askKeyFrame()
		}
		if read {
			r.selfRead(ctx)
			if ctx.Err() != nil {
				return // closing: Close reads once more
			}
			continue
		}
		t.Reset(max(wait, minWait))
		select {
		case <-ctx.Done():
			return
		case <-r.poke:
		case <-t.C:
		}
	}
}

// next says what readLoop does now: read the screen, ask for a key frame,
// and how long to wait at most before looking again.
func (r *Recorder) next() (wait time.Duration, read, key bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Now()
	wait = time.Hour
	if !r.unseen.IsZero() {
		after := r.cfg.ReadAfter
		if r.private {
			// Nothing is kept meanwhile: the read only tells when the span
			// ends, and the person's own use makes many changes.
			after = max(after, privateReadAfter)
		}
		d := later(r.unseen.Add(after), r.nextRead).Sub(now)
		if d <= 0 {
			return 0, true, false
		}
		wait = d
	}
	if !r.keyAt.IsZero() {
		d := r.keyAt.Sub(now)
		if d <= 0 {
			// Ask while writing waits for a key frame that has not come (the
			// stream's hub limits how often it passes the request on).
			if r.needKey && !r.private && !now.Before(r.until) && len(r.held) == 0 {
				key, d = true, keyFrameRetry
				r.keyAt = now.Add(d)
			} else {
				r.keyAt, d = time.Time{}, time.Hour
			}
		}
		wait = min(wait, d)
	}
	return wait, false, key
}

// selfRead makes a read of the recorder's own and judges it; public reads
// that began meanwhile wait for it.
func (r *Recorder) selfRead(ctx context.Context) {
	r.mu.Lock()
	at := r.cfg.Now()
	r.reading, r.readingAt = true, at
	r.mu.Unlock()
	began := time.Now()
	v := r.read(ctx, selfReadTimeout)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reading = false
	took := time.Since(began)
	r.stats.reads++
	r.stats.readTime += took
	// A slow read (a phone's UI dump) is not made again at once while the
	// screen keeps changing (a video playing): the reads take at most half
	// the phone's time.
	r.nextRead = r.cfg.Now().Add(took)
	if ctx.Err() == nil {
		r.judge(at, v)
	}
	r.flushDeferred()
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

// writeLoop writes the vouched packets in order, until Close.
func (r *Recorder) writeLoop() {
	defer r.writer.Done()
	for {
		r.mu.Lock()
		batch, done := r.out, r.outDone
		r.out = nil
		r.mu.Unlock()
		for _, h := range batch {
			r.write(h)
		}
		if len(batch) > 0 {
			continue
		}
		if done {
			return
		}
		<-r.wake
	}
}

// write writes one vouched packet, unless it cannot be decoded; only
// writeLoop calls it.
func (r *Recorder) write(h held) {
	if r.err != nil || r.wNeedKey && !h.p.KeyFrame {
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
	r.wNeedKey = false
}

// writeFailed handles an error of the writer; only writeLoop calls it.
func (r *Recorder) writeFailed(err error) {
	r.wNeedKey = true
	if errors.Is(err, fmp4.ErrConfig) || errors.Is(err, fmp4.ErrCodecChange) || errors.Is(err, fmp4.ErrNeedKeyFrame) {
		r.log.Warn("recording: packet not written", "err", err)
		return
	}
	r.log.Error("recording: write failed; the recording stops", "err", err)
	r.err = err
	r.failed.Store(true)
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
