package driverhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// cleanupTimeout bounds the cleanup after a process ends or is ended.
const cleanupTimeout = 5 * time.Second

// driver is one driver name: its status, its current process and the
// supervisor that runs it. It outlives its processes, so handles stay valid.
type driver struct {
	h      *Host
	name   string
	log    *slog.Logger
	stderr *stderrLog
	handle *handle
	// client is the running process's client, nil while none runs.
	client atomic.Pointer[sdk.Client]
	// opMu serializes Restart and Attach on this driver; taken before Host.mu.
	opMu sync.Mutex

	// Guarded by Host.mu.
	path, source string
	state        State
	pid          int
	info         sdk.Info
	restarts     int
	lastErr      string
	startedAt    time.Time
	session      uint64 // counts processes; device events of an older one are ignored
	sup          *supervisor
	misses       []time.Time // calls of the running process past their deadline, within Deadlines.Window
	host         string      // the phone host's name, for a remote driver (AddRemote); "" for a local one
	unlinkedAt   time.Time   // when a phone host's last link went, while it is unlinked
}

// supervisor is one run of a driver's supervising goroutine.
type supervisor struct {
	cancel  context.CancelFunc
	ctx     context.Context
	done    chan struct{}   // closed when the goroutine has returned and its process is gone
	restart chan chan error // Restart requests; the outcome of the new start is sent back
	hung    chan hung       // the running process keeps missing its deadlines: restart it
}

func (h *Host) newDriverLocked(name string) *driver {
	d := &driver{h: h, name: name, log: h.log.With("driver", name)}
	d.stderr = &stderrLog{log: d.log}
	d.handle = &handle{d: d}
	h.drivers[name] = d
	return d
}

// launchLocked starts a supervising goroutine that runs run.
func (d *driver) launchLocked(run func(*supervisor)) *supervisor {
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervisor{ctx: ctx, cancel: cancel, done: make(chan struct{}), restart: make(chan chan error), hung: make(chan hung, 1)}
	d.sup = s
	go func() {
		defer close(s.done)
		defer cancel()
		run(s)
	}()
	return s
}

// proc is one running driver process and its device watch.
type proc struct {
	p         *sdk.Process
	sockDir   string // its socket folder, removed once it is gone; "" for none
	stopWatch context.CancelFunc
	watchDone chan struct{}
	startedAt time.Time
}

// supervise runs a discovered driver until s.ctx ends: it starts the
// process, waits for it to exit or for a restart request, and starts it
// again with backoff. first is closed after the first start attempt.
func (d *driver) supervise(s *supervisor, first chan struct{}) {
	h, b := d.h, d.h.cfg.Backoff
	var fails []time.Time    // recent failures, within b.Stable
	var hangs []time.Time    // recent restarts for missed deadlines, within hungWindow
	var waiting []chan error // Restart callers waiting for the next start
	var delay time.Duration
	reply := func(err error) {
		for _, w := range waiting {
			w <- err
		}
		waiting = nil
	}
	defer func() { reply(fmt.Errorf("driver %q: %w", d.name, ErrStopped)) }()
	fail := func(now time.Time, msg string) {
		cut := 0
		for cut < len(fails) && now.Sub(fails[cut]) > b.Stable {
			cut++
		}
		fails = append(fails[cut:], now)
		h.mu.Lock()
		d.lastErr = msg
		if len(fails) >= b.MaxFailures {
			d.state, delay = StateFailed, b.FailedRetry
			d.log.Error("driver failed; retrying slowly", "failures", len(fails), "within", b.Stable, "retry", delay, "err", msg)
		} else {
			d.state = StateRestarting
			delay = min(b.Initial<<(len(fails)-1), b.Max)
			d.log.Warn("driver down; restarting", "in", delay, "err", msg)
		}
		h.mu.Unlock()
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			t := time.NewTimer(delay)
			select {
			case <-s.ctx.Done():
				t.Stop()
				d.setStopped()
				return
			case w := <-s.restart:
				waiting = append(waiting, w)
			case <-t.C:
			}
			t.Stop()
		}
		h.mu.Lock()
		if attempt == 0 {
			d.state = StateStarting
		} else {
			d.state = StateRestarting
			d.restarts++
		}
		h.mu.Unlock()
		p, err := d.start(s.ctx, nil)
		if first != nil {
			close(first)
			first = nil
		}
		if err != nil {
			reply(err)
			if s.ctx.Err() != nil {
				d.setStopped()
				return
			}
			fail(time.Now(), err.Error())
			continue
		}
		reply(nil)
	running:
		for {
			select {
			case <-p.p.Done():
				now := time.Now()
				up := now.Sub(p.startedAt)
				d.down(p, StateRestarting, "")
				if up >= b.Stable {
					fails = nil // a stable run forgives earlier failures
				}
				fail(now, fmt.Sprintf("driver process exited after %s", up.Round(time.Millisecond)))
				break running
			case <-s.ctx.Done():
				d.down(p, StateStopped, "")
				return
			case w := <-s.restart:
				waiting = append(waiting, w)
				d.down(p, StateRestarting, "")
				fails, hangs, delay = nil, nil, 0 // the person's restart starts afresh
				break running
			case hg := <-s.hung:
				if hg.client != p.p.Driver() {
					continue // asked about an earlier process
				}
				d.down(p, StateRestarting, hg.msg)
				delay = d.hungRestart(&hangs, hg.msg)
				break running
			}
		}
	}
}

