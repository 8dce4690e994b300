package drivertest

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pinky-gateway/pinky/drivers/sdk"
)

// Status is how a case ended.
type Status string

// Case outcomes.
const (
	Pass Status = "PASS"
	Fail Status = "FAIL"
	Skip Status = "SKIP"
)

// Result is how one case ended, with what it reported.
type Result struct {
	Name string
	// Device is the device the case ran on, when a case of a capability
	// ran on several (each online device that serves it); empty otherwise.
	Device   string
	Status   Status
	Messages []string // errors, logs and the skip reason, in order
	Duration time.Duration
}

// Summary is the outcome of a Check.
type Summary struct {
	Passed, Failed, Skipped int
	Results                 []Result
}

// OK reports whether no case failed.
func (s Summary) OK() bool { return s.Failed == 0 }

// String is the report's last line, e.g. "12 passed, 1 failed, 7 skipped".
func (s Summary) String() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed, s.Failed, s.Skipped)
}

// BinaryOptions are Options plus how to start a driver executable.
type BinaryOptions struct {
	Options
	// Args and Env (KEY=VALUE entries) are passed to the driver process.
	Args []string
	Env  []string
	// Stderr receives the driver's stderr; nil discards it.
	Stderr io.Writer
}

// CheckBinary starts the driver executable at path the way the gateway
// does (sdk.Start, go-plugin over gRPC), runs the suite against it with
// Check, writes the report to w and ends the process. The error is for what
// kept the suite from running (the driver did not start, a bad filter);
// failed cases are in the Summary.
func CheckBinary(ctx context.Context, path string, opts BinaryOptions, w io.Writer) (Summary, error) {
	if _, err := opts.filter(); err != nil {
		return Summary{}, err
	}
	// The driver's last words are kept, so that a driver that exits before
	// its handshake is reported with what it said rather than only with
	// go-plugin's "failed to read any lines".
	tail := &tailWriter{max: 2048}
	var stderr io.Writer = tail
	if opts.Stderr != nil {
		stderr = io.MultiWriter(opts.Stderr, tail)
	}
	// The driver's socket goes in a folder of the check's own, removed at
	// the end however the driver ended (a killed driver leaves its socket).
	sockDir, err := os.MkdirTemp("", "pinky-check-")
	if err != nil {
		return Summary{}, err
	}
	defer os.RemoveAll(sockDir)
	env := append(slices.Clip(opts.Env), "PLUGIN_UNIX_SOCKET_DIR="+sockDir)
	p, err := sdk.Start(sdk.StartConfig{Path: path, Args: opts.Args, Env: env, Stderr: stderr})
	if err != nil {
		if said := strings.TrimSpace(tail.String()); said != "" {
			return Summary{}, fmt.Errorf("%w\nthe driver's stderr ended with:\n%s", err, said)
		}
		return Summary{}, err
	}
	defer p.Kill()
	fmt.Fprintf(w, "driver %s (pid %d)\n", path, p.Pid())
	sum, err := Check(ctx, p.Driver(), opts.Options, w)
	select {
	case <-p.Done():
		fmt.Fprintf(w, "note: the driver process exited during the check\n")
	default:
	}
	return sum, err
}

// Check runs the suite against d, writing one line per case to w ("PASS
// name", "FAIL name" with the messages below it, "SKIP name — reason") and
// a last line "N passed, N failed, N skipped". A case of a capability that
// runs on several devices (see Run) has a line per device: "PASS
// video-stream on sim-ios-1". d may be an *sdk.Client or
// an in-process driver, as in Config.Driver.
func Check(ctx context.Context, d sdk.Driver, opts Options, w io.Writer) (Summary, error) {
	match, err := opts.filter()
	if err != nil {
		return Summary{}, err
	}
	drv, closeFn, err := connect(d)
	if err != nil {
		return Summary{}, fmt.Errorf("serving the driver in-process: %w", err)
	}
	defer closeFn()
	s := newSuite(drv, opts)
	defer s.close()
	var sum Summary
	for _, c := range registry {
		if !match(c.Name) {
			continue
		}
		if ctx.Err() != nil {
			return sum, ctx.Err()
		}
		var rs []Result
		if devs := s.targets(c); devs != nil {
			for _, d := range devs {
				r := runOne(ctx, s.on(d), c)
				r.Device = d.ID
				rs = append(rs, r)
			}
		} else {
			rs = append(rs, runOne(ctx, s, c))
		}
		for _, r := range rs {
			sum.Results = append(sum.Results, r)
			switch r.Status {
			case Pass:
				sum.Passed++
			case Fail:
				sum.Failed++
			case Skip:
				sum.Skipped++
			}
			writeResult(w, r)
		}
	}
	fmt.Fprintln(w, sum.String())
	return sum, nil
}

