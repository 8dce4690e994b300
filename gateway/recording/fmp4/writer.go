package fmp4

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Errors of Writer.Write.
var (
	ErrNeedKeyFrame = errors.New("fmp4: the first frame must be a key frame after a config packet")
	ErrCodecChange  = errors.New("fmp4: the codec cannot change within a file")
	ErrClosed       = errors.New("fmp4: writer closed")
)

// Options tune a Writer.
type Options struct {
	// FragmentDuration is how much media a fragment holds, about: a
	// fragment is cut when a key frame comes, when it reaches this length,
	// or by a timer this long after its first sample when no packet comes.
	// Default 1 s.
	FragmentDuration time.Duration
	// Timescale is the track's clock rate; default DefaultTimescale.
	Timescale uint32
	// Horizon reports a media time that no packet written later will
	// precede. When the timer cuts a fragment, its last sample lasts until
	// then. Default: the wall time since the first packet was written,
	// added to that packet's PTS (right when packets are written as they
	// come).
	Horizon func() time.Duration
	// OnFragment, when set, is called after each fragment is written, with
	// no lock held, from the goroutine that wrote it (Write, Flush, Close or
	// the timer's).
	OnFragment func(Stats)
}

// Stats describes what a Writer has written.
type Stats struct {
	Codec         sdk.Codec
	Width, Height int           // the current picture size
	Bytes         int64         // written to the io.Writer
	Fragments     int           // fragments written
	Samples       int           // samples in those fragments
	Duration      time.Duration // media time at the end of the last written sample
}

// pending is a sample not yet in a fragment.
type pending struct {
	data []byte
	dts  uint64 // decode time, in ticks
	sync bool
}

// Writer writes a fragmented MP4 file of one video track from video packets
// as they come. It is safe for concurrent use.
//
// Packets go to Write in order: config packets (which may change the
// parameter sets, and so the size) and frames, whose PTS is their media
// time. The init segment is written with the first key frame; frames before
// it are refused. The last sample of a fragment lasts until the next
// sample's PTS; the timer writes all but the last pending sample, which
// waits for the next packet or for Close (then it lasts until Horizon).
type Writer struct {
	out  io.Writer
	opts Options

	mu       sync.Mutex
	init     *Track // the track of the init segment; nil before it
	cur      *Track // the parameter sets in force
	inBand   bool   // cur differs from init: key frames carry cur's parameter sets
	pend     []pending
	seq      uint32
	end      uint64 // decode time after the last written sample
	last     uint64 // decode time of the last sample written or pending
	started  bool   // a sample was taken
	wallZero time.Time
	ptsZero  time.Duration
	timer    *time.Timer
	stats    Stats
	err      error // sticky: the first error of out
	closed   bool
}

// NewWriter returns a Writer to out.
func NewWriter(out io.Writer, opts Options) *Writer {
	if opts.FragmentDuration <= 0 {
		opts.FragmentDuration = time.Second
	}
	if opts.Timescale == 0 {
		opts.Timescale = DefaultTimescale
	}
	return &Writer{out: out, opts: opts}
}

// Write takes one packet; a frame without NAL units is ignored. A config packet that does not parse, or whose codec
// differs from the file's, is refused and the parameter sets in force stay.
func (w *Writer) Write(p sdk.VideoPacket) error {
	w.mu.Lock()
	var st *Stats
	err := w.write(p, &st)
	w.mu.Unlock()
	w.notify(st)
	return err
}

func (w *Writer) write(p sdk.VideoPacket, st **Stats) error {
	if w.closed {
		return ErrClosed
	}
	if w.err != nil {
		return w.err
	}
	if p.Config {
		t, err := ParseConfig(p.Codec, p.Data)
		if err != nil {
			return err
		}
		if w.init != nil && t.Codec != w.init.Codec {
			return fmt.Errorf("%w: %s to %s", ErrCodecChange, w.init.Codec, t.Codec)
		}
		t.Timescale = w.opts.Timescale
		w.cur = &t
		w.inBand = w.init != nil && !t.SameParams(w.init)
		return nil
	}
	if w.init == nil {
		if !p.KeyFrame || w.cur == nil {
			return ErrNeedKeyFrame
		}
		seg, err := InitSegment(*w.cur)
		if err != nil {
			return err
		}
		if err := w.emit(seg); err != nil {
			return err
		}
		w.init = w.cur
		w.stats.Codec = w.cur.Codec
	}
	if p.Codec != "" && p.Codec != w.init.Codec {
		return fmt.Errorf("%w: %s frame in a %s file", ErrCodecChange, p.Codec, w.init.Codec)
	}
	data := AppendSample(nil, p.Data, nil)
	if len(data) == 0 {
		return nil // no picture: nothing to store
	}
	dts := w.ticks(p.PTS)
	if !w.started {
		w.started, w.wallZero, w.ptsZero = true, time.Now(), p.PTS
	} else {
		// Decode times must grow, and a fragment the timer cut may have
		// given its last sample more time than the next packet's PTS.
		dts = max(dts, w.last+1, w.end)
	}
	if len(w.pend) > 0 && (p.KeyFrame || dts-w.pend[0].dts >= w.ticks(w.opts.FragmentDuration)) {
		if err := w.flush(dts, st); err != nil {
			return err
		}
	}
	if p.KeyFrame && w.inBand {
		data = AppendSample(nil, p.Data, w.cur.ParamSets)
	}
	w.pend = append(w.pend, pending{data: data, dts: dts, sync: p.KeyFrame})
	w.last = dts
	w.stats.Width, w.stats.Height = w.cur.Width, w.cur.Height
	if len(w.pend) == 1 {
		if w.timer == nil {
			w.timer = time.AfterFunc(w.opts.FragmentDuration, w.onTimer)
		} else {
			w.timer.Reset(w.opts.FragmentDuration)
		}
	}
	return nil
}