// hungRestart records a restart for missed deadlines in hangs and returns the
// wait before the next start; MaxFailures of them within hungWindow mark
// the driver failed.
//
// A driver that stops answering is not forgiven by a long run, as one that
// crashes is: it ran long because each call waited its deadline. So its
// restarts are counted on their own, over an hour, and one that hangs
// again after every restart ends failed instead of restarting forever.
func (d *driver) hungRestart(hangs *[]time.Time, msg string) time.Duration {
	b := d.h.cfg.Backoff
	now := time.Now()
	*hangs = slices.DeleteFunc(*hangs, func(t time.Time) bool { return now.Sub(t) > hungWindow })
	*hangs = append(*hangs, now)
	n := len(*hangs)
	d.h.mu.Lock()
	defer d.h.mu.Unlock()
	if n >= b.MaxFailures {
		d.state = StateFailed
		d.log.Error("driver keeps missing its deadlines; retrying slowly", "restarts", n, "within", hungWindow, "retry", b.FailedRetry, "err", msg)
		return b.FailedRetry
	}
	delay := min(b.Initial<<(n-1), b.Max)
	d.log.Error("driver keeps missing its deadlines; restarting it", "in", delay, "err", msg)
	return delay
}

// superviseAttached runs a driver started by hand: no restarts. result gets
// the outcome of attaching.
func (d *driver) superviseAttached(s *supervisor, r sdk.Reattach, result chan<- error) {
	d.h.mu.Lock()
	d.state, d.path, d.source = StateAttached, "", "attach"
	d.h.mu.Unlock()
	p, err := d.start(s.ctx, &r)
	result <- err
	if err != nil {
		d.h.mu.Lock()
		d.state, d.lastErr = StateExited, err.Error()
		d.h.mu.Unlock()
		return
	}
	for {
		select {
		case <-p.p.Done():
			d.down(p, StateExited, "attached driver process exited")
			return
		case <-s.ctx.Done():
			d.down(p, StateStopped, "")
			return
		case w := <-s.restart:
			w <- fmt.Errorf("driver %q is attached: restart it by hand and attach it again", d.name)
		}
	}
}

func (d *driver) setStopped() {
	d.h.mu.Lock()
	d.state, d.pid = StateStopped, 0
	d.h.mu.Unlock()
}

// start starts (or, with r, attaches to) a process, reads its Info and
// waits for its first device listing, all within Config.StartTimeout.
func (d *driver) start(ctx context.Context, r *sdk.Reattach) (*proc, error) {
	h := d.h
	deadline := time.Now().Add(h.cfg.StartTimeout)
	h.mu.Lock()
	path := d.path
	h.mu.Unlock()
	t0 := time.Now()
	env, sockDir := h.env(d.name), ""
	if r == nil {
		if sockDir = h.socketDir(); sockDir != "" {
			env = append(env, SocketDirEnv+"="+sockDir) // last, so it wins
		}
	}
	sp, err := sdk.Start(sdk.StartConfig{
		Path:         path,
		Args:         h.cfg.Args[d.name],
		Env:          env,
		Reattach:     r,
		Stderr:       d.stderr,
		StartTimeout: h.cfg.StartTimeout,
	})
	if err != nil {
		h.removeSocketDir(sockDir) // sdk.Start has ended the process
		return nil, describeStartError(err, h.cfg.StartTimeout)
	}
	c := sp.Driver()
	ictx, cancel := context.WithDeadline(ctx, deadline)
	info, err := c.Info(ictx)
	cancel()
	if err != nil {
		d.bounded(sp, nil, sockDir)
		return nil, fmt.Errorf("driver info: %w", err)
	}
	p := &proc{p: sp, sockDir: sockDir, watchDone: make(chan struct{}), startedAt: t0}
	wctx, stopWatch := context.WithCancel(context.Background())
	p.stopWatch = stopWatch
	synced := make(chan struct{})
	h.mu.Lock()
	d.session++
	session := d.session
	d.pid, d.info, d.startedAt = sp.Pid(), info, t0
	h.mu.Unlock()
	go d.watch(wctx, c, session, synced, p.watchDone)
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-synced:
	case <-sp.Done():
		d.down(p, "", "")
		return nil, fmt.Errorf("driver exited while listing devices: %w", sdk.ErrDriverGone)
	case <-ctx.Done():
		d.down(p, "", "")
		return nil, ctx.Err()
	case <-t.C:
		d.log.Warn("driver has not listed its devices in time; running without", "timeout", h.cfg.StartTimeout)
	}
	d.client.Store(c)
	h.mu.Lock()
	if r != nil {
		d.state = StateAttached
	} else {
		d.state = StateRunning
	}
	d.misses = nil
	// lastErr stays: it tells why the driver was last restarted.
	h.mu.Unlock()
	d.log.Info("driver running", "pid", sp.Pid(), "version", info.Version, "startup", time.Since(t0).Round(time.Millisecond))
	return p, nil
}