func writeResult(w io.Writer, r Result) {
	d := r.Duration.Round(time.Millisecond)
	name := r.Name
	if r.Device != "" {
		name += " on " + r.Device
	}
	switch r.Status {
	case Skip:
		reason := "skipped"
		if n := len(r.Messages); n > 0 {
			reason = r.Messages[n-1]
		}
		fmt.Fprintf(w, "SKIP %s — %s\n", name, reason)
	case Pass:
		fmt.Fprintf(w, "PASS %s (%v)\n", name, d)
		for _, m := range r.Messages {
			fmt.Fprintf(w, "    %s\n", indent(m))
		}
	default:
		fmt.Fprintf(w, "FAIL %s (%v)\n", name, d)
		for _, m := range r.Messages {
			fmt.Fprintf(w, "    %s\n", indent(m))
		}
	}
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

// grace is how long past its timeout a case may take before the runner
// gives up on it and reports it as hung.
const grace = 5 * time.Second

// runOne runs c in its own goroutine, as package testing does, so that
// Fatalf and Skipf can end it with runtime.Goexit.
func runOne(ctx context.Context, s *suite, c Case) Result {
	ctx, cancel := context.WithCancel(ctx)
	t := &cliT{ctx: ctx, cancel: cancel}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer t.runCleanups()
		defer cancel() // like testing: the context ends before the cleanups run
		defer t.recoverPanic()
		s.run(t, c)
	}()
	select {
	case <-done:
	case <-time.After(s.opts.caseTimeout() + grace):
		cancel()
		t.Errorf("the case did not finish within %v; a driver call ignores its context", s.opts.caseTimeout()+grace)
	}
	cancel()
	t.mu.Lock()
	defer t.mu.Unlock()
	r := Result{Name: c.Name, Status: Pass, Messages: append([]string(nil), t.msgs...), Duration: time.Since(start)}
	switch {
	case t.failed:
		r.Status = Fail
	case t.skipped:
		r.Status = Skip
	}
	return r
}

// cliT implements T for Check.
type cliT struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	failed   bool
	skipped  bool
	msgs     []string
	cleanups []func()
}

func (t *cliT) Helper()                  {}
func (t *cliT) Context() context.Context { return t.ctx }

func (t *cliT) log(s string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.msgs = append(t.msgs, s)
}

func (t *cliT) Logf(format string, args ...any) { t.log(fmt.Sprintf(format, args...)) }

func (t *cliT) Errorf(format string, args ...any) {
	t.mu.Lock()
	t.failed = true
	t.mu.Unlock()
	t.log(fmt.Sprintf(format, args...))
}

func (t *cliT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	runtime.Goexit()
}

func (t *cliT) Skipf(format string, args ...any) {
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	t.log(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (t *cliT) Cleanup(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cleanups = append(t.cleanups, f)
}

func (t *cliT) recoverPanic() {
	if r := recover(); r != nil {
		t.Errorf("panic: %v\n%s", r, debug.Stack())
	}
}

// runCleanups runs the cleanups last first. Each one runs in a deferred
// call of the previous, so that a Fatalf (Goexit) or a panic in one does not
// keep the others from running.
func (t *cliT) runCleanups() {
	t.mu.Lock()
	n := len(t.cleanups)
	if n == 0 {
		t.mu.Unlock()
		return
	}
	f := t.cleanups[n-1]
	t.cleanups = t.cleanups[:n-1]
	t.mu.Unlock()
	defer t.runCleanups()
	defer t.recoverPanic()
	f()
}

var _ T = (*cliT)(nil)

// WriteList writes one line per case, for `pinky driver check --list`: the
// name, what it needs, and what it checks.
func WriteList(w io.Writer) {
	for _, c := range registry {
		needs := "core"
		if c.Capability != "" {
			needs = string(c.Capability)
		}
		if c.NeedsDevice {
			needs += ", device"
		}
		fmt.Fprintf(w, "%-24s %-22s %s\n", c.Name, "["+needs+"]", c.Doc)
	}
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
