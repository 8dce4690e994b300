package driverhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Deadlines bound the calls made through a driver's handle, so that a
// driver that stops answering cannot hold a caller (an agent, the console)
// without limit. A call past its deadline fails with an error wrapping
// sdk.ErrTimeout, and counts as a miss; Misses misses within Window make
// the host restart the driver. The long-lived calls (WatchDevices,
// StreamVideo, Input) have no deadline: they last as long as their caller
// wants them.
type Deadlines struct {
	// Read bounds a read: Info, Screen, Screenshot, CaptureFrame, ListApps,
	// ListFiles, ListNotifications and RequestKeyFrame. It is above the
	// drivers' own limits (WebDriverAgent gives a page source 20 s), so a
	// driver that bounds its work answers first, with its own error.
	Read time.Duration
	// Act bounds an action: Wake, Unlock, DeleteFile, RemoveDisplay, and
	// Act, which also gets the action's own duration (a long press, a
	// swipe) and typingTime per character typed. CreateDisplay gets twice
	// Act: a display, a probe and a video session start in it.
	Act time.Duration
	// IdleMargin is added to WaitIdle's own timeout.
	IdleMargin time.Duration
	// Stall bounds a file transfer by its progress, whatever the file's
	// size: a pull or a push fails when no byte moved for this long.
	Stall time.Duration
	// Misses calls past their deadline within Window make the host restart
	// the driver (a call its own caller cancelled is not a miss). The
	// restarts are paced like those after an exit, and Backoff.MaxFailures
	// of them within an hour mark the driver failed.
	Misses int
	Window time.Duration
}

// DefaultDeadlines is used for the zero fields of Config.Deadlines.
var DefaultDeadlines = Deadlines{
	Read:       25 * time.Second,
	Act:        30 * time.Second,
	IdleMargin: 5 * time.Second,
	Stall:      30 * time.Second,
	Misses:     3,
	Window:     5 * time.Minute,
}

// typingTime is added to an Act deadline per character of text typed: a
// real phone's keyboard takes its time, and a deadline halfway through a
// text would leave half of it typed.
const typingTime = 50 * time.Millisecond

// hungWindow is how long a restart for missed deadlines counts towards
// marking the driver failed. It is long because such a restart comes only
// after several calls waited their whole deadline: a short window would
// never hold MaxFailures of them, and a driver that hangs again after each
// restart would be restarted forever.
const hungWindow = time.Hour

// DeadlinesEnv names the environment variable that DefaultConfig reads
// deadlines from, in ParseDeadlines's syntax.
const DeadlinesEnv = "PINKY_DRIVER_DEADLINES"

func (d Deadlines) withDefaults() Deadlines {
	def := DefaultDeadlines
	for _, f := range []struct{ v, def *time.Duration }{
		{&d.Read, &def.Read}, {&d.Act, &def.Act}, {&d.IdleMargin, &def.IdleMargin}, {&d.Stall, &def.Stall}, {&d.Window, &def.Window},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	if d.Misses <= 0 {
		d.Misses = def.Misses
	}
	return d
}

// ParseDeadlines reads comma-separated key=value pairs on top of d: read,
// act, idle_margin, stall and window take Go durations ("2s"), misses a
// count. Example: "read=5s,act=10s,misses=2".
func ParseDeadlines(d Deadlines, s string) (Deadlines, error) {
	for kv := range strings.SplitSeq(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return d, fmt.Errorf("%q: want key=value", kv)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "misses" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return d, fmt.Errorf("misses=%q: want a count of at least 1", v)
			}
			d.Misses = n
			continue
		}
		dst := map[string]*time.Duration{"read": &d.Read, "act": &d.Act, "idle_margin": &d.IdleMargin, "stall": &d.Stall, "window": &d.Window}[k]
		if dst == nil {
			return d, fmt.Errorf("%q unknown: want read, act, idle_margin, stall, window or misses", k)
		}
		dur, err := time.ParseDuration(v)
		if err != nil || dur <= 0 {
			return d, fmt.Errorf("%s=%q: want a positive duration such as 5s", k, v)
		}
		*dst = dur
	}
	return d, nil
}

// actDeadline is the deadline of one Act.
func (d Deadlines) actDeadline(a sdk.Action) time.Duration {
	return d.Act + max(a.Duration, 0) + time.Duration(utf8.RuneCountInString(a.Text))*typingTime
}

// op names a call for its deadline, its error and the log.
type op struct {
	name   string
	device string
	limit  time.Duration // 0: no deadline
}

func (o op) String() string {
	if o.device == "" {
		return o.name
	}
	return o.name + " on " + o.device
}

// errMissed is the cause of a context that the host's deadline ended.
var errMissed = errors.New("driver call missed its deadline")

// missedError is what a caller gets for a call past its deadline.
func (d *driver) missedError(o op) error {
	return fmt.Errorf("driver %q: %s did not answer within %s: %w", d.name, o, o.limit, sdk.ErrTimeout)
}

// missed counts a call of client c that missed its deadline and, when the
// driver has missed Misses within Window, asks its supervisor to restart it.
func (d *driver) missed(c *sdk.Client, o op) {
	h := d.h
	dl := h.cfg.Deadlines
	now := time.Now()
	h.mu.Lock()
	if d.client.Load() != c {
		h.mu.Unlock()
		return // a call of an earlier process: this one did not miss it
	}
	d.misses = slices.DeleteFunc(d.misses, func(t time.Time) bool { return now.Sub(t) > dl.Window })
	d.misses = append(d.misses, now)
	n := len(d.misses)
	var s *supervisor
	if n >= dl.Misses {
		d.misses, s = nil, d.sup
	}
	h.mu.Unlock()
	d.log.Warn("driver call missed its deadline", "call", o.name, "device", o.device, "deadline", o.limit, "misses", n, "of", dl.Misses, "within", dl.Window)
	if s == nil {
		return
	}
	msg := fmt.Sprintf("restarted: %d calls missed their deadlines within %s (the last: %s, %s)", n, dl.Window, o, o.limit)
	select {
	case s.hung <- hung{client: c, msg: msg}:
	default: // a restart is already asked for
	}
}

// hung asks a supervisor to restart the process of client, which keeps
// missing its deadlines.
type hung struct {
	client *sdk.Client
	msg    string
}

// progress calls tick on every read or write that moves bytes.
type progress struct {
	r    io.Reader
	w    io.Writer
	tick func()
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.tick()
	}
	return n, err
}

func (p *progress) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if n > 0 {
		p.tick()
	}
	return n, err
}

// sizedProgress is a progress reader over a reader that knows its length,
// which the client sends ahead of a push.
type sizedProgress struct {
	*progress
	len func() int
}

func (p sizedProgress) Len() int { return p.len() }

// transfer runs a file copy through f with a deadline that moves with its
// progress: the call is ended when no byte moved for Stall. f gets the
// context and a tick to call on progress.
func transfer[T any](h *handle, ctx context.Context, name, device string, f func(ctx context.Context, c *sdk.Client, tick func()) (T, error)) (T, error) {
	stall := h.d.h.cfg.Deadlines.Stall
	return call(h, ctx, op{name: name, device: device}, func(ctx context.Context, c *sdk.Client) (T, error) {
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		t := time.AfterFunc(stall, func() { cancel(errMissed) })
		defer t.Stop()
		v, err := f(ctx, c, func() { t.Reset(stall) })
		if err != nil && context.Cause(ctx) == errMissed {
			o := op{name: name + " (no progress)", device: device, limit: stall}
			h.d.missed(c, o)
			return v, h.d.missedError(o)
		}
		return v, err
	})
}