// onTimer cuts the fragment being built when no packet came to cut it: it
// writes every pending sample but the last, whose duration is not known
// yet. The last lasts until the next packet, or until Close: so the media
// timeline has no gap, and a still screen at the end of a recording lasts
// until it ends (a step's place in the video is never past its end).
func (w *Writer) onTimer() {
	w.mu.Lock()
	var st *Stats
	if !w.closed && len(w.pend) > 1 && w.err == nil {
		last := w.pend[len(w.pend)-1]
		w.pend = w.pend[:len(w.pend)-1]
		_ = w.flush(last.dts, &st) // a write error stays in w.err for the next call
		w.pend = append(w.pend, last)
	}
	w.mu.Unlock()
	w.notify(st)
}

// Flush writes the samples taken so far as a fragment; the last one lasts
// until Horizon.
func (w *Writer) Flush() error {
	w.mu.Lock()
	var st *Stats
	err := w.err
	if err == nil && len(w.pend) > 0 {
		err = w.flush(w.horizon(), &st)
	}
	w.mu.Unlock()
	w.notify(st)
	return err
}

// Close flushes and stops the timer. It does not close the io.Writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	var st *Stats
	err := w.err
	if !w.closed {
		if err == nil && len(w.pend) > 0 {
			err = w.flush(w.horizon(), &st)
		}
		w.closed = true
		if w.timer != nil {
			w.timer.Stop()
		}
	}
	w.mu.Unlock()
	w.notify(st)
	return err
}

// Stats returns what has been written so far.
func (w *Writer) Stats() Stats {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stats
}

// horizon is the decode time the last pending sample lasts until, at least
// one tick after it.
func (w *Writer) horizon() uint64 {
	var h time.Duration
	if w.opts.Horizon != nil {
		h = w.opts.Horizon()
	} else {
		h = w.ptsZero + time.Since(w.wallZero)
	}
	return max(w.ticks(h), w.last+1)
}

// flush writes the pending samples as one fragment; the last lasts until
// next. On success *st is set to the new stats.
func (w *Writer) flush(next uint64, st **Stats) error {
	samples := make([]Sample, len(w.pend))
	for i, p := range w.pend {
		end := next
		if i+1 < len(w.pend) {
			end = w.pend[i+1].dts
		}
		samples[i] = Sample{Data: p.data, Duration: uint32(min(end-p.dts, 1<<32-1)), Sync: p.sync}
	}
	w.seq++
	frag := Fragment(w.seq, w.pend[0].dts, samples)
	clear(w.pend)
	w.pend = w.pend[:0]
	if err := w.emit(frag); err != nil {
		return err
	}
	w.end = next
	w.stats.Fragments++
	w.stats.Samples += len(samples)
	w.stats.Duration = w.duration(next)
	s := w.stats
	*st = &s
	return nil
}

// emit writes b to out, keeping the first error.
func (w *Writer) emit(b []byte) error {
	n, err := w.out.Write(b)
	w.stats.Bytes += int64(n)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.err = fmt.Errorf("fmp4: write: %w", err)
	}
	return w.err
}

func (w *Writer) notify(st *Stats) {
	if st != nil && w.opts.OnFragment != nil {
		w.opts.OnFragment(*st)
	}
}

func (w *Writer) ticks(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	ts := uint64(w.opts.Timescale)
	return uint64(d/time.Second)*ts + uint64(d%time.Second)*ts/uint64(time.Second)
}

func (w *Writer) duration(ticks uint64) time.Duration {
	ts := uint64(w.opts.Timescale)
	return time.Duration(ticks/ts)*time.Second + time.Duration(ticks%ts*uint64(time.Second)/ts)
}