// watch keeps the host's device table in step with the driver until ctx
// ends or the process is gone. A stream that ends while the process lives
// is opened again after a pause.
func (d *driver) watch(ctx context.Context, c *sdk.Client, session uint64, synced chan struct{}, done chan struct{}) {
	defer close(done)
	h := d.h
	for {
		seen := map[string]bool{}
		err := c.WatchDevices(ctx, func(ev sdk.DeviceEvent) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			if d.session != session {
				return context.Canceled // an older process; stop listening
			}
			h.applyLocked(d, seen, ev)
			if ev.Kind == sdk.DevicesSynced && synced != nil {
				close(synced)
				synced = nil
			}
			return nil
		})
		if ctx.Err() != nil || errors.Is(err, sdk.ErrDriverGone) || errors.Is(err, context.Canceled) {
			return
		}
		d.log.Warn("device watch ended; watching again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// down ends a process: it makes handles fail fast, marks the devices
// offline, stops the watch and kills the process. state and msg, when not
// empty, become the driver's state and last error.
func (d *driver) down(p *proc, state State, msg string) {
	d.client.Store(nil)
	h := d.h
	h.mu.Lock()
	d.session++ // late events from the old watch are ignored from here on
	h.offlineLocked(d)
	d.pid, d.startedAt = 0, time.Time{}
	if state != "" {
		d.state = state
	}
	if msg != "" {
		d.lastErr = msg
	}
	h.mu.Unlock()
	p.stopWatch()
	d.bounded(p.p, p.watchDone, p.sockDir)
}

// bounded kills the process and waits for it and for the watch to end.
//
// The wait is bounded because a supervisor must never hang on a dead or
// wedged driver: a hung supervisor would keep the driver down forever and
// block Stop. Kill itself gives up after go-plugin's 2 s grace and a
// SIGKILL, and the watch ends as soon as its connection breaks, so the
// bound is only reached if something is badly wrong; then what is left is
// logged and left to finish on its own. The socket folder goes once the
// process is gone, even after the bound: removing it earlier would leave a
// live driver without the socket a reattach needs.
func (d *driver) bounded(p *sdk.Process, watchDone <-chan struct{}, sockDir string) {
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		p.Kill()
		d.h.removeSocketDir(sockDir)
	}()
	t := time.NewTimer(cleanupTimeout)
	defer t.Stop()
	select {
	case <-killed:
	case <-t.C:
		d.log.Error("driver process did not end in time", "pid", p.Pid(), "timeout", cleanupTimeout)
		return
	}
	if watchDone != nil {
		select {
		case <-watchDone:
		case <-t.C:
			d.log.Error("device watch did not end in time", "timeout", cleanupTimeout)
		}
	}
}

// startError shortens go-plugin's start errors, which run over many lines,
// into one line that says what the driver did wrong.
type startError struct {
	msg string
	err error
}

func (e *startError) Error() string { return e.msg }
func (e *startError) Unwrap() error { return e.err }

func describeStartError(err error, timeout time.Duration) error {
	s := err.Error()
	first, _, _ := strings.Cut(s, "\n")
	var msg string
	switch {
	case strings.Contains(s, "Failed to read any lines from plugin's stdout"),
		strings.Contains(s, "plugin exited before we could connect"):
		msg = "driver exited before the handshake (its stderr may say why)"
	case strings.Contains(s, "Unrecognized remote plugin message"):
		_, line, _ := strings.Cut(first, "Unrecognized remote plugin message: ")
		msg = fmt.Sprintf("unrecognized remote plugin message %q: a driver must print its handshake line first on stdout", line)
	case strings.Contains(s, "timeout while waiting for plugin to start"):
		msg = fmt.Sprintf("timeout while waiting for plugin to start: no handshake within %s", timeout)
	default:
		msg = first
	}
	return &startError{msg: msg, err: err}
}

// env is the extra environment of driver name: its Config.Env, and
// PINKY_HOME so that a driver reads its settings (ios.yaml) from the
// gateway's data folder, whichever way that was chosen.
func (h *Host) env(name string) []string {
	env := h.cfg.Env[name]
	if h.cfg.Home != "" {
		env = append([]string{"PINKY_HOME=" + h.cfg.Home}, env...)
	}
	return env
}
